/*
 * test_sim_rotate.c - the rotated simulation (src/sim/simnet.h: rank 0's
 * schedule alone standing for every rank's rotation) against the full
 * one, which runs every rank's schedule:
 *  - ring AllReduce, AllGather and ReduceScatter, N from 2 to 256, one
 *    and several chunks, with and without an eager size, with and without
 *    a reduction cost: the simulated time is identical to the last bit,
 *    and the counts of messages and steps are equal;
 *  - a schedule that is not a rotation (tree, a ring whose count N does
 *    not divide) is refused with HOP_ERR_INVALID_ARG naming the rank, as
 *    are data, a topology or a trace.
 * HOP_TEST_SIM_ROTATE_LONG=1 adds N = 1024, 2048 and 4096 (minutes, GBs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "sim/simrun.h"

static struct hop_simrun run(int kind, int algo, int n, size_t bytes,
			     long chunks, double eager, double gamma, int rotate)
{
	struct hop_simrun r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.algo = algo;
	r.nranks = n;
	r.bytes = bytes;
	r.chunks = chunks;
	r.rotate = rotate;
	r.link = (struct hop_model_link){ 2e-6, 2e9, gamma, 1, 4096, eager, 0 };
	if (hop_simrun(&r))
		fail_msg("%s/%s N=%d %zu B k=%ld rotate %d: %s",
			 hop_model_kind_name(kind), hop_model_algo_name(algo), n,
			 bytes, chunks, rotate, r.err);
	return r;
}

static void same(int kind, int n, size_t bytes, long chunks, double eager,
		 double gamma)
{
	struct hop_simrun f = run(kind, HOP_ALGO_RING, n, bytes, chunks, eager,
				  gamma, 0);
	struct hop_simrun r = run(kind, HOP_ALGO_RING, n, bytes, chunks, eager,
				  gamma, 1);

	if (memcmp(&f.sim_time, &r.sim_time, sizeof(double)) ||
	    f.messages != r.messages || f.steps != r.steps || f.moved != r.moved)
		fail_msg("%s ring N=%d %zu B k=%ld E=%g g=%g: full %.17g s %llu "
			 "msgs %llu steps, rotated %.17g s %llu msgs %llu steps",
			 hop_model_kind_name(kind), n, bytes, chunks, eager, gamma,
			 f.sim_time, (unsigned long long)f.messages,
			 (unsigned long long)f.steps, r.sim_time,
			 (unsigned long long)r.messages,
			 (unsigned long long)r.steps);
}

static void sweep(int nmax)
{
	static const int kinds[] = { HOP_COLL_ALLREDUCE, HOP_COLL_ALLGATHER,
				     HOP_COLL_REDUCESCATTER };

	for (int n = 2; n <= nmax; n = n < 8 ? n + 1 : n * 2)
		for (size_t k = 0; k < 3; k++)
			for (long c = 1; c <= 3; c += 2) {
				/* 64 KiB per rank: a multiple of 4 n bytes */
				size_t bytes = (size_t)n * 4 * 4096;

				same(kinds[k], n, bytes, c, 0, 0);
				same(kinds[k], n, bytes, c, 16384, 0.3e-9);
			}
}

static void test_ring_identical(void **state)
{
	(void)state;
	sweep(256);
	if (getenv("HOP_TEST_SIM_ROTATE_LONG"))
		for (int n = 1024; n <= 4096; n *= 2)
			same(HOP_COLL_ALLREDUCE, n, (size_t)n * 16, 1, 8192,
			     0.1e-9);
}

static void refused(struct hop_simrun *r, const char *want)
{
	int ret = hop_simrun(r);

	if (ret != HOP_ERR_INVALID_ARG || !strstr(r->err, want))
		fail_msg("%s/%s N=%d: %d '%s' (want '%s')",
			 hop_model_kind_name(r->kind),
			 hop_model_algo_name(r->algo), r->nranks, ret, r->err,
			 want);
}

static void test_refused(void **state)
{
	struct hop_simrun r;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.kind = HOP_COLL_ALLREDUCE;
	r.algo = HOP_ALGO_TREE;
	r.nranks = 16;
	r.bytes = 65536;
	r.rotate = 1;
	r.link = (struct hop_model_link){ 2e-6, 2e9, 0, 1, 4096, 0, 0 };
	refused(&r, "rank 1's schedule is not rank 0's shifted by 1");
	r.algo = HOP_ALGO_RING;
	r.nranks = 12;
	r.bytes = 4 * 100;      /* 100 elements in 12 chunks: unequal */
	refused(&r, "is not rank 0's shifted by");
	r.bytes = 12 * 4 * 8;
	r.verify = 1;
	refused(&r, "a rotated run moves no data");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_identical),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
