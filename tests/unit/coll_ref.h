/*
 * coll_ref.h - reference arithmetic for the collective tests, written
 * independently of src/coll/reduce.[ch]: f16/bf16 decoded with ldexp and
 * encoded by nearest-value search with ties to even; integer reductions
 * in uint64 with explicit wrap; a deterministic input generator.
 */
#ifndef HOP_TEST_COLL_REF_H
#define HOP_TEST_COLL_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include <hop/common.h>

static inline uint64_t ref_hash(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) *
		     0xbf58476d1ce4e5b9ull ^ (c + 1) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return h;
}

/* binary16 value of @h (exact in double). */
static inline double ref_f16_val(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
	double v;

	if (e == 31)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -24);
	else
		v = ldexp(1024 + m, e - 25);
	return s ? -v : v;
}

static inline double ref_bf16_val(uint16_t h)
{
	int s = h >> 15, e = (h >> 7) & 255, m = h & 127;
	double v;

	if (e == 255)
		v = m ? NAN : INFINITY;
	else if (e == 0)
		v = ldexp(m, -133);
	else
		v = ldexp(128 + m, e - 134);
	return s ? -v : v;
}

/* Value of every positive finite pattern 0..maxpat (increasing), built
 * once from the decoders above. */
static inline const double *ref_table(int bf)
{
	static double tab[2][0x7f80];
	static int ready[2];

	if (!ready[bf]) {
		uint16_t maxpat = bf ? 0x7f7f : 0x7bff;
		for (uint32_t p = 0; p <= maxpat; p++)
			tab[bf][p] = bf ? ref_bf16_val((uint16_t)p)
					: ref_f16_val((uint16_t)p);
		ready[bf] = 1;
	}
	return tab[bf];
}

/* Nearest finite pattern to |x| (ties to the even pattern); past the
 * rounding boundary above the largest finite value: infinity. */
static inline uint16_t ref_round_search(double x, int bf)
{
	const double *val = ref_table(bf);
	uint16_t maxpat = bf ? 0x7f7f : 0x7bff, infpat = bf ? 0x7f80 : 0x7c00;
	uint16_t lo = 0, hi = maxpat;

	if (x != x) /* the canonical quiet NaN */
		return bf ? 0x7fc0 : 0x7e00;
	double a = fabs(x);
	uint16_t sg = signbit(x) ? 0x8000 : 0;
	double top = val[maxpat], ulp = top - val[maxpat - 1];
	if (a >= top + ulp / 2)
		return (uint16_t)(sg | infpat);
	if (a >= top)
		return (uint16_t)(sg | maxpat);
	while (hi - lo > 1) { /* val[lo] <= a < val[hi] */
		uint16_t mid = (uint16_t)((lo + hi) / 2);
		if (val[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	double dl = a - val[lo], dh = val[hi] - a;
	uint16_t r = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
	return (uint16_t)(sg | r);
}

/* ref_round_search() remembered per value: the generators draw from a
 * few hundred values and the reductions of them stay few, while the
 * search costs 15 table reads; the collective tests round millions of
 * elements. A slot keeps the value's bits and its pattern. */
static inline uint16_t ref_round(double x, int bf)
{
	static struct { uint64_t bits; uint32_t pat; } memo[2][1024];
	uint64_t b;

	if (x != x)
		return ref_round_search(x, bf);
	memcpy(&b, &x, sizeof(b));
	unsigned slot = (unsigned)((b * 0x9e3779b97f4a7c15ull) >> 54);
	if (memo[bf][slot].pat && memo[bf][slot].bits == b)
		return (uint16_t)(memo[bf][slot].pat - 1);
	uint16_t p = ref_round_search(x, bf);
	memo[bf][slot].bits = b;
	memo[bf][slot].pat = (uint32_t)p + 1;
	return p;
}

static inline uint16_t ref_to_f16(double x)
{
	return ref_round(x, 0);
}

static inline uint16_t ref_to_bf16(double x)
{
	return ref_round(x, 1);
}

static inline int ref_is_float(hop_dtype_t dt)
{
	return dt >= HOP_FLOAT16;
}

static inline int ref_is_signed(hop_dtype_t dt)
{
	return dt == HOP_INT8 || dt == HOP_INT32 || dt == HOP_INT64;
}

/* element i of @buf as double (floats) */
static inline double ref_get_f(const void *buf, size_t i, hop_dtype_t dt)
{
	uint16_t h;
	float f;
	double d;

	switch (dt) {
	case HOP_FLOAT16:
		memcpy(&h, (const char *)buf + 2 * i, 2);
		return ref_f16_val(h);
	case HOP_BFLOAT16:
		memcpy(&h, (const char *)buf + 2 * i, 2);
		return ref_bf16_val(h);
	case HOP_FLOAT32:
		memcpy(&f, (const char *)buf + 4 * i, 4);
		return f;
	default:
		memcpy(&d, (const char *)buf + 8 * i, 8);
		return d;
	}
}

static inline void ref_put_f(void *buf, size_t i, hop_dtype_t dt, double v)
{
	uint16_t h;
	float f;

	switch (dt) {
	case HOP_FLOAT16:
		h = ref_to_f16(v);
		memcpy((char *)buf + 2 * i, &h, 2);
		break;
	case HOP_BFLOAT16:
		h = ref_to_bf16(v);
		memcpy((char *)buf + 2 * i, &h, 2);
		break;
	case HOP_FLOAT32:
		f = (float)v;
		memcpy((char *)buf + 4 * i, &f, 4);
		break;
	default:
		memcpy((char *)buf + 8 * i, &v, 8);
		break;
	}
}

/* integer element as uint64 bits (sign-extended for signed types) */
static inline uint64_t ref_get_i(const void *buf, size_t i, hop_dtype_t dt)
{
	size_t es = hop_dtype_size(dt);
	uint64_t u = 0;

	memcpy(&u, (const char *)buf + es * i, es); /* little endian */
	if (ref_is_signed(dt) && es < 8 && (u >> (es * 8 - 1) & 1))
		u |= ~0ull << (es * 8);
	return u;
}

static inline void ref_put_i(void *buf, size_t i, hop_dtype_t dt, uint64_t v)
{
	size_t es = hop_dtype_size(dt);

	memcpy((char *)buf + es * i, &v, es);
}

/* Integer op in uint64, wrapped to the type by ref_put_i's truncation. */
static inline uint64_t ref_iop(hop_dtype_t dt, hop_op_t op, uint64_t a,
			       uint64_t b)
{
	int sg = ref_is_signed(dt);

	switch (op) {
	case HOP_SUM:
	case HOP_AVG:
		return a + b;
	case HOP_PROD:
		return a * b;
	case HOP_MIN:
		return sg ? ((int64_t)a < (int64_t)b ? a : b) : (a < b ? a : b);
	default:
		return sg ? ((int64_t)a > (int64_t)b ? a : b) : (a > b ? a : b);
	}
}

/* Re-normalise a wrapped uint64 to the type's value (sign-extended). */
static inline uint64_t ref_wrap(hop_dtype_t dt, uint64_t v)
{
	char b[8];

	ref_put_i(b, 0, dt, v);
	return ref_get_i(b, 0, dt);
}

#endif /* HOP_TEST_COLL_REF_H */
