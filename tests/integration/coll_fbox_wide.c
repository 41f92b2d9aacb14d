/*
 * coll_fbox_wide.c - coll_fbox's wide mode: the fast boxes' wide form
 * (src/coll/fbox_wide.c) through the public API, on 2 and 4 ranks of shm
 * (coll_fbox.sh runs it with HOP_UNEXPECTED_MAX=4M).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hop/hop.h>

#define TEST_NAME "coll_fbox"
static hop_comm_t *comm;
static int rank, nranks;
#include "rank_check.h"
#include "coll_fbox.h"

/*
 * The wide form (fbox_wide.c), at the sizes whose plan names it: every
 * dtype, op and root at the first and the last, in place or not; sizes
 * mixed, so the ring starts again at every offset; each rank late in
 * turn over more calls than a ring holds; then 2000 Reduces of 4 KiB
 * whose root naps 20 us a call, where writers may run only a ring
 * ahead (the script lowers HOP_UNEXPECTED_MAX, which 4 MiB of eager
 * messages held unexpected would pass).
 */
/* AllGather, AllToAll and ReduceScatter above a slot: a 4 KiB payload
 * takes the wide form; every dtype just above that and just below
 * 256 KiB, in place and not; each rank late in turn. */
static void wide_gathers(uint64_t *salt)
{
	static const char *const name[3] = { "AllGather", "AllToAll",
					     "ReduceScatter" };

	for (int k = 0; k < 3; k++) {
		int kind = gather_kinds[k];
		size_t per = n_blocks(kind) ? (size_t)nranks : 1;

		if (!takes(kind, 1024 / per, HOP_FLOAT32, "fbox-wide"))
			FAIL("a 4 KiB %s does not take the wide form",
			     name[k]);
		for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++) {
			size_t es = hop_dtype_size(dt);
			const size_t counts[] = { 4096 / es / per + 1,
						  (256u << 10) / es / per - 1 };

			for (int c = 0; c < 2; c++)
				one_gather(kind, counts[c], dt, HOP_SUM, c,
					   (*salt)++, 0);
		}
		for (int slow = 0; slow < nranks; slow++)
			for (int i = 0; i < 40; i++)
				one_gather(kind, 1024 / per + 3, HOP_FLOAT32,
					   i % 2 ? HOP_SUM : HOP_AVG,
					   i % 3 == 0, (*salt)++,
					   rank == slow ? 300 : 0);
	}
}

/* AllReduce above a slot: a 4 KiB one takes the wide form, up to a size
 * that falls with the ranks (hop_fbox_wide_max()); every dtype and op
 * just above the smallest size that takes it and just below the largest,
 * in place and not; each rank late in turn; in rank order, bit for bit. */
static void wide_allreduce(uint64_t *salt)
{
	size_t lo = 0, hi = 0;

	for (size_t b = 2048; b <= (256u << 10); b *= 2)
		if (takes(HOP_KIND_ALLREDUCE, b / 4, HOP_FLOAT32, "fbox-wide"))
			hi = b, lo = lo ? lo : b;
	if (!takes(HOP_KIND_ALLREDUCE, 1024, HOP_FLOAT32, "fbox-wide"))
		FAIL("a 4 KiB AllReduce does not take the wide form");
	for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++) {
		size_t es = hop_dtype_size(dt);
		const size_t counts[] = { lo / es + 1, hi / es - 1 };

		for (int c = 0; c < 2; c++)
			for (int op = 0; op < HOP_OP_COUNT; op++)
				one(HOP_KIND_ALLREDUCE, counts[c], dt, op, 0,
				    (op + c) & 1, (*salt)++, 0);
	}
	for (int slow = 0; slow < nranks; slow++)
		for (int i = 0; i < 40; i++)
			one(HOP_KIND_ALLREDUCE, lo / 4 + 1 + (size_t)i,
			    HOP_FLOAT32, i % 2 ? HOP_SUM : HOP_AVG, 0,
			    i % 3 == 0, (*salt)++, rank == slow ? 300 : 0);
}

int coll_fbox_wide(hop_comm_t *c)
{
	static float in[1024], out[1024];
	uint64_t salt = 1ull << 50;
	size_t lo = 0, hi = 0;

	comm = c;
	rank = hop_comm_rank(c);
	nranks = hop_comm_size(c);
	for (size_t b = 2048; b <= (256u << 10); b *= 2)
		if (takes(HOP_KIND_REDUCE, b / 4, HOP_FLOAT32, "fbox-wide") ||
		    takes(HOP_KIND_BROADCAST, b / 4, HOP_FLOAT32, "fbox-wide"))
			hi = b, lo = lo ? lo : b;
	if (!lo || !takes(HOP_KIND_REDUCE, 1024, HOP_FLOAT32, "fbox-wide"))
		FAIL("a 4 KiB Reduce does not take the wide form");
	for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++) {
		size_t es = hop_dtype_size(dt);
		const size_t counts[] = { lo / es, hi / es - 1 };

		for (size_t c = 0; c < 2; c++)
			for (int op = 0; op < (c ? 1 : HOP_OP_COUNT); op++)
				kinds_at(counts[c], dt, op, &salt, 0);
	}
	for (size_t i = 0; i < 300; i++)
		one(i & 1 ? HOP_KIND_REDUCE : HOP_KIND_BROADCAST,
		    (lo + i * 7919 % (hi - lo + 64)) / 4, HOP_INT32, HOP_SUM,
		    (int)(i % (size_t)nranks), i % 3 == 0, salt++, 0);
	for (int slow = 0; slow < nranks; slow++)
		for (int i = 0; i < 40; i++)
			one(i & 1 ? HOP_KIND_REDUCE : HOP_KIND_BROADCAST,
			    lo / 4 + 1, HOP_INT32, HOP_SUM, (slow + i) % nranks,
			    0, salt++, rank == slow ? 300 : 0);
	wide_gathers(&salt);
	wide_allreduce(&salt);
	for (int i = 0; i < 1024; i++)
		in[i] = (float)(rank + i);
	for (int i = 0; i < 2000; i++) {
		if (rank == 0)
			nap_us(20);
		OK(hop_reduce(comm, in, out, 1024, HOP_FLOAT32, HOP_SUM, 0));
	}
	for (int i = 0; rank == 0 && i < 1024; i++)
		if (out[i] != (float)(nranks * i + nranks * (nranks - 1) / 2))
			FAIL("reduce of 4 KiB: element %d is %g", i, out[i]);
	OK(hop_comm_destroy(comm));
	printf("coll_fbox: rank %d passed %lu wide calls\n", rank, calls);
	return 0;
}

