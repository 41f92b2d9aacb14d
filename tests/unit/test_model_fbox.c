/*
 * test_model_fbox.c - the prices of the fast boxes' forms above a slot
 * (src/model/model_fbox.c): the CMA form and the wide form, against each
 * other and against the schedule the model would choose.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>

#include <cmocka.h>

#include "model_eq.h"

#include <hop/common.h>

#include "model/model.h"

/* The fast boxes' CMA form: each rank's bytes read grow with the size;
 * ranks beyond the cores take turns; a Broadcast reads once, an
 * AllReduce twice and reduces; an AllToAll of N blocks reads N-1 of
 * them, what an AllGather of one block reads. */
static void test_fbox_cma(void **state)
{
	const int kinds[] = { HOP_COLL_ALLREDUCE, HOP_COLL_REDUCE,
			      HOP_COLL_BROADCAST, HOP_COLL_ALLGATHER,
			      HOP_COLL_ALLTOALL };

	(void)state;
	for (int i = 0; i < 5; i++) {
		double last = 0;

		for (double m = 2048; m <= 64.0 * (1 << 20); m *= 4) {
			double t = hop_model_fbox_cma(kinds[i], m, 2, 2);

			assert_true(t > last);
			last = t;
			assert_true(hop_model_fbox_cma(kinds[i], m, 4, 2) >
				    hop_model_fbox_cma(kinds[i], m, 4, 4));
		}
	}
	assert_true(hop_model_fbox_cma(HOP_COLL_BROADCAST, 1 << 24, 2, 2) <
		    hop_model_fbox_cma(HOP_COLL_ALLREDUCE, 1 << 24, 2, 2));
	EQ(hop_model_fbox_cma(HOP_COLL_ALLTOALL, 4 << 20, 4, 0),
	   hop_model_fbox_cma(HOP_COLL_ALLGATHER, 1 << 20, 4, 0));
}

/* A Reduce's root in the CMA form reads and reduces N-1 operands per
 * byte of its segment, a peer that too and writes its result to the
 * root: the root's share is (work + write) / work of a peer's (read and
 * write 0.125 ns/B, a reduction 0.15), less so with more operands; the
 * Reduce is priced at a peer's segment of that split. */
static void test_fbox_cma_root(void **state)
{
	const double rw = 0.125e-9, red = 0.15e-9;
	const double m = 4 << 20;

	(void)state;
	EQ(hop_model_fbox_cma_root_weight(1), 1);
	for (int n = 2; n <= 8; n++) {
		double work = (n - 1) * (rw + red);
		double w = hop_model_fbox_cma_root_weight(n);

		EQ(w, (work + rw) / work);
		assert_true(w < hop_model_fbox_cma_root_weight(n - 1) ||
			    n == 2);
	}
	/* 2 ranks: the peer's segment is m / (w + 1); it reads it in
	 * 128 KiB calls of 2.4 us, reduces it and writes it back, after
	 * two rounds of flags of 0.4 us */
	double seg = ceil(m / (hop_model_fbox_cma_root_weight(2) + 1));
	double calls = ceil(seg / 131072) * 2.4e-6;

	EQ(hop_model_fbox_cma(HOP_COLL_REDUCE, m, 2, 0),
	   2 * 0.4e-6 + 2 * (calls + seg * rw) + seg * red);
	assert_true(hop_model_fbox_cma(HOP_COLL_REDUCE, m, 2, 0) <
		    hop_model_fbox_cma(HOP_COLL_ALLREDUCE, m, 2, 0));
}

/* The fast boxes' wide form: dearer with the size and with ranks beyond
 * the cores; on shm's built-in link a 2-rank call of 4 and 16 KiB
 * (an AllToAll's or ReduceScatter's payload: both blocks) is priced
 * below the schedule the model would choose (a Reduce's or Broadcast's
 * sender's eager messages the root holds unexpected, each copied once
 * more; the gathering kinds'
 * exchanges wait for each other), a Broadcast below the CMA form up to
 * the largest size, and an AllGather, which copies every rank's block
 * out, above an AllToAll of the same payload, which copies one. */
static void test_fbox_wide(void **state)
{
	const struct hop_model_link shm = { 1e-6, 6e9, 1e-10, 1.2, 4096, 8192,
					    HOP_MODEL_MAX_CHUNK };
	const int kinds[] = { HOP_COLL_REDUCE, HOP_COLL_BROADCAST,
			      HOP_COLL_ALLGATHER, HOP_COLL_ALLTOALL,
			      HOP_COLL_REDUCESCATTER, HOP_COLL_ALLREDUCE };
	int algo;
	long k;
	double t;

	(void)state;
	for (int i = 0; i < 6; i++) {
		double last = 0;

		for (double m = 2048; m <= 256 << 10; m *= 2) {
			t = hop_model_fbox_wide(kinds[i], m, 2, 0);
			assert_true(t > last);
			last = t;
			assert_true(hop_model_fbox_wide(kinds[i], m, 4, 2) >
				    hop_model_fbox_wide(kinds[i], m, 4, 4));
		}
		for (double m = 4096; m <= 16384; m *= 4) {
			/* the schedule prices an AllToAll and a
			 * ReduceScatter by a block */
			double sm = kinds[i] == HOP_COLL_ALLTOALL ||
						    kinds[i] ==
							    HOP_COLL_REDUCESCATTER
					    ? m / 2 : m;

			assert_int_equal(hop_model_choose(kinds[i], sm, 2, &shm,
							  &algo, &k, &t), 0);
			assert_true(hop_model_fbox_wide(kinds[i], m, 2, 0) < t);
		}
	}
	assert_true(hop_model_fbox_wide(HOP_COLL_BROADCAST, 256 << 10, 2, 0) <
		    hop_model_fbox_cma(HOP_COLL_BROADCAST, 256 << 10, 2, 0));
	assert_true(hop_model_fbox_wide(HOP_COLL_ALLGATHER, 8192, 4, 0) >
		    hop_model_fbox_wide(HOP_COLL_ALLTOALL, 8192, 4, 0));
	/* an AllToAll copies in the N-1 blocks its peers read, as many out
	 * of theirs, and its own block across: 2N-1 blocks of N */
	for (int n = 2; n <= 8; n *= 2)
		EQ(hop_model_fbox_wide(HOP_COLL_ALLTOALL, 2 * 65536, n, 0) -
			   hop_model_fbox_wide(HOP_COLL_ALLTOALL, 65536, n, 0),
		   (2.0 * n - 1) / n * 65536 * 31e-12);
	/* an AllReduce copies its data in and rank 0's out, and reduces the
	 * N-1 others: a Reduce's root's work and two copies more */
	for (int n = 2; n <= 8; n *= 2)
		EQ(hop_model_fbox_wide(HOP_COLL_ALLREDUCE, 65536, n, 0) -
			   hop_model_fbox_wide(HOP_COLL_REDUCE, 65536, n, 0),
		   2 * 65536 * 31e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fbox_cma),
		cmocka_unit_test(test_fbox_cma_root),
		cmocka_unit_test(test_fbox_wide),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
