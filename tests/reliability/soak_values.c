/*
 * soak_values.c - the soak's inputs and their exact reduction: small
 * integers, or +-powers of two for prod, so that every dtype (f16 and bf16
 * too) reduces exactly and results can be compared bit for bit.
 */
#include <stdint.h>
#include <string.h>

#include "soak.h"

static uint16_t f32_to_f16(float f) /* exact normal values and zero */
{
	uint32_t x, sign, e, m;

	memcpy(&x, &f, 4);
	sign = (x >> 16) & 0x8000u;
	e = (x >> 23) & 0xffu;
	m = x & 0x7fffffu;
	if (e == 0)
		return (uint16_t)sign;
	return (uint16_t)(sign | (e - 127 + 15) << 10 | m >> 13);
}

static uint16_t f32_to_bf16(float f) /* exact for our values */
{
	uint32_t x;

	memcpy(&x, &f, 4);
	return (uint16_t)(x >> 16);
}

static int is_signed(hop_dtype_t t)
{
	return t == HOP_INT8 || t == HOP_INT32 || t == HOP_INT64;
}

static int is_float(hop_dtype_t t)
{
	return t >= HOP_FLOAT16;
}

/* The input of @rank at element @i of collective @salt: small integers
 * (sum/avg/min/max) or +-powers of two (prod): exact in every dtype. */
double soak_value(uint64_t salt, int rank, size_t i, hop_dtype_t t,
		    hop_op_t op)
{
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^
		     (uint64_t)(rank + 1) * 0xc2b2ae3d27d4eb4full ^ salt;

	h ^= h >> 29;
	if (op == HOP_PROD) {
		static const double sv[] = { -2, -1, 1, 2, 0.5, -0.5 };
		static const double uv[] = { 1, 2, 1, 2, 1, 2 };

		if (is_float(t))
			return sv[h % 6];
		return is_signed(t) ? sv[h % 4] : uv[h % 6];
	}
	if (is_signed(t) || is_float(t))
		return (double)(int)(h % 17) - 8;
	return (double)(h % 16);
}

void soak_encode(void *p, size_t i, hop_dtype_t t, double v)
{
	switch (t) {
	case HOP_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case HOP_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case HOP_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case HOP_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
	case HOP_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	case HOP_UINT64: ((uint64_t *)p)[i] = (uint64_t)v; break;
	case HOP_FLOAT16: ((uint16_t *)p)[i] = f32_to_f16((float)v); break;
	case HOP_BFLOAT16: ((uint16_t *)p)[i] = f32_to_bf16((float)v); break;
	case HOP_FLOAT32: ((float *)p)[i] = (float)v; break;
	case HOP_FLOAT64: ((double *)p)[i] = v; break;
	default: break;
	}
}

/* The reduction of every rank's element @i, with hop's semantics. */
double soak_reduced(uint64_t salt, int n, size_t i, hop_dtype_t t,
		      hop_op_t op)
{
	double acc = soak_value(salt, 0, i, t, op);

	for (int r = 1; r < n; r++) {
		double v = soak_value(salt, r, i, t, op);

		switch (op) {
		case HOP_SUM: case HOP_AVG: acc += v; break;
		case HOP_PROD: acc *= v; break;
		case HOP_MIN: acc = v < acc ? v : acc; break;
		case HOP_MAX: acc = v > acc ? v : acc; break;
		default: break;
		}
	}
	if (op == HOP_AVG) {
		acc /= n;
		if (!is_float(t)) /* C's truncating division */
			acc = (double)(long long)acc;
	}
	return acc;
}
