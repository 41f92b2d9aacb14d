/*
 * test_probe_profile.c - the JSON reader and the profile writer/reader:
 * round trip of every field, and the exact error for truncated files,
 * wrong types, missing fields and insane values.
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

#include "probe/json.h"
#include "probe/profile_json.h"

static void sample_pair(struct hop_profile_pair *q, int a)
{
	hop_profile_pair_init(q);
	q->a = a;
	q->b = a + 1;
	strcpy(q->provider, "shm");
	q->alpha_us = 0.75;
	q->beta_gbps = 8.25;
	q->r2 = 0.9975;
	q->beta_mem_gbps = 11.5;
	q->duplex_factor = 1.125;
	q->sw = (struct hop_pstat){ 0.05, 0.09 };
	q->dma = (struct hop_pstat){ 0.1, 0.2 };
	q->sync = (struct hop_pstat){ 0.15, 0.3 };
	q->wire = (struct hop_pstat){ 0.4, 0.8 };
	q->sync_cts = (struct hop_pstat){ 0.7, 1.4 };
	q->ring_ranks = 4;
	q->alpha_sum_us = 0.7;
	q->alpha_diff_pct = -6.666666667;
	q->oneway_mem = (struct hop_pstat){ 0.55, 1.0 };
	q->timer_overhead_us = 0.021;
	q->duplex_size = 4194304;
	q->duplex_one_us = 500;
	q->duplex_both_us = 562.5;
	q->saf_relay = a + 1;
	q->saf_dest = a;
	q->saf_size = 1048576;
	q->saf_beta1_gbps = 8;
	q->saf_beta2_gbps = 4;
	q->saf_gbps = 2.6;
	q->saf_harmonic_gbps = 8.0 / 3.0;
	q->nagg = 2;
	q->agg[0] = (struct hop_profile_agg){ 1, 8.0, 8.0 };
	q->agg[1] = (struct hop_profile_agg){ 2, 11.0, 11.5 };
	q->nsizes = 3;
	q->pt[0] = (struct hop_profile_point){ 1, 0.75, 1.5 };
	q->pt[1] = (struct hop_profile_point){ 65536, 8.7, 9.5 };
	q->pt[2] = (struct hop_profile_point){ 4194304, 509, NAN };
}

static char *write_mem(const struct hop_profile *p, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(hop_profile_write(p, f), 0);
	fclose(f);
	return buf;
}

static struct hop_profile two_pairs(struct hop_profile_pair *pairs)
{
	struct hop_profile p = { .version = 1, .nranks = 3, .npairs = 2,
				 .pairs = pairs };

	strcpy(p.provider, "shm");
	strcpy(p.hop_version, "0.1.0");
	strcpy(p.host, "node\"1");
	sample_pair(&pairs[0], 0);
	sample_pair(&pairs[1], 1);
	pairs[1].beta_gbps = 3.5;
	return p;
}

static void same_stat(struct hop_pstat a, struct hop_pstat b)
{
	assert_true(a.median_us == b.median_us ||
		    (isnan(a.median_us) && isnan(b.median_us)));
	assert_true(a.p99_us == b.p99_us || (isnan(a.p99_us) && isnan(b.p99_us)));
}

static void test_round_trip(void **state)
{
	struct hop_profile_pair pairs[2];
	struct hop_profile p = two_pairs(pairs), q;
	char err[256];
	size_t len;
	char *buf = write_mem(&p, &len);

	(void)state;
	assert_int_equal(hop_profile_parse(buf, len, &q, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_int_equal(q.version, 1);
	assert_int_equal(q.nranks, 3);
	assert_int_equal(q.npairs, 2);
	assert_string_equal(q.provider, "shm");
	assert_string_equal(q.host, "node\"1");
	for (int i = 0; i < 2; i++) {
		const struct hop_profile_pair *x = &p.pairs[i], *y = &q.pairs[i];

		assert_int_equal(y->a, x->a);
		assert_int_equal(y->b, x->b);
		assert_string_equal(y->provider, x->provider);
		assert_true(y->alpha_us == x->alpha_us);
		assert_true(y->beta_gbps == x->beta_gbps);
		assert_true(y->r2 == x->r2);
		assert_true(y->beta_mem_gbps == x->beta_mem_gbps);
		assert_true(y->duplex_factor == x->duplex_factor);
		same_stat(y->sw, x->sw);
		same_stat(y->dma, x->dma);
		same_stat(y->sync, x->sync);
		same_stat(y->wire, x->wire);
		same_stat(y->sync_cts, x->sync_cts);
		same_stat(y->sync_step, x->sync_step); /* NaN: null */
		same_stat(y->oneway_mem, x->oneway_mem);
		assert_int_equal(y->ring_ranks, 4);
		assert_true(fabs(y->alpha_diff_pct - x->alpha_diff_pct) < 1e-8);
		assert_true(y->duplex_both_us == 562.5);
		assert_int_equal(y->saf_relay, x->saf_relay);
		assert_true(fabs(y->saf_harmonic_gbps - 8.0 / 3.0) < 1e-8);
		assert_int_equal(y->nagg, 2);
		assert_true(y->agg[1].gbps == 11.0 && y->agg[1].links == 2);
		assert_int_equal(y->nsizes, 3);
		assert_true(y->pt[1].size == 65536 && y->pt[1].p99_us == 9.5);
		assert_true(isnan(y->pt[2].p99_us));
	}
	assert_true(hop_profile_find(&q, 2, 1) == &q.pairs[1]);
	assert_null(hop_profile_find(&q, 0, 2));
	assert_true(fabs(hop_profile_predict_us(&q.pairs[0], 8250.0) - 1.75) < 1e-12);
	hop_profile_free(&q);
	free(buf);
}

static void test_save_load_file(void **state)
{
	struct hop_profile_pair pairs[2];
	struct hop_profile p = two_pairs(pairs), q;
	char path[] = "/tmp/hop-profile-test-XXXXXX", err[256];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(hop_profile_save(&p, path, err, sizeof(err)), 0);
	assert_int_equal(hop_profile_load(path, &q, err, sizeof(err)), 0);
	assert_true(q.pairs[1].beta_gbps == 3.5);
	hop_profile_free(&q);
	unlink(path);
	assert_int_equal(hop_profile_load(path, &q, err, sizeof(err)),
			 HOP_ERR_SYSTEM);
	assert_non_null(strstr(err, "cannot open"));
	assert_non_null(strstr(err, path));
}

/* parse @text; expect @code and @needle in the message */
static void expect_err(const char *text, int code, const char *needle)
{
	struct hop_profile q;
	char err[512];
	int ret = hop_profile_parse(text, strlen(text), &q, err, sizeof(err));

	if (ret != code || !strstr(err, needle))
		fail_msg("want %d containing \"%s\"; got %d \"%s\"", code,
			 needle, ret, err);
	assert_null(q.pairs);
}

static void test_truncated(void **state)
{
	struct hop_profile_pair pairs[2];
	struct hop_profile p = two_pairs(pairs), q;
	char err[256];
	size_t len;
	char *buf = write_mem(&p, &len);

	(void)state;
	/* every proper prefix (but the empty one) fails and says truncated */
	for (size_t cut = 1; cut < len - 1; cut++) {
		int ret = hop_profile_parse(buf, cut, &q, err, sizeof(err));

		assert_int_equal(ret, HOP_ERR_PARSE);
		if (!strstr(err, "(truncated file?)"))
			fail_msg("prefix of %zu bytes: %s", cut, err);
	}
	assert_int_equal(hop_profile_parse(buf, len / 2, &q, err, sizeof(err)),
			 HOP_ERR_PARSE);
	assert_non_null(strstr(err, "truncated file?"));
	assert_non_null(strstr(err, "line "));
	free(buf);
	expect_err("", HOP_ERR_PARSE, "empty input");
	expect_err("{\"format\": \"hop-pro", HOP_ERR_PARSE,
		   "inside a string (truncated file?)");
	expect_err("{\"a\": tr", HOP_ERR_PARSE, "inside a literal");
	expect_err("{\"a\": 0.", HOP_ERR_PARSE, "inside a number (truncated file?)");
	expect_err("{\"a\": 1e-", HOP_ERR_PARSE, "inside a number (truncated file?)");
	expect_err("{\"a\": -", HOP_ERR_PARSE, "inside a number (truncated file?)");
	expect_err("{\"a\": 12", HOP_ERR_PARSE, "inside an object (truncated file?)");
}

static const char *const good =
	"{\"format\": \"hop-probe-profile\", \"version\": 1, \"provider\": \"tcp\","
	" \"nranks\": 2, \"pairs\": [{\"a\": 0, \"b\": 1, \"provider\": \"tcp\","
	" \"alpha_us\": 10, \"beta_GBps\": 2, \"r2\": 0.99, \"beta_mem_GBps\": 9,"
	" \"duplex_factor\": 1.2, \"alpha_parts\": {"
	"\"sw\": {\"median_us\": 1, \"p99_us\": 2}, \"dma\": {\"median_us\": 1, \"p99_us\": 2},"
	"\"sync\": {\"median_us\": 1, \"p99_us\": 2}, \"wire\": {\"median_us\": 7, \"p99_us\": 9}},"
	" \"sweep\": [{\"size\": 1, \"median_us\": 10, \"p99_us\": 11},"
	" {\"size\": 2000, \"median_us\": 11, \"p99_us\": null}]}]}";

/* @good with the first @from replaced by @to */
static char *mutate(const char *from, const char *to)
{
	const char *at = strstr(good, from);
	char *s;

	assert_non_null(at);
	s = malloc(strlen(good) + strlen(to) + 1);
	assert_non_null(s);
	sprintf(s, "%.*s%s%s", (int)(at - good), good, to, at + strlen(from));
	return s;
}

static void expect_mut(const char *from, const char *to, const char *needle)
{
	char *s = mutate(from, to);

	expect_err(s, HOP_ERR_PARSE, needle);
	free(s);
}

static void test_minimal_good(void **state)
{
	struct hop_profile q;
	char err[256];

	(void)state;
	assert_int_equal(hop_profile_parse(good, strlen(good), &q, err,
					   sizeof(err)), 0);
	assert_int_equal(q.pairs[0].nsizes, 2);
	assert_true(isnan(q.pairs[0].sync_cts.median_us));
	assert_int_equal(q.pairs[0].nagg, 0);
	hop_profile_free(&q);
}

static void test_wrong_types(void **state)
{
	(void)state;
	expect_mut("\"beta_GBps\": 2", "\"beta_GBps\": \"2\"",
		   "pairs[0].beta_GBps: expected number, got string");
	expect_mut("\"nranks\": 2", "\"nranks\": [2]",
		   "nranks: expected number, got array");
	expect_mut("\"nranks\": 2", "\"nranks\": 2.5",
		   "nranks: expected an integer in [2, 1048576], got 2.5");
	expect_mut("\"pairs\": [", "\"pairs\": [1, ",
		   "pairs[0]: expected object, got number");
	expect_mut("\"sw\": {\"median_us\": 1", "\"sw\": {\"median_us\": true",
		   "pairs[0].alpha_parts.sw.median_us: expected number, got boolean");
	expect_mut("\"alpha_us\": 10", "\"alpha_us\": null",
		   "pairs[0].alpha_us: expected number, got null");
	expect_mut("{\"size\": 2000", "{\"size\": {}",
		   "pairs[0].sweep[1].size: expected number, got object");
	expect_mut("\"format\": \"hop-probe-profile\"", "\"format\": \"other\"",
		   "format: expected \"hop-probe-profile\", got \"other\"");
	expect_mut("\"version\": 1", "\"version\": 2", "version: 2 not supported");
	expect_err("[1, 2]", HOP_ERR_PARSE, "top level: expected object, got array");
}

static void test_missing_fields(void **state)
{
	(void)state;
	expect_mut("\"beta_GBps\": 2, ", "",
		   "pairs[0].beta_GBps: missing (required number)");
	expect_mut("\"provider\": \"tcp\",", "",
		   "provider: missing (required string)");
	expect_mut("\"wire\": {\"median_us\": 7, \"p99_us\": 9}", "\"wir\": {}",
		   "pairs[0].alpha_parts.wire: missing (required object)");
	expect_mut(", \"sweep\": [", ", \"sweeep\": [",
		   "pairs[0].sweep: missing (required array)");
	expect_mut("\"pairs\": [{", "\"pairs\": [], \"x\": [{", "pairs: empty");
}

static void test_insane_values(void **state)
{
	(void)state;
	expect_mut("\"beta_GBps\": 2", "\"beta_GBps\": 0",
		   "pairs[0].beta_GBps: must be > 0 and <= 1e+06, got 0");
	expect_mut("\"alpha_us\": 10", "\"alpha_us\": -1",
		   "pairs[0].alpha_us: must be in [0, 1e+09], got -1");
	/* finite as written, infinite once in B/s */
	expect_mut("\"beta_GBps\": 2", "\"beta_GBps\": 12.5e301",
		   "pairs[0].beta_GBps: must be > 0 and <= 1e+06, got 1.25e+302");
	expect_mut("\"alpha_us\": 10", "\"alpha_us\": 2e9",
		   "pairs[0].alpha_us: must be in [0, 1e+09], got 2e+09");
	expect_mut("\"b\": 1", "\"b\": 5",
		   "pairs[0].b: expected an integer in [0, 1], got 5");
	expect_mut("\"r2\": 0.99", "\"r2\": 1.5", "pairs[0].r2: must be <= 1");
}

static void test_json_syntax(void **state)
{
	struct hop_json *v;
	char err[256];

	(void)state;
	expect_mut("\"version\": 1,", "\"version\": 1,,", "expected a key string");
	expect_mut("\"version\": 1", "\"version\": 01", "leading zero");
	expect_mut("\"version\": 1", "\"version\": NaN", "expected a value, got 'N'");
	expect_mut("\"nranks\": 2", "\"nranks\": 2, \"nranks\": 2",
		   "duplicate key \"nranks\"");
	expect_mut("\"p99_us\": null}]", "\"p99_us\": null},]",
		   "trailing comma in an array");
	expect_mut("\"tcp\"", "\"t\\qcp\"", "bad escape '\\q'");
	expect_err("{} x", HOP_ERR_PARSE, "unexpected 'x' after the JSON value");
	expect_err("{\"a\" 1}", HOP_ERR_PARSE, "line 1, column 6: expected ':'");
	expect_err("{\n\n  \"a\": [1 2]}", HOP_ERR_PARSE,
		   "line 3, column 11: expected ',' or ']'");
	expect_err("\"a\tb\"", HOP_ERR_PARSE, "control character 0x09");
	/* escapes decode to UTF-8; depth is bounded */
	const char *s = "[\"\\u00e9\\ud83d\\ude00\\n\", 1e3, -0.5, true, null]";

	assert_int_equal(hop_json_parse(s, strlen(s), &v, err, sizeof(err)), 0);
	assert_int_equal(v->count, 5);
	assert_string_equal(hop_json_at(v, 0)->string, "\xc3\xa9\xf0\x9f\x98\x80\n");
	assert_true(hop_json_at(v, 1)->number == 1000.0);
	assert_true(hop_json_at(v, 3)->boolean == 1);
	assert_int_equal(hop_json_at(v, 4)->type, HOP_JSON_NULL);
	assert_null(hop_json_at(v, 5));
	hop_json_free(v);
	char deep[200];

	memset(deep, '[', sizeof(deep));
	assert_int_equal(hop_json_parse(deep, sizeof(deep), &v, err, sizeof(err)),
			 HOP_ERR_PARSE);
	assert_non_null(strstr(err, "nesting deeper than 64"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_save_load_file),
		cmocka_unit_test(test_minimal_good),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_missing_fields),
		cmocka_unit_test(test_insane_values),
		cmocka_unit_test(test_json_syntax),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
