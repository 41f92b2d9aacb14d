/*
 * profile_read.c - the strict reader of hop-probe profiles: JSON through
 * json.c, then every field checked for presence, type and sanity, with
 * errors naming the field's path ("pairs[1].alpha_parts.sw: missing").
 */
#include "probe/profile_json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "probe/json.h"

/* ---- reader ---- */

struct rd {
	char *err;
	size_t errlen;
	char path[128];
};

enum { OPT = 0, REQ = 1, NUL_OK = 2 };

__attribute__((format(printf, 3, 4))) static int rd_fail(struct rd *r,
							 const char *key,
							 const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s%s%s: %s", r->path,
		 r->path[0] && key ? "." : "", key ? key : "", msg);
	return HOP_ERR_PARSE;
}

static int rd_get(struct rd *r, const struct hop_json *obj, const char *key,
		  enum hop_json_type want, int flags,
		  const struct hop_json **out)
{
	const struct hop_json *v = hop_json_get(obj, key);

	*out = NULL;
	if (!v) {
		if (flags & REQ)
			return rd_fail(r, key, "missing (required %s)",
				       hop_json_type_name(want));
		return 0;
	}
	if (v->type == HOP_JSON_NULL && (flags & NUL_OK))
		return 0;
	if (v->type != want)
		return rd_fail(r, key, "expected %s, got %s (line %d)",
			       hop_json_type_name(want),
			       hop_json_type_name(v->type), v->line);
	*out = v;
	return 0;
}

static int rd_num(struct rd *r, const struct hop_json *obj, const char *key,
		  int flags, double *out)
{
	const struct hop_json *v;
	int ret = rd_get(r, obj, key, HOP_JSON_NUMBER, flags, &v);

	*out = v ? v->number : NAN;
	return ret;
}

static int rd_int(struct rd *r, const struct hop_json *obj, const char *key,
		  int flags, long min, long max, int *out)
{
	double d;
	int ret = rd_num(r, obj, key, flags, &d);

	if (ret || isnan(d))
		return ret;
	if (d != floor(d) || d < (double)min || d > (double)max)
		return rd_fail(r, key, "expected an integer in [%ld, %ld], got %g",
			       min, max, d);
	*out = (int)d;
	return 0;
}

static int rd_str(struct rd *r, const struct hop_json *obj, const char *key,
		  int flags, char *out, size_t len)
{
	const struct hop_json *v;
	int ret = rd_get(r, obj, key, HOP_JSON_STRING, flags, &v);

	if (ret || !v)
		return ret;
	if (strlen(v->string) >= len)
		return rd_fail(r, key, "string longer than %zu bytes", len - 1);
	strcpy(out, v->string);
	return 0;
}

/* The optional "link_class" of a pair: "intra" or "inter". */
static int rd_class(struct rd *r, const struct hop_json *o,
		    struct hop_profile_pair *q)
{
	char name[8] = "";
	int ret = rd_str(r, o, "link_class", OPT, name, sizeof(name));

	if (ret || !name[0])
		return ret;
	if ((q->link_class = hop_profile_class_lookup(name)) < 0)
		return rd_fail(r, "link_class", "expected intra or inter, got "
			       "'%s'", name);
	return 0;
}

static int rd_stat(struct rd *r, const struct hop_json *obj, const char *key,
		   int flags, struct hop_pstat *out)
{
	const struct hop_json *v;
	size_t plen = strlen(r->path);
	int ret = rd_get(r, obj, key, HOP_JSON_OBJECT, flags, &v);

	if (ret || !v)
		return ret;
	snprintf(r->path + plen, sizeof(r->path) - plen, "%s%s",
		 plen ? "." : "", key);
	ret = rd_num(r, v, "median_us", flags | NUL_OK, &out->median_us);
	if (!ret)
		ret = rd_num(r, v, "p99_us", flags | NUL_OK, &out->p99_us);
	if (!ret && (flags & REQ) && !(out->median_us >= 0))
		ret = rd_fail(r, "median_us", "must be a number >= 0");
	r->path[plen] = '\0';
	return ret;
}

/* enter "key" / "key[i]" in the error path; returns the old length */
static size_t rd_push(struct rd *r, const char *key, int idx)
{
	size_t plen = strlen(r->path);

	if (idx >= 0)
		snprintf(r->path + plen, sizeof(r->path) - plen, "%s%s[%d]",
			 plen ? "." : "", key, idx);
	else
		snprintf(r->path + plen, sizeof(r->path) - plen, "%s%s",
			 plen ? "." : "", key);
	return plen;
}

static int rd_parts(struct rd *r, const struct hop_json *o,
		    struct hop_profile_pair *q)
{
	int ret;

	if ((ret = rd_stat(r, o, "sw", REQ, &q->sw)) ||
	    (ret = rd_stat(r, o, "dma", REQ, &q->dma)) ||
	    (ret = rd_stat(r, o, "sync", REQ, &q->sync)) ||
	    (ret = rd_stat(r, o, "wire", REQ, &q->wire)) ||
	    (ret = rd_stat(r, o, "sync_cts", OPT, &q->sync_cts)) ||
	    (ret = rd_stat(r, o, "sync_step", OPT, &q->sync_step)) ||
	    (ret = rd_int(r, o, "ring_ranks", OPT, 0, 1 << 20,
			  &q->ring_ranks)) ||
	    (ret = rd_num(r, o, "sum_us", OPT | NUL_OK, &q->alpha_sum_us)) ||
	    (ret = rd_num(r, o, "diff_pct", OPT | NUL_OK, &q->alpha_diff_pct)))
		return ret;
	return 0;
}

static int rd_optional(struct rd *r, const struct hop_json *o,
		       struct hop_profile_pair *q)
{
	const struct hop_json *v;
	size_t plen;
	int ret;

	if ((ret = rd_get(r, o, "raw", HOP_JSON_OBJECT, OPT, &v)))
		return ret;
	if (v) {
		plen = rd_push(r, "raw", -1);
		if ((ret = rd_stat(r, v, "post_inline", OPT, &q->post_inline)) ||
		    (ret = rd_stat(r, v, "post_noninline", OPT, &q->post_noninline)) ||
		    (ret = rd_stat(r, v, "post_to_completion", OPT,
				   &q->post_to_completion)) ||
		    (ret = rd_stat(r, v, "oneway_inline", OPT, &q->oneway_inline)) ||
		    (ret = rd_stat(r, v, "oneway_noninline", OPT,
				   &q->oneway_noninline)) ||
		    (ret = rd_stat(r, v, "oneway_mem", OPT, &q->oneway_mem)) ||
		    (ret = rd_num(r, v, "timer_overhead_us", OPT | NUL_OK,
				  &q->timer_overhead_us)))
			return ret;
		r->path[plen] = '\0';
	}
	if ((ret = rd_get(r, o, "duplex", HOP_JSON_OBJECT, OPT, &v)))
		return ret;
	if (v) {
		plen = rd_push(r, "duplex", -1);
		if ((ret = rd_num(r, v, "size", OPT | NUL_OK, &q->duplex_size)) ||
		    (ret = rd_num(r, v, "one_us", OPT | NUL_OK, &q->duplex_one_us)) ||
		    (ret = rd_num(r, v, "both_us", OPT | NUL_OK, &q->duplex_both_us)))
			return ret;
		r->path[plen] = '\0';
	}
	if ((ret = rd_get(r, o, "store_forward", HOP_JSON_OBJECT, OPT, &v)))
		return ret;
	if (v) {
		plen = rd_push(r, "store_forward", -1);
		if ((ret = rd_int(r, v, "relay", OPT, -1, 1 << 20, &q->saf_relay)) ||
		    (ret = rd_int(r, v, "dest", OPT, -1, 1 << 20, &q->saf_dest)) ||
		    (ret = rd_num(r, v, "size", OPT | NUL_OK, &q->saf_size)) ||
		    (ret = rd_num(r, v, "beta1_GBps", OPT | NUL_OK, &q->saf_beta1_gbps)) ||
		    (ret = rd_num(r, v, "beta2_GBps", OPT | NUL_OK, &q->saf_beta2_gbps)) ||
		    (ret = rd_num(r, v, "measured_GBps", OPT | NUL_OK, &q->saf_gbps)) ||
		    (ret = rd_num(r, v, "harmonic_GBps", OPT | NUL_OK,
				  &q->saf_harmonic_gbps)))
			return ret;
		r->path[plen] = '\0';
	}
	if ((ret = rd_get(r, o, "aggregate", HOP_JSON_ARRAY, OPT, &v)))
		return ret;
	if (v && v->count > HOP_PROFILE_MAX_LINKS)
		return rd_fail(r, "aggregate", "more than %d entries",
			       HOP_PROFILE_MAX_LINKS);
	for (size_t i = 0; v && i < v->count; i++) {
		const struct hop_json *e = hop_json_at(v, i);
		struct hop_profile_agg *g = &q->agg[i];

		plen = rd_push(r, "aggregate", (int)i);
		if (e->type != HOP_JSON_OBJECT)
			return rd_fail(r, NULL, "expected object, got %s",
				       hop_json_type_name(e->type));
		if ((ret = rd_int(r, e, "links", REQ, 1, 1 << 20, &g->links)) ||
		    (ret = rd_num(r, e, "GBps", REQ | NUL_OK, &g->gbps)) ||
		    (ret = rd_num(r, e, "model_GBps", OPT | NUL_OK, &g->model_gbps)))
			return ret;
		r->path[plen] = '\0';
		q->nagg = (int)i + 1;
	}
	return 0;
}

static int rd_sweep(struct rd *r, const struct hop_json *o,
		    struct hop_profile_pair *q)
{
	const struct hop_json *v;
	int ret;

	if ((ret = rd_get(r, o, "sweep", HOP_JSON_ARRAY, REQ, &v)))
		return ret;
	if (v->count > HOP_PROFILE_MAX_SIZES)
		return rd_fail(r, "sweep", "more than %d sizes",
			       HOP_PROFILE_MAX_SIZES);
	for (size_t i = 0; i < v->count; i++) {
		const struct hop_json *e = hop_json_at(v, i);
		struct hop_profile_point *pt = &q->pt[i];
		size_t plen = rd_push(r, "sweep", (int)i);

		if (e->type != HOP_JSON_OBJECT)
			return rd_fail(r, NULL, "expected object, got %s",
				       hop_json_type_name(e->type));
		if ((ret = rd_num(r, e, "size", REQ, &pt->size)) ||
		    (ret = rd_num(r, e, "median_us", REQ, &pt->median_us)) ||
		    (ret = rd_num(r, e, "p99_us", REQ | NUL_OK, &pt->p99_us)))
			return ret;
		if (!(pt->size >= 0) || !(pt->median_us > 0))
			return rd_fail(r, NULL, "size must be >= 0 and median_us > 0");
		r->path[plen] = '\0';
		q->nsizes = (int)i + 1;
	}
	return 0;
}

static int rd_pair(struct rd *r, const struct hop_json *o, int nranks,
		   struct hop_profile_pair *q)
{
	const struct hop_json *v;
	int ret;

	hop_profile_pair_init(q);
	if (o->type != HOP_JSON_OBJECT)
		return rd_fail(r, NULL, "expected object, got %s",
			       hop_json_type_name(o->type));
	if ((ret = rd_int(r, o, "a", REQ, 0, nranks - 1, &q->a)) ||
	    (ret = rd_int(r, o, "b", REQ, 0, nranks - 1, &q->b)) ||
	    (ret = rd_str(r, o, "provider", REQ, q->provider,
			  sizeof(q->provider))) ||
	    (ret = rd_num(r, o, "alpha_us", REQ, &q->alpha_us)) ||
	    (ret = rd_num(r, o, "beta_GBps", REQ, &q->beta_gbps)) ||
	    (ret = rd_num(r, o, "r2", REQ, &q->r2)) ||
	    (ret = rd_num(r, o, "beta_mem_GBps", REQ, &q->beta_mem_gbps)) ||
	    (ret = rd_num(r, o, "duplex_factor", REQ | NUL_OK,
			  &q->duplex_factor)) ||
	    (ret = rd_class(r, o, q)))
		return ret;
	if (q->a == q->b)
		return rd_fail(r, "b", "equals a (%d)", q->a);
	if (!(q->alpha_us >= 0 && q->alpha_us <= HOP_LINK_MAX_ALPHA_US))
		return rd_fail(r, "alpha_us", "must be in [0, %g], got %g",
			       HOP_LINK_MAX_ALPHA_US, q->alpha_us);
	if (!(q->beta_gbps > 0 && q->beta_gbps <= HOP_LINK_MAX_BETA_GBPS))
		return rd_fail(r, "beta_GBps", "must be > 0 and <= %g, got %g",
			       HOP_LINK_MAX_BETA_GBPS, q->beta_gbps);
	if (!(q->r2 <= 1))
		return rd_fail(r, "r2", "must be <= 1, got %g", q->r2);
	if (!(q->beta_mem_gbps > 0))
		return rd_fail(r, "beta_mem_GBps", "must be > 0, got %g",
			       q->beta_mem_gbps);
	if ((ret = rd_get(r, o, "alpha_parts", HOP_JSON_OBJECT, REQ, &v)))
		return ret;
	size_t plen = rd_push(r, "alpha_parts", -1);

	if ((ret = rd_parts(r, v, q)))
		return ret;
	r->path[plen] = '\0';
	if ((ret = rd_optional(r, o, q)) || (ret = rd_sweep(r, o, q)))
		return ret;
	return 0;
}

static int rd_profile(struct rd *r, const struct hop_json *root,
		      struct hop_profile *p)
{
	const struct hop_json *v;
	char fmt[32] = "";
	int ret;

	if (root->type != HOP_JSON_OBJECT)
		return rd_fail(r, NULL, "top level: expected object, got %s",
			       hop_json_type_name(root->type));
	if ((ret = rd_str(r, root, "format", REQ, fmt, sizeof(fmt))))
		return ret;
	if (strcmp(fmt, HOP_PROFILE_FORMAT))
		return rd_fail(r, "format", "expected \"%s\", got \"%s\"",
			       HOP_PROFILE_FORMAT, fmt);
	if ((ret = rd_int(r, root, "version", REQ, 0, 1 << 20, &p->version)))
		return ret;
	if (p->version != HOP_PROFILE_VERSION)
		return rd_fail(r, "version", "%d not supported (this hop reads %d)",
			       p->version, HOP_PROFILE_VERSION);
	if ((ret = rd_str(r, root, "hop_version", OPT, p->hop_version,
			  sizeof(p->hop_version))) ||
	    (ret = rd_str(r, root, "provider", REQ, p->provider,
			  sizeof(p->provider))) ||
	    (ret = rd_str(r, root, "host", OPT, p->host, sizeof(p->host))) ||
	    (ret = rd_int(r, root, "nranks", REQ, 2, 1 << 20, &p->nranks)) ||
	    (ret = rd_get(r, root, "pairs", HOP_JSON_ARRAY, REQ, &v)))
		return ret;
	if (v->count == 0)
		return rd_fail(r, "pairs", "empty (no measured pair)");
	if (!(p->pairs = calloc(v->count, sizeof(*p->pairs)))) {
		snprintf(r->err, r->errlen, "out of memory");
		return HOP_ERR_NO_MEMORY;
	}
	for (size_t i = 0; i < v->count; i++) {
		size_t plen = rd_push(r, "pairs", (int)i);

		if ((ret = rd_pair(r, hop_json_at(v, i), p->nranks,
				   &p->pairs[i])))
			return ret;
		r->path[plen] = '\0';
		p->npairs = (int)i + 1;
	}
	return 0;
}

int hop_profile_parse(const char *text, size_t len, struct hop_profile *p,
		      char *err, size_t errlen)
{
	char dummy[8];
	struct rd r = { .err = err ? err : dummy,
			.errlen = err ? errlen : sizeof(dummy) };
	struct hop_json *root;
	int ret;

	if (!p || !text) {
		snprintf(r.err, r.errlen, "invalid argument (NULL %s)",
			 p ? "text" : "profile");
		return HOP_ERR_INVALID_ARG;
	}
	memset(p, 0, sizeof(*p));
	r.err[0] = '\0';
	if ((ret = hop_json_parse(text, len, &root, r.err, r.errlen)))
		return ret;
	ret = rd_profile(&r, root, p);
	hop_json_free(root);
	if (ret)
		hop_profile_free(p);
	return ret;
}

int hop_profile_load(const char *path, struct hop_profile *p, char *err,
		     size_t errlen)
{
	char msg[512] = "";
	char *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;
	int ret;

	if (!path || !p) {
		if (err && errlen)
			snprintf(err, errlen, "invalid argument (NULL %s)",
				 path ? "profile" : "path");
		return HOP_ERR_INVALID_ARG;
	}
	if (!(f = fopen(path, "r"))) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot open: %s", path,
				 strerror(errno));
		return HOP_ERR_SYSTEM;
	}
	do {
		if (len == cap) {
			char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

			if (!nb) {
				ret = HOP_ERR_NO_MEMORY;
				snprintf(msg, sizeof(msg), "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0 && len < ((size_t)64 << 20));
	if (ferror(f)) {
		ret = HOP_ERR_SYSTEM;
		snprintf(msg, sizeof(msg), "read error: %s", strerror(errno));
		goto out;
	}
	if (len >= ((size_t)64 << 20)) {
		ret = HOP_ERR_PARSE;
		snprintf(msg, sizeof(msg), "larger than 64 MiB: not a profile");
		goto out;
	}
	ret = hop_profile_parse(buf, len, p, msg, sizeof(msg));
out:
	if (ret && err && errlen)
		snprintf(err, errlen, "%s: %s", path, msg);
	free(buf);
	fclose(f);
	return ret;
}

