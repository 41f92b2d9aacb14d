/*
 * profile_write.c - hop-probe's JSON profile: the writer, and the atomic
 * save of a profile in any format (profile_json.h; the fields are in
 * docs/probe.md).
 */
#include "model/cnum.h"
#include "probe/profile_json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hop/common.h>

/* ---- writer ---- */

static void wnum(FILE *f, const char *key, double v, const char *sep)
{
	if (isfinite(v))
		fprintf(f, "\"%s\": %.9g%s", key, v, sep);
	else
		fprintf(f, "\"%s\": null%s", key, sep);
}

static void wstat(FILE *f, const char *ind, const char *key,
		  const struct hop_pstat *s, const char *sep)
{
	fprintf(f, "%s\"%s\": {", ind, key);
	wnum(f, "median_us", s->median_us, ", ");
	wnum(f, "p99_us", s->p99_us, "");
	fprintf(f, "}%s\n", sep);
}

/* names are ours (provider, host, version): escape quotes and controls */
static void wstr(FILE *f, const char *key, const char *s, const char *sep)
{
	fprintf(f, "\"%s\": \"", key);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fprintf(f, "\"%s", sep);
}

static void write_pair(FILE *f, const struct hop_profile_pair *q,
		       const char *sep)
{
	const char *I = "      ", *J = "        ";

	fprintf(f, "    {\n%s\"a\": %d, \"b\": %d, ", I, q->a, q->b);
	wstr(f, "provider", q->provider, ",\n");
	if (q->link_class >= 0)
		fprintf(f, "%s\"link_class\": \"%s\",\n", I,
			hop_profile_class_name(q->link_class));
	fprintf(f, "%s", I);
	wnum(f, "alpha_us", q->alpha_us, ", ");
	wnum(f, "beta_GBps", q->beta_gbps, ", ");
	wnum(f, "r2", q->r2, ",\n");
	fprintf(f, "%s", I);
	wnum(f, "beta_mem_GBps", q->beta_mem_gbps, ", ");
	wnum(f, "duplex_factor", q->duplex_factor, ",\n");
	fprintf(f, "%s\"alpha_parts\": {\n", I);
	wstat(f, J, "sw", &q->sw, ",");
	wstat(f, J, "dma", &q->dma, ",");
	wstat(f, J, "sync", &q->sync, ",");
	wstat(f, J, "wire", &q->wire, ",");
	wstat(f, J, "sync_cts", &q->sync_cts, ",");
	wstat(f, J, "sync_step", &q->sync_step, ",");
	fprintf(f, "%s\"ring_ranks\": %d, ", J, q->ring_ranks);
	wnum(f, "sum_us", q->alpha_sum_us, ", ");
	wnum(f, "diff_pct", q->alpha_diff_pct, "\n");
	fprintf(f, "%s},\n%s\"raw\": {\n", I, I);
	wstat(f, J, "post_inline", &q->post_inline, ",");
	wstat(f, J, "post_noninline", &q->post_noninline, ",");
	wstat(f, J, "post_to_completion", &q->post_to_completion, ",");
	wstat(f, J, "oneway_inline", &q->oneway_inline, ",");
	wstat(f, J, "oneway_noninline", &q->oneway_noninline, ",");
	wstat(f, J, "oneway_mem", &q->oneway_mem, ",");
	fprintf(f, "%s", J);
	wnum(f, "timer_overhead_us", q->timer_overhead_us, "\n");
	fprintf(f, "%s},\n%s\"duplex\": {", I, I);
	wnum(f, "size", q->duplex_size, ", ");
	wnum(f, "one_us", q->duplex_one_us, ", ");
	wnum(f, "both_us", q->duplex_both_us, "},\n");
	fprintf(f, "%s\"store_forward\": {\"relay\": %d, \"dest\": %d, ", I,
		q->saf_relay, q->saf_dest);
	wnum(f, "size", q->saf_size, ",\n");
	fprintf(f, "%s", J);
	wnum(f, "beta1_GBps", q->saf_beta1_gbps, ", ");
	wnum(f, "beta2_GBps", q->saf_beta2_gbps, ", ");
	wnum(f, "measured_GBps", q->saf_gbps, ", ");
	wnum(f, "harmonic_GBps", q->saf_harmonic_gbps, "},\n");
	fprintf(f, "%s\"aggregate\": [", I);
	for (int i = 0; i < q->nagg; i++) {
		fprintf(f, "%s{\"links\": %d, ", i ? ", " : "", q->agg[i].links);
		wnum(f, "GBps", q->agg[i].gbps, ", ");
		wnum(f, "model_GBps", q->agg[i].model_gbps, "}");
	}
	fprintf(f, "],\n%s\"sweep\": [\n", I);
	for (int i = 0; i < q->nsizes; i++) {
		fprintf(f, "%s{", J);
		wnum(f, "size", q->pt[i].size, ", ");
		wnum(f, "median_us", q->pt[i].median_us, ", ");
		wnum(f, "p99_us", q->pt[i].p99_us, "");
		fprintf(f, "}%s\n", i + 1 < q->nsizes ? "," : "");
	}
	fprintf(f, "%s]\n    }%s\n", I, sep);
}

int hop_profile_write(const struct hop_profile *p, FILE *f)
{
	struct hop_c_locale loc;

	if (!p || !f || p->npairs < 0 || (p->npairs && !p->pairs))
		return HOP_ERR_INVALID_ARG;
	hop_c_locale_enter(&loc);       /* JSON numbers have decimal points */
	fprintf(f, "{\n  ");
	wstr(f, "format", HOP_PROFILE_FORMAT, ",\n  ");
	fprintf(f, "\"version\": %d,\n  ", HOP_PROFILE_VERSION);
	wstr(f, "hop_version", p->hop_version, ",\n  ");
	wstr(f, "provider", p->provider, ",\n  ");
	wstr(f, "host", p->host, ",\n  ");
	fprintf(f, "\"nranks\": %d,\n  \"pairs\": [\n", p->nranks);
	for (int i = 0; i < p->npairs; i++)
		write_pair(f, &p->pairs[i], i + 1 < p->npairs ? "," : "");
	fprintf(f, "  ]\n}\n");
	hop_c_locale_leave(&loc);
	return ferror(f) ? HOP_ERR_SYSTEM : 0;
}

int hop_profile_save(const struct hop_profile *p, const char *path,
		     char *err, size_t errlen)
{
	return hop_profile_save_with(p, path, hop_profile_write, err, errlen);
}

int hop_profile_save_with(const struct hop_profile *p, const char *path,
			  int (*write)(const struct hop_profile *, FILE *),
			  char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f;
	int ret;

	if (!p || !path)
		return HOP_ERR_INVALID_ARG;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	if (!(f = fopen(tmp, "w"))) {
		snprintf(err, errlen, "%s: cannot create: %s", tmp,
			 strerror(errno));
		return HOP_ERR_SYSTEM;
	}
	ret = write(p, f);
	if (fclose(f) && !ret)
		ret = HOP_ERR_SYSTEM;
	if (!ret && rename(tmp, path))
		ret = HOP_ERR_SYSTEM;
	if (ret) {
		snprintf(err, errlen, "%s: write failed: %s", path,
			 strerror(errno));
		unlink(tmp);
	}
	return ret;
}
