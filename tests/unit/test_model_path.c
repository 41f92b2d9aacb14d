/*
 * test_model_path.c - multi-hop formulas: store-and-forward and pipelined
 * times by hand, k* against the brute-force argmin of T(m, h, k) over
 * integer k for many random (alpha, beta, m, h), its clamping, T*, the
 * unequal-link forms, and the integer minimiser on unimodal functions.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "model_eq.h"

#include <hop/common.h>

#include "model/model.h"

static double urand(double lo, double hi)
{
	return lo + (hi - lo) * ((double)rand() / RAND_MAX);
}

static void test_hand_values(void **state)
{
	(void)state;
	/* a = 2, b = 4, m = 64, h = 3 */
	EQ(hop_model_saf(2, 4, 64, 3), 54);
	EQ(hop_model_pipe(2, 4, 64, 3, 1), 54);
	EQ(hop_model_pipe(2, 4, 64, 3, 4), 36);
	EQ(hop_model_pipe(2, 4, 64, 3, 8), 10 * 4);
	/* k* = sqrt((h-1) m / (a b)) = sqrt(2 * 64 / 8) = 4 */
	EQ(hop_model_pipe_kreal(2, 4, 64, 3), 4);
	assert_int_equal(hop_model_pipe_kopt(2, 4, 64, 3, 1), 4);
	/* T* = (h-1) a + m/b + 2 sqrt((h-1) m a / b) = 4 + 16 + 16 */
	EQ(hop_model_pipe_tstar(2, 4, 64, 3), 36);
	/* one hop: nothing to overlap */
	EQ(hop_model_pipe_kreal(2, 4, 64, 1), 1);
	assert_int_equal(hop_model_pipe_kopt(2, 4, 64, 1, 1), 1);
	EQ(hop_model_pipe_tstar(2, 4, 64, 1), hop_model_saf(2, 4, 64, 1));
	/* zero hops */
	EQ(hop_model_saf(2, 4, 64, 0), 0);
	EQ(hop_model_pipe(2, 4, 64, 0, 3), 0);
	assert_true(isnan(hop_model_pipe(2, 4, 64, 3, 0)));
}

static void test_clamp(void **state)
{
	(void)state;
	/* k* = 4 but 64 / 32 = 2 chunks at most */
	assert_int_equal(hop_model_kmax(64, 32), 2);
	assert_int_equal(hop_model_pipe_kopt(2, 4, 64, 3, 32), 2);
	/* message smaller than one chunk */
	assert_int_equal(hop_model_kmax(100, 4096), 1);
	assert_int_equal(hop_model_pipe_kopt(1e-6, 1e9, 100, 8, 4096), 1);
	/* alpha = 0: chunks are free, as many as allowed */
	assert_true(isinf(hop_model_pipe_kreal(0, 1e9, 1 << 20, 4)));
	assert_int_equal(hop_model_pipe_kopt(0, 1e9, 1 << 20, 4, 1024), 1024);
	/* huge messages stop at HOP_MODEL_MAX_CHUNKS */
	assert_int_equal(hop_model_kmax(1e18, 1), HOP_MODEL_MAX_CHUNKS);
	assert_int_equal(hop_model_pipe_kopt(0, 1e9, 1e18, 4, 1),
			 HOP_MODEL_MAX_CHUNKS);
	/* min_chunk < 1 counts as 1 byte; m = 0 as one chunk */
	assert_int_equal(hop_model_kmax(10, 0), 10);
	assert_int_equal(hop_model_kmax(0, 1), 1);
	assert_int_equal(hop_model_pipe_kopt(1e-6, 1e9, 0, 4, 1), 1);
}

/* k* against the brute-force argmin over every integer k. */
static void test_kopt_brute(void **state)
{
	(void)state;
	srand(42);
	for (int it = 0; it < 2000; it++) {
		double a = pow(10, urand(-7, -3)), b = pow(10, urand(7, 11));
		double m = floor(pow(2, urand(0, 30)));
		int h = 1 + rand() % 64;
		double min_chunk = floor(pow(2, urand(0, 16)));
		long kmax = hop_model_kmax(m, min_chunk), bk = 1;
		double bt = INFINITY;

		if (kmax > 20000) {   /* keep it affordable */
			min_chunk = ceil(m / 20000);
			kmax = hop_model_kmax(m, min_chunk);
		}
		for (long k = 1; k <= kmax; k++) {
			double t = hop_model_pipe(a, b, m, h, k);

			if (t < bt) {
				bt = t;
				bk = k;
			}
		}
		long got = hop_model_pipe_kopt(a, b, m, h, min_chunk);
		double gt = hop_model_pipe(a, b, m, h, got);

		assert_true(got >= 1 && got <= kmax);
		if (got != bk && !(fabs(gt - bt) <= 1e-12 * bt)) {
			print_error("a=%g b=%g m=%g h=%d min_chunk=%g: k*=%ld "
				    "(T=%.17g) brute %ld (T=%.17g)\n", a, b, m, h,
				    min_chunk, got, gt, bk, bt);
			fail();
		}
		/* T* bounds every integer k from below */
		assert_true(hop_model_pipe_tstar(a, b, m, h) <= bt * (1 + 1e-12));
	}
}

static void test_unequal(void **state)
{
	struct hop_model_hop two[2] = { { 1, 2 }, { 3, 4 } };
	struct hop_model_hop eq[5];

	(void)state;
	/* sum a + m sum 1/b = (1 + 3) + 8 (1/2 + 1/4) */
	EQ(hop_model_path_saf(two, 2, 8), 10);
	/* k = 2: stages 1 + 2 = 3 and 3 + 1 = 4: 7 + 1 * 4 */
	EQ(hop_model_path_pipe(two, 2, 8, 2), 11);
	EQ(hop_model_path_pipe(two, 2, 8, 1), 10);
	assert_true(isnan(hop_model_path_pipe(two, 2, 8, 0)));
	/* harmonic: 1/b_eff = sum 1/b_i, the saf form's slope */
	EQ(hop_model_path_saf(two, 2, 1e9) - hop_model_path_saf(two, 2, 0),
	   1e9 * (1.0 / 2 + 1.0 / 4));
	/* equal links: the same as the equal-link forms */
	for (int i = 0; i < 5; i++)
		eq[i] = (struct hop_model_hop){ 3e-6, 2e9 };
	for (long k = 1; k < 100; k += 7)
		EQ(hop_model_path_pipe(eq, 5, 1 << 24, k),
		   hop_model_pipe(3e-6, 2e9, 1 << 24, 5, k));
	EQ(hop_model_path_saf(eq, 5, 1 << 24), hop_model_saf(3e-6, 2e9, 1 << 24, 5));
	assert_int_equal(hop_model_path_kopt(eq, 5, 1 << 24, 1),
			 hop_model_pipe_kopt(3e-6, 2e9, 1 << 24, 5, 1));
	assert_int_equal(hop_model_path_kopt(eq, 1, 1 << 24, 1), 1);
}

static void test_unequal_brute(void **state)
{
	struct hop_model_hop hops[8];

	(void)state;
	srand(7);
	for (int it = 0; it < 2000; it++) {
		int h = 1 + rand() % 8;
		double m = floor(pow(2, urand(0, 28)));
		double min_chunk = 1;
		long kmax, bk = 1, got;
		double bt = INFINITY, gt;

		for (int i = 0; i < h; i++)
			hops[i] = (struct hop_model_hop){ pow(10, urand(-7, -4)),
							 pow(10, urand(8, 10.5)) };
		kmax = hop_model_kmax(m, min_chunk);
		if (kmax > 20000) {
			min_chunk = ceil(m / 20000);
			kmax = hop_model_kmax(m, min_chunk);
		}
		for (long k = 1; k <= kmax; k++) {
			double t = hop_model_path_pipe(hops, h, m, k);

			if (t < bt) {
				bt = t;
				bk = k;
			}
		}
		got = hop_model_path_kopt(hops, h, m, min_chunk);
		gt = hop_model_path_pipe(hops, h, m, got);
		if (gt > bt * (1 + 1e-12)) {
			print_error("h=%d m=%g: k=%ld (%.17g) brute %ld (%.17g)\n",
				    h, m, got, gt, bk, bt);
			fail();
		}
		/* the slowest stage sets the period: pipelining never beats
		 * m over the slowest link, nor loses to store-and-forward */
		double slow = INFINITY;
		for (int i = 0; i < h; i++)
			slow = fmin(slow, hops[i].beta);
		assert_true(gt >= m / slow);
		assert_true(gt <= hop_model_path_saf(hops, h, m) * (1 + 1e-12));
	}
}

struct fctx {
	double a, b, c;
	int kind;
};

static double fun(long k, const void *p)
{
	const struct fctx *c = p;
	double x = (double)k;

	switch (c->kind) {
	case 0: return c->a * x + c->b / x;                  /* convex */
	case 1: return fabs(x - c->c);                       /* V shape */
	case 2: return fmax(fabs(x - c->c) - c->a, 0);       /* plateau */
	default: return c->a * x;                            /* increasing */
	}
}

static void test_argmin(void **state)
{
	(void)state;
	srand(99);
	for (int it = 0; it < 3000; it++) {
		struct fctx c = { urand(0.01, 10), urand(0, 1e6), urand(1, 5e4),
				  rand() % 4 };
		long hi = 1 + rand() % 60000, bk = 1, got;
		double bv = INFINITY, gv;

		for (long k = 1; k <= hi; k++) {
			if (fun(k, &c) < bv) {
				bv = fun(k, &c);
				bk = k;
			}
		}
		got = hop_model_argmin(fun, &c, 1, hi, &gv);
		if (got != bk || gv != bv) {
			print_error("kind %d a=%g b=%g c=%g hi=%ld: %ld (%g) vs "
				    "%ld (%g)\n", c.kind, c.a, c.b, c.c, hi, got,
				    gv, bk, bv);
			fail();
		}
	}
	/* lo == hi and hi < lo */
	struct fctx c = { 1, 1, 1, 0 };
	assert_int_equal(hop_model_argmin(fun, &c, 5, 5, NULL), 5);
	assert_int_equal(hop_model_argmin(fun, &c, 5, 2, NULL), 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hand_values),
		cmocka_unit_test(test_clamp),
		cmocka_unit_test(test_kopt_brute),
		cmocka_unit_test(test_unequal),
		cmocka_unit_test(test_unequal_brute),
		cmocka_unit_test(test_argmin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
