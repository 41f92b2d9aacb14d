/*
 * topo.c - the strict HOP_TOPO parser (format in topo.h and docs/model.md).
 * Routing is in topo_route.c.
 */
#include "model/topo.h"
#include "model/cnum.h"
#include "model/profile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#define TOPO_LINE_MAX 1024
#define TOPO_MAX_FIELDS 5

struct parser {
	const char *name;
	int line;
	char *err;
	size_t errlen;
	int have_header;
	int nranks;             /* from "ranks", 0 when not given */
	int have_default;
	double def_alpha, def_beta;
	int maxrank;
	struct hop_topo_link *links;
	int nlinks, cap;
};

__attribute__((format(printf, 3, 4))) static int fail(struct parser *p,
						      const char *field,
						      const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "%s:%d: %s%s%s", p->name, p->line,
			 field ? field : "", field ? ": " : "", msg);
	return HOP_ERR_PARSE;
}

static int oom(struct parser *p)
{
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "%s:%d: out of memory", p->name,
			 p->line);
	return HOP_ERR_NO_MEMORY;
}

/* A rank: decimal digits only, < HOP_TOPO_MAX_RANKS (and < "ranks"). */
static int parse_rank(struct parser *p, const char *field, const char *s,
		      int *out)
{
	long v = 0;
	int limit = p->nranks ? p->nranks : HOP_TOPO_MAX_RANKS;

	if (!*s)
		return fail(p, field, "missing rank");
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return fail(p, field, "expected a rank (0..%d), got '%s'",
				    limit - 1, s);
		v = v * 10 + (*c - '0');
		if (v >= limit)
			return fail(p, field, "rank %s out of range (0..%d%s)", s,
				    limit - 1, p->nranks ? ", from 'ranks'" : "");
	}
	*out = (int)v;
	return 0;
}

/* A decimal number ([-]digits[.digits][e[+-]digits]); no hex, inf, nan. */
static int parse_num(struct parser *p, const char *field, const char *s,
		     double min, int min_open, double max, double *out)
{
	char *end;
	double v;

	if (strspn(s, "0123456789.eE+-") != strlen(s) || !strpbrk(s, "0123456789"))
		return fail(p, field, "expected a number, got '%s'", s);
	errno = 0;
	v = hop_strtod_c(s, &end);
	if (*end || end == s)
		return fail(p, field, "expected a number, got '%s'", s);
	if (!isfinite(v) || errno == ERANGE)
		return fail(p, field, "'%s' is out of range", s);
	if (v < min || (min_open && v <= min))
		return fail(p, field, "%s must be %s %g", s, min_open ? ">" : ">=",
			    min);
	if (v > max)
		return fail(p, field, "%s must be <= %g", s, max);
	*out = v;
	return 0;
}

static int add_link(struct parser *p, int a, int b, double alpha_us,
		    double beta_gbps)
{
	if (p->nlinks == p->cap) {
		int ncap = p->cap ? 2 * p->cap : 16;
		struct hop_topo_link *nl;

		if (p->nlinks >= HOP_TOPO_MAX_LINKS)
			return fail(p, NULL, "more than %d links",
				    HOP_TOPO_MAX_LINKS);
		nl = realloc(p->links, (size_t)ncap * sizeof(*nl));
		if (!nl) {
			return oom(p);
		}
		p->links = nl;
		p->cap = ncap;
	}
	p->links[p->nlinks++] = (struct hop_topo_link){
		.a = a, .b = b, .alpha = alpha_us * 1e-6,
		.beta = beta_gbps * 1e9, .line = p->line,
	};
	if (a > p->maxrank)
		p->maxrank = a;
	if (b > p->maxrank)
		p->maxrank = b;
	return 0;
}

static int do_link(struct parser *p, char **f, int nf)
{
	int a, b, ret;
	double alpha, beta;

	if (nf != 3 && nf != 5)
		return fail(p, "link", "expected 'link A B [alpha_us beta_GBps]' "
			    "(2 or 4 values), got %d value%s", nf - 1,
			    nf == 2 ? "" : "s");
	if ((ret = parse_rank(p, "link A", f[1], &a)) ||
	    (ret = parse_rank(p, "link B", f[2], &b)))
		return ret;
	if (a == b)
		return fail(p, "link B", "a link from rank %d to itself", a);
	if (nf == 5) {
		if ((ret = parse_num(p, "link alpha_us", f[3], 0, 0,
				     HOP_LINK_MAX_ALPHA_US, &alpha)) ||
		    (ret = parse_num(p, "link beta_GBps", f[4], 0, 1,
				     HOP_LINK_MAX_BETA_GBPS, &beta)))
			return ret;
	} else {
		if (!p->have_default)
			return fail(p, "link", "no alpha_us beta_GBps and no "
				    "'default' line before this one");
		alpha = p->def_alpha;
		beta = p->def_beta;
	}
	return add_link(p, a, b, alpha, beta);
}

static int do_line(struct parser *p, char **f, int nf)
{
	long v;
	int ret;

	if (!p->have_header) {
		if (strcmp(f[0], "hop-topo"))
			return fail(p, "header", "expected 'hop-topo 1' first, got "
				    "'%s'", f[0]);
		if (nf != 2 || strcmp(f[1], "1"))
			return fail(p, "header", "unsupported version '%s' "
				    "(this hop reads 'hop-topo 1')",
				    nf > 1 ? f[1] : "");
		p->have_header = 1;
		return 0;
	}
	if (!strcmp(f[0], "link"))
		return do_link(p, f, nf);
	if (!strcmp(f[0], "default")) {
		if (p->have_default)
			return fail(p, "default", "a second 'default' line");
		if (nf != 3)
			return fail(p, "default", "expected 'default alpha_us "
				    "beta_GBps', got %d value%s", nf - 1,
				    nf == 2 ? "" : "s");
		if ((ret = parse_num(p, "default alpha_us", f[1], 0, 0,
				     HOP_LINK_MAX_ALPHA_US, &p->def_alpha)) ||
		    (ret = parse_num(p, "default beta_GBps", f[2], 0, 1,
				     HOP_LINK_MAX_BETA_GBPS, &p->def_beta)))
			return ret;
		p->have_default = 1;
		return 0;
	}
	if (!strcmp(f[0], "ranks")) {
		if (p->nranks)
			return fail(p, "ranks", "a second 'ranks' line");
		if (p->nlinks)
			return fail(p, "ranks", "must come before the first link");
		if (nf != 2)
			return fail(p, "ranks", "expected 'ranks N', got %d values",
				    nf - 1);
		v = 0;
		for (const char *c = f[1]; *c; c++) {
			if (*c < '0' || *c > '9' || v > HOP_TOPO_MAX_RANKS)
				return fail(p, "ranks N", "expected 2..%d, got '%s'",
					    HOP_TOPO_MAX_RANKS, f[1]);
			v = v * 10 + (*c - '0');
		}
		if (v < 2 || v > HOP_TOPO_MAX_RANKS)
			return fail(p, "ranks N", "expected 2..%d, got '%s'",
				    HOP_TOPO_MAX_RANKS, f[1]);
		p->nranks = (int)v;
		return 0;
	}
	return fail(p, "keyword", "unknown '%s' (expected link, default or "
		    "ranks)", f[0]);
}

static int cmp_pair(const void *x, const void *y)
{
	const int *a = x, *b = y;   /* lo, hi, line */

	for (int i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* Duplicate links (either direction): report the first repeat. */
static int check_dups(struct parser *p)
{
	int n = p->nlinks, bad = -1, first = 0;
	int *k = malloc((size_t)n * 3 * sizeof(int));

	if (!k) {
		return oom(p);
	}
	for (int i = 0; i < n; i++) {
		const struct hop_topo_link *l = &p->links[i];

		k[3 * i] = l->a < l->b ? l->a : l->b;
		k[3 * i + 1] = l->a < l->b ? l->b : l->a;
		k[3 * i + 2] = l->line;
	}
	qsort(k, (size_t)n, 3 * sizeof(int), cmp_pair);
	for (int i = 1; i < n; i++) {
		if (k[3 * i] == k[3 * i - 3] && k[3 * i + 1] == k[3 * i - 2] &&
		    (bad < 0 || k[3 * i + 2] < k[3 * bad + 2])) {
			bad = i;
			first = i - 1;
			while (first > 0 && k[3 * first - 3] == k[3 * i] &&
			       k[3 * first - 2] == k[3 * i + 1])
				first--;
		}
	}
	if (bad >= 0) {
		p->line = k[3 * bad + 2];
		fail(p, "link", "duplicate link %d-%d (first on line %d)",
		     k[3 * bad], k[3 * bad + 1], k[3 * first + 2]);
	}
	free(k);
	return bad >= 0 ? HOP_ERR_PARSE : 0;
}

static int build_adj(struct parser *p, struct hop_topo *t)
{
	int *fill;

	t->adj_off = calloc((size_t)t->nranks + 1, sizeof(int));
	t->adj = malloc((size_t)t->nlinks * 2 * sizeof(int));
	fill = calloc((size_t)t->nranks, sizeof(int));
	if (!t->adj_off || !t->adj || !fill) {
		free(fill);
		return oom(p);
	}
	for (int i = 0; i < t->nlinks; i++) {
		t->adj_off[t->links[i].a + 1]++;
		t->adj_off[t->links[i].b + 1]++;
	}
	for (int r = 0; r < t->nranks; r++)
		t->adj_off[r + 1] += t->adj_off[r];
	for (int i = 0; i < t->nlinks; i++) {
		int a = t->links[i].a, b = t->links[i].b;

		t->adj[t->adj_off[a] + fill[a]++] = i;
		t->adj[t->adj_off[b] + fill[b]++] = i;
	}
	free(fill);
	return 0;
}

/* Split @line (comment already cut) into at most TOPO_MAX_FIELDS fields. */
static int split(struct parser *p, char *line, char **f, int *nf)
{
	char *save = NULL;
	int n = 0;

	for (char *s = strtok_r(line, " \t", &save); s;
	     s = strtok_r(NULL, " \t", &save)) {
		if (n == TOPO_MAX_FIELDS)
			return fail(p, NULL, "too many fields: '%s' after the "
				    "%dth", s, TOPO_MAX_FIELDS);
		f[n++] = s;
	}
	*nf = n;
	return 0;
}

static int parse_lines(struct parser *p, const char *text, size_t len)
{
	char buf[TOPO_LINE_MAX + 1], *f[TOPO_MAX_FIELDS], *hash;
	size_t pos = 0;
	int nf = 0, ret;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n;

		p->line++;
		if (!nl)
			return fail(p, NULL, "last line has no newline "
				    "(truncated file?)");
		n = (size_t)(nl - (text + pos));
		if (memchr(text + pos, '\0', n))
			return fail(p, NULL, "NUL byte in the line");
		if (n > TOPO_LINE_MAX)
			return fail(p, NULL, "line longer than %d bytes",
				    TOPO_LINE_MAX);
		memcpy(buf, text + pos, n);
		buf[n] = '\0';
		pos += n + 1;
		if (n && buf[n - 1] == '\r')
			buf[n - 1] = '\0';
		if ((hash = strchr(buf, '#')))
			*hash = '\0';
		if ((ret = split(p, buf, f, &nf)))
			return ret;
		if (nf && (ret = do_line(p, f, nf)))
			return ret;
	}
	if (!p->have_header) {
		if (!p->line)
			p->line = 1;
		return fail(p, "header", "missing 'hop-topo 1' (empty file?)");
	}
	if (!p->nlinks)
		return fail(p, NULL, "no 'link' line");
	return 0;
}

int hop_topo_parse(const char *text, size_t len, const char *name,
		   struct hop_topo *t, char *err, size_t errlen)
{
	struct parser p = { .name = name ? name : "topology", .err = err,
			    .errlen = errlen, .maxrank = -1 };
	int ret;

	if (!t || (!text && len)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: NULL argument", p.name);
		return HOP_ERR_INVALID_ARG;
	}
	memset(t, 0, sizeof(*t));
	if ((ret = parse_lines(&p, text, len)) || (ret = check_dups(&p)))
		goto err_free;
	t->nranks = p.nranks ? p.nranks : p.maxrank + 1;
	t->nlinks = p.nlinks;
	t->links = p.links;
	if ((ret = build_adj(&p, t))) {
		hop_topo_free(t);
		return ret;
	}
	return 0;
err_free:
	free(p.links);
	return ret;
}

int hop_topo_load(const char *path, struct hop_topo *t, char *err,
		  size_t errlen)
{
	FILE *f;
	char *text = NULL;
	size_t len = 0, cap = 0;
	int ret;

	if (!path || !t) {
		snprintf(err, errlen, "topology: NULL argument");
		return HOP_ERR_INVALID_ARG;
	}
	if (!(f = fopen(path, "rb"))) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return HOP_ERR_SYSTEM;
	}
	for (;;) {
		if (len == cap) {
			char *nt;

			cap = cap ? 2 * cap : 4096;
			if (cap > (size_t)256 << 20 || !(nt = realloc(text, cap))) {
				snprintf(err, errlen, "%s: %s", path,
					 cap > (size_t)256 << 20
						 ? "larger than 256 MiB"
						 : "out of memory");
				ret = cap > (size_t)256 << 20 ? HOP_ERR_PARSE
							      : HOP_ERR_NO_MEMORY;
				goto err_close;
			}
			text = nt;
		}
		size_t n = fread(text + len, 1, cap - len, f);

		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		ret = HOP_ERR_SYSTEM;
		goto err_close;
	}
	fclose(f);
	ret = hop_topo_parse(text, len, path, t, err, errlen);
	free(text);
	return ret;
err_close:
	fclose(f);
	free(text);
	return ret;
}

void hop_topo_free(struct hop_topo *t)
{
	if (!t)
		return;
	free(t->links);
	free(t->adj_off);
	free(t->adj);
	memset(t, 0, sizeof(*t));
}

const struct hop_topo_link *hop_topo_find(const struct hop_topo *t, int a,
					  int b)
{
	if (!t || a < 0 || a >= t->nranks || b < 0 || b >= t->nranks)
		return NULL;
	for (int i = t->adj_off[a]; i < t->adj_off[a + 1]; i++) {
		const struct hop_topo_link *l = &t->links[t->adj[i]];

		if ((l->a == a && l->b == b) || (l->a == b && l->b == a))
			return l;
	}
	return NULL;
}
