/*
 * fit.h - sample statistics, the least-squares fit of T(m) = alpha + m/beta
 * and the decomposition of alpha into alpha_sw + alpha_dma + alpha_sync +
 * alpha_wire. Pure functions, no I/O and no allocation except where noted:
 * hop-probe measures with them and the cost model reuses them.
 *
 * Units are the caller's; hop-probe passes sizes in bytes and times in
 * microseconds, so beta comes out in bytes per microsecond (= MB/s; divide
 * by 1000 for GB/s).
 */
#ifndef HOP_MODEL_FIT_H
#define HOP_MODEL_FIT_H

#include <stddef.h>

/* struct hop_stats - summary of one set of samples. */
struct hop_stats {
	size_t n;
	double min, median, p99, max, mean;
};

/*
 * hop_stats_compute() - Sort @samples in place and summarise them.
 * Percentiles interpolate linearly between order statistics.
 * Return: 0, or HOP_ERR_INVALID_ARG when @n is 0 or a sample is not finite.
 */
int hop_stats_compute(double *samples, size_t n, struct hop_stats *out);

/* Percentile @p (0..100) of @sorted (ascending, @n > 0). */
double hop_percentile_sorted(const double *sorted, size_t n, double p);

/* Weighting of the fit's residuals. */
enum hop_fit_weighting {
	HOP_FIT_UNIFORM = 0,  /* ordinary least squares on T */
	HOP_FIT_RELATIVE = 1, /* weights 1/T^2: minimises relative error, so
				 1-byte and 64-MiB points count alike */
};

/*
 * struct hop_fit - result of fitting T(m) = alpha + m * inv_beta.
 * @alpha:    intercept (time units).
 * @inv_beta: slope (time per size unit).
 * @beta:     1 / inv_beta, or 0 when the slope is not positive (no
 *            bandwidth can be read from the samples).
 * @r2:       coefficient of determination under the same weights, <= 1.
 */
struct hop_fit {
	size_t n;
	double alpha;
	double inv_beta;
	double beta;
	double r2;
};

/*
 * hop_fit_linear() - Weighted least squares of @t against @m.
 * Return: 0, or HOP_ERR_INVALID_ARG when @n < 2, all @m are equal, a value
 * is not finite, or a time is <= 0 under HOP_FIT_RELATIVE.
 */
int hop_fit_linear(const double *m, const double *t, size_t n,
		   enum hop_fit_weighting w, struct hop_fit *out);

/* Model value alpha + m / beta of @fit at @m. */
double hop_fit_eval(const struct hop_fit *fit, double m);

/*
 * How alpha_dma is obtained; see docs/probe.md.
 *  HOP_DMA_INLINE_DIFF: (verbs) one-way time of a non-inline write minus
 *    that of an inline write of (almost) the same size.
 *  HOP_DMA_POST_TO_COMPLETION: (tcp, shm) time from the post call to the
 *    local completion of a tiny signalled write, minus the post call.
 */
enum hop_dma_method {
	HOP_DMA_INLINE_DIFF = 0,
	HOP_DMA_POST_TO_COMPLETION = 1,
};

/*
 * struct hop_alpha_input - raw samples (time units, one sample per event)
 * the decomposition reads. Every array is sorted in place.
 * @post:       duration of the provider's post call (alpha_sw).
 * @oneway_imm: one-way time (half round trip) of a tiny write with
 *              immediate, noticed by polling completions.
 * @oneway_mem: the same write without immediate, noticed by spinning on
 *              the last byte of the target buffer.
 * @dma_a/@dma_b: HOP_DMA_INLINE_DIFF: one-way non-inline / inline;
 *              HOP_DMA_POST_TO_COMPLETION: post-to-local-completion / not
 *              used (@post is subtracted).
 */
struct hop_alpha_input {
	double *post;
	size_t n_post;
	double *oneway_imm;
	size_t n_imm;
	double *oneway_mem;
	size_t n_mem;
	enum hop_dma_method dma_method;
	double *dma_a;
	size_t n_dma_a;
	double *dma_b;
	size_t n_dma_b;
};

/*
 * struct hop_alpha_parts - the decomposition (medians, and the p99 of the
 * directly measured terms). Their sum equals the one-way time of a tiny
 * write with immediate (@half_rtt) by construction; differences of
 * medians are clamped at 0 and @clamped counts how many were.
 */
struct hop_alpha_parts {
	double sw, dma, sync, wire;
	double sw_p99, dma_p99, sync_p99, wire_p99;
	double half_rtt, half_rtt_p99;
	int clamped;
};

/* hop_alpha_decompose() - Apply the rules above. Return 0 or
 * HOP_ERR_INVALID_ARG naming nothing (an empty sample array). */
int hop_alpha_decompose(const struct hop_alpha_input *in,
			struct hop_alpha_parts *out);

/* Sum of the four parts. */
double hop_alpha_sum(const struct hop_alpha_parts *p);

/*
 * struct hop_alpha_check - the consistency line: the sum of the parts
 * against the fitted intercept.
 * @diff_pct: 100 * (sum - intercept) / intercept (signed; 0 when the
 *            intercept is not positive and the sum is 0).
 * @poor_fit: r2 < the threshold.
 * @disagree: |diff_pct| > the threshold, or the intercept is not positive.
 */
struct hop_alpha_check {
	double sum, intercept, diff_pct;
	int poor_fit;
	int disagree;
};

#define HOP_FIT_R2_MIN 0.95     /* below: "poor fit" */
#define HOP_ALPHA_DIFF_MAX 20.0 /* percent; above: "parts disagree" */

void hop_alpha_check(const struct hop_alpha_parts *parts,
		     const struct hop_fit *fit, double r2_min,
		     double max_diff_pct, struct hop_alpha_check *out);

/* The seed's single-link formulas, for the probe's comparisons. */
/* duplex factor: concurrent send+receive time over one direction's time
 * (1 = full duplex, costs the max; 2 = the directions serialise, the sum) */
double hop_duplex_factor(double t_one, double t_both);
/* store-and-forward over links in series: 1/beta_eff = sum 1/beta_i */
double hop_harmonic_beta(const double *beta, size_t n);
/* d concurrent links out of one node: min(d * beta, beta_mem) */
double hop_aggregate_beta(int d, double beta, double beta_mem);

#endif /* HOP_MODEL_FIT_H */
