/*
 * fit.c - statistics, weighted least squares and the alpha decomposition
 * (see fit.h). Pure functions.
 */
#include "model/fit.h"

#include <math.h>
#include <stdlib.h>

#include <hop/common.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double hop_percentile_sorted(const double *sorted, size_t n, double p)
{
	if (n == 0)
		return NAN;
	if (p <= 0)
		return sorted[0];
	if (p >= 100)
		return sorted[n - 1];
	double pos = p / 100.0 * (double)(n - 1);
	size_t lo = (size_t)pos;
	double frac = pos - (double)lo;

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

int hop_stats_compute(double *samples, size_t n, struct hop_stats *out)
{
	double sum = 0;

	if (!samples || !out || n == 0)
		return HOP_ERR_INVALID_ARG;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(samples[i]))
			return HOP_ERR_INVALID_ARG;
		sum += samples[i];
	}
	qsort(samples, n, sizeof(*samples), cmp_double);
	out->n = n;
	out->min = samples[0];
	out->max = samples[n - 1];
	out->median = hop_percentile_sorted(samples, n, 50);
	out->p99 = hop_percentile_sorted(samples, n, 99);
	out->mean = sum / (double)n;
	return 0;
}

int hop_fit_linear(const double *m, const double *t, size_t n,
		   enum hop_fit_weighting w, struct hop_fit *out)
{
	double sw = 0, sx = 0, sy = 0;

	if (!m || !t || !out || n < 2)
		return HOP_ERR_INVALID_ARG;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(m[i]) || !isfinite(t[i]))
			return HOP_ERR_INVALID_ARG;
		if (w == HOP_FIT_RELATIVE && t[i] <= 0)
			return HOP_ERR_INVALID_ARG;
		double wi = w == HOP_FIT_RELATIVE ? 1.0 / (t[i] * t[i]) : 1.0;

		sw += wi;
		sx += wi * m[i];
		sy += wi * t[i];
	}
	double xbar = sx / sw, ybar = sy / sw;
	double sxx = 0, sxy = 0, syy = 0;

	/* second pass around the weighted means: no cancellation at 64 MiB */
	for (size_t i = 0; i < n; i++) {
		double wi = w == HOP_FIT_RELATIVE ? 1.0 / (t[i] * t[i]) : 1.0;
		double dx = m[i] - xbar, dy = t[i] - ybar;

		sxx += wi * dx * dx;
		sxy += wi * dx * dy;
		syy += wi * dy * dy;
	}
	if (!(sxx > 0))
		return HOP_ERR_INVALID_ARG; /* every size equal: no slope */
	double slope = sxy / sxx;
	double icpt = ybar - slope * xbar;
	double ssres = 0;

	for (size_t i = 0; i < n; i++) {
		double wi = w == HOP_FIT_RELATIVE ? 1.0 / (t[i] * t[i]) : 1.0;
		double r = t[i] - (icpt + slope * m[i]);

		ssres += wi * r * r;
	}
	out->n = n;
	out->alpha = icpt;
	out->inv_beta = slope;
	out->beta = slope > 0 ? 1.0 / slope : 0.0;
	out->r2 = syy > 0 ? 1.0 - ssres / syy : (ssres == 0 ? 1.0 : 0.0);
	return 0;
}

double hop_fit_eval(const struct hop_fit *fit, double m)
{
	return fit->alpha + m * fit->inv_beta;
}

static int stats_of(double *s, size_t n, struct hop_stats *st)
{
	return s ? hop_stats_compute(s, n, st) : HOP_ERR_INVALID_ARG;
}

static double clamp0(double v, int *clamped)
{
	if (v < 0) {
		(*clamped)++;
		return 0;
	}
	return v;
}

int hop_alpha_decompose(const struct hop_alpha_input *in,
			struct hop_alpha_parts *out)
{
	struct hop_stats post, imm, mem, a, b;
	int ret;

	if (!in || !out)
		return HOP_ERR_INVALID_ARG;
	if ((ret = stats_of(in->post, in->n_post, &post)) ||
	    (ret = stats_of(in->oneway_imm, in->n_imm, &imm)) ||
	    (ret = stats_of(in->oneway_mem, in->n_mem, &mem)) ||
	    (ret = stats_of(in->dma_a, in->n_dma_a, &a)))
		return ret;
	if (in->dma_method == HOP_DMA_INLINE_DIFF) {
		if ((ret = stats_of(in->dma_b, in->n_dma_b, &b)))
			return ret;
	} else if (in->dma_method == HOP_DMA_POST_TO_COMPLETION) {
		b = post;
	} else {
		return HOP_ERR_INVALID_ARG;
	}
	out->clamped = 0;
	out->half_rtt = imm.median;
	out->half_rtt_p99 = imm.p99;
	out->sw = post.median;
	out->sw_p99 = post.p99;
	out->dma = clamp0(a.median - b.median, &out->clamped);
	out->dma_p99 = clamp0(a.p99 - b.median, &out->clamped);
	out->sync = clamp0(imm.median - mem.median, &out->clamped);
	out->sync_p99 = clamp0(imm.p99 - mem.median, &out->clamped);
	out->wire = clamp0(imm.median - out->sw - out->dma - out->sync,
			   &out->clamped);
	out->wire_p99 = clamp0(imm.p99 - out->sw - out->dma - out->sync,
			       &out->clamped);
	return 0;
}

double hop_alpha_sum(const struct hop_alpha_parts *p)
{
	return p->sw + p->dma + p->sync + p->wire;
}

void hop_alpha_check(const struct hop_alpha_parts *parts,
		     const struct hop_fit *fit, double r2_min,
		     double max_diff_pct, struct hop_alpha_check *out)
{
	out->sum = hop_alpha_sum(parts);
	out->intercept = fit->alpha;
	if (fit->alpha > 0)
		out->diff_pct = 100.0 * (out->sum - fit->alpha) / fit->alpha;
	else
		out->diff_pct = out->sum == 0 ? 0 : INFINITY;
	out->poor_fit = !(fit->r2 >= r2_min);
	out->disagree = !(fabs(out->diff_pct) <= max_diff_pct);
}

double hop_duplex_factor(double t_one, double t_both)
{
	return t_one > 0 ? t_both / t_one : NAN;
}

double hop_harmonic_beta(const double *beta, size_t n)
{
	double inv = 0;

	for (size_t i = 0; i < n; i++) {
		if (!(beta[i] > 0))
			return 0;
		inv += 1.0 / beta[i];
	}
	return n ? 1.0 / inv : 0;
}

double hop_aggregate_beta(int d, double beta, double beta_mem)
{
	double links = (double)d * beta;

	return links < beta_mem ? links : beta_mem;
}
