/*
 * test_model_topo.c - the HOP_TOPO parser (every malformed case fails with
 * HOP_ERR_PARSE naming file, line and field; every truncation of a good
 * file fails) and routing: known shortest paths on small graphs, and the
 * router against a brute force over every simple path of random graphs.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include <hop/common.h>

#include "model/model.h"
#include "model/topo.h"

static const char good[] =
	"# a test topology\n"
	"hop-topo 1\n"
	"\n"
	"ranks 6          # two more than the links name\n"
	"default 2 10\n"
	"link 0 1\n"
	"link 1 2 1.5 12.5\r\n"
	"  link\t2 3 0 0.5   # tabs, zero alpha\n"
	"link 3 0 50 1e0\n";

static void test_parse_good(void **state)
{
	struct hop_topo t;
	const struct hop_topo_link *l;
	char err[256];

	(void)state;
	assert_int_equal(hop_topo_parse(good, strlen(good), "g.topo", &t, err,
					sizeof(err)), 0);
	assert_int_equal(t.nranks, 6);
	assert_int_equal(t.nlinks, 4);
	l = hop_topo_find(&t, 1, 0);
	assert_non_null(l);
	assert_true(fabs(l->alpha - 2e-6) < 1e-18 && l->beta == 10e9);
	assert_int_equal(l->line, 6);
	l = hop_topo_find(&t, 2, 1);
	assert_true(fabs(l->alpha - 1.5e-6) < 1e-18 && l->beta == 12.5e9);
	l = hop_topo_find(&t, 3, 2);
	assert_true(l->alpha == 0 && l->beta == 0.5e9);
	assert_int_equal(l->line, 8);
	assert_non_null(hop_topo_find(&t, 0, 3));
	assert_null(hop_topo_find(&t, 0, 2));
	assert_null(hop_topo_find(&t, 4, 5));
	assert_null(hop_topo_find(&t, 0, 6));
	hop_topo_free(&t);
	/* without "ranks": the highest rank + 1 */
	const char *small = "hop-topo 1\nlink 3 1 1 1\n";
	assert_int_equal(hop_topo_parse(small, strlen(small), "s", &t, err,
					sizeof(err)), 0);
	assert_int_equal(t.nranks, 4);
	hop_topo_free(&t);
}

struct bad {
	const char *text;
	const char *where;      /* "<file>:<line>: <field>" prefix */
	const char *what;       /* a phrase of the message */
};

static const struct bad bads[] = {
	{ "", "b.topo:1: header", "missing 'hop-topo 1'" },
	{ "# only a comment\n\n", "b.topo:2: header", "missing" },
	{ "hop-topo 1\nlink 0 1 2 3", "b.topo:2:", "no newline" },
	{ "hop-topo 1\nlink 0 1 2 3\nlink 1", "b.topo:3:", "truncated" },
	{ "hop-topo 2\n", "b.topo:1: header", "unsupported version '2'" },
	{ "hop-topo\n", "b.topo:1: header", "unsupported version" },
	{ "link 0 1 1 1\n", "b.topo:1: header", "got 'link'" },
	{ "hop-topo 1\nlink 0 1 2\n", "b.topo:2: link:", "got 3 values" },
	{ "hop-topo 1\nlink 0\n", "b.topo:2: link:", "got 1 value" },
	{ "hop-topo 1\nlink 0 x 1 1\n", "b.topo:2: link B:", "got 'x'" },
	{ "hop-topo 1\nlink -1 2 1 1\n", "b.topo:2: link A:", "got '-1'" },
	{ "hop-topo 1\nlink 0 1 abc 1\n", "b.topo:2: link alpha_us:",
	  "expected a number, got 'abc'" },
	{ "hop-topo 1\nlink 0 1 1 0\n", "b.topo:2: link beta_GBps:", "> 0" },
	{ "hop-topo 1\nlink 0 1 -1 1\n", "b.topo:2: link alpha_us:", ">= 0" },
	{ "hop-topo 1\nlink 0 1 nan 1\n", "b.topo:2: link alpha_us:",
	  "expected a number" },
	{ "hop-topo 1\nlink 0 1 1 inf\n", "b.topo:2: link beta_GBps:",
	  "expected a number" },
	{ "hop-topo 1\nlink 0 1 0x10 1\n", "b.topo:2: link alpha_us:",
	  "expected a number" },
	{ "hop-topo 1\nlink 0 1 1.2.3 1\n", "b.topo:2: link alpha_us:",
	  "expected a number" },
	{ "hop-topo 1\nlink 0 1 1e999 1\n", "b.topo:2: link alpha_us:",
	  "out of range" },
	/* finite as written, infinite in B/s (the fuzzer's find) */
	{ "hop-topo 1\nlink 0 1 1. 12.5e301\n", "b.topo:2: link beta_GBps:",
	  "must be <= 1e+06" },
	{ "hop-topo 1\nlink 0 1 2e9 1\n", "b.topo:2: link alpha_us:",
	  "must be <= 1e+09" },
	{ "hop-topo 1\ndefault 1 1e7\n", "b.topo:2: default beta_GBps:",
	  "<= 1e+06" },
	{ "hop-topo 1\nlink 0 0 1 1\n", "b.topo:2: link B:", "itself" },
	{ "hop-topo 1\nlink 0 1 1 1\nlink 2 3 1 1\nlink 1 0 2 2\n",
	  "b.topo:4: link:", "duplicate link 0-1 (first on line 2)" },
	{ "hop-topo 1\nlink 0 1\n", "b.topo:2: link:", "no 'default' line" },
	{ "hop-topo 1\nranks 4\nlink 0 4 1 1\n", "b.topo:3: link B:",
	  "out of range (0..3, from 'ranks')" },
	{ "hop-topo 1\nlink 0 99999 1 1\n", "b.topo:2: link B:",
	  "out of range (0..65535)" },
	{ "hop-topo 1\nlink 0 1 1 1\nranks 4\n", "b.topo:3: ranks:",
	  "before the first link" },
	{ "hop-topo 1\nranks 1\n", "b.topo:2: ranks N:", "expected 2..65536" },
	{ "hop-topo 1\nranks 4x\n", "b.topo:2: ranks N:", "got '4x'" },
	{ "hop-topo 1\nranks 4\nranks 4\n", "b.topo:3: ranks:", "second" },
	{ "hop-topo 1\nfoo 1 2\n", "b.topo:2: keyword:", "unknown 'foo'" },
	{ "hop-topo 1\ndefault 1\n", "b.topo:2: default:", "got 1 value" },
	{ "hop-topo 1\ndefault 1 0\n", "b.topo:2: default beta_GBps:", "> 0" },
	{ "hop-topo 1\ndefault 1 1\ndefault 2 2\n", "b.topo:3: default:",
	  "second" },
	{ "hop-topo 1\nlink 0 1 1 1 extra\n", "b.topo:2:", "too many fields" },
	{ "hop-topo 1\n# no links\n", "b.topo:2:", "no 'link' line" },
};

static void test_parse_errors(void **state)
{
	struct hop_topo t;
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		int ret = hop_topo_parse(bads[i].text, strlen(bads[i].text),
					 "b.topo", &t, err, sizeof(err));

		if (ret != HOP_ERR_PARSE || strncmp(err, bads[i].where,
						    strlen(bads[i].where)) ||
		    !strstr(err, bads[i].what)) {
			print_error("case %zu '%s': ret %d, message '%s'; want "
				    "'%s...%s'\n", i, bads[i].text, ret, err,
				    bads[i].where, bads[i].what);
			fail();
		}
	}
}

static void test_parse_special(void **state)
{
	struct hop_topo t;
	char err[512], line[2100];
	const char nul[] = "hop-topo 1\nlink 0 1\0 1 1\n";

	(void)state;
	assert_int_equal(hop_topo_parse(nul, sizeof(nul) - 1, "n", &t, err,
					sizeof(err)), HOP_ERR_PARSE);
	assert_non_null(strstr(err, "n:2: NUL byte"));
	memset(line, ' ', sizeof(line));
	memcpy(line, "hop-topo 1\n", 11);
	line[sizeof(line) - 1] = '\n';
	assert_int_equal(hop_topo_parse(line, sizeof(line), "l", &t, err,
					sizeof(err)), HOP_ERR_PARSE);
	assert_non_null(strstr(err, "l:2: line longer than 1024"));
	assert_int_equal(hop_topo_parse(NULL, 5, "x", &t, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_topo_parse(good, strlen(good), "x", NULL, err,
					sizeof(err)), HOP_ERR_INVALID_ARG);
}

/* Every prefix of a good file: only whole lines may parse. */
static void test_truncations(void **state)
{
	size_t len = strlen(good), ok = 0;
	struct hop_topo t;
	char err[512];

	(void)state;
	for (size_t n = 0; n < len; n++) {
		int ret = hop_topo_parse(good, n, "cut", &t, err, sizeof(err));

		if (ret == 0) {
			assert_true(n > 0 && good[n - 1] == '\n');
			hop_topo_free(&t);
			ok++;
		} else {
			assert_int_equal(ret, HOP_ERR_PARSE);
			assert_non_null(strstr(err, "cut:"));
		}
	}
	/* the prefixes ending after links 1..3 */
	assert_int_equal(ok, 3);
}

static void test_load(void **state)
{
	char path[] = "/tmp/hop-topo-XXXXXX", err[512];
	struct hop_topo t;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, good, strlen(good)), (ssize_t)strlen(good));
	close(fd);
	assert_int_equal(hop_topo_load(path, &t, err, sizeof(err)), 0);
	assert_int_equal(t.nlinks, 4);
	hop_topo_free(&t);
	fd = open(path, O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "link 9 8", 8), 8);
	close(fd);
	assert_int_equal(hop_topo_load(path, &t, err, sizeof(err)),
			 HOP_ERR_PARSE);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, ":10:"));
	unlink(path);
	assert_int_equal(hop_topo_load(path, &t, err, sizeof(err)),
			 HOP_ERR_SYSTEM);
	assert_non_null(strstr(err, path));
}

static int parse_str(const char *s, struct hop_topo *t)
{
	char err[512];
	int ret = hop_topo_parse(s, strlen(s), "r.topo", t, err, sizeof(err));

	if (ret)
		print_error("%s\n", err);
	return ret;
}

static void expect_path(const struct hop_route *r, const int *want, int n)
{
	assert_int_equal(r->nhops, n - 1);
	for (int i = 0; i < n; i++)
		assert_int_equal(r->path[i], want[i]);
}

static void test_route_known(void **state)
{
	/* slow direct link 0-3; a fast detour through 4; a medium ring */
	const char *sq = "hop-topo 1\ndefault 2 10\nlink 0 1\nlink 1 2\n"
			 "link 2 3\nlink 0 3 50 1\nlink 0 4 1 25\n"
			 "link 4 3 1 25\nranks 6\n";
	const char *sq2 = "hop-topo 1\nranks 6\ndefault 2 10\nlink 0 1\n"
			  "link 1 2\nlink 2 3\nlink 0 3 50 1\nlink 0 4 1 25\n"
			  "link 4 3 1 25\n";
	struct hop_topo t;
	struct hop_route r;
	char err[256];

	(void)state;
	assert_int_equal(hop_topo_parse(sq, strlen(sq), "x", &t, err,
					sizeof(err)), HOP_ERR_PARSE);
	assert_int_equal(parse_str(sq2, &t), 0);
	assert_int_equal(hop_topo_route(&t, 0, 3, 1 << 20, HOP_ROUTE_SAF, 4096,
					&r, err, sizeof(err)), 0);
	expect_path(&r, (int[]){ 0, 4, 3 }, 3);
	/* 2 (1 us + 2^20 / 25 GB/s) */
	assert_true(fabs(r.t_saf - 2 * (1e-6 + 1048576 / 25e9)) < 1e-15);
	hop_route_free(&r);
	/* 0 -> 2, 1 KiB: 0 4 3 2 (1 + 1 + 2 us, 4.18 us in all) beats the
	 * fewer hops of 0 1 2 (2 + 2 us, 4.20 us) */
	assert_int_equal(hop_topo_route(&t, 0, 2, 1024, HOP_ROUTE_SAF, 4096, &r,
					err, sizeof(err)), 0);
	expect_path(&r, (int[]){ 0, 4, 3, 2 }, 4);
	assert_true(fabs(r.t_saf - (4e-6 + 2 * 1024 / 25e9 + 1024 / 10e9)) <
		    1e-15);
	hop_route_free(&r);
	/* 1 -> 2: the direct link */
	assert_int_equal(hop_topo_route(&t, 1, 2, 1024, HOP_ROUTE_PIPE, 4096, &r,
					err, sizeof(err)), 0);
	expect_path(&r, (int[]){ 1, 2 }, 2);
	hop_route_free(&r);
	/* unreachable rank 5, out of range 6, itself */
	assert_int_equal(hop_topo_route(&t, 0, 5, 1024, HOP_ROUTE_PIPE, 4096,
					&r, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "no path from rank 0 to rank 5"));
	assert_int_equal(hop_topo_route(&t, 0, 6, 1024, HOP_ROUTE_SAF, 4096, &r,
					err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "to rank 6 out of range"));
	assert_int_equal(hop_topo_route(&t, 2, 2, 1024, HOP_ROUTE_PIPE, 4096, &r,
					err, sizeof(err)), 0);
	expect_path(&r, (int[]){ 2 }, 1);
	assert_true(r.t_saf == 0 && r.t_pipe == 0 && r.k == 1);
	hop_route_free(&r);
	/* explicit path: times, and a missing link named */
	assert_int_equal(hop_topo_path_eval(&t, (int[]){ 0, 1, 2, 3 }, 4,
					    1 << 20, 4096, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.nhops, 3);
	assert_true(fabs(r.t_saf - 3 * (2e-6 + 1048576 / 10e9)) < 1e-15);
	assert_int_equal(r.k, hop_model_pipe_kopt(2e-6, 10e9, 1 << 20, 3, 4096));
	hop_route_free(&r);
	assert_int_equal(hop_topo_path_eval(&t, (int[]){ 0, 2 }, 2, 1, 1, &r,
					    err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "ranks 0 and 2 (hop 1) have no link"));
	hop_topo_free(&t);
}

/* Store-and-forward prefers one slow hop; pipelining three fast ones. */
static void test_route_modes_differ(void **state)
{
	const char *s = "hop-topo 1\nlink 0 1 1 1\nlink 0 2 1 2.5\n"
			"link 2 3 1 2.5\nlink 3 1 1 2.5\n";
	struct hop_topo t;
	struct hop_route saf, pipe;
	char err[256];
	double m = 64 << 20;

	(void)state;
	assert_int_equal(parse_str(s, &t), 0);
	assert_int_equal(hop_topo_route(&t, 0, 1, m, HOP_ROUTE_SAF, 4096, &saf,
					err, sizeof(err)), 0);
	assert_int_equal(hop_topo_route(&t, 0, 1, m, HOP_ROUTE_PIPE, 4096,
					&pipe, err, sizeof(err)), 0);
	expect_path(&saf, (int[]){ 0, 1 }, 2);
	expect_path(&pipe, (int[]){ 0, 2, 3, 1 }, 4);
	assert_true(saf.t_saf < pipe.t_saf);
	assert_true(pipe.t_pipe < saf.t_pipe);
	assert_true(pipe.k > 1);
	hop_route_free(&saf);
	hop_route_free(&pipe);
	hop_topo_free(&t);
}

/* ---- brute force over every simple path ---- */

struct brute {
	const struct hop_topo *t;
	double m, min_chunk;
	int to;
	int path[16], n, used[16];
	double best_saf, best_pipe;
};

static void dfs(struct brute *b, int v)
{
	if (v == b->to) {
		struct hop_route r;
		char err[128];

		assert_int_equal(hop_topo_path_eval(b->t, b->path, b->n, b->m,
						    b->min_chunk, &r, err,
						    sizeof(err)), 0);
		b->best_saf = fmin(b->best_saf, r.t_saf);
		/* brute force over k as well */
		long kmax = hop_model_kmax(b->m, b->min_chunk);
		struct hop_model_hop hops[16];
		for (int i = 0; i + 1 < b->n; i++) {
			const struct hop_topo_link *l =
				hop_topo_find(b->t, b->path[i], b->path[i + 1]);
			hops[i] = (struct hop_model_hop){ l->alpha, l->beta };
		}
		for (long k = 1; k <= kmax; k++)
			b->best_pipe = fmin(b->best_pipe,
					    hop_model_path_pipe(hops, b->n - 1,
								b->m, k));
		hop_route_free(&r);
		return;
	}
	for (int u = 0; u < b->t->nranks; u++) {
		if (b->used[u] || !hop_topo_find(b->t, v, u))
			continue;
		b->used[u] = 1;
		b->path[b->n++] = u;
		dfs(b, u);
		b->n--;
		b->used[u] = 0;
	}
}

static double urand(double lo, double hi)
{
	return lo + (hi - lo) * ((double)rand() / RAND_MAX);
}

/* @kcap: chunk counts up to this many; @tol: allowed relative excess of
 * the pipelined time over the brute-force optimum. */
static void route_brute(int iters, int kcap, double tol)
{
	char text[8192], err[256];

	srand(2024);
	for (int it = 0; it < iters; it++) {
		int n = 3 + rand() % 5, len, nl = 0;
		struct hop_topo t;
		struct hop_route saf, pipe;
		struct brute b = { 0 };

		len = snprintf(text, sizeof(text), "hop-topo 1\nranks %d\n", n);
		for (int i = 0; i < n; i++)
			for (int j = i + 1; j < n; j++)
				if (rand() % 100 < 55 || j == i + 1) {
					len += snprintf(text + len, sizeof(text) - len,
							"link %d %d %.3f %.3f\n", i, j,
							urand(0, 20), urand(0.1, 20));
					nl++;
				}
		assert_int_equal(parse_str(text, &t), 0);
		b.t = &t;
		b.m = floor(pow(2, urand(8, 26)));
		b.min_chunk = fmax(1, ceil(b.m / (1 + rand() % kcap)));
		b.to = n - 1;
		b.best_saf = b.best_pipe = INFINITY;
		b.path[0] = 0;
		b.n = 1;
		b.used[0] = 1;
		dfs(&b, 0);
		assert_int_equal(hop_topo_route(&t, 0, n - 1, b.m, HOP_ROUTE_SAF,
						b.min_chunk, &saf, err,
						sizeof(err)), 0);
		assert_int_equal(hop_topo_route(&t, 0, n - 1, b.m, HOP_ROUTE_PIPE,
						b.min_chunk, &pipe, err,
						sizeof(err)), 0);
		if (fabs(saf.t_saf - b.best_saf) > 1e-12 * b.best_saf ||
		    pipe.t_pipe < b.best_pipe * (1 - 1e-12) ||
		    pipe.t_pipe > b.best_pipe * (1 + tol)) {
			print_error("it %d (%d links): saf %.17g vs %.17g, pipe "
				    "%.17g vs %.17g\n%s", it, nl, saf.t_saf,
				    b.best_saf, pipe.t_pipe, b.best_pipe, text);
			fail();
		}
		hop_route_free(&saf);
		hop_route_free(&pipe);
		hop_topo_free(&t);
	}
}

/* Every k <= 64 is a candidate of the pipelined search: exact. */
static void test_route_brute(void **state)
{
	(void)state;
	route_brute(300, 64, 1e-12);
}

/* Up to 5000 chunks the search tries k <= 64 and then every 1.25x; the
 * path it keeps is re-optimised over every k. Allow 0.1% (none of these
 * graphs needs it today). */
static void test_route_brute_many_chunks(void **state)
{
	(void)state;
	route_brute(200, 5000, 1e-3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_special),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_route_known),
		cmocka_unit_test(test_route_modes_differ),
		cmocka_unit_test(test_route_brute),
		cmocka_unit_test(test_route_brute_many_chunks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
