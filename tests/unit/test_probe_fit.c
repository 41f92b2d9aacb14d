/*
 * test_probe_fit.c - statistics, the T(m) = alpha + m/beta fit and the
 * alpha decomposition on synthetic samples with known answers.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "model/fit.h"

/* deterministic noise: xorshift64*, uniform in [-1, 1) */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double noise(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1.0;
}

#define NEAR_REL(x, want, rel) \
	assert_true(fabs((x) - (want)) <= (rel) * fabs(want))

static void test_stats_median_p99(void **state)
{
	double s[100];
	struct hop_stats st;

	(void)state;
	for (int i = 0; i < 100; i++)
		s[i] = (double)(99 - i); /* 99..0, unsorted */
	assert_int_equal(hop_stats_compute(s, 100, &st), 0);
	assert_true(s[0] == 0 && s[99] == 99); /* sorted in place */
	assert_true(st.min == 0 && st.max == 99);
	NEAR_REL(st.median, 49.5, 1e-12);
	NEAR_REL(st.p99, 98.01, 1e-9);
	NEAR_REL(st.mean, 49.5, 1e-12);
	assert_int_equal(hop_stats_compute(s, 0, &st), HOP_ERR_INVALID_ARG);
	s[3] = NAN;
	assert_int_equal(hop_stats_compute(s, 100, &st), HOP_ERR_INVALID_ARG);
}

static void test_fit_exact(void **state)
{
	double m[] = { 0, 1000, 2000, 4000 }, t[4];
	struct hop_fit f;

	(void)state;
	for (int i = 0; i < 4; i++)
		t[i] = 2.0 + m[i] / 500.0;
	for (int w = 0; w < 2; w++) {
		assert_int_equal(hop_fit_linear(m, t, 4, w, &f), 0);
		NEAR_REL(f.alpha, 2.0, 1e-12);
		NEAR_REL(f.beta, 500.0, 1e-12);
		NEAR_REL(f.r2, 1.0, 1e-12);
		NEAR_REL(hop_fit_eval(&f, 1000), 4.0, 1e-12);
	}
}

/* known alpha = 1.7 us, beta = 12000 B/us (12 GB/s), 1 B .. 64 MiB, 2% noise */
static void test_fit_noisy_sweep_within_1pct(void **state)
{
	const double alpha = 1.7, beta = 12000.0;
	double m[27], t[27];
	struct hop_fit f;

	(void)state;
	for (int i = 0; i < 27; i++) {
		m[i] = (double)(1ull << i);
		double s[201];
		struct hop_stats st;

		/* the probe fits medians of many noisy samples */
		for (int k = 0; k < 201; k++)
			s[k] = (alpha + m[i] / beta) * (1 + 0.02 * noise());
		assert_int_equal(hop_stats_compute(s, 201, &st), 0);
		t[i] = st.median;
	}
	assert_int_equal(hop_fit_linear(m, t, 27, HOP_FIT_RELATIVE, &f), 0);
	NEAR_REL(f.alpha, alpha, 0.01);
	NEAR_REL(f.beta, beta, 0.01);
	assert_true(f.r2 > 0.99 && f.r2 <= 1.0);
	/* the same with 1% noise on the medians directly */
	for (int i = 0; i < 27; i++)
		t[i] = (alpha + m[i] / beta) * (1 + 0.005 * noise());
	assert_int_equal(hop_fit_linear(m, t, 27, HOP_FIT_RELATIVE, &f), 0);
	NEAR_REL(f.alpha, alpha, 0.01);
	NEAR_REL(f.beta, beta, 0.01);
}

static void test_fit_r2_poor_when_not_linear(void **state)
{
	double m[8], t[8];
	struct hop_fit f;

	(void)state;
	/* a step, not a line: small sizes 1 us, large 100 us, flat each side */
	for (int i = 0; i < 8; i++) {
		m[i] = 1000.0 * i;
		t[i] = i < 4 ? 1.0 : 100.0;
	}
	assert_int_equal(hop_fit_linear(m, t, 8, HOP_FIT_UNIFORM, &f), 0);
	assert_true(f.r2 < HOP_FIT_R2_MIN);
	assert_true(f.r2 > 0.0);
}

static void test_fit_errors(void **state)
{
	double m[] = { 8, 8, 8 }, t[] = { 1, 2, 3 }, z[] = { 1, 0, 3 };
	double m2[] = { 1, 2, 3 }, dec[] = { 3, 2, 1 };
	struct hop_fit f;

	(void)state;
	assert_int_equal(hop_fit_linear(m, t, 1, 0, &f), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_fit_linear(m, t, 3, 0, &f), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_fit_linear(m2, z, 3, HOP_FIT_RELATIVE, &f),
			 HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_fit_linear(NULL, t, 3, 0, &f), HOP_ERR_INVALID_ARG);
	/* decreasing time: no bandwidth, beta 0 rather than negative */
	assert_int_equal(hop_fit_linear(m2, dec, 3, 0, &f), 0);
	assert_true(f.beta == 0.0 && f.inv_beta < 0);
}

/*
 * Synthetic decomposition: sw 0.20, dma 0.35 (inline diff), sync 0.30,
 * wire 0.90 us, each sample with +-3% noise; the parts must come back
 * within 1% and sum to the half round trip.
 */
#define NS 2001
static double post[NS], imm[NS], mem[NS], ni[NS], in[NS], p2c[NS];

static void fill(double *a, double v)
{
	for (int i = 0; i < NS; i++)
		a[i] = v * (1 + 0.03 * noise());
}

static void test_decompose_inline_diff(void **state)
{
	const double sw = 0.20, dma = 0.35, sync = 0.30, wire = 0.90;
	struct hop_alpha_parts p;

	(void)state;
	fill(post, sw);
	fill(imm, sw + dma + sync + wire);
	fill(mem, sw + dma + wire);
	fill(ni, sw + dma + sync + wire);
	fill(in, sw + sync + wire);
	struct hop_alpha_input x = {
		.post = post, .n_post = NS, .oneway_imm = imm, .n_imm = NS,
		.oneway_mem = mem, .n_mem = NS,
		.dma_method = HOP_DMA_INLINE_DIFF,
		.dma_a = ni, .n_dma_a = NS, .dma_b = in, .n_dma_b = NS,
	};
	assert_int_equal(hop_alpha_decompose(&x, &p), 0);
	/* differences of medians: 1% of the whole, as their noise is */
	NEAR_REL(p.sw, sw, 0.01);
	assert_true(fabs(p.dma - dma) <= 0.01 * (sw + dma + sync + wire));
	assert_true(fabs(p.sync - sync) <= 0.01 * (sw + dma + sync + wire));
	assert_true(fabs(p.wire - wire) <= 0.01 * (sw + dma + sync + wire));
	NEAR_REL(hop_alpha_sum(&p), p.half_rtt, 1e-12);
	assert_int_equal(p.clamped, 0);
	assert_true(p.sw_p99 > p.sw && p.sw_p99 < sw * 1.031);
}

static void test_decompose_post_to_completion(void **state)
{
	const double sw = 0.5, dma = 1.5, sync = 0.25, wire = 3.0;
	struct hop_alpha_parts p;

	(void)state;
	fill(post, sw);
	fill(p2c, sw + dma);
	fill(imm, sw + dma + sync + wire);
	fill(mem, sw + dma + wire);
	struct hop_alpha_input x = {
		.post = post, .n_post = NS, .oneway_imm = imm, .n_imm = NS,
		.oneway_mem = mem, .n_mem = NS,
		.dma_method = HOP_DMA_POST_TO_COMPLETION,
		.dma_a = p2c, .n_dma_a = NS,
	};
	assert_int_equal(hop_alpha_decompose(&x, &p), 0);
	NEAR_REL(p.dma, dma, 0.02);
	NEAR_REL(p.wire, wire, 0.02);
	NEAR_REL(p.sync, sync, 0.25); /* a small difference of large medians */
	/* a missing array is an error, not a silent zero */
	x.oneway_mem = NULL;
	assert_int_equal(hop_alpha_decompose(&x, &p), HOP_ERR_INVALID_ARG);
}

static void test_decompose_clamps_negative(void **state)
{
	double a[] = { 1, 1, 1 }, b[] = { 2, 2, 2 }, c[] = { 3, 3, 3 };
	double d[] = { 5, 5, 5 }, e[] = { 1, 1, 1 };
	struct hop_alpha_parts p;

	(void)state;
	/* memory polling slower than completions: sync would be < 0 */
	struct hop_alpha_input x = {
		.post = a, .n_post = 3, .oneway_imm = c, .n_imm = 3,
		.oneway_mem = d, .n_mem = 3, .dma_method = HOP_DMA_INLINE_DIFF,
		.dma_a = b, .n_dma_a = 3, .dma_b = e, .n_dma_b = 3,
	};
	assert_int_equal(hop_alpha_decompose(&x, &p), 0);
	assert_true(p.sync == 0.0);
	assert_true(p.clamped >= 1);
}

static void test_check_consistency(void **state)
{
	struct hop_alpha_parts p = { .sw = 0.2, .dma = 0.3, .sync = 0.2,
				     .wire = 0.3 };
	struct hop_fit f = { .alpha = 1.0, .r2 = 0.999 };
	struct hop_alpha_check c;

	(void)state;
	hop_alpha_check(&p, &f, HOP_FIT_R2_MIN, HOP_ALPHA_DIFF_MAX, &c);
	NEAR_REL(c.sum, 1.0, 1e-12);
	assert_true(fabs(c.diff_pct) < 1e-9);
	assert_false(c.poor_fit);
	assert_false(c.disagree);
	f.alpha = 0.8; /* sum 25% above the intercept */
	f.r2 = 0.5;
	hop_alpha_check(&p, &f, HOP_FIT_R2_MIN, HOP_ALPHA_DIFF_MAX, &c);
	NEAR_REL(c.diff_pct, 25.0, 1e-9);
	assert_true(c.disagree);
	assert_true(c.poor_fit);
	f.alpha = -0.1; /* a negative intercept always disagrees */
	hop_alpha_check(&p, &f, HOP_FIT_R2_MIN, HOP_ALPHA_DIFF_MAX, &c);
	assert_true(c.disagree);
}

static void test_link_formulas(void **state)
{
	double b[] = { 10.0, 5.0 }, one[] = { 4.0 }, bad[] = { 3.0, 0.0 };

	(void)state;
	NEAR_REL(hop_harmonic_beta(b, 2), 10.0 / 3.0, 1e-12);
	NEAR_REL(hop_harmonic_beta(one, 1), 4.0, 1e-12);
	assert_true(hop_harmonic_beta(bad, 2) == 0.0);
	NEAR_REL(hop_aggregate_beta(3, 4.0, 10.0), 10.0, 1e-12);
	NEAR_REL(hop_aggregate_beta(2, 4.0, 10.0), 8.0, 1e-12);
	NEAR_REL(hop_duplex_factor(2.0, 3.0), 1.5, 1e-12);
	assert_true(isnan(hop_duplex_factor(0.0, 3.0)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats_median_p99),
		cmocka_unit_test(test_fit_exact),
		cmocka_unit_test(test_fit_noisy_sweep_within_1pct),
		cmocka_unit_test(test_fit_r2_poor_when_not_linear),
		cmocka_unit_test(test_fit_errors),
		cmocka_unit_test(test_decompose_inline_diff),
		cmocka_unit_test(test_decompose_post_to_completion),
		cmocka_unit_test(test_decompose_clamps_negative),
		cmocka_unit_test(test_check_consistency),
		cmocka_unit_test(test_link_formulas),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
