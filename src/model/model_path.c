/*
 * model_path.c - multi-hop formulas: m bytes relayed over h hops, whole
 * (store-and-forward) or in k chunks (pipelined: a relay forwards chunk i
 * while chunk i+1 arrives), on equal or unequal links; and the integer
 * minimiser the chunk-count choices share.
 */
#include "model/model.h"

#include <math.h>

double hop_model_saf(double a, double b, double m, int h)
{
	if (h < 1)
		return 0;
	return h * (a + m / b);
}

double hop_model_pipe(double a, double b, double m, int h, long k)
{
	if (h < 1)
		return 0;
	if (k < 1)
		return NAN;
	return (double)(h + k - 1) * (a + m / ((double)k * b));
}

double hop_model_pipe_kreal(double a, double b, double m, int h)
{
	if (h <= 1 || m <= 0)
		return 1;
	if (a <= 0)
		return INFINITY;
	return sqrt((h - 1) * m / (a * b));
}

double hop_model_pipe_tstar(double a, double b, double m, int h)
{
	if (h < 1)
		return 0;
	if (a > 0 && (h - 1) * m / (a * b) < 1)  /* k* < 1: k stays at 1 */
		return hop_model_pipe(a, b, m, h, 1);
	return (h - 1) * a + m / b + 2 * sqrt((h - 1) * m * a / b);
}

long hop_model_kmax(double m, double min_chunk)
{
	double k;

	if (!(min_chunk >= 1))
		min_chunk = 1;
	if (!(m >= min_chunk))
		return 1;
	k = floor(m / min_chunk);
	return k > (double)HOP_MODEL_MAX_CHUNKS ? HOP_MODEL_MAX_CHUNKS : (long)k;
}

static long clampk(double k, long kmax)
{
	if (!(k >= 1))  /* also NaN */
		return 1;
	if (k >= (double)kmax)
		return kmax;
	return (long)k;
}

long hop_model_pipe_kopt(double a, double b, double m, int h,
			 double min_chunk)
{
	long kmax = hop_model_kmax(m, min_chunk);
	double kr = hop_model_pipe_kreal(a, b, m, h);
	long lo = clampk(floor(kr), kmax), hi = clampk(ceil(kr), kmax);

	if (hop_model_pipe(a, b, m, h, hi) < hop_model_pipe(a, b, m, h, lo))
		return hi;
	return lo;
}

double hop_model_path_saf(const struct hop_model_hop *hops, int h, double m)
{
	double t = 0;

	for (int i = 0; i < h; i++)
		t += hops[i].alpha + m / hops[i].beta;
	return t;
}

double hop_model_path_pipe(const struct hop_model_hop *hops, int h,
			   double m, long k)
{
	double sum = 0, slow = 0;

	if (k < 1)
		return NAN;
	for (int i = 0; i < h; i++) {
		double s = hops[i].alpha + m / ((double)k * hops[i].beta);

		sum += s;
		if (s > slow)
			slow = s;
	}
	return sum + (double)(k - 1) * slow;
}

struct path_ctx {
	const struct hop_model_hop *hops;
	int h;
	double m;
};

static double path_eval(long k, const void *ctx)
{
	const struct path_ctx *c = ctx;

	return hop_model_path_pipe(c->hops, c->h, c->m, k);
}

long hop_model_path_kopt(const struct hop_model_hop *hops, int h, double m,
			 double min_chunk)
{
	struct path_ctx c = { hops, h, m };

	if (h <= 1)
		return 1;
	return hop_model_argmin(path_eval, &c, 1, hop_model_kmax(m, min_chunk),
				NULL);
}

/* Smallest k of [lo, hi] with the least f, by scanning. */
static long scan(double (*f)(long, const void *), const void *ctx, long lo,
		 long hi, double *best)
{
	long bk = lo;
	double bv = f(lo, ctx);

	for (long k = lo + 1; k <= hi; k++) {
		double v = f(k, ctx);

		if (v < bv) {
			bv = v;
			bk = k;
		}
	}
	*best = bv;
	return bk;
}

long hop_model_argmin(double (*f)(long k, const void *ctx), const void *ctx,
		      long lo, long hi, double *fmin)
{
	long before = lo, best = lo, after = lo, k, next;
	int need_after = 1;
	double bv = f(lo, ctx), v;

	if (hi < lo)
		hi = lo;
	/* geometric scan; the minimum lies between the best point's neighbours */
	for (k = lo; k < hi; k = next) {
		next = k + k / 4 > k + 1 ? k + k / 4 : k + 1;
		if (next > hi)
			next = hi;
		v = f(next, ctx);
		if (need_after) {
			after = next;
			need_after = 0;
		}
		if (v < bv) {
			bv = v;
			before = k;
			best = next;
			need_after = 1;
		}
	}
	if (need_after)
		after = best;
	lo = before;
	hi = after;
	/* ternary search inside the bracket (f quasi-convex) */
	while (hi - lo > 8) {
		long m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;

		if (f(m1, ctx) <= f(m2, ctx))
			hi = m2;
		else
			lo = m1 + 1;
	}
	k = scan(f, ctx, lo, hi, &v);
	if (fmin)
		*fmin = v;
	return k;
}
