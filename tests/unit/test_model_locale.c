/*
 * test_model_locale - the readers and the writer of numbers in model files
 * (JSON profiles, topology files) ignore the host program's locale: under
 * a locale whose decimal point is a comma (de_DE.UTF-8, set with
 * setlocale() as a host program would), "1.5e-6" still reads as 1.5e-6
 * and a written profile still has decimal points.
 *
 * test_model_locale.sh generates the locale into a private LOCPATH and
 * runs this with HOP_TEST_LOCALE naming it; the test fails when the locale
 * cannot be set or does not use a decimal comma (it would prove nothing).
 */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/profile.h"
#include "probe/json.h"
#include "probe/profile_json.h"
#include "model/topo.h"

static int comma_locale(void **state)
{
	const char *name = getenv("HOP_TEST_LOCALE");

	(void)state;
	if (!name)
		name = "de_DE.UTF-8";
	if (!setlocale(LC_ALL, name))
		fail_msg("cannot set locale %s (LOCPATH=%s)", name,
			 getenv("LOCPATH") ? getenv("LOCPATH") : "unset");
	if (strcmp(localeconv()->decimal_point, ","))
		fail_msg("locale %s has decimal point '%s', not ','", name,
			 localeconv()->decimal_point);
	return 0;
}

static void test_json_number(void **state)
{
	const char *text = "{\"a\": 1.5e-6, \"b\": -2.25, \"c\": 3}";
	struct hop_json *v;
	char err[256];

	(void)state;
	assert_int_equal(hop_json_parse(text, strlen(text), &v, err,
					sizeof(err)), 0);
	assert_true(hop_json_get(v, "a")->number == 1.5e-6);
	assert_true(hop_json_get(v, "b")->number == -2.25);
	assert_true(hop_json_get(v, "c")->number == 3);
	hop_json_free(v);
}

static void test_topo_number(void **state)
{
	const char *text = "hop-topo 1\nlink 0 1 1.5 2.5\nlink 1 2 0.25 12.5\n";
	struct hop_topo t;
	char err[256];

	(void)state;
	assert_int_equal(hop_topo_parse(text, strlen(text), "l.topo", &t, err,
					sizeof(err)), 0);
	assert_int_equal(t.nlinks, 2);
	assert_true(fabs(t.links[0].alpha - 1.5e-6) < 1e-18);
	assert_true(fabs(t.links[0].beta - 2.5e9) < 1e-3);
	assert_true(fabs(t.links[1].alpha - 0.25e-6) < 1e-18);
	assert_true(fabs(t.links[1].beta - 12.5e9) < 1e-3);
	hop_topo_free(&t);
}

/* A one-pair tcp profile with the numbers both profile formats carry. */
static void one_pair(struct hop_profile *p, struct hop_profile_pair *pair)
{
	*p = (struct hop_profile){ .version = HOP_PROFILE_VERSION, .nranks = 2,
				   .npairs = 1, .pairs = pair };
	strcpy(p->provider, "tcp");
	hop_profile_pair_init(pair);
	pair->a = 0;
	pair->b = 1;
	strcpy(pair->provider, "tcp");
	pair->alpha_us = 1.5;
	pair->beta_gbps = 2.25;
	pair->beta_mem_gbps = 11.5;
	pair->duplex_factor = 1.125;
}

/* A profile written and read back under the comma locale: the file has
 * JSON's decimal points, and every number survives. */
static void test_profile_round_trip(void **state)
{
	struct hop_profile_pair pair;
	struct hop_profile p, q;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	one_pair(&p, &pair);
	strcpy(p.hop_version, "0.1.0");
	strcpy(p.host, "h");
	pair.r2 = 0.999;
	pair.sw = (struct hop_pstat){ 0.05, 0.09 };
	pair.dma = (struct hop_pstat){ 0.1, 0.2 };
	pair.sync = (struct hop_pstat){ 0.15, 0.3 };
	pair.wire = (struct hop_pstat){ 0.4, 0.8 };
	pair.sync_cts = (struct hop_pstat){ 0.7, 1.4 };
	pair.sync_step = (struct hop_pstat){ 0.35, 0.7 };
	pair.ring_ranks = 4;
	pair.alpha_sum_us = 0.7;
	pair.alpha_diff_pct = -6.25;
	pair.nsizes = 2;
	pair.pt[0] = (struct hop_profile_point){ 1, 1.5, 2.5 };
	pair.pt[1] = (struct hop_profile_point){ 65536, 8.75, 9.5 };
	assert_non_null(f);
	assert_int_equal(hop_profile_write(&p, f), 0);
	fclose(f);
	if (strstr(buf, "1,5") || !strstr(buf, "1.5"))
		fail_msg("the profile was written in the locale:\n%s", buf);
	if (hop_profile_parse(buf, len, &q, err, sizeof(err)))
		fail_msg("reading it back: %s", err);
	assert_int_equal(q.npairs, 1);
	assert_true(q.pairs[0].alpha_us == 1.5);
	assert_true(q.pairs[0].beta_gbps == 2.25);
	assert_true(q.pairs[0].r2 == 0.999);
	assert_true(q.pairs[0].pt[1].median_us == 8.75);
	hop_profile_free(&q);
	free(buf);
}

/* The link profile that HOP_PROFILE names, written and read back under
 * the comma locale: decimal points in the file, every number exact. */
static void test_link_profile_round_trip(void **state)
{
	struct hop_profile_pair pair;
	struct hop_profile p, q;
	char err[256], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	one_pair(&p, &pair);
	assert_non_null(f);
	assert_int_equal(hop_profile_link_write(&p, f), 0);
	fclose(f);
	if (strstr(buf, "1,5") || !strstr(buf, "1.5"))
		fail_msg("the link profile was written in the locale:\n%s", buf);
	if (hop_profile_link_parse(buf, len, &q, err, sizeof(err)))
		fail_msg("reading it back: %s", err);
	assert_int_equal(q.npairs, 1);
	assert_true(q.pairs[0].alpha_us == 1.5);
	assert_true(q.pairs[0].beta_gbps == 2.25);
	assert_true(q.pairs[0].beta_mem_gbps == 11.5);
	assert_true(q.pairs[0].duplex_factor == 1.125);
	hop_profile_free(&q);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_number),
		cmocka_unit_test(test_topo_number),
		cmocka_unit_test(test_profile_round_trip),
		cmocka_unit_test(test_link_profile_round_trip),
	};

	return cmocka_run_group_tests(tests, comma_locale, NULL);
}
