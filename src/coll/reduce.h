/*
 * reduce.h - local reduction kernels and the f16/bf16 conversions.
 *
 * Semantics (also in docs/collectives.md):
 *  - integers: sum and prod wrap modulo 2^bits (computed in the unsigned
 *    type, so signed overflow is defined); avg is the wrapped sum divided
 *    by N with C's truncating division (toward zero for signed types).
 *  - floats: IEEE arithmetic in the element type; f16 and bf16 are widened
 *    to f32 (exact), reduced, and rounded back to nearest-even.
 *  - min/max propagate NaN: x op y is x when x is NaN (its payload kept);
 *    a NaN produced by sum/prod is the canonical quiet NaN (the hardware
 *    would keep either operand's payload, as the compiler orders them).
 *  - operand order is explicit: without @rev, dst = dst op src; with @rev,
 *    dst = src op dst. Algorithms put the lower-ranked data first so every
 *    rank computes the same bytes.
 */
#ifndef HOP_COLL_REDUCE_H
#define HOP_COLL_REDUCE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <hop/common.h>

/* dst[i] = dst[i] op src[i] (or src[i] op dst[i] when @rev); @dst and
 * @src must not overlap; any alignment. */
void hop_reduce_local(void *dst, const void *src, size_t count,
		      hop_dtype_t dtype, hop_op_t op, int rev);

/* buf[i] /= n (the last step of HOP_AVG). */
void hop_reduce_avg(void *buf, size_t count, hop_dtype_t dtype, int n);

/* Bulk conversions (vectorised loops). */
void hop_f16_to_f32_n(float *dst, const uint16_t *src, size_t n);
void hop_f32_to_f16_n(uint16_t *dst, const float *src, size_t n);
void hop_bf16_to_f32_n(float *dst, const uint16_t *src, size_t n);
void hop_f32_to_bf16_n(uint16_t *dst, const float *src, size_t n);

static inline uint32_t hop_f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float hop_bits_f32(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Branch-free select (c is 0 or 1), so conversion loops vectorise. */
static inline uint32_t hop_sel(uint32_t c, uint32_t a, uint32_t b)
{
	uint32_t m = 0u - c;

	return (a & m) | (b & ~m);
}

/* binary16 -> binary32, exact; NaN payloads kept (not quieted). */
static inline float hop_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t em = h & 0x7fffu;
	uint32_t normal = (em << 13) + ((127u - 15u) << 23);
	uint32_t infnan = (em << 13) | 0x7f800000u;
	uint32_t sub = hop_f32_bits((float)em * 0x1p-24f);
	uint32_t r = hop_sel(em >= 0x7c00u, infnan,
			     hop_sel(em >= 0x400u, normal, sub));

	return hop_bits_f32(r | sign);
}

/* binary32 -> binary16, round to nearest even; overflow to Inf; NaN keeps
 * the top payload bits (quiet bit set only when they are all zero), so
 * f16 -> f32 -> f16 is the identity on all 65536 patterns. */
static inline uint16_t hop_f32_to_f16(float f)
{
	uint32_t x = hop_f32_bits(f);
	uint32_t sign = (x >> 16) & 0x8000u;
	uint32_t a = x & 0x7fffffffu;
	uint32_t m = (a >> 13) & 0x3ffu;
	uint32_t nan = 0x7c00u | m | hop_sel(m == 0, 0x200u, 0);
	uint32_t normal = (a - ((127u - 15u) << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
	uint32_t sub = hop_f32_bits(hop_bits_f32(a) + 0.5f) - 0x3f000000u;
	uint32_t r = hop_sel(a > 0x7f800000u, nan,
			     hop_sel(a >= 0x47800000u, 0x7c00u,
				     hop_sel(a >= 0x38800000u, normal, sub)));

	return (uint16_t)(r | sign);
}

static inline float hop_bf16_to_f32(uint16_t h)
{
	return hop_bits_f32((uint32_t)h << 16);
}

/* binary32 -> bfloat16, round to nearest even; NaN as for f16. */
static inline uint16_t hop_f32_to_bf16(float f)
{
	uint32_t x = hop_f32_bits(f);
	uint32_t t = x >> 16;
	uint32_t nan = t | hop_sel((t & 0x7fu) == 0, 0x40u, 0);
	uint32_t rne = (x + 0x7fffu + (t & 1u)) >> 16;

	return (uint16_t)hop_sel((x & 0x7fffffffu) > 0x7f800000u, nan, rne);
}

#endif /* HOP_COLL_REDUCE_H */
