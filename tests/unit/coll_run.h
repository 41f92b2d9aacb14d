/*
 * coll_run.h - one collective run on the in-process simulator (src/sim)
 * with data, checked bit for bit: each rank's input is a function of
 * (rank, index, seed), the reference is folded in rank order here
 * (coll_ref.h), guards around every buffer, the send buffer untouched,
 * every rank's result bitwise identical. Shared by test_coll_algos.c
 * (flat algorithms) and test_coll_hier.c (hierarchical ones, on a
 * placement of the ranks on hosts).
 */
#ifndef HOP_TEST_COLL_RUN_H
#define HOP_TEST_COLL_RUN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "coll/sched.h"
#include "sim/sim.h"
#include "coll_ref.h"

#define GUARD 64
#define GUARD_BYTE 0x5a

struct run {
	int kind, algo, n, root, inplace, depth, misalign, random;
	size_t count, chunk;
	hop_dtype_t dt;
	hop_op_t op;
	int seed;
	/* placement (NULL: one host) and a hierarchical one's phases */
	const int *hosts;
	int sub[2];
};

/* Build every schedule with its closing barrier (hop_coll_args.sync). */
static int coll_run_sync;
/* A hierarchical AllReduce in its leaders' form (hop_coll_args.leaders). */
static int coll_run_leaders;

static inline int rooted(int kind)
{
	return kind == HOP_COLL_BROADCAST || kind == HOP_COLL_REDUCE;
}

/* input element i of rank r */
static void gen(void *buf, size_t i, const struct run *R, int r)
{
	uint64_t h = ref_hash((uint64_t)r * 0x10000001ull + i, (uint64_t)R->seed,
			      (uint64_t)R->dt * 8 + R->op);
	if (!ref_is_float(R->dt)) {
		ref_put_i(buf, i, R->dt, h);
		return;
	}
	double v;
	if (R->random == 2) { /* order-sensitive specials: +-0, NaNs */
		static const double sp[] = { 0.0, -0.0, 1.0, -1.0 };
		v = h % 5 == 4 ? NAN : sp[h % 5];
		if (v != v && R->dt == HOP_FLOAT32) { /* payload names the rank */
			uint32_t u = 0x7fc00000u | (uint32_t)(r + 1);
			memcpy((char *)buf + 4 * i, &u, 4);
			return;
		}
	} else if (R->random)
		v = ((double)(h >> 11) / 9007199254740992.0) * 2 - 1;
	else if (R->op == HOP_PROD)
		v = (double[]){ 1, 2, 0.5, -1, -2, -0.5 }[h % 6];
	else if (R->op == HOP_MIN || R->op == HOP_MAX)
		v = ((double)(h % 255) - 127) / 2;
	else
		v = (double)(h % 17) - 8;
	ref_put_f(buf, i, R->dt, v);
}

/* reference of element i reduced over all ranks, rank order */
static void reduce_ref(void *out, size_t i, const struct run *R, char **in)
{
	hop_dtype_t dt = R->dt;

	if (!ref_is_float(dt)) {
		uint64_t acc = ref_get_i(in[0], i, dt);
		for (int r = 1; r < R->n; r++)
			acc = ref_wrap(dt, ref_iop(dt, R->op, acc,
						   ref_get_i(in[r], i, dt)));
		if (R->op == HOP_AVG)
			acc = ref_is_signed(dt) ? (uint64_t)((int64_t)acc / R->n)
						: acc / (uint64_t)R->n;
		ref_put_i(out, 0, dt, acc);
		return;
	}
	double acc = ref_get_f(in[0], i, dt); /* exact for these inputs */
	for (int r = 1; r < R->n; r++) {
		double x = ref_get_f(in[r], i, dt);
		switch (R->op) {
		case HOP_PROD: acc *= x; break;
		case HOP_MIN: acc = x < acc ? x : acc; break;
		case HOP_MAX: acc = x > acc ? x : acc; break;
		default: acc += x; break;
		}
	}
	if (R->op == HOP_AVG && dt == HOP_FLOAT64)
		acc /= R->n;
	else if (R->op == HOP_AVG) {
		volatile float f = (float)acc;
		acc = (float)(f / (float)R->n);
	}
	ref_put_f(out, 0, dt, acc);
}

static char *alloc_guarded(size_t len, int mis)
{
	char *p = malloc(len + 2 * GUARD + 8);

	assert_non_null(p);
	memset(p, GUARD_BYTE, len + 2 * GUARD + 8);
	return p + GUARD + mis;
}

static void check_guard(char *p, size_t len, int mis, const char *what, int r)
{
	char *base = p - GUARD - mis;

	for (size_t i = 0; i < GUARD + (size_t)mis; i++)
		if ((unsigned char)base[i] != GUARD_BYTE)
			fail_msg("%s of rank %d: written below the buffer", what, r);
	for (size_t i = 0; i < GUARD; i++)
		if ((unsigned char)p[len + i] != GUARD_BYTE)
			fail_msg("%s of rank %d: written past the end", what, r);
}

static void free_guarded(char *p, int mis)
{
	if (p)
		free(p - GUARD - mis);
}

static const char *desc_kind(int k)
{
	static const char *n[] = { "bcast", "reduce", "allreduce", "allgather",
				   "reducescatter", "barrier" };
	return n[k];
}

static const char *desc_algo(int a)
{
	static const char *n[] = { "auto", "flat", "tree", "chain", "ring", "dbtree",
				   "rd", "rabenseifner", "bruck", "halving",
				   "dissemination", "pairwise", "hier" };
	return n[a];
}

#define FAIL(...) run_fail(R, __VA_ARGS__)

__attribute__((format(printf, 2, 3)))
static void run_fail(const struct run *R, const char *fmt, ...)
{
	char m[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	fail_msg("%s/%s N=%d count=%zu %s/%s root=%d inplace=%d chunk=%zu "
		 "depth=%d mis=%d rnd=%d hosts=%s: %s", desc_kind(R->kind),
		 desc_algo(R->algo), R->n, R->count, hop_dtype_name(R->dt),
		 hop_op_name(R->op), R->root, R->inplace, R->chunk, R->depth,
		 R->misalign, R->random, R->hosts ? "placed" : "one", m);
}

static double ulp_of(hop_dtype_t dt)
{
	return dt == HOP_FLOAT16 ? 0x1p-11 : dt == HOP_BFLOAT16 ? 0x1p-8
	     : dt == HOP_FLOAT32 ? 0x1p-24 : 0x1p-53;
}

static void run_one(const struct run *R)
{
	int n = R->n, mis = R->misalign;
	size_t es = hop_dtype_size(R->dt), cnt = R->count;
	size_t in_elems = R->kind == HOP_COLL_REDUCESCATTER ? cnt * (size_t)n : cnt;
	size_t out_elems = R->kind == HOP_COLL_ALLGATHER ? cnt * (size_t)n : cnt;
	char **in = calloc((size_t)n, sizeof(char *)), **sb = calloc((size_t)n, sizeof(char *));
	char **rb = calloc((size_t)n, sizeof(char *)), **scr = calloc((size_t)n, sizeof(char *));
	struct hop_sched *s = calloc((size_t)n, sizeof(*s));

	for (int r = 0; r < n; r++) {
		struct hop_coll_args a = { R->kind, R->algo, r, n, R->root, cnt, R->dt,
					   R->op, R->inplace, R->chunk, R->depth, 0,
					   NULL, NULL, 0, { R->sub[0], R->sub[1] },
					   R->hosts, hop_hosts_sig(R->hosts, n),
					   coll_run_sync, coll_run_leaders };
		int root_or_all = !(R->kind == HOP_COLL_REDUCE && r != R->root);
		void *base[HOP_BUF_COUNT] = { NULL };

		in[r] = malloc(in_elems * es + 1);
		for (size_t i = 0; i < in_elems; i++)
			gen(in[r], i, R, r);
		if (R->kind == HOP_COLL_BROADCAST) {
			rb[r] = alloc_guarded(cnt * es, mis);
			if (r == R->root)
				memcpy(rb[r], in[r], cnt * es);
			base[HOP_BUF_SEND] = base[HOP_BUF_RECV] = rb[r];
		} else if (R->kind != HOP_COLL_BARRIER) {
			if (root_or_all)
				rb[r] = alloc_guarded(out_elems * es, mis);
			if (R->inplace && root_or_all) {
				size_t at = R->kind == HOP_COLL_ALLGATHER ? (size_t)r * cnt * es : 0;
				char *buf = R->kind == HOP_COLL_REDUCESCATTER
						    ? (sb[r] = alloc_guarded(in_elems * es, mis))
						    : rb[r];
				memcpy(buf + at, in[r], in_elems * es);
				base[HOP_BUF_SEND] = buf + at;
				base[HOP_BUF_RECV] = R->kind == HOP_COLL_REDUCESCATTER
							     ? buf + (size_t)r * cnt * es : rb[r];
				if (R->kind == HOP_COLL_REDUCESCATTER) {
					free_guarded(rb[r], mis);
					rb[r] = NULL;
				}
			} else {
				sb[r] = alloc_guarded(in_elems * es, mis);
				memcpy(sb[r], in[r], in_elems * es);
				base[HOP_BUF_SEND] = sb[r];
				base[HOP_BUF_RECV] = rb[r];
			}
		}
		a.inplace = R->inplace && root_or_all;
		int ret = hop_sched_build(&s[r], &a);
		if (ret)
			FAIL("rank %d: build: %s", r, hop_strerror(ret));
		/* a second build with equal args must keep the schedule */
		int nsteps = s[r].nsteps;
		assert_int_equal(hop_sched_build(&s[r], &a), 0);
		assert_int_equal(s[r].nsteps, nsteps);
		scr[r] = alloc_guarded(s[r].scratch_bytes, 0);
		base[HOP_BUF_SCRATCH] = scr[r];
		hop_sched_start(&s[r], base);
	}
	/* chaos: messages delivered late and in a random order (seeded by
	 * the configuration), so a missing dependency corrupts data */
	struct hop_sim sim = { .nranks = n, .s = s, .chaos = R->depth != 2,
			       .seed = ref_hash((uint64_t)R->kind * 131 + (uint64_t)R->algo,
						(uint64_t)n * 7919 + cnt, (uint64_t)R->root) };
	int ret = hop_sim_run(&sim);
	if (ret)
		FAIL("sim: %s", sim.err);

	/* the reference, once: every rank's expected output (reducescatter:
	 * all N blocks, rank r checks block r) */
	size_t want_elems = R->kind == HOP_COLL_REDUCESCATTER ? in_elems : out_elems;
	char *want = malloc(want_elems * es + 8), *first = NULL;
	for (size_t i = 0; R->kind != HOP_COLL_BARRIER && i < want_elems; i++) {
		switch (R->kind) {
		case HOP_COLL_BROADCAST:
			memcpy(want + i * es, in[R->root] + i * es, es);
			break;
		case HOP_COLL_ALLGATHER:
			memcpy(want + i * es, in[i / cnt] + (i % cnt) * es, es);
			break;
		default:
			reduce_ref(want + i * es, i, R, in);
		}
	}
	for (int r = 0; r < n; r++) {
		char *res = (char *)s[r].base[HOP_BUF_RECV];
		char *exp = want + (R->kind == HOP_COLL_REDUCESCATTER ? (size_t)r * cnt * es : 0);
		int has = R->kind != HOP_COLL_BARRIER &&
			  !(R->kind == HOP_COLL_REDUCE && r != R->root);
		if (!has)
			goto guards;
		if (R->random == 2 || (!R->random && !memcmp(res, exp, out_elems * es)))
			goto identical;
		for (size_t i = 0; i < out_elems; i++) {
			if (!R->random && memcmp(res + i * es, exp + i * es, es))
				FAIL("rank %d element %zu differs from the reference", r, i);
			if (R->random) {
				double sum = 0, abs = 0, got = ref_get_f(res, i, R->dt);
				size_t gi = R->kind == HOP_COLL_REDUCESCATTER ? (size_t)r * cnt + i : i;
				for (int q = 0; q < n; q++) {
					double x = ref_get_f(in[q], gi, R->dt);
					sum += x;
					abs += fabs(x);
				}
				if (fabs(got - sum) > (n - 1) * ulp_of(R->dt) * abs * 1.0001 + 1e-300)
					FAIL("rank %d element %zu = %g, exact %g: outside the bound", r, i, got, sum);
			}
		}
identical:
		/* every rank holds the same bytes (reducescatter: own block) */
		if (R->kind != HOP_COLL_REDUCESCATTER && R->kind != HOP_COLL_REDUCE) {
			if (!first)
				first = res;
			else if (memcmp(first, res, out_elems * es))
				FAIL("rank %d's result is not bitwise identical to rank 0's", r);
		}
guards:
		if (sb[r] && !(R->inplace && R->kind == HOP_COLL_REDUCESCATTER) &&
		    memcmp(sb[r], in[r], in_elems * es))
			FAIL("rank %d's send buffer was modified", r);
		if (sb[r])
			check_guard(sb[r], in_elems * es, mis, "sendbuf", r);
		if (rb[r])
			check_guard(rb[r], (R->kind == HOP_COLL_BROADCAST ? cnt : out_elems) * es,
				    mis, "recvbuf", r);
		check_guard(scr[r], s[r].scratch_bytes, 0, "scratch", r);
	}
	free(want);
	for (int r = 0; r < n; r++) {
		free(in[r]);
		free_guarded(sb[r], mis);
		free_guarded(rb[r], mis);
		free_guarded(scr[r], 0);
		hop_sched_free(&s[r]);
	}
	hop_sim_free(&sim);
	free(in);
	free(sb);
	free(rb);
	free(scr);
	free(s);
}

#endif /* HOP_TEST_COLL_RUN_H */
