/*
 * test_coll_reduce.c - f16/bf16 conversions (exhaustive round trips,
 * round-to-nearest-even at every midpoint) and every reduction kernel
 * (dtype x op x operand order, aligned and not) against a scalar
 * reference written independently in coll_ref.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "coll/reduce.h"
#include "coll_ref.h"

static int is_nan16(uint16_t h, int bf)
{
	return bf ? ((h & 0x7f80) == 0x7f80 && (h & 0x7f))
		  : ((h & 0x7c00) == 0x7c00 && (h & 0x3ff));
}

static void test_f16_roundtrip_exhaustive(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 65536; h++) {
		float f = hop_f16_to_f32((uint16_t)h);
		double ref = ref_f16_val((uint16_t)h);
		if (is_nan16((uint16_t)h, 0)) {
			assert_true(f != f);
		} else {
			assert_true((double)f == ref);
			assert_int_equal(signbit(f) != 0, (h & 0x8000) != 0);
		}
		/* identity, NaN payloads (even signalling ones) included */
		assert_int_equal(hop_f32_to_f16(f), h);
	}
}

static void test_bf16_roundtrip_exhaustive(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 65536; h++) {
		float f = hop_bf16_to_f32((uint16_t)h);
		if (is_nan16((uint16_t)h, 1))
			assert_true(f != f);
		else
			assert_true((double)f == ref_bf16_val((uint16_t)h));
		assert_int_equal(hop_f32_to_bf16(f), h);
	}
}

/* every midpoint between neighbours (ties), and one f32 ulp either side */
static void check_rounding(int bf)
{
	uint16_t maxpat = bf ? 0x7f7f : 0x7bff;
	double (*val)(uint16_t) = bf ? ref_bf16_val : ref_f16_val;

	for (uint32_t p = 0; p <= maxpat; p++) {
		double next = p < maxpat ? val((uint16_t)(p + 1))
					 : val((uint16_t)p) * 2 - val((uint16_t)(p - 1));
		float mid = (float)((val((uint16_t)p) + next) / 2);
		float probes[3] = { mid, nextafterf(mid, 0), nextafterf(mid, INFINITY) };
		for (int i = 0; i < 3; i++)
			for (int sgn = 0; sgn < 2; sgn++) {
				float x = sgn ? -probes[i] : probes[i];
				uint16_t got = bf ? hop_f32_to_bf16(x) : hop_f32_to_f16(x);
				uint16_t want = bf ? ref_to_bf16(x) : ref_to_f16(x);
				if (got != want)
					fail_msg("%s(%a) = 0x%04x, want 0x%04x",
						 bf ? "bf16" : "f16", (double)x, got, want);
			}
	}
	/* random f32 patterns over the whole range, NaNs included */
	for (uint64_t i = 0; i < 2000000; i++) {
		uint32_t u = (uint32_t)ref_hash(i, bf, 7);
		float x = hop_bits_f32(u);
		uint16_t got = bf ? hop_f32_to_bf16(x) : hop_f32_to_f16(x);
		if (x != x) {
			assert_true(is_nan16(got, bf));
			assert_int_equal(got >> 15, u >> 31);
			continue;
		}
		uint16_t want = bf ? ref_to_bf16(x) : ref_to_f16(x);
		if (got != want)
			fail_msg("%s(%a) = 0x%04x, want 0x%04x", bf ? "bf16" : "f16",
				 (double)x, got, want);
	}
}

static void test_f16_rounding(void **state)
{
	(void)state;
	check_rounding(0);
	/* named cases */
	assert_int_equal(hop_f32_to_f16(65504.0f), 0x7bff);
	assert_int_equal(hop_f32_to_f16(65519.99f), 0x7bff);
	assert_int_equal(hop_f32_to_f16(65520.0f), 0x7c00);
	assert_int_equal(hop_f32_to_f16(INFINITY), 0x7c00);
	assert_int_equal(hop_f32_to_f16(-INFINITY), 0xfc00);
	assert_int_equal(hop_f32_to_f16(0x1p-24f), 0x0001);
	assert_int_equal(hop_f32_to_f16(0x1p-25f), 0x0000); /* tie to even 0 */
	assert_int_equal(hop_f32_to_f16(0x1.8p-24f), 0x0002); /* tie to even */
	assert_int_equal(hop_f32_to_f16(-0.0f), 0x8000);
	assert_int_equal(hop_f32_to_f16(0x1.ffcp-15f), 0x0400); /* to normal */
}

static void test_bf16_rounding(void **state)
{
	(void)state;
	check_rounding(1);
	assert_int_equal(hop_f32_to_bf16(1.0f), 0x3f80);
	assert_int_equal(hop_f32_to_bf16(hop_bits_f32(0x3f808000)), 0x3f80);
	assert_int_equal(hop_f32_to_bf16(hop_bits_f32(0x3f818000)), 0x3f82);
	assert_int_equal(hop_f32_to_bf16(hop_bits_f32(0x7f7fffff)), 0x7f80);
}

/* ---- kernels ---- */

static void fill(void *buf, size_t n, hop_dtype_t dt, hop_op_t op, int seed)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t h = ref_hash(i, (uint64_t)seed, (uint64_t)dt * 8 + op);
		if (!ref_is_float(dt)) {
			ref_put_i(buf, i, dt, h);
			continue;
		}
		double v = ((double)(h % 20001) - 10000) / 2500.0; /* [-4, 4] */
		if ((op == HOP_MIN || op == HOP_MAX) && h % 17 == 0)
			v = (h >> 20) % 2 ? NAN : -0.0;
		else if (h % 23 == 0) /* inf - inf, 0 * inf: NaN results */
			v = (h >> 20) % 3 ? ((h >> 22) % 2 ? INFINITY : -INFINITY) : 0.0;
		ref_put_f(buf, i, dt, v);
	}
}

/* reference of one element: x first operand, y second */
static void ref_elem(void *out, const void *xb, const void *yb, size_t i,
		     hop_dtype_t dt, hop_op_t op)
{
	size_t es = hop_dtype_size(dt);

	if (!ref_is_float(dt)) {
		ref_put_i(out, i, dt, ref_iop(dt, op, ref_get_i(xb, i, dt),
					      ref_get_i(yb, i, dt)));
		return;
	}
	double x = ref_get_f(xb, i, dt), y = ref_get_f(yb, i, dt);
	if (op == HOP_MIN || op == HOP_MAX) {
		int take_x = op == HOP_MIN ? (x < y || x != x) : (x > y || x != x);
		memcpy((char *)out + i * es, (const char *)(take_x ? xb : yb) + i * es, es);
		return;
	}
	if (dt == HOP_FLOAT64) {
		double r = op == HOP_PROD ? x * y : x + y;
		ref_put_f(out, i, dt, r != r ? NAN : r);
		return;
	}
	volatile float fx = (float)x, fy = (float)y; /* exact: f16/bf16/f32 */
	float r = op == HOP_PROD ? fx * fy : fx + fy;
	ref_put_f(out, i, dt, r != r ? NAN : r); /* canonical NaN */
}

static void test_kernels(void **state)
{
	static const size_t lens[] = { 0, 1, 3, 63, 64, 65, 200, 1000 };
	(void)state;
	for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++)
		for (int op = 0; op < HOP_OP_COUNT; op++)
			for (int rev = 0; rev < 2; rev++)
				for (size_t li = 0; li < sizeof(lens) / sizeof(*lens); li++)
					for (int mis = 0; mis < 3; mis++) {
		size_t n = lens[li], es = hop_dtype_size(dt);
		char *d0 = malloc(n * es + 16), *s0 = malloc(n * es + 16);
		char *want = malloc(n * es + 1);
		char *d = d0 + (mis == 1 ? 1 : 8), *s = s0 + (mis == 2 ? 3 : 8);
		fill(d, n, dt, op, 1);
		fill(s, n, dt, op, 2);
		for (size_t i = 0; i < n; i++)
			ref_elem(want, rev ? s : d, rev ? d : s, i, dt, op);
		hop_reduce_local(d, s, n, dt, op, rev);
		if (memcmp(d, want, n * es)) {
			for (size_t i = 0; i < n; i++)
				if (memcmp(d + i * es, want + i * es, es))
					fail_msg("%s %s rev %d n %zu mis %d: element %zu differs",
						 hop_dtype_name(dt), hop_op_name(op), rev, n, mis, i);
		}
		free(d0);
		free(s0);
		free(want);
	}
}

static void test_avg(void **state)
{
	(void)state;
	for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++)
		for (int nr = 1; nr <= 9; nr += 2)
			for (int mis = 0; mis < 2; mis++) {
		size_t n = 300, es = hop_dtype_size(dt);
		char *b0 = malloc(n * es + 8), *b = b0 + mis, *want = malloc(n * es);
		fill(b, n, dt, HOP_SUM, 3);
		for (size_t i = 0; i < n; i++) {
			if (!ref_is_float(dt)) {
				uint64_t v = ref_get_i(b, i, dt);
				uint64_t q = ref_is_signed(dt) ? (uint64_t)((int64_t)v / nr)
							       : v / (uint64_t)nr;
				ref_put_i(want, i, dt, q);
			} else if (dt == HOP_FLOAT64) {
				ref_put_f(want, i, dt, ref_get_f(b, i, dt) / nr);
			} else {
				volatile float x = (float)ref_get_f(b, i, dt);
				ref_put_f(want, i, dt, (float)(x / (float)nr));
			}
		}
		hop_reduce_avg(b, n, dt, nr);
		if (memcmp(b, want, n * es))
			fail_msg("avg %s n %d mis %d differs", hop_dtype_name(dt), nr, mis);
		/* truncation toward zero for signed integers */
		free(b0);
		free(want);
	}
	int32_t v[2] = { -7, 7 };
	hop_reduce_avg(v, 2, HOP_INT32, 2);
	assert_int_equal(v[0], -3);
	assert_int_equal(v[1], 3);
}

static void test_int_wrap(void **state)
{
	int8_t a[3] = { 100, -128, 127 }, b[3] = { 100, -1, 1 };
	uint32_t u[1] = { 0xffffffffu }, w[1] = { 2 };
	(void)state;
	hop_reduce_local(a, b, 3, HOP_INT8, HOP_SUM, 0);
	assert_int_equal(a[0], -56);
	assert_int_equal(a[1], 127);
	assert_int_equal(a[2], -128);
	hop_reduce_local(u, w, 1, HOP_UINT32, HOP_PROD, 0);
	assert_int_equal(u[0], 0xfffffffeu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f16_roundtrip_exhaustive),
		cmocka_unit_test(test_bf16_roundtrip_exhaustive),
		cmocka_unit_test(test_f16_rounding),
		cmocka_unit_test(test_bf16_rounding),
		cmocka_unit_test(test_kernels),
		cmocka_unit_test(test_avg),
		cmocka_unit_test(test_int_wrap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
