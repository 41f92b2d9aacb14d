/*
 * coll_matrix.c - the collectives' correctness matrix on a real transport,
 * run by coll_matrix.sh through hop-run (hop_comm_init_env).
 *
 * Every rank's input is a function of (rank, index, seed), so each rank
 * computes the reference for its own output independently (folded in
 * rank order). Float inputs are chosen so that every partial result is
 * exact (small integers, powers of two), hence any algorithm must match
 * the reference bit for bit; integers wrap and must match exactly. After
 * each case every rank sends rank 0 (by point-to-point, not by the code
 * under test) its verdict and a hash of its result; rank 0 checks that
 * allreduce, broadcast and allgather left identical bytes everywhere.
 *
 *   default   every collective x algorithm x a few dtype/op pairs x counts
 *             {0, N-1, N+1, 1000003} x in place or not x roots {0, mid,
 *             last}, blocking and nonblocking, several in flight at once,
 *             argument errors, no allocation in repeated calls
 *   --full    every dtype x op x counts {0, 1, 2, N-1, N+1, 1000003,
 *             16 MiB worth} x in place x roots {0, mid, last}
 *   --max-count N  skip larger counts (valgrind runs)
 *   --big-count N  the big count instead of 1000003 (sanitizer runs: the
 *             same multi-chunk and rendezvous paths with less data)
 *   --only KIND    only this collective's matrix (e.g. to split --full)
 *   --forced  only the collectives HOP_ALGO forces, each with its forced
 *             algorithm (tests/cluster/hier.sh: HOP_ALGO=allreduce:hier,..
 *             on several placements), counts 1 and 37 too, after four of
 *             them in flight at once
 *   --destroy-in-flight  destroy the comm with two collectives running
 *   --mismatch  rank 0 passes another count: some rank must get
 *             HOP_ERR_MISMATCH, none may hang (run with a short HOP_TIMEOUT)
 *   --mismatch-v W  the same for Gather/Scatter/v-variants
 *             (coll_matrix_v.c)
 *   --v-only  only the matrix of coll_matrix_v.c (coll_matrix_v.sh; --full
 *             runs it after the others)
 * Gather, Scatter, AllGatherv and ReduceScatterv: coll_matrix_v.c.
 *
 * Prints "coll_matrix: rank R passed C cases" and exits 0, or names the
 * first failing case and exits 1.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/hop.h>

#include "../unit/coll_ref.h"
#include "coll_matrix.h"

hop_comm_t *comm;
int rank, nranks, failures, cases;
static size_t max_count = SIZE_MAX; /* --max-count: for valgrind runs */
static size_t big_count = 1000003;   /* --big-count: for sanitizer runs */
static int only_kind = -1;           /* --only KIND: one collective */


static const struct {
	int kind, algo;
} algos[] = {
	{ HOP_COLL_BROADCAST, HOP_ALGO_FLAT }, { HOP_COLL_BROADCAST, HOP_ALGO_TREE },
	{ HOP_COLL_BROADCAST, HOP_ALGO_CHAIN }, { HOP_COLL_REDUCE, HOP_ALGO_FLAT },
	{ HOP_COLL_REDUCE, HOP_ALGO_TREE }, { HOP_COLL_REDUCE, HOP_ALGO_CHAIN },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_RING }, { HOP_COLL_ALLREDUCE, HOP_ALGO_TREE },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_DBTREE }, { HOP_COLL_ALLREDUCE, HOP_ALGO_RD },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER },
	{ HOP_COLL_ALLGATHER, HOP_ALGO_RING }, { HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK },
	{ HOP_COLL_REDUCESCATTER, HOP_ALGO_RING },
	{ HOP_COLL_REDUCESCATTER, HOP_ALGO_HALVING },
	{ HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION },
};
#define NALGOS (int)(sizeof(algos) / sizeof(*algos))

/* The matrix's algorithms: algos[], or (--forced) what HOP_ALGO forces. */
static struct {
	int kind, algo;
} mtab[NALGOS + HOP_COLL_KIND_COUNT];
static int mtab_n, forced_mode;

static void matrix_table(void)
{
	mtab_n = 0;
	if (!forced_mode) {
		for (int i = 0; i < NALGOS; i++) {
			mtab[i].kind = algos[i].kind;
			mtab[i].algo = algos[i].algo;
		}
		mtab_n = NALGOS;
		return;
	}
	for (int k = 0; k <= HOP_COLL_BARRIER; k++)
		if (comm->coll->tune.forced[k] != HOP_ALGO_AUTO) {
			mtab[mtab_n].kind = k;
			mtab[mtab_n++].algo = comm->coll->tune.forced[k];
		}
}

const char *kase_str(const struct kase *k)
{
	static char b[200];

	snprintf(b, sizeof(b), "%s/%s N=%d count=%zu %s/%s inplace=%d root=%d %s",
		 hop_coll_kind_name(k->kind), hop_coll_algo_name(k->algo), nranks,
		 k->count, hop_dtype_name(k->dt), hop_op_name(k->op), k->inplace,
		 k->root, k->nb ? "nonblocking" : "blocking");
	return b;
}

void fail(const struct kase *k, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "coll_matrix rank %d: FAIL %s: ", rank, k ? kase_str(k) : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (last error: %s)\n", hop_comm_last_error(comm));
	failures++;
}

static int is_reducing(int kind)
{
	return kind == HOP_COLL_REDUCE || kind == HOP_COLL_ALLREDUCE ||
	       kind == HOP_COLL_REDUCESCATTER;
}

/* every rank ends with the same result */
static int replicated(int kind)
{
	return kind == HOP_COLL_BROADCAST || kind == HOP_COLL_ALLGATHER ||
	       kind == HOP_COLL_ALLREDUCE;
}

/* input element i of rank r: exact-mode values (see the header) */
void gen(void *buf, size_t at, size_t i, const struct kase *k, int r)
{
	uint64_t h = ref_hash((uint64_t)r * 0x10000001ull + i, 99,
			      (uint64_t)k->dt * 8 + k->op);
	double v;

	if (!ref_is_float(k->dt)) {
		ref_put_i(buf, at, k->dt, h);
		return;
	}
	if (k->op == HOP_PROD)
		v = (double[]){ 1, 2, 0.5, -1, -2, -0.5 }[h % 6];
	else if (k->op == HOP_MIN || k->op == HOP_MAX)
		v = ((double)(h % 255) - 127) / 2;
	else
		v = (double)(h % 17) - 8;
	ref_put_f(buf, at, k->dt, v);
}

/* expected element i of a reduction over all ranks, rank order */
void expect_reduced(void *out, size_t i, const struct kase *k)
{
	char x[8];

	if (!ref_is_float(k->dt)) {
		gen(x, 0, i, k, 0);
		uint64_t acc = ref_get_i(x, 0, k->dt);
		for (int r = 1; r < nranks; r++) {
			gen(x, 0, i, k, r);
			acc = ref_wrap(k->dt, ref_iop(k->dt, k->op, acc,
						      ref_get_i(x, 0, k->dt)));
		}
		if (k->op == HOP_AVG)
			acc = ref_is_signed(k->dt) ? (uint64_t)((int64_t)acc / nranks)
						   : acc / (uint64_t)nranks;
		ref_put_i(out, 0, k->dt, acc);
		return;
	}
	gen(x, 0, i, k, 0);
	double acc = ref_get_f(x, 0, k->dt);
	for (int r = 1; r < nranks; r++) {
		gen(x, 0, i, k, r);
		double v = ref_get_f(x, 0, k->dt);
		acc = k->op == HOP_PROD ? acc * v : k->op == HOP_MIN ? (v < acc ? v : acc)
		    : k->op == HOP_MAX ? (v > acc ? v : acc) : acc + v;
	}
	if (k->op == HOP_AVG && k->dt == HOP_FLOAT64) {
		acc /= nranks;
	} else if (k->op == HOP_AVG) {
		volatile float f = (float)acc;
		acc = (float)(f / (float)nranks);
	}
	ref_put_f(out, 0, k->dt, acc);
}

uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n + 16);

	if (!p) {
		fprintf(stderr, "coll_matrix rank %d: out of memory (%zu B)\n", rank, n);
		exit(1);
	}
	return p;
}

/* Run one case; returns the hash of this rank's result (0 if none). */
static uint64_t run_case(const struct kase *k, int *ok)
{
	size_t es = hop_dtype_size(k->dt), n = k->count, N = (size_t)nranks;
	size_t in_elems = k->kind == HOP_COLL_REDUCESCATTER ? n * N : n;
	size_t out_elems = k->kind == HOP_COLL_ALLGATHER ? n * N : n;
	int r = rank, mis = (int)(k->count % 3); /* misaligned buffers too */
	char *sraw = xmalloc(in_elems * es), *rraw = xmalloc(out_elems * es);
	char *sb = sraw + mis, *rb = rraw + mis, *send = sb, *recv = rb;
	hop_request_t *req = NULL;
	uint64_t h = 0;
	int rc = 0;

	*ok = 1;
	comm->coll->tune.forced[k->kind] = k->algo;
	for (size_t i = 0; i < in_elems; i++)
		gen(sb, i, i, k, r);
	if (k->inplace) {
		switch (k->kind) {
		case HOP_COLL_ALLGATHER:
			memcpy(rb + (size_t)r * n * es, sb, n * es);
			send = rb + (size_t)r * n * es;
			break;
		case HOP_COLL_REDUCESCATTER:
			recv = sb + (size_t)r * n * es;
			break;
		case HOP_COLL_ALLREDUCE:
		case HOP_COLL_REDUCE:
			if (k->kind == HOP_COLL_ALLREDUCE || r == k->root) {
				memcpy(rb, sb, n * es);
				send = rb;
			}
			break;
		}
	}
	if (k->kind == HOP_COLL_BROADCAST) {
		if (r == k->root)
			memcpy(rb, sb, n * es);
		else
			memset(rb, 0x77, n * es);
	}
	switch (k->kind) {
	case HOP_COLL_BROADCAST:
		rc = k->nb ? hop_ibroadcast(comm, rb, n, k->dt, k->root, &req)
			   : hop_broadcast(comm, rb, n, k->dt, k->root);
		break;
	case HOP_COLL_REDUCE:
		rc = k->nb ? hop_ireduce(comm, send, r == k->root ? recv : NULL, n, k->dt,
					 k->op, k->root, &req)
			   : hop_reduce(comm, send, r == k->root ? recv : NULL, n, k->dt,
					k->op, k->root);
		break;
	case HOP_COLL_ALLREDUCE:
		rc = k->nb ? hop_iallreduce(comm, send, recv, n, k->dt, k->op, &req)
			   : hop_allreduce(comm, send, recv, n, k->dt, k->op);
		break;
	case HOP_COLL_ALLGATHER:
		rc = k->nb ? hop_iallgather(comm, send, recv, n, k->dt, &req)
			   : hop_allgather(comm, send, recv, n, k->dt);
		break;
	case HOP_COLL_REDUCESCATTER:
		rc = k->nb ? hop_ireducescatter(comm, send, recv, n, k->dt, k->op, &req)
			   : hop_reducescatter(comm, send, recv, n, k->dt, k->op);
		break;
	default:
		rc = k->nb ? hop_ibarrier(comm, &req) : hop_barrier(comm);
	}
	if (!rc && k->nb) {
		int done = 0;
		/* a few hop_test polls, then hop_wait */
		for (int i = 0; i < 3 && !rc && !done; i++)
			rc = hop_test(&req, &done, NULL);
		if (!rc && !done)
			rc = hop_wait(&req, NULL);
		if (!rc && req)
			fail(k, "request not freed by hop_wait");
	}
	if (rc) {
		fail(k, "returned %s", hop_err_name(rc));
		*ok = 0;
		goto out;
	}
	int has = k->kind != HOP_COLL_BARRIER && !(k->kind == HOP_COLL_REDUCE && r != k->root);
	char want[8], *res = k->kind == HOP_COLL_BROADCAST ? rb : recv;
	/* Every rank's copy of a replicated result (broadcast, allgather,
	 * allreduce) must hash the same as rank 0's (gather_verdict), so each
	 * rank checks only its own share of the elements against the
	 * reference: together they check every element, at 1/N the work. */
	size_t lo = 0, hi = out_elems;
	if (replicated(k->kind)) {
		lo = out_elems * (size_t)r / N;
		hi = out_elems * ((size_t)r + 1) / N;
	}
	for (size_t i = lo; has && i < hi; i++) {
		if (k->kind == HOP_COLL_BROADCAST)
			gen(want, 0, i, k, k->root);
		else if (k->kind == HOP_COLL_ALLGATHER)
			gen(want, 0, i % n, k, (int)(i / n));
		else if (k->kind == HOP_COLL_REDUCESCATTER)
			expect_reduced(want, (size_t)r * n + i, k);
		else
			expect_reduced(want, i, k);
		if (memcmp(res + i * es, want, es)) {
			fail(k, "element %zu of %zu differs from the reference", i, out_elems);
			*ok = 0;
			break;
		}
	}
	/* the send buffer is the caller's: untouched */
	if (!k->inplace && k->kind != HOP_COLL_BROADCAST && k->kind != HOP_COLL_BARRIER)
		for (size_t i = 0; i < in_elems; i++) {
			gen(want, 0, i, k, r);
			if (memcmp(sb + i * es, want, es)) {
				fail(k, "send buffer element %zu was modified", i);
				*ok = 0;
				break;
			}
		}
	if (has && replicated(k->kind))
		h = hash_bytes(res, out_elems * es) | 1;
out:
	free(sraw);
	free(rraw);
	return h;
}

/* verdicts and hashes to rank 0 by point-to-point */
void gather_verdict(const struct kase *k, int ok, uint64_t h)
{
	uint64_t mine[2] = { (uint64_t)ok, h }, theirs[2];

	cases++;
	if (rank != 0) {
		if (hop_send(comm, mine, sizeof(mine), 0, 7777))
			fail(k, "sending the verdict to rank 0 failed");
		return;
	}
	for (int q = 1; q < nranks; q++) {
		if (hop_recv(comm, theirs, sizeof(theirs), q, 7777, NULL)) {
			fail(k, "receiving rank %d's verdict failed", q);
			continue;
		}
		if (!theirs[0])
			fail(k, "rank %d failed this case", q);
		else if (ok && theirs[1] != h)
			fail(k, "rank %d's result is not bitwise identical to rank 0's", q);
	}
}

static void run(const struct kase *k)
{
	int ok;
	uint64_t h = run_case(k, &ok);

	gather_verdict(k, ok, h);
	if (rank == 0 && cases % 1000 == 0)
		fprintf(stderr, "coll_matrix: %d cases done\n", cases);
	if (failures > 20) {
		fprintf(stderr, "coll_matrix rank %d: too many failures\n", rank);
		exit(1);
	}
}

/* dtype/op pairs in a fixed rotation, so the subset still covers all */
static void pair_of(int idx, int reducing, hop_dtype_t *dt, hop_op_t *op)
{
	int p = idx % (HOP_DTYPE_COUNT * HOP_OP_COUNT);

	*dt = (hop_dtype_t)(p % HOP_DTYPE_COUNT);
	*op = reducing ? (hop_op_t)((p / HOP_DTYPE_COUNT + p) % HOP_OP_COUNT) : HOP_SUM;
}

static void matrix(int full)
{
	size_t N = (size_t)nranks;
	int roots[3] = { 0, nranks / 2, nranks - 1 }, idx = 0;

	for (int ai = 0; ai < mtab_n; ai++) {
		int kind = mtab[ai].kind, red = is_reducing(kind);
		if (only_kind >= 0 && kind != only_kind)
			continue;
		int rooted = kind == HOP_COLL_REDUCE || kind == HOP_COLL_BROADCAST;
		size_t counts[8] = { 0, N - 1, N + 1, big_count }, nc = 4;
		if (full) {
			counts[nc++] = 1;
			counts[nc++] = 2;
			counts[nc++] = 0; /* 16 MiB worth: per dtype below */
		} else if (forced_mode) {
			counts[nc++] = 1;
			counts[nc++] = 37;
		}
		if (kind == HOP_COLL_BARRIER)
			nc = 1;
		for (size_t ci = 0; ci < nc; ci++) {
			if (ci > 0 && ci < 4 && counts[ci] == counts[ci - 1])
				continue; /* N-1 == 0 for one rank */
			int big = counts[ci] >= big_count || (full && ci == nc - 1);
			int npairs = full ? (red ? HOP_DTYPE_COUNT * HOP_OP_COUNT : HOP_DTYPE_COUNT)
					  : big ? 1 : 2;
			for (int pi = 0; pi < npairs; pi++) {
				struct kase k = { kind, mtab[ai].algo, HOP_INT32, HOP_SUM,
						  counts[ci], 0, 0, 0 };
				if (full) {
					k.dt = (hop_dtype_t)(pi % HOP_DTYPE_COUNT);
					k.op = red ? (hop_op_t)(pi / HOP_DTYPE_COUNT) : HOP_SUM;
				} else {
					pair_of(idx * 7 + pi * 3, red, &k.dt, &k.op);
				}
				if (full && ci == nc - 1)
					k.count = (16u << 20) / hop_dtype_size(k.dt);
				if (k.count > max_count)
					continue;
				for (int ip = 0; ip < 2; ip++) {
					if (!full && big && ip != idx % 2)
						continue;
					for (int ri = 0; ri < (rooted ? 3 : 1); ri++) {
						if (ri && roots[ri] == roots[ri - 1])
							continue;
						if (!full && big && rooted && ri != 2)
							continue;
						k.inplace = ip;
						k.root = roots[ri];
						k.nb = idx++ % 3 == 1;
						if (kind == HOP_COLL_BARRIER)
							k.count = 0;
						run(&k);
					}
				}
			}
		}
		comm->coll->tune.forced[kind] = HOP_ALGO_AUTO;
	}
}

int main(int argc, char **argv)
{
	int full = 0, mismatch = 0, mismatch_v = -1, destroy = 0, v_only = 0;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--full"))
			full = 1;
		else if (!strcmp(argv[i], "--mismatch"))
			mismatch = 1;
		else if (!strcmp(argv[i], "--v-only"))
			v_only = 1;
		else if (!strcmp(argv[i], "--forced"))
			forced_mode = 1;
		else if (!strcmp(argv[i], "--mismatch-v") && i + 1 < argc)
			mismatch_v = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--destroy-in-flight"))
			destroy = 1;
		else if (!strcmp(argv[i], "--max-count") && i + 1 < argc)
			max_count = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--big-count") && i + 1 < argc) {
			big_count = strtoull(argv[++i], NULL, 0);
			if (big_count < 65536) {
				fprintf(stderr, "coll_matrix: --big-count %zu: "
					"below 65536 it is no big case\n", big_count);
				return 2;
			}
		}
		else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
			const char *name = argv[++i];
			for (int kk = 0; kk < HOP_COLL_KIND_COUNT; kk++)
				if (!strcmp(name, hop_coll_kind_name(kk)))
					only_kind = kk;
			if (only_kind < 0) {
				fprintf(stderr, "coll_matrix: --only %s: not a "
					"collective\n", name);
				return 2;
			}
		}
		else {
			fprintf(stderr, "usage: coll_matrix [--full|--mismatch|"
				"--mismatch-v W|--v-only|--destroy-in-flight|"
				"--forced] "
				"[--max-count N] [--big-count N] [--only KIND]\n");
			return 2;
		}
	}
	if ((rc = hop_comm_init_env(&comm))) {
		fprintf(stderr, "coll_matrix: hop_comm_init_env: %s: %s\n",
			hop_err_name(rc), hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	nranks = hop_comm_size(comm);
	if (destroy)
		return destroy_in_flight();
	if (mismatch || mismatch_v >= 0) {
		rc = mismatch ? mismatch_case() : mismatch_v_case(mismatch_v);
		hop_comm_destroy(comm);
		return rc;
	}
	matrix_table(); /* before anything forces another algorithm */
	if (forced_mode) {
		in_flight();
		matrix(full);
	} else if (!v_only) {
		argument_errors();
		in_flight();
		steady_state();
		matrix(full);
	}
	if (v_only || full)
		matrix_v(only_kind, max_count);
	hop_comm_destroy(comm);
	if (failures) {
		fprintf(stderr, "coll_matrix: rank %d FAILED %d of %d cases\n", rank,
			failures, cases);
		return 1;
	}
	printf("coll_matrix: rank %d passed %d cases on %s\n", rank, cases,
	       getenv("HOP_TRANSPORT") ? getenv("HOP_TRANSPORT") : "auto");
	return 0;
}
