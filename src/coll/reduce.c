/*
 * reduce.c - local reduction kernels: every dtype x op, in both operand
 * orders for floats.
 *
 * Vectorisation: each kernel runs blocks of HOP_RBLK elements with a
 * constant trip count on restrict pointers, then a scalar tail. GCC
 * vectorises the block loop even at -O2 (its "very cheap" cost model
 * needs a trip count known to be a multiple of the vector width), clang
 * at -O2 anyway. Checked with -fopt-info-vec (docs/collectives.md).
 * Misaligned buffers are staged through aligned stack blocks.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "coll/reduce.h"

#define HOP_RBLK 64     /* elements per vectorised block */
#define HOP_STAGE 256   /* elements per f16/bf16 or misalignment stage */

typedef void (*kern_fn)(void *dst, const void *src, size_t n);

/* x is the first operand, y the second; d = dst, s = src. */
#define KERNEL(name, T, X, Y, EXPR)                                            \
	static inline void name##_blk(T *restrict d, const T *restrict s)     \
	{                                                                     \
		for (int j = 0; j < HOP_RBLK; j++) {                          \
			T x = X(d[j], s[j]), y = Y(d[j], s[j]);               \
			d[j] = (T)(EXPR);                                     \
		}                                                             \
	}                                                                     \
	static void name(void *restrict dv, const void *restrict sv, size_t n) \
	{                                                                     \
		T *d = dv;                                                    \
		const T *s = sv;                                              \
		size_t i = 0;                                                 \
		for (; i + HOP_RBLK <= n; i += HOP_RBLK)                      \
			name##_blk(d + i, s + i);                             \
		for (; i < n; i++) {                                          \
			T x = X(d[i], s[i]), y = Y(d[i], s[i]);               \
			d[i] = (T)(EXPR);                                     \
		}                                                             \
	}

#define FIRST(a, b) (a)
#define SECOND(a, b) (b)

#define E_SUM (x + y)
#define E_PROD (x * y)
#define E_IMIN (x < y ? x : y)
#define E_IMAX (x > y ? x : y)
/* float sum/prod: a NaN result becomes the canonical quiet NaN, since
 * which operand's payload the hardware keeps is up to the compiler */
#define E_FSUM ((x + y) == (x + y) ? (x + y) : NAN)
#define E_FPROD ((x * y) == (x * y) ? (x * y) : NAN)
#define E_FMIN ((x < y || x != x) ? x : y)
#define E_FMAX ((x > y || x != x) ? x : y)

/* integers: sum/prod in the unsigned type (wraps), min/max signed */
#define INT_KERNELS(sfx, U, S)                                                 \
	KERNEL(sum_##sfx, U, FIRST, SECOND, E_SUM)                            \
	KERNEL(prod_##sfx, U, FIRST, SECOND, E_PROD)                          \
	KERNEL(min_##sfx, S, FIRST, SECOND, E_IMIN)                           \
	KERNEL(max_##sfx, S, FIRST, SECOND, E_IMAX)

INT_KERNELS(i8, uint8_t, int8_t)
INT_KERNELS(u8, uint8_t, uint8_t)
INT_KERNELS(i32, uint32_t, int32_t)
INT_KERNELS(u32, uint32_t, uint32_t)
INT_KERNELS(i64, uint64_t, int64_t)
INT_KERNELS(u64, uint64_t, uint64_t)

/* floats: both orders (NaN payloads and min/max of NaN/-0 depend on it) */
#define FLT_KERNELS(sfx, T)                                                    \
	KERNEL(sum_##sfx, T, FIRST, SECOND, E_FSUM)                           \
	KERNEL(prod_##sfx, T, FIRST, SECOND, E_FPROD)                         \
	KERNEL(min_##sfx, T, FIRST, SECOND, E_FMIN)                           \
	KERNEL(max_##sfx, T, FIRST, SECOND, E_FMAX)                           \
	KERNEL(rsum_##sfx, T, SECOND, FIRST, E_FSUM)                          \
	KERNEL(rprod_##sfx, T, SECOND, FIRST, E_FPROD)                        \
	KERNEL(rmin_##sfx, T, SECOND, FIRST, E_FMIN)                          \
	KERNEL(rmax_##sfx, T, SECOND, FIRST, E_FMAX)

FLT_KERNELS(f32, float)
FLT_KERNELS(f64, double)

/* [dtype][op][rev]; f16/bf16 go through the f32 kernels; AVG sums. */
#define INT_ROW(sfx)                                                           \
	{ { sum_##sfx, sum_##sfx }, { prod_##sfx, prod_##sfx },                \
	  { min_##sfx, min_##sfx }, { max_##sfx, max_##sfx },                  \
	  { sum_##sfx, sum_##sfx } }
#define FLT_ROW(sfx)                                                           \
	{ { sum_##sfx, rsum_##sfx }, { prod_##sfx, rprod_##sfx },              \
	  { min_##sfx, rmin_##sfx }, { max_##sfx, rmax_##sfx },                \
	  { sum_##sfx, rsum_##sfx } }

static const kern_fn kernels[HOP_DTYPE_COUNT][HOP_OP_COUNT][2] = {
	[HOP_INT8] = INT_ROW(i8),     [HOP_UINT8] = INT_ROW(u8),
	[HOP_INT32] = INT_ROW(i32),   [HOP_UINT32] = INT_ROW(u32),
	[HOP_INT64] = INT_ROW(i64),   [HOP_UINT64] = INT_ROW(u64),
	[HOP_FLOAT16] = FLT_ROW(f32), [HOP_BFLOAT16] = FLT_ROW(f32),
	[HOP_FLOAT32] = FLT_ROW(f32), [HOP_FLOAT64] = FLT_ROW(f64),
};

/* Conversions: constant-trip blocks (vectorised at -O2) plus a tail. */
#define CONVERT(name, TO, TI, FN)                                              \
	static inline void name##_blk(TO *restrict d, const TI *restrict s)   \
	{                                                                     \
		for (int j = 0; j < HOP_RBLK; j++)                            \
			d[j] = FN(s[j]);                                      \
	}                                                                     \
	void name(TO *restrict dst, const TI *restrict src, size_t n)         \
	{                                                                     \
		size_t i = 0;                                                 \
		for (; i + HOP_RBLK <= n; i += HOP_RBLK)                      \
			name##_blk(dst + i, src + i);                         \
		for (; i < n; i++)                                            \
			dst[i] = FN(src[i]);                                  \
	}

CONVERT(hop_f16_to_f32_n, float, uint16_t, hop_f16_to_f32)
CONVERT(hop_f32_to_f16_n, uint16_t, float, hop_f32_to_f16)
CONVERT(hop_bf16_to_f32_n, float, uint16_t, hop_bf16_to_f32)
CONVERT(hop_f32_to_bf16_n, uint16_t, float, hop_f32_to_bf16)

/* f16/bf16: widen a stage of both operands, reduce in f32, round back. */
static void reduce_half(uint16_t *dst, const uint16_t *src, size_t n,
			int bf, kern_fn k)
{
	float a[HOP_STAGE], b[HOP_STAGE];

	for (size_t i = 0; i < n; i += HOP_STAGE) {
		size_t m = n - i < HOP_STAGE ? n - i : HOP_STAGE;
		if (bf) {
			hop_bf16_to_f32_n(a, dst + i, m);
			hop_bf16_to_f32_n(b, src + i, m);
		} else {
			hop_f16_to_f32_n(a, dst + i, m);
			hop_f16_to_f32_n(b, src + i, m);
		}
		k(a, b, m);
		if (bf)
			hop_f32_to_bf16_n(dst + i, a, m);
		else
			hop_f32_to_f16_n(dst + i, a, m);
	}
}

static void reduce_aligned(void *dst, const void *src, size_t n,
			   hop_dtype_t dtype, kern_fn k)
{
	if (dtype == HOP_FLOAT16 || dtype == HOP_BFLOAT16)
		reduce_half(dst, src, n, dtype == HOP_BFLOAT16, k);
	else
		k(dst, src, n);
}

void hop_reduce_local(void *dst, const void *src, size_t count,
		      hop_dtype_t dtype, hop_op_t op, int rev)
{
	if ((unsigned)dtype >= HOP_DTYPE_COUNT || (unsigned)op >= HOP_OP_COUNT)
		return;
	size_t es = hop_dtype_size(dtype);
	kern_fn k = kernels[dtype][op][rev ? 1 : 0];

	if (((uintptr_t)dst | (uintptr_t)src) % es == 0) {
		reduce_aligned(dst, src, count, dtype, k);
		return;
	}
	/* misaligned user buffer: stage through aligned blocks */
	uint64_t a[HOP_STAGE], b[HOP_STAGE];
	for (size_t i = 0; i < count; i += HOP_STAGE) {
		size_t m = count - i < HOP_STAGE ? count - i : HOP_STAGE;
		memcpy(a, (char *)dst + i * es, m * es);
		memcpy(b, (const char *)src + i * es, m * es);
		reduce_aligned(a, b, m, dtype, k);
		memcpy((char *)dst + i * es, a, m * es);
	}
}

#define AVG_INT(T)                                                             \
	do {                                                                  \
		T *p = buf;                                                   \
		for (size_t i = 0; i < count; i++)                            \
			p[i] = (T)(p[i] / (T)n);                              \
	} while (0)

static void avg_aligned(void *buf, size_t count, hop_dtype_t dtype, int n)
{
	switch (dtype) {
	case HOP_INT8: AVG_INT(int8_t); break;
	case HOP_UINT8: AVG_INT(uint8_t); break;
	case HOP_INT32: AVG_INT(int32_t); break;
	case HOP_UINT32: AVG_INT(uint32_t); break;
	case HOP_INT64: AVG_INT(int64_t); break;
	case HOP_UINT64: AVG_INT(uint64_t); break;
	case HOP_FLOAT32: {
		float *p = buf, fn = (float)n;
		for (size_t i = 0; i < count; i++)
			p[i] = p[i] / fn;
		break;
	}
	case HOP_FLOAT64: {
		double *p = buf, dn = (double)n;
		for (size_t i = 0; i < count; i++)
			p[i] = p[i] / dn;
		break;
	}
	case HOP_FLOAT16:
	case HOP_BFLOAT16: {
		float a[HOP_STAGE], fn = (float)n;
		uint16_t *p = buf;
		int bf = dtype == HOP_BFLOAT16;
		for (size_t i = 0; i < count; i += HOP_STAGE) {
			size_t m = count - i < HOP_STAGE ? count - i : HOP_STAGE;
			if (bf)
				hop_bf16_to_f32_n(a, p + i, m);
			else
				hop_f16_to_f32_n(a, p + i, m);
			for (size_t j = 0; j < m; j++)
				a[j] = a[j] / fn;
			if (bf)
				hop_f32_to_bf16_n(p + i, a, m);
			else
				hop_f32_to_f16_n(p + i, a, m);
		}
		break;
	}
	default:
		break;
	}
}

void hop_reduce_avg(void *buf, size_t count, hop_dtype_t dtype, int n)
{
	size_t es = hop_dtype_size(dtype);

	if (!es || n <= 1)
		return;
	if ((uintptr_t)buf % es == 0) {
		avg_aligned(buf, count, dtype, n);
		return;
	}
	uint64_t a[HOP_STAGE];
	for (size_t i = 0; i < count; i += HOP_STAGE) {
		size_t m = count - i < HOP_STAGE ? count - i : HOP_STAGE;
		memcpy(a, (char *)buf + i * es, m * es);
		avg_aligned(a, m, dtype, n);
		memcpy((char *)buf + i * es, a, m * es);
	}
}
