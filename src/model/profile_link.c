/*
 * profile_link.c - the link profile HOP_PROFILE names: per measured pair
 * the numbers the cost model prices with, one line each (format in
 * profile.h). A line format keeps a JSON parser out of libhop; hop-probe
 * writes the whole measurement as JSON (--json) beside it.
 */
#include "model/profile.h"
#include "model/cnum.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#define LINK_LINE_MAX 256
#define LINK_MAX_FIELDS 9
#define LINK_MAX_PAIRS (1 << 20)

/* A value not measured: "-" in the file, NaN in the struct. */
static void wnum(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, " %.17g", v);
	else
		fputs(" -", f);
}

static const char *const class_names[] = { "intra", "inter" };

const char *hop_profile_class_name(int c)
{
	return c == 0 || c == 1 ? class_names[c] : "-";
}

int hop_profile_class_lookup(const char *s)
{
	for (int c = 0; c < 2; c++)
		if (s && !strcmp(s, class_names[c]))
			return c;
	return -1;
}

/* 1 when some pair of @p has a link class (the file is then version 2). */
static int any_class(const struct hop_profile *p)
{
	for (int i = 0; i < p->npairs; i++)
		if (p->pairs[i].link_class >= 0)
			return 1;
	return 0;
}

int hop_profile_link_write(const struct hop_profile *p, FILE *f)
{
	struct hop_c_locale loc;
	int classes;

	if (!p || !f || p->npairs < 0 || (p->npairs && !p->pairs))
		return HOP_ERR_INVALID_ARG;
	classes = any_class(p);
	hop_c_locale_enter(&loc);       /* numbers with a decimal point */
	fprintf(f, "%s %d\nprovider %s\nnranks %d\n"
		"# pair a b provider alpha_us beta_GBps beta_mem_GBps "
		"duplex_factor%s\n", HOP_PROFILE_LINK_FORMAT,
		classes ? HOP_PROFILE_LINK_VERSION : HOP_PROFILE_LINK_V1,
		p->provider[0] ? p->provider : "-", p->nranks,
		classes ? " [intra|inter]" : "");
	for (int i = 0; i < p->npairs; i++) {
		const struct hop_profile_pair *q = &p->pairs[i];

		fprintf(f, "pair %d %d %s", q->a, q->b,
			q->provider[0] ? q->provider : "-");
		wnum(f, q->alpha_us);
		wnum(f, q->beta_gbps);
		wnum(f, q->beta_mem_gbps);
		wnum(f, q->duplex_factor);
		if (q->link_class >= 0)
			fprintf(f, " %s", hop_profile_class_name(q->link_class));
		fputc('\n', f);
	}
	fputs("end\n", f);
	hop_c_locale_leave(&loc);
	return ferror(f) ? HOP_ERR_SYSTEM : 0;
}

struct lrd {
	int line;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4))) static int lfail(struct lrd *r,
						       const char *field,
						       const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->err && r->errlen)
		snprintf(r->err, r->errlen, "line %d: %s%s%s", r->line,
			 field ? field : "", field ? ": " : "", msg);
	return HOP_ERR_PARSE;
}

/* A finite decimal number, or "-" (NaN) when @opt. */
static int lnum(struct lrd *r, const char *field, const char *s, int opt,
		double *out)
{
	char *end;

	if (opt && !strcmp(s, "-")) {
		*out = NAN;
		return 0;
	}
	errno = 0;
	*out = hop_strtod_c(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(*out))
		return lfail(r, field, "expected a finite number, got '%s'", s);
	return 0;
}

/* An integer in [lo, hi]: digits only. */
static int lint(struct lrd *r, const char *field, const char *s, long lo,
		long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi || *s == '+' ||
	    *s == ' ')
		return lfail(r, field, "expected an integer in [%ld, %ld], "
			     "got '%s'", lo, hi, s);
	*out = (int)v;
	return 0;
}

/* A provider name: 1..HOP_PROFILE_NAME-1 of [a-z0-9_-]. */
static int lname(struct lrd *r, const char *field, const char *s, char *out)
{
	size_t n = strlen(s);

	if (n == 0 || n >= HOP_PROFILE_NAME ||
	    strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-") != n)
		return lfail(r, field, "expected a provider name (up to %d of "
			     "a-z 0-9 _ -), got '%s'", HOP_PROFILE_NAME - 1, s);
	memcpy(out, s, n + 1);
	return 0;
}

/* The optional link class of a pair line (version 2 only). */
static int lclass(struct lrd *r, char **w, int nw, int version,
		  struct hop_profile_pair *q)
{
	if (nw == 8)
		return 0;
	if (version < 2)
		return lfail(r, "pair", "a link class needs version 2 (the "
			     "header says %d)", version);
	if ((q->link_class = hop_profile_class_lookup(w[8])) < 0)
		return lfail(r, "class", "expected intra or inter, got '%s'",
			     w[8]);
	return 0;
}

static int lpair(struct lrd *r, char **w, int nw, const struct hop_profile *p,
		 struct hop_profile_pair *q)
{
	int nranks = p->nranks, ret;

	hop_profile_pair_init(q);
	if (nw != 8 && nw != 9)
		return lfail(r, "pair", "expected 7 or 8 fields (a b provider "
			     "alpha_us beta_GBps beta_mem_GBps duplex_factor "
			     "[intra|inter]), got %d", nw - 1);
	if ((ret = lint(r, "a", w[1], 0, nranks - 1, &q->a)) ||
	    (ret = lint(r, "b", w[2], 0, nranks - 1, &q->b)) ||
	    (ret = lname(r, "provider", w[3], q->provider)) ||
	    (ret = lnum(r, "alpha_us", w[4], 0, &q->alpha_us)) ||
	    (ret = lnum(r, "beta_GBps", w[5], 0, &q->beta_gbps)) ||
	    (ret = lnum(r, "beta_mem_GBps", w[6], 1, &q->beta_mem_gbps)) ||
	    (ret = lnum(r, "duplex_factor", w[7], 1, &q->duplex_factor)) ||
	    (ret = lclass(r, w, nw, p->version, q)))
		return ret;
	if (q->a == q->b)
		return lfail(r, "b", "equals a (%d)", q->a);
	if (!(q->alpha_us >= 0 && q->alpha_us <= HOP_LINK_MAX_ALPHA_US))
		return lfail(r, "alpha_us", "must be in [0, %g], got %g",
			     HOP_LINK_MAX_ALPHA_US, q->alpha_us);
	if (!(q->beta_gbps > 0 && q->beta_gbps <= HOP_LINK_MAX_BETA_GBPS))
		return lfail(r, "beta_GBps", "must be > 0 and <= %g, got %g",
			     HOP_LINK_MAX_BETA_GBPS, q->beta_gbps);
	if (!(isnan(q->beta_mem_gbps) || q->beta_mem_gbps > 0))
		return lfail(r, "beta_mem_GBps", "must be > 0, got %g",
			     q->beta_mem_gbps);
	if (!(isnan(q->duplex_factor) || q->duplex_factor > 0))
		return lfail(r, "duplex_factor", "must be > 0, got %g",
			     q->duplex_factor);
	return 0;
}

static int ladd(struct lrd *r, struct hop_profile *p, int *cap, char **w,
		int nw)
{
	if (p->npairs == *cap) {
		int ncap = *cap ? 2 * *cap : 16;
		void *np;

		if (ncap > LINK_MAX_PAIRS)
			return lfail(r, "pair", "more than %d pairs",
				     LINK_MAX_PAIRS);
		if (!(np = realloc(p->pairs, (size_t)ncap * sizeof(*p->pairs)))) {
			if (r->err && r->errlen)
				snprintf(r->err, r->errlen, "out of memory");
			return HOP_ERR_NO_MEMORY;
		}
		p->pairs = np;
		*cap = ncap;
	}
	int ret = lpair(r, w, nw, p, &p->pairs[p->npairs]);

	if (!ret)
		p->npairs++;
	return ret;
}

/* One line, split at blanks into @w; returns the parse result of it. */
static int lline(struct lrd *r, char *s, struct hop_profile *p, int *cap,
		 int *ended)
{
	char *w[LINK_MAX_FIELDS + 1], *save = NULL;
	int nw = 0, v;

	if (s[strspn(s, " \t")] == '#')   /* a comment has any number of words */
		return 0;
	for (char *t = strtok_r(s, " \t", &save); t;
	     t = strtok_r(NULL, " \t", &save)) {
		if (nw == LINK_MAX_FIELDS)
			return lfail(r, NULL, "too many fields");
		w[nw++] = t;
	}
	if (nw == 0 || w[0][0] == '#')
		return 0;
	if (*ended)
		return lfail(r, NULL, "text after 'end'");
	if (r->line == 1 || !p->version) {
		if (nw != 2 || strcmp(w[0], HOP_PROFILE_LINK_FORMAT))
			return lfail(r, NULL, "not a hop link profile (the "
				     "first line must be '%s %d')",
				     HOP_PROFILE_LINK_FORMAT,
				     HOP_PROFILE_LINK_VERSION);
		if (lint(r, "version", w[1], 1, 1000, &v) ||
		    v > HOP_PROFILE_LINK_VERSION)
			return lfail(r, "version", "%s not supported (this "
				     "hop reads 1 to %d)", w[1],
				     HOP_PROFILE_LINK_VERSION);
		p->version = v;
		return 0;
	}
	if (!strcmp(w[0], "provider") && nw == 2)
		return strcmp(w[1], "-") ? lname(r, "provider", w[1],
						 p->provider) : 0;
	if (!strcmp(w[0], "nranks") && nw == 2) {
		if (p->npairs)
			return lfail(r, "nranks", "must come before the pairs");
		return lint(r, "nranks", w[1], 2, 1 << 24, &p->nranks);
	}
	if (!strcmp(w[0], "pair")) {
		if (!p->nranks)
			return lfail(r, "pair", "before 'nranks'");
		return ladd(r, p, cap, w, nw);
	}
	if (!strcmp(w[0], "end") && nw == 1) {
		*ended = 1;
		return p->npairs ? 0 : lfail(r, "end", "no pair before it");
	}
	return lfail(r, NULL, "unknown line '%s' (expected provider, "
		     "nranks, pair or end)", w[0]);
}

/* Parse state over the lines of one file. */
struct lst {
	struct lrd r;
	struct hop_profile *p;
	int cap, ended;
};

/* The next line, @n bytes without its newline. */
static int lfeed(struct lst *st, const char *s, size_t n)
{
	char line[LINK_LINE_MAX + 1];

	st->r.line++;
	if (n > LINK_LINE_MAX)
		return lfail(&st->r, NULL, "longer than %d bytes",
			     LINK_LINE_MAX);
	if (memchr(s, '\0', n))
		return lfail(&st->r, NULL, "contains a NUL byte");
	memcpy(line, s, n);
	line[n] = '\0';
	return lline(&st->r, line, st->p, &st->cap, &st->ended);
}

static int lend(struct lst *st, int ret)
{
	if (!ret && !st->ended) {
		st->r.line++;
		ret = lfail(&st->r, NULL, "no 'end' line (truncated file?)");
	}
	if (ret)
		hop_profile_free(st->p);
	return ret;
}

/* HOP_ERR_INVALID_ARG naming the NULL argument: @src (called @what) or @p. */
static int lnull(const void *src, const struct hop_profile *p,
		 const char *what, char *err, size_t errlen)
{
	if (src && p)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "invalid argument (NULL %s)",
			 src ? "profile" : what);
	return HOP_ERR_INVALID_ARG;
}

int hop_profile_link_parse(const char *text, size_t len,
			   struct hop_profile *p, char *err, size_t errlen)
{
	struct lst st = { { 0, err, errlen }, p, 0, 0 };
	int ret = lnull(text, p, "text", err, errlen);

	if (ret)
		return ret;
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; !ret && i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t n = nl ? (size_t)(nl - (text + i)) : len - i;

		ret = lfeed(&st, text + i, n);
		i += n + 1;
	}
	return lend(&st, ret);
}

int hop_profile_link_load(const char *path, struct hop_profile *p,
			  char *err, size_t errlen)
{
	char msg[256] = "", *line = NULL;
	struct lst st = { { 0, msg, sizeof(msg) }, p, 0, 0 };
	size_t cap = 0;
	ssize_t n;
	FILE *f;
	int ret = lnull(path, p, "path", err, errlen);

	if (ret)
		return ret;
	if (!(f = fopen(path, "r"))) {
		if (err && errlen)
			snprintf(err, errlen, "%s: cannot open: %s", path,
				 strerror(errno));
		return HOP_ERR_SYSTEM;
	}
	memset(p, 0, sizeof(*p));
	while (!ret && (n = getline(&line, &cap, f)) > 0)
		ret = lfeed(&st, line, (size_t)n - (line[n - 1] == '\n'));
	if (!ret && ferror(f)) {
		ret = HOP_ERR_SYSTEM;
		snprintf(msg, sizeof(msg), "read error: %s", strerror(errno));
	}
	ret = lend(&st, ret);
	if (ret && err && errlen)
		snprintf(err, errlen, "%s: %s", path, msg);
	free(line);
	fclose(f);
	return ret;
}
