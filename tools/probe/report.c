/*
 * report.c - what hop-probe prints and writes: the fit of a pair and its
 * consistency check, the readable table, the CSV of the sweep and a
 * hand-written SVG log-log plot. No communication: unit-testable.
 */
#include "probe.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include <hop/common.h>

void probe_finish_pair(struct hop_profile_pair *q, struct hop_fit *fit,
		       struct hop_alpha_check *chk)
{
	double m[HOP_PROFILE_MAX_SIZES], t[HOP_PROFILE_MAX_SIZES];
	struct hop_alpha_parts parts = { .sw = q->sw.median_us,
					 .dma = q->dma.median_us,
					 .sync = q->sync.median_us,
					 .wire = q->wire.median_us };

	memset(fit, 0, sizeof(*fit));
	fit->alpha = fit->beta = fit->r2 = NAN;
	for (int i = 0; i < q->nsizes; i++) {
		m[i] = q->pt[i].size;
		t[i] = q->pt[i].median_us;
	}
	if (hop_fit_linear(m, t, (size_t)q->nsizes, HOP_FIT_RELATIVE, fit) == 0) {
		q->alpha_us = fit->alpha;
		q->beta_gbps = fit->beta / 1e3; /* bytes/us -> GB/s */
		q->r2 = fit->r2;
	}
	hop_alpha_check(&parts, fit, HOP_FIT_R2_MIN, HOP_ALPHA_DIFF_MAX, chk);
	q->alpha_sum_us = chk->sum;
	q->alpha_diff_pct = chk->diff_pct;
	/* a latency is >= 0: a negative intercept (a sweep of sizes far above
	 * it, a shaped link's burst) says nothing about it, the measured
	 * one-way tiny write does (the report still shows the fit) */
	if (q->alpha_us < 0 && isfinite(chk->sum) && chk->sum >= 0)
		q->alpha_us = chk->sum;
}

static const char *human_size(double b, char *buf, size_t len)
{
	if (b >= 1048576 && fmod(b, 1048576) == 0)
		snprintf(buf, len, "%.0fM", b / 1048576);
	else if (b >= 1024 && fmod(b, 1024) == 0)
		snprintf(buf, len, "%.0fK", b / 1024);
	else
		snprintf(buf, len, "%.0f", b);
	return buf;
}

static void row(FILE *f, const char *name, const char *what,
		const struct hop_pstat *s)
{
	fprintf(f, "  %-16s %-42s %10.3f %10.3f\n", name, what, s->median_us,
		s->p99_us);
}

static void table_pair(FILE *f, const struct hop_profile *p,
		       const struct hop_profile_pair *q)
{
	struct hop_profile_pair c = *q;
	struct hop_fit fit;
	struct hop_alpha_check chk;
	int verbs = !strcmp(q->provider, "verbs");
	char sz[16];

	probe_finish_pair(&c, &fit, &chk);
	fprintf(f, "\n== pair %d -> %d on %s (%d ranks; timer overhead %.3f us "
		"subtracted from every sample)\n\n", q->a, q->b, q->provider,
		p->nranks, q->timer_overhead_us);
	fprintf(f, "  %-16s %-42s %10s %10s\n", "term", "what (one-way, tiny write)",
		"median us", "p99 us");
	row(f, "alpha_sw", "post call until the provider returned", &q->sw);
	row(f, "alpha_dma", verbs ? "non-inline minus inline one-way time"
				  : "post until local completion, minus post",
	    &q->dma);
	row(f, "alpha_sync", "completion minus memory-polling notice", &q->sync);
	row(f, "alpha_wire", "rest of the half round trip", &q->wire);
	fprintf(f, "  %-16s %-42s %10.3f\n", "= sum", "one-way write + immediate",
		q->alpha_sum_us);
	row(f, "+ sync_cts", "rendezvous clear-to-send (large messages)",
	    &q->sync_cts);
	snprintf(sz, sizeof(sz), "(N=%d)", q->ring_ranks);
	fprintf(f, "  %-16s %-35s %-6s %10.3f %10.3f\n", "+ sync_step",
		"per step of an N-rank ring", sz, q->sync_step.median_us,
		q->sync_step.p99_us);
	fprintf(f, "\n  raw: post inline %.3f, non-inline %.3f, post->completion "
		"%.3f; one-way inline %.3f, non-inline %.3f, memory-polled %.3f us\n",
		q->post_inline.median_us, q->post_noninline.median_us,
		q->post_to_completion.median_us, q->oneway_inline.median_us,
		q->oneway_noninline.median_us, q->oneway_mem.median_us);
	fprintf(f, "\n  %10s %12s %12s %12s %10s\n", "size", "median us",
		"p99 us", "fit us", "GB/s");
	for (int i = 0; i < q->nsizes; i++) {
		const struct hop_profile_point *pt = &q->pt[i];

		fprintf(f, "  %10s %12.3f %12.3f %12.3f %10.3f\n",
			human_size(pt->size, sz, sizeof(sz)), pt->median_us,
			pt->p99_us, hop_profile_predict_us(&c, pt->size),
			pt->size / pt->median_us / 1e3);
	}
	fprintf(f, "\n  fit T(m) = alpha + m/beta over %d sizes: alpha = %.3f us, "
		"beta = %.3f GB/s, R^2 = %.4f\n", q->nsizes, c.alpha_us,
		c.beta_gbps, c.r2);
	fprintf(f, "  consistency: alpha_sw + alpha_dma + alpha_sync + alpha_wire = "
		"%.3f us vs fitted alpha %.3f us: %+.1f%%%s\n", chk.sum,
		chk.intercept, chk.diff_pct,
		chk.disagree || chk.poor_fit ? "" : "  (ok)");
	if (chk.poor_fit)
		fprintf(f, "  *** WARNING: poor fit (R^2 = %.4f < %.2f): T(m) is not "
			"one straight line here (protocol or cache changes); read "
			"alpha and beta with care ***\n", c.r2, HOP_FIT_R2_MIN);
	if (chk.disagree)
		fprintf(f, "  *** WARNING: the parts and the fitted intercept disagree "
			"by %+.1f%% (> %.0f%%): the small-message path costs "
			"differently from what the large-size slope extrapolates "
			"to ***\n", chk.diff_pct, HOP_ALPHA_DIFF_MAX);
	fprintf(f, "\n  link effects:\n");
	fprintf(f, "    duplex: %s bytes one way %.1f us, both ways at once %.1f us: "
		"factor %.2f (1 = full duplex, costs the max; 2 = the sum)\n",
		human_size(q->duplex_size, sz, sizeof(sz)), q->duplex_one_us,
		q->duplex_both_us, q->duplex_factor);
	fprintf(f, "    memory bandwidth (memcpy of %s-byte messages) beta_mem = "
		"%.2f GB/s\n", human_size(q->duplex_size / 4, sz, sizeof(sz)),
		q->beta_mem_gbps);
	for (int i = 0; i < q->nagg; i++)
		fprintf(f, "    d = %2d concurrent links from rank %d: %.2f GB/s "
			"(model min(d*beta, beta_mem) = %.2f GB/s)\n",
			q->agg[i].links, q->a, q->agg[i].gbps, q->agg[i].model_gbps);
	if (q->saf_relay >= 0)
		fprintf(f, "    store-and-forward %d -> %d -> %d, %s bytes, link 2 "
			"emulated at half speed: beta1 %.2f, beta2 %.2f, measured "
			"%.2f GB/s vs harmonic 1/(1/b1+1/b2) %.2f GB/s (%+.1f%%)\n",
			q->a, q->saf_relay, q->saf_dest,
			human_size(q->saf_size, sz, sizeof(sz)), q->saf_beta1_gbps,
			q->saf_beta2_gbps, q->saf_gbps, q->saf_harmonic_gbps,
			100 * (q->saf_gbps - q->saf_harmonic_gbps) /
				q->saf_harmonic_gbps);
}

void report_table(FILE *f, const struct hop_profile *p)
{
	fprintf(f, "hop-probe %s: provider %s, %d ranks, %d pair%s%s%s\n",
		p->hop_version, p->provider, p->nranks, p->npairs,
		p->npairs == 1 ? "" : "s", p->host[0] ? ", host " : "", p->host);
	for (int i = 0; i < p->npairs; i++)
		table_pair(f, p, &p->pairs[i]);
}

int report_csv(FILE *f, const struct hop_profile *p)
{
	fprintf(f, "a,b,provider,size_bytes,median_us,p99_us,fit_us,bandwidth_GBps\n");
	for (int i = 0; i < p->npairs; i++) {
		const struct hop_profile_pair *q = &p->pairs[i];

		for (int k = 0; k < q->nsizes; k++)
			fprintf(f, "%d,%d,%s,%.0f,%.6g,%.6g,%.6g,%.6g\n", q->a, q->b,
				q->provider, q->pt[k].size, q->pt[k].median_us,
				q->pt[k].p99_us, hop_profile_predict_us(q, q->pt[k].size),
				q->pt[k].size / q->pt[k].median_us / 1e3);
	}
	return ferror(f) ? HOP_ERR_SYSTEM : 0;
}

/* ---- SVG: log-log T(m), measured points and fitted lines ---- */

#define W 760
#define H 500
#define ML 80
#define MR 190
#define MT 40
#define MB 60

struct axes {
	double x0, x1, y0, y1; /* decades */
};

static double px(const struct axes *a, double m)
{
	return ML + (log10(m) - a->x0) / (a->x1 - a->x0) * (W - ML - MR);
}

static double py(const struct axes *a, double t)
{
	return H - MB - (log10(t) - a->y0) / (a->y1 - a->y0) * (H - MT - MB);
}

static const char *decade_label(double v, int bytes, char *buf, size_t len)
{
	static const char *const sfx[] = { "", "K", "M", "G" };

	if (bytes) {
		int k = 0;

		while (v >= 1000 && k < 3) {
			v /= 1000;
			k++;
		}
		snprintf(buf, len, "%g%s", v, sfx[k]);
	} else {
		snprintf(buf, len, "%g", v);
	}
	return buf;
}

int report_svg(FILE *f, const struct hop_profile *p)
{
	static const char *const color[] = { "#1f77b4", "#d62728", "#2ca02c",
					     "#9467bd", "#ff7f0e", "#17becf" };
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
	struct axes a;
	char lb[32];

	for (int i = 0; i < p->npairs; i++)
		for (int k = 0; k < p->pairs[i].nsizes; k++) {
			const struct hop_profile_point *pt = &p->pairs[i].pt[k];
			double hi = isfinite(pt->p99_us) ? pt->p99_us : pt->median_us;

			xmin = fmin(xmin, fmax(pt->size, 1));
			xmax = fmax(xmax, pt->size);
			ymin = fmin(ymin, pt->median_us);
			ymax = fmax(ymax, hi);
		}
	if (!(xmax > 0) || !(ymin > 0))
		return HOP_ERR_INVALID_ARG;
	a.x0 = floor(log10(xmin));
	a.x1 = fmax(ceil(log10(xmax)), a.x0 + 1);
	a.y0 = floor(log10(ymin));
	a.y1 = fmax(ceil(log10(ymax)), a.y0 + 1);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		"<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", W, H, W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">hop-probe: one-way "
		"time T(m) on %s, measured (median) and fitted alpha + m/beta</text>\n",
		ML, p->provider);
	/* grid, ticks and labels at every decade */
	for (double d = a.x0; d <= a.x1 + 1e-9; d++) {
		double x = px(&a, pow(10, d));

		fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			"stroke=\"#ddd\"/>\n<text x=\"%.1f\" y=\"%d\" "
			"text-anchor=\"middle\">%s</text>\n", x, MT, x, H - MB, x,
			H - MB + 18, decade_label(pow(10, d), 1, lb, sizeof(lb)));
	}
	for (double d = a.y0; d <= a.y1 + 1e-9; d++) {
		double y = py(&a, pow(10, d));

		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			"stroke=\"#ddd\"/>\n<text x=\"%d\" y=\"%.1f\" "
			"text-anchor=\"end\">%s</text>\n", ML, y, W - MR, y, ML - 6,
			y + 4, decade_label(pow(10, d), 0, lb, sizeof(lb)));
	}
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"black\"/>\n", ML, MT, W - ML - MR, H - MT - MB);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">message size "
		"m (bytes, log scale)</text>\n", (ML + W - MR) / 2, H - 18);
	fprintf(f, "<text x=\"20\" y=\"%d\" text-anchor=\"middle\" "
		"transform=\"rotate(-90 20 %d)\">one-way time T(m) (microseconds, "
		"log scale)</text>\n", (MT + H - MB) / 2, (MT + H - MB) / 2);
	for (int i = 0; i < p->npairs; i++) {
		const struct hop_profile_pair *q = &p->pairs[i];
		const char *col = color[i % 6];
		int ly = MT + 10 + 44 * (i % 9);

		if (isfinite(q->alpha_us) && q->beta_gbps > 0) {
			fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" "
				"stroke-dasharray=\"6 3\" points=\"", col);
			for (int k = 0; k <= 100; k++) {
				double m = pow(10, a.x0 + (a.x1 - a.x0) * k / 100.0);
				double t = hop_profile_predict_us(q, m);

				if (t > 0 && log10(t) >= a.y0 && log10(t) <= a.y1)
					fprintf(f, "%.1f,%.1f ", px(&a, m), py(&a, t));
			}
			fprintf(f, "\"/>\n");
		}
		for (int k = 0; k < q->nsizes; k++) {
			const struct hop_profile_point *pt = &q->pt[k];

			if (pt->size < 1)
				continue;
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" "
				"fill=\"%s\"/>\n", px(&a, pt->size),
				py(&a, pt->median_us), col);
			if (isfinite(pt->p99_us))
				fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
					"y2=\"%.1f\" stroke=\"%s\" opacity=\"0.5\"/>\n",
					px(&a, pt->size), py(&a, pt->median_us),
					px(&a, pt->size), py(&a, pt->p99_us), col);
		}
		fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"3.5\" fill=\"%s\"/>\n"
			"<text x=\"%d\" y=\"%d\">%d-%d median, p99 bar</text>\n"
			"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" "
			"stroke-dasharray=\"6 3\"/>\n<text x=\"%d\" y=\"%d\">fit %.3g us, "
			"%.3g GB/s</text>\n", W - MR + 14, ly, col, W - MR + 24, ly + 4,
			q->a, q->b, W - MR + 8, ly + 18, W - MR + 20, ly + 18, col,
			W - MR + 24, ly + 22, q->alpha_us, q->beta_gbps);
	}
	fprintf(f, "</svg>\n");
	return ferror(f) ? HOP_ERR_SYSTEM : 0;
}

int report_to_file(const char *path, const struct hop_profile *p,
		   int (*fn)(FILE *, const struct hop_profile *))
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f) {
		fprintf(stderr, "hop-probe: cannot create %s: %s\n", path,
			strerror(errno));
		return HOP_ERR_SYSTEM;
	}
	ret = fn(f, p);
	if (fclose(f) && !ret)
		ret = HOP_ERR_SYSTEM;
	if (ret)
		fprintf(stderr, "hop-probe: writing %s failed\n", path);
	return ret;
}
