/*
 * test_probe_report.c - hop-probe's outputs on a synthetic profile: the fit
 * of a pair and its warnings, a CSV with one well-formed row per size, and
 * a well-formed SVG (balanced tags, axes labelled, points and fitted line
 * inside the plot area).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "../../tools/probe/probe.h"

/* alpha 2 us, beta 4 GB/s (4000 B/us), sizes 1 .. 4 MiB */
static void synth(struct hop_profile *p, struct hop_profile_pair *q,
		  double diff_parts)
{
	memset(p, 0, sizeof(*p));
	p->version = 1;
	p->nranks = 2;
	p->npairs = 1;
	p->pairs = q;
	strcpy(p->provider, "tcp");
	strcpy(p->hop_version, "0.1.0");
	hop_profile_pair_init(q);
	q->a = 0;
	q->b = 1;
	strcpy(q->provider, "tcp");
	q->sw = (struct hop_pstat){ 0.5 * diff_parts, 0.6 };
	q->dma = (struct hop_pstat){ 0.25 * diff_parts, 0.3 };
	q->sync = (struct hop_pstat){ 0.25 * diff_parts, 0.3 };
	q->wire = (struct hop_pstat){ 1.0 * diff_parts, 1.2 };
	q->beta_mem_gbps = 10;
	q->nsizes = 23;
	for (int i = 0; i < 23; i++) {
		q->pt[i].size = (double)(1u << i);
		q->pt[i].median_us = 2.0 + q->pt[i].size / 4000.0;
		q->pt[i].p99_us = q->pt[i].median_us * 1.1;
	}
}

static char *render(const struct hop_profile *p,
		    int (*fn)(FILE *, const struct hop_profile *), int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*ret = fn(f, p);
	fclose(f);
	return buf;
}

static int table_fn(FILE *f, const struct hop_profile *p)
{
	report_table(f, p);
	return 0;
}

static void test_finish_pair_fit(void **state)
{
	struct hop_profile p;
	struct hop_profile_pair q;
	struct hop_fit fit;
	struct hop_alpha_check chk;

	(void)state;
	synth(&p, &q, 1.0);
	probe_finish_pair(&q, &fit, &chk);
	assert_true(fabs(q.alpha_us - 2.0) < 1e-9);
	assert_true(fabs(q.beta_gbps - 4.0) < 1e-9);
	assert_true(q.r2 > 0.999999);
	assert_true(fabs(q.alpha_sum_us - 2.0) < 1e-12);
	assert_true(fabs(q.alpha_diff_pct) < 1e-6);
	assert_false(chk.disagree);
	assert_false(chk.poor_fit);
}

/* A sweep whose fitted intercept is negative (sizes far above the
 * latency, a shaped link's burst): the model's alpha, which a link
 * profile must hold >= 0, is the measured one-way tiny write. */
static void test_finish_pair_negative_intercept(void **state)
{
	struct hop_profile p;
	struct hop_profile_pair q;
	struct hop_fit fit;
	struct hop_alpha_check chk;

	(void)state;
	synth(&p, &q, 1.0);
	q.nsizes = 5;   /* 1 MiB .. 16 MiB */
	for (int i = 0; i < q.nsizes; i++) {
		q.pt[i].size = (double)(1u << (20 + i));
		q.pt[i].median_us = -100.0 + q.pt[i].size / 4000.0;
	}
	probe_finish_pair(&q, &fit, &chk);
	assert_true(fabs(fit.alpha + 100.0) < 1e-6);
	assert_true(fabs(q.alpha_us - 2.0) < 1e-12);
}

static void test_table_warns_loudly(void **state)
{
	struct hop_profile p;
	struct hop_profile_pair q;
	int ret;
	char *out;

	(void)state;
	synth(&p, &q, 1.0);
	out = render(&p, table_fn, &ret);
	assert_non_null(strstr(out, "alpha_sw"));
	assert_non_null(strstr(out, "beta = 4.000 GB/s"));
	assert_non_null(strstr(out, "0.0%  (ok)"));
	assert_null(strstr(out, "WARNING"));
	free(out);
	synth(&p, &q, 1.5); /* parts sum to 3 us against a 2 us intercept */
	out = render(&p, table_fn, &ret);
	assert_non_null(strstr(out, "*** WARNING: the parts and the fitted "
				    "intercept disagree by +50.0%"));
	free(out);
	synth(&p, &q, 1.0);
	for (int i = 0; i < q.nsizes; i++) /* a step, not a line */
		q.pt[i].median_us = i < 12 ? 2.0 : 2000.0;
	out = render(&p, table_fn, &ret);
	assert_non_null(strstr(out, "*** WARNING: poor fit"));
	free(out);
}

static void test_csv_rows(void **state)
{
	struct hop_profile p;
	struct hop_profile_pair q;
	struct hop_fit fit;
	struct hop_alpha_check chk;
	int ret, rows = 0;
	char *out, *line, *save;

	(void)state;
	synth(&p, &q, 1.0);
	probe_finish_pair(&q, &fit, &chk);
	out = render(&p, report_csv, &ret);
	assert_int_equal(ret, 0);
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), rows++) {
		int commas = 0;

		for (char *c = line; *c; c++)
			commas += *c == ',';
		assert_int_equal(commas, 7);
		if (rows == 0) {
			assert_string_equal(line, "a,b,provider,size_bytes,median_us,"
					    "p99_us,fit_us,bandwidth_GBps");
			continue;
		}
		int a, b;
		char prov[16];
		double size, med, p99, fitv, bw;

		assert_int_equal(sscanf(line, "%d,%d,%15[^,],%lf,%lf,%lf,%lf,%lf",
					&a, &b, prov, &size, &med, &p99, &fitv, &bw), 8);
		assert_true(size == (double)(1u << (rows - 1)));
		assert_true(fabs(fitv - med) < 1e-3 * med);
		assert_true(fabs(bw - size / med / 1e3) < 1e-4 * bw + 1e-9);
	}
	assert_int_equal(rows, 24);
	free(out);
}

static int count(const char *s, const char *needle)
{
	int n = 0;

	for (; (s = strstr(s, needle)); s++)
		n++;
	return n;
}

static void test_svg_well_formed(void **state)
{
	struct hop_profile p;
	struct hop_profile_pair q;
	struct hop_fit fit;
	struct hop_alpha_check chk;
	int ret;
	char *out;

	(void)state;
	synth(&p, &q, 1.0);
	probe_finish_pair(&q, &fit, &chk);
	out = render(&p, report_svg, &ret);
	assert_int_equal(ret, 0);
	assert_true(strncmp(out, "<?xml", 5) == 0);
	assert_int_equal(count(out, "<svg "), 1);
	assert_int_equal(count(out, "</svg>"), 1);
	assert_int_equal(count(out, "<text"), count(out, "</text>"));
	/* every element closes: self-closing or with its end tag */
	assert_int_equal(count(out, "<"), count(out, "/>") + 2 * count(out, "</text>") +
			 2 /* <svg ...> </svg> */ + 1 /* <?xml ?> */);
	/* axes labelled, one marker per size plus the legend's */
	assert_non_null(strstr(out, "message size m (bytes, log scale)"));
	assert_non_null(strstr(out, "one-way time T(m) (microseconds, log scale)"));
	assert_int_equal(count(out, "<circle"), 23 + 1);
	assert_int_equal(count(out, "<polyline"), 1);
	assert_non_null(strstr(out, ">1M</text>"));
	/* every coordinate inside the canvas */
	for (const char *s = out; (s = strstr(s, "cx=\"")); s++) {
		double x = atof(s + 4), y = atof(strstr(s, "cy=\"") + 4);

		assert_true(x >= 0 && x <= 760 && y >= 0 && y <= 500);
	}
	free(out);
	q.nsizes = 0; /* nothing to plot is an error, not an empty plot */
	out = render(&p, report_svg, &ret);
	assert_int_equal(ret, HOP_ERR_INVALID_ARG);
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_finish_pair_fit),
		cmocka_unit_test(test_finish_pair_negative_intercept),
		cmocka_unit_test(test_table_warns_loudly),
		cmocka_unit_test(test_csv_rows),
		cmocka_unit_test(test_svg_well_formed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
