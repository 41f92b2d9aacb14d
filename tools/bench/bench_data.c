/*
 * bench_data.c - input patterns and an independent reference for --check.
 *
 * Inputs are small integers so that every op is exact in every type
 * (products stay at 1 or 2, sums at most 3 * N), which lets the check
 * compare exactly; only AVG of floating types allows a relative error,
 * since the reference divides in double and hop in float.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bench_data.h"

static const size_t type_sizes[BT_COUNT] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };

size_t bench_type_size(enum bench_type t)
{
	return type_sizes[t];
}

/* IEEE binary16 <-> float, written here so the check does not use hop's. */
static float half_to_float(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v;

	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 0x400), e - 25);
	return (h & 0x8000) ? -v : v;
}

static uint16_t float_to_half(float f)
{
	/* inputs and results here are small integers or their averages: use
	 * the exact search over the 2^16 codes' neighbourhood via rounding */
	uint16_t sign = signbit(f) ? 0x8000 : 0;
	float a = fabsf(f);
	int e;

	if (a == 0.0f)
		return sign;
	frexpf(a, &e);           /* a = x * 2^e, x in [0.5, 1) */
	int exp16 = e - 1 + 15;  /* biased exponent of a */
	if (exp16 <= 0) {        /* subnormal: units of 2^-24 */
		return sign | (uint16_t)lrintf(ldexpf(a, 24));
	}
	float mant = ldexpf(a, 11 - e) ; /* in [1024, 2048) */
	long q = lrintf(mant);          /* round half to even */
	if (q == 2048) {
		q = 1024;
		exp16++;
	}
	if (exp16 >= 31)
		return sign | 0x7c00;
	return sign | (uint16_t)(exp16 << 10) | (uint16_t)(q - 1024);
}

static float bf16_to_float(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

static uint16_t float_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	u += 0x7fff + ((u >> 16) & 1); /* round to nearest even */
	return (uint16_t)(u >> 16);
}

double bench_get(enum bench_type t, const void *buf, size_t i)
{
	switch (t) {
	case BT_INT8: return ((const int8_t *)buf)[i];
	case BT_UINT8: return ((const uint8_t *)buf)[i];
	case BT_INT32: return ((const int32_t *)buf)[i];
	case BT_UINT32: return ((const uint32_t *)buf)[i];
	case BT_INT64: return (double)((const int64_t *)buf)[i];
	case BT_UINT64: return (double)((const uint64_t *)buf)[i];
	case BT_HALF: return half_to_float(((const uint16_t *)buf)[i]);
	case BT_BFLOAT16: return bf16_to_float(((const uint16_t *)buf)[i]);
	case BT_FLOAT: return ((const float *)buf)[i];
	case BT_DOUBLE: return ((const double *)buf)[i];
	default: return NAN;
	}
}

void bench_set(enum bench_type t, void *buf, size_t i, double v)
{
	switch (t) {
	case BT_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
	case BT_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
	case BT_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
	case BT_UINT32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
	case BT_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
	case BT_UINT64: ((uint64_t *)buf)[i] = (uint64_t)v; break;
	case BT_HALF: ((uint16_t *)buf)[i] = float_to_half((float)v); break;
	case BT_BFLOAT16: ((uint16_t *)buf)[i] = float_to_bf16((float)v); break;
	case BT_FLOAT: ((float *)buf)[i] = (float)v; break;
	case BT_DOUBLE: ((double *)buf)[i] = v; break;
	default: break;
	}
}

double bench_input(enum bench_op o, int nranks, int rank, size_t i)
{
	if (o == BO_PROD)
		return (i % (size_t)(nranks + 1)) == (size_t)rank ? 2.0 : 1.0;
	return (double)((rank * 7 + i * 3) % 4);
}

static int is_float(enum bench_type t)
{
	return t >= BT_HALF;
}

double bench_expected(enum bench_type t, enum bench_op o, int nranks,
		      size_t i)
{
	double acc = bench_input(o, nranks, 0, i);

	for (int r = 1; r < nranks; r++) {
		double v = bench_input(o, nranks, r, i);
		switch (o) {
		case BO_SUM: case BO_AVG: acc += v; break;
		case BO_PROD: acc *= v; break;
		case BO_MIN: acc = v < acc ? v : acc; break;
		case BO_MAX: acc = v > acc ? v : acc; break;
		default: break;
		}
	}
	if (o == BO_AVG)
		acc = is_float(t) ? acc / nranks : floor(acc / nranks);
	return acc;
}

int bench_matches(enum bench_type t, enum bench_op o, double got, double want)
{
	if (o != BO_AVG || !is_float(t))
		return got == want;
	double tol = t == BT_DOUBLE ? 1e-12 : t == BT_FLOAT ? 1e-6 : 1e-2;
	return fabs(got - want) <= tol * (fabs(want) > 1 ? fabs(want) : 1);
}
