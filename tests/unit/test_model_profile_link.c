/*
 * test_model_profile_link.c - the link profile HOP_PROFILE names
 * (src/model/profile_link.c): a written profile reads back bit for bit,
 * every truncated or malformed file fails with HOP_ERR_PARSE and a
 * message naming the line and the field, a missing file with
 * HOP_ERR_SYSTEM naming the path.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <hop/common.h>

#include "model/profile.h"

static void two_pairs(struct hop_profile *p, struct hop_profile_pair *q)
{
	memset(p, 0, sizeof(*p));
	strcpy(p->provider, "tcp");
	p->nranks = 3;
	p->npairs = 2;
	p->pairs = q;
	for (int i = 0; i < 2; i++) {
		hop_profile_pair_init(&q[i]);
		q[i].a = i;
		q[i].b = i + 1;
		strcpy(q[i].provider, "tcp");
	}
	q[0].alpha_us = 12.345678901234567;
	q[0].beta_gbps = 1.0 / 3;
	q[0].beta_mem_gbps = 66.1;
	q[0].duplex_factor = 1.05;
	q[1].alpha_us = 0;
	q[1].beta_gbps = 1e6;   /* the largest allowed */
}

static char *write_text(const struct hop_profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(hop_profile_link_write(p, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_round_trip(void **state)
{
	struct hop_profile_pair q[2];
	struct hop_profile p, r;
	char err[256];
	size_t len;
	char *text;

	(void)state;
	two_pairs(&p, q);
	text = write_text(&p, &len);
	assert_int_equal(hop_profile_link_parse(text, len, &r, err, sizeof(err)),
			 0);
	assert_string_equal(r.provider, "tcp");
	assert_int_equal(r.nranks, 3);
	assert_int_equal(r.npairs, 2);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(r.pairs[i].a, q[i].a);
		assert_int_equal(r.pairs[i].b, q[i].b);
		assert_string_equal(r.pairs[i].provider, "tcp");
		assert_memory_equal(&r.pairs[i].alpha_us, &q[i].alpha_us,
				    sizeof(double));
		assert_memory_equal(&r.pairs[i].beta_gbps, &q[i].beta_gbps,
				    sizeof(double));
	}
	assert_memory_equal(&r.pairs[0].beta_mem_gbps, &q[0].beta_mem_gbps,
			    sizeof(double));
	assert_memory_equal(&r.pairs[0].duplex_factor, &q[0].duplex_factor,
			    sizeof(double));
	/* not measured: "-" in the file, NaN again; the JSON-only parts NaN */
	assert_true(isnan(r.pairs[1].beta_mem_gbps));
	assert_true(isnan(r.pairs[1].duplex_factor));
	assert_true(isnan(r.pairs[0].r2) && isnan(r.pairs[0].sw.median_us));
	hop_profile_free(&r);

	/* every cut before the final "end" fails, none crashes or leaks */
	for (size_t cut = 0; cut + 1 < len; cut++) {
		int ret = hop_profile_link_parse(text, cut, &r, err,
						 sizeof(err));

		if (ret != HOP_ERR_PARSE)
			print_error("cut at %zu of %zu: %d\n", cut, len, ret);
		assert_int_equal(ret, HOP_ERR_PARSE);
		assert_null(r.pairs);
	}
	/* at a line boundary the message says what is missing */
	assert_int_equal(hop_profile_link_parse(text, len - 4, &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	assert_string_equal(err, "line 7: no 'end' line (truncated file?)");
	free(text);
}

/* @body after a valid head; the exact message */
static void bad(const char *body, const char *want)
{
	char text[1024], err[256];
	struct hop_profile r;
	int n = snprintf(text, sizeof(text), "hop-link-profile 1\nprovider shm\n"
			 "nranks 2\n%s", body);

	assert_int_equal(hop_profile_link_parse(text, (size_t)n, &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	if (strcmp(err, want))
		print_error("body '%s':\n got  '%s'\n want '%s'\n", body, err,
			    want);
	assert_string_equal(err, want);
}

static void test_errors(void **state)
{
	char err[256];
	struct hop_profile r;
	const char *t;

	(void)state;
	bad("pair 0 1 shm fast 2 - -\nend\n",
	    "line 4: alpha_us: expected a finite number, got 'fast'");
	bad("pair 0 1 shm 1 nan - -\nend\n",
	    "line 4: beta_GBps: expected a finite number, got 'nan'");
	bad("pair 0 1 shm 1 2 -\nend\n",
	    "line 4: pair: expected 7 or 8 fields (a b provider alpha_us "
	    "beta_GBps beta_mem_GBps duplex_factor [intra|inter]), got 6");
	bad("pair 0 1 shm 1 2 - - intra\nend\n",
	    "line 4: pair: a link class needs version 2 (the header says 1)");
	bad("pair 0 0 shm 1 2 - -\nend\n", "line 4: b: equals a (0)");
	bad("pair 0 2 shm 1 2 - -\nend\n",
	    "line 4: b: expected an integer in [0, 1], got '2'");
	bad("pair 0 1 shm -1 2 - -\nend\n",
	    "line 4: alpha_us: must be in [0, 1e+09], got -1");
	bad("pair 0 1 shm 1 0 - -\nend\n",
	    "line 4: beta_GBps: must be > 0 and <= 1e+06, got 0");
	bad("pair 0 1 shm 1 2 0 -\nend\n",
	    "line 4: beta_mem_GBps: must be > 0, got 0");
	bad("pair 0 1 SHM 1 2 - -\nend\n",
	    "line 4: provider: expected a provider name (up to 15 of a-z 0-9 "
	    "_ -), got 'SHM'");
	bad("end\n", "line 4: end: no pair before it");
	bad("pair 0 1 shm 1 2 - -\nend\npair 0 1 shm 1 2 - -\n",
	    "line 6: text after 'end'");
	bad("links 4\n", "line 4: unknown line 'links' (expected provider, "
	    "nranks, pair or end)");
	bad("pair 0 1 shm 1 2 - -\nnranks 3\n",
	    "line 5: nranks: must come before the pairs");
	bad("# comment\n\npair 0 1 shm 1 2 - -\n",
	    "line 7: no 'end' line (truncated file?)");

	t = "{\"format\": \"hop-probe-profile\"}\n";
	assert_int_equal(hop_profile_link_parse(t, strlen(t), &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	assert_string_equal(err, "line 1: not a hop link profile (the first "
			    "line must be 'hop-link-profile 2')");
	t = "hop-link-profile 3\n";
	assert_int_equal(hop_profile_link_parse(t, strlen(t), &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	assert_string_equal(err, "line 1: version: 3 not supported (this hop "
			    "reads 1 to 2)");
	t = "hop-link-profile 1\npair 0 1 shm 1 2 - -\n";
	assert_int_equal(hop_profile_link_parse(t, strlen(t), &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	assert_string_equal(err, "line 2: pair: before 'nranks'");
	/* a NUL byte, a line longer than any valid one */
	assert_int_equal(hop_profile_link_parse("hop-link-profile 1\n\0", 20, &r,
						err, sizeof(err)),
			 HOP_ERR_PARSE);
	assert_string_equal(err, "line 2: contains a NUL byte");
	char longl[400];
	memset(longl, ' ', sizeof(longl));
	assert_int_equal(hop_profile_link_parse(longl, sizeof(longl), &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	assert_string_equal(err, "line 1: longer than 256 bytes");
	assert_int_equal(hop_profile_link_parse(NULL, 0, &r, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
}

/* A pair's link class reads back; a file without classes stays
 * version 1 (older readers read it), one with them is version 2. */
static void test_classes(void **state)
{
	struct hop_profile_pair q[2];
	struct hop_profile p, r;
	char err[256];
	size_t len;
	char *text;
	const char *t;

	(void)state;
	two_pairs(&p, q);
	text = write_text(&p, &len);
	assert_non_null(strstr(text, "hop-link-profile 1\n"));
	assert_int_equal(hop_profile_link_parse(text, len, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.pairs[0].link_class, -1);
	assert_int_equal(r.pairs[1].link_class, -1);
	hop_profile_free(&r);
	free(text);

	q[0].link_class = 0;
	q[1].link_class = 1;
	text = write_text(&p, &len);
	assert_non_null(strstr(text, "hop-link-profile 2\n"));
	assert_non_null(strstr(text, " intra\n"));
	assert_int_equal(hop_profile_link_parse(text, len, &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.pairs[0].link_class, 0);
	assert_int_equal(r.pairs[1].link_class, 1);
	hop_profile_free(&r);
	free(text);

	t = "hop-link-profile 2\nnranks 2\npair 0 1 shm 1 2 - - local\nend\n";
	assert_int_equal(hop_profile_link_parse(t, strlen(t), &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	assert_string_equal(err, "line 3: class: expected intra or inter, got "
			    "'local'");
	t = "hop-link-profile 2\nnranks 2\npair 0 1 shm 1 2 - - inter x\nend\n";
	assert_int_equal(hop_profile_link_parse(t, strlen(t), &r, err,
						sizeof(err)), HOP_ERR_PARSE);
	assert_string_equal(err, "line 3: too many fields");
	assert_string_equal(hop_profile_class_name(1), "inter");
	assert_string_equal(hop_profile_class_name(7), "-");
	assert_int_equal(hop_profile_class_lookup("intra"), 0);
	assert_int_equal(hop_profile_class_lookup(NULL), -1);
}

static void test_load(void **state)
{
	struct hop_profile_pair q[2];
	struct hop_profile p, r;
	char path[] = "/tmp/hop-link-XXXXXX", err[512], want[600];
	int fd;
	FILE *f;

	(void)state;
	two_pairs(&p, q);
	assert_true((fd = mkstemp(path)) >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	assert_int_equal(hop_profile_link_write(&p, f), 0);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(hop_profile_link_load(path, &r, err, sizeof(err)), 0);
	assert_int_equal(r.npairs, 2);
	assert_memory_equal(&r.pairs[0].alpha_us, &q[0].alpha_us,
			    sizeof(double));
	hop_profile_free(&r);
	/* truncated on disk: the path, the line, what is missing */
	assert_int_equal(truncate(path, 40), 0);
	assert_int_equal(hop_profile_link_load(path, &r, err, sizeof(err)),
			 HOP_ERR_PARSE);
	snprintf(want, sizeof(want), "%s: line 4: no 'end' line (truncated "
		 "file?)", path);
	assert_string_equal(err, want);
	unlink(path);
	assert_int_equal(hop_profile_link_load(path, &r, err, sizeof(err)),
			 HOP_ERR_SYSTEM);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "cannot open"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
