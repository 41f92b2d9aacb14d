/*
 * coll_order.c - no rank leaves a collective before every input it
 * depends on was provided.
 *
 * For each collective and each choice of a "late" rank L: all ranks line
 * up on a barrier, then every rank but L enters the collective at once
 * while L sleeps HOP_ORDER_SLEEP_MS (default 20) first. Each rank records
 * CLOCK_MONOTONIC (one clock for every process of a host) when it entered
 * and when it left, and the records are allgathered. The check: every
 * rank whose result depends on L's input left after L entered. Barrier,
 * AllReduce, AllGather and ReduceScatter: every rank depends on every
 * rank, and so does AllToAll. Broadcast: every rank depends on the root.
 * Reduce: the root depends on every rank. AllToAllv: a rank depends on
 * the ranks that send it at least one element (a2av_count(); some pairs
 * send none). The results are checked too, against values
 * computed here from each rank's known input.
 *
 * Usage (under hop-run): coll_order [--only barrier|allreduce|...]
 * [--no-v] (without Gather, Scatter and the v-variants)
 * Prints "coll_order: rank R passed N cases" on success.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/hop.h>

#define TEST_NAME "coll_order"
static hop_comm_t *comm;
static int rank, nranks;
#include "rank_check.h"

enum kind { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_ALLGATHER,
	    K_REDUCESCATTER, K_ALLTOALL, K_ALLTOALLV,
	    K_GATHER, K_SCATTER, K_ALLGATHERV, K_REDUCESCATTERV,
	    K_COUNT };
static const char *const kind_name[K_COUNT] = {
	"barrier", "broadcast", "reduce", "allreduce", "allgather",
	"reducescatter", "alltoall", "alltoallv",
	"gather", "scatter", "allgatherv", "reducescatterv",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Rank r's input element i: distinct per rank and element. */
static uint64_t input(int r, size_t i)
{
	return ((uint64_t)(r + 1) << 20) + i * 7u + 1u;
}

#define COUNT 4 /* elements per rank where a count is per rank */

/* alltoallv: elements rank @from sends rank @to, 0 .. COUNT - 1 */
static size_t a2av_count(int from, int to)
{
	return (size_t)(from * 3 + to) % COUNT;
}

/* Rank @from's element @i for rank @to: distinct per pair and element. */
static uint64_t a2a_input(int from, int to, size_t i)
{
	return input(from, (size_t)to * COUNT + i);
}

/* alltoall(v): every block at p * COUNT (v: a2av_count() elements). */
static void run_a2a(enum kind k, uint64_t *send, uint64_t *recv)
{
	size_t sc[64], rc[64], disp[64];

	for (int p = 0; p < nranks; p++) {
		disp[p] = (size_t)p * COUNT;
		sc[p] = k == K_ALLTOALL ? COUNT : a2av_count(rank, p);
		rc[p] = k == K_ALLTOALL ? COUNT : a2av_count(p, rank);
	}
	if (k == K_ALLTOALL)
		OK(hop_alltoall(comm, send, recv, COUNT, HOP_UINT64));
	else
		OK(hop_alltoallv(comm, send, sc, disp, recv, rc, disp,
				 HOP_UINT64));
	for (int p = 0; p < nranks; p++)
		for (size_t i = 0; i < COUNT; i++) {
			uint64_t want = i < rc[p] ? a2a_input(p, rank, i) : 0;
			if (recv[disp[p] + i] != want)
				FAIL("%s block %d element %zu: %llu, want %llu",
				     kind_name[k], p, i,
				     (unsigned long long)recv[disp[p] + i],
				     (unsigned long long)want);
		}
}

/* Elements of block @b of the v-variants: uneven, none empty (a rank
 * without a block would not depend on anyone's input). */
static size_t vcount(int b)
{
	return 1 + (size_t)(b % 3);
}

/* Gather, Scatter, AllGatherv, ReduceScatterv once, checked. */
static void run_kind_v(enum kind k, int root, uint64_t *send, uint64_t *recv)
{
	size_t cnt[64], at[64], n = 0, want;

	for (int b = 0; b < nranks; b++) {
		cnt[b] = k == K_ALLGATHERV || k == K_REDUCESCATTERV ? vcount(b)
								   : COUNT;
		at[b] = n;
		n += cnt[b];
	}
	if (k == K_GATHER)
		OK(hop_gather(comm, send, recv, COUNT, HOP_UINT64, root));
	else if (k == K_SCATTER)
		OK(hop_scatter(comm, send, recv, COUNT, HOP_UINT64, root));
	else if (k == K_ALLGATHERV)
		OK(hop_allgatherv(comm, send, cnt[rank], recv, cnt, at,
				  HOP_UINT64));
	else
		OK(hop_reducescatterv(comm, send, recv, cnt, HOP_UINT64,
				      HOP_SUM));
	for (int b = 0; b < nranks; b++) {
		/* the blocks this rank holds: all (gathers), its own (scatters) */
		if ((k == K_GATHER && rank != root) ||
		    ((k == K_SCATTER || k == K_REDUCESCATTERV) && b != rank))
			continue;
		for (size_t i = 0; i < cnt[b]; i++) {
			size_t o = k == K_SCATTER || k == K_REDUCESCATTERV
					   ? i : at[b] + i;

			want = k == K_SCATTER ? input(root, at[b] + i)
			       : k == K_REDUCESCATTERV ? 0 : input(b, i);
			for (int r = 0; k == K_REDUCESCATTERV && r < nranks; r++)
				want += input(r, at[b] + i);
			if (recv[o] != want)
				FAIL("%s block %d element %zu: %llu, want %llu",
				     kind_name[k], b, i,
				     (unsigned long long)recv[o],
				     (unsigned long long)want);
		}
	}
}

/* Run collective @k once; fill @out with its result and check it. */
static void run_kind(enum kind k, int root)
{
	uint64_t send[COUNT * 64], recv[COUNT * 64], want;
	size_t total = (size_t)COUNT * (size_t)nranks;

	if (total > sizeof(send) / sizeof(send[0]))
		FAIL("%d ranks exceed the test's buffers", nranks);
	for (size_t i = 0; i < total; i++)
		send[i] = input(rank, i);
	memset(recv, 0, sizeof(recv));
	switch (k) {
	case K_BARRIER:
		OK(hop_barrier(comm));
		return;
	case K_BCAST:
		OK(hop_broadcast(comm, send, COUNT, HOP_UINT64, root));
		for (size_t i = 0; i < COUNT; i++)
			if (send[i] != input(root, i))
				FAIL("broadcast element %zu: %llu, want %llu", i,
				     (unsigned long long)send[i],
				     (unsigned long long)input(root, i));
		return;
	case K_REDUCE:
	case K_ALLREDUCE:
		if (k == K_REDUCE)
			OK(hop_reduce(comm, send, recv, COUNT, HOP_UINT64,
				      HOP_SUM, root));
		else
			OK(hop_allreduce(comm, send, recv, COUNT, HOP_UINT64,
					 HOP_SUM));
		if (k == K_REDUCE && rank != root)
			return;
		for (size_t i = 0; i < COUNT; i++) {
			want = 0;
			for (int r = 0; r < nranks; r++)
				want += input(r, i);
			if (recv[i] != want)
				FAIL("%s element %zu: %llu, want %llu",
				     kind_name[k], i,
				     (unsigned long long)recv[i],
				     (unsigned long long)want);
		}
		return;
	case K_ALLGATHER:
		OK(hop_allgather(comm, send, recv, COUNT, HOP_UINT64));
		for (size_t i = 0; i < total; i++)
			if (recv[i] != input((int)(i / COUNT), i % COUNT))
				FAIL("allgather element %zu: %llu, want %llu",
				     i, (unsigned long long)recv[i],
				     (unsigned long long)input((int)(i / COUNT),
							       i % COUNT));
		return;
	case K_REDUCESCATTER:
		OK(hop_reducescatter(comm, send, recv, COUNT, HOP_UINT64,
				     HOP_SUM));
		for (size_t i = 0; i < COUNT; i++) {
			size_t g = (size_t)rank * COUNT + i;
			want = 0;
			for (int r = 0; r < nranks; r++)
				want += input(r, g);
			if (recv[i] != want)
				FAIL("reducescatter element %zu: %llu, want %llu",
				     i, (unsigned long long)recv[i],
				     (unsigned long long)want);
		}
		return;
	case K_ALLTOALL:
	case K_ALLTOALLV:
		run_a2a(k, send, recv);
		return;
	case K_COUNT:
		break;
	default:
		run_kind_v(k, root, send, recv);
	}
}

/* Does rank @r's exit depend on rank @late's entry in collective @k? */
static int depends(enum kind k, int r, int late, int root)
{
	switch (k) {
	case K_BCAST:
	case K_SCATTER:
		return late == root;
	case K_REDUCE:
	case K_GATHER:
		return r == root;
	case K_ALLTOALLV:
		return a2av_count(late, r) > 0;
	default:
		return 1;
	}
}

static int one_case(enum kind k, int late, int sleep)
{
	int root = (late + 1) % nranks; /* late root and late leaf both occur */
	uint64_t mine[2], all[2 * 64];

	if (k == K_BCAST || k == K_REDUCE || k == K_GATHER || k == K_SCATTER)
		root = (late + (nranks > 1 ? late % 2 : 0)) % nranks;
	OK(hop_barrier(comm));
	if (rank == late)
		sleep_ms(sleep);
	mine[0] = now_ns();
	run_kind(k, root);
	mine[1] = now_ns();
	OK(hop_allgather(comm, mine, all, 2, HOP_UINT64));
	for (int r = 0; r < nranks; r++) {
		if (!depends(k, r, late, root) || r == late)
			continue;
		uint64_t left = all[2 * r + 1], entered = all[2 * late];
		if (left < entered)
			FAIL("%s (root %d): rank %d left %.3f ms before late "
			     "rank %d entered", kind_name[k], root, r,
			     (double)(entered - left) / 1e6, late);
	}
	return 1;
}

int main(int argc, char **argv)
{
	const char *only = NULL, *e = getenv("HOP_ORDER_SLEEP_MS");
	int sleep = e ? atoi(e) : 20, cases = 0, no_v = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			only = argv[++i];
		} else if (!strcmp(argv[i], "--no-v")) {
			no_v = 1;
		} else {
			fprintf(stderr, "usage: coll_order [--only KIND] "
				"[--no-v]\n");
			return 2;
		}
	}
	rank = -1;
	if (hop_comm_init_env(&comm) != HOP_SUCCESS) {
		fprintf(stderr, "coll_order: init failed: %s\n",
			hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	nranks = hop_comm_size(comm);
	if (nranks > 64)
		FAIL("at most 64 ranks");
	for (int k = 0; k < K_COUNT; k++) {
		if ((only && strcmp(only, kind_name[k])) ||
		    (no_v && k >= K_GATHER))
			continue;
		for (int late = 0; late < nranks; late++)
			cases += one_case((enum kind)k, late, sleep);
	}
	OK(hop_comm_destroy(comm));
	printf("coll_order: rank %d passed %d cases\n", rank, cases);
	return 0;
}
