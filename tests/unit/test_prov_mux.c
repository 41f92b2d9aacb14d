/*
 * test_prov_mux.c - the per-class HOP_TRANSPORT parser, the packing of the
 * children's keys into one mux key, and the mux's ops table (name, caps).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "transport/mux/mux.h"
#include "transport/provider.h"

static const char *const names[] = { "verbs", "tcp", "shm" };
#define AUTO 0x7f

static int parse(const char *s, int *out, char *err, size_t len)
{
	err[0] = '\0';
	return hop_mux_parse(s, names, 3, AUTO, out, err, len);
}

static void test_parse_good(void **state)
{
	char err[256];
	int out[2];

	(void)state;
	assert_int_equal(parse("intra:shm,inter:tcp", out, err, sizeof(err)), 0);
	assert_int_equal(out[HOP_MUX_INTRA], 2);
	assert_int_equal(out[HOP_MUX_INTER], 1);
	assert_int_equal(parse("inter:verbs,intra:tcp", out, err, sizeof(err)), 0);
	assert_int_equal(out[HOP_MUX_INTRA], 1);
	assert_int_equal(out[HOP_MUX_INTER], 0);
	/* a class not named is auto */
	assert_int_equal(parse("inter:auto", out, err, sizeof(err)), 0);
	assert_int_equal(out[HOP_MUX_INTRA], AUTO);
	assert_int_equal(out[HOP_MUX_INTER], AUTO);
	assert_int_equal(parse("intra:tcp", out, err, sizeof(err)), 0);
	assert_int_equal(out[HOP_MUX_INTRA], 1);
	assert_int_equal(out[HOP_MUX_INTER], AUTO);
	assert_true(hop_mux_is_classes("intra:shm"));
	assert_false(hop_mux_is_classes("shm"));
	assert_false(hop_mux_is_classes(NULL));
}

/* Each malformed string fails, naming its bad part. */
static void test_parse_bad(void **state)
{
	static const struct {
		const char *s, *part;
	} bad[] = {
		{ "intra:shm,inter:foo", "'inter:foo' names no built-in" },
		{ "intra:shm,inter:shm", "'inter:shm': shm reaches only" },
		{ "intra:shm,intra:tcp", "class intra is given twice" },
		{ "intra:shm,", "'' is not CLASS:NAME" },
		{ "across:tcp", "'across:tcp' is not CLASS:NAME" },
		{ "intra:shm,tcp", "'tcp' is not CLASS:NAME" },
		{ "intra:", "'intra:' names no built-in" },
		{ "intra:shmx", "'intra:shmx' names no" },
		{ ":tcp", "':tcp' is not CLASS:NAME" },
	};
	char err[256];
	int out[2];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i].s, out, err, sizeof(err)),
				 HOP_ERR_CONFIG);
		if (!strstr(err, bad[i].part) || !strstr(err, bad[i].s))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].s,
				 err, bad[i].part);
	}
	assert_int_equal(hop_mux_parse(NULL, names, 3, AUTO, out, err,
				       sizeof(err)), HOP_ERR_INVALID_ARG);
}

/* Software keys (gen < 2^16, slot < 2^16) and 32-bit verbs rkeys survive
 * the trip through one 64-bit mux key; a wider one is detected. */
static void test_keys(void **state)
{
	static const uint64_t soft[] = { 0x100000000ull, 0xffff0000ffffull,
					 0x1234000000abull, 0x800000007fffull };
	static const uint64_t hard[] = { 0, 1, 0x7fffffffull, 0xffffffffull,
					 0x8badf00dull };

	(void)state;
	for (size_t i = 0; i < sizeof(soft) / sizeof(soft[0]); i++)
		for (size_t j = 0; j < sizeof(hard) / sizeof(hard[0]); j++) {
			uint32_t a = hop_mux_key_pack(soft[i], 1);
			uint32_t e = hop_mux_key_pack(hard[j], 0);
			uint64_t k = hop_mux_key_join(a, e);

			assert_int_equal(hop_mux_key_unpack(
					 hop_mux_key_part(k, HOP_MUX_INTRA), 1),
					 soft[i]);
			assert_int_equal(hop_mux_key_unpack(
					 hop_mux_key_part(k, HOP_MUX_INTER), 0),
					 hard[j]);
		}
	/* both halves software (shm inside, tcp across) */
	assert_int_equal(hop_mux_key_unpack(hop_mux_key_part(
		hop_mux_key_join(hop_mux_key_pack(soft[1], 1),
				 hop_mux_key_pack(soft[2], 1)), HOP_MUX_INTER),
		1), soft[2]);
	/* what mr_reg refuses: a generation or slot past 16 bits */
	assert_true(hop_mux_key_unpack(hop_mux_key_pack(0x1000000000000ull, 1),
				       1) != 0x1000000000000ull);
	assert_true(hop_mux_key_unpack(hop_mux_key_pack(0x100010000ull, 1), 1) !=
		    0x100010000ull);
	assert_true(hop_mux_key_unpack(hop_mux_key_pack(0x100000000ull, 0), 0) !=
		    0x100000000ull);
}

/* The table: "INTRA+INTER", caps both children have, the smaller eager
 * size, the inter child's link. */
static void test_table(void **state)
{
	static const int host_of[4] = { 0, 0, 1, 1 };
	const struct hop_prov_ops *ops;
	const struct hop_prov_caps *c, *t = hop_prov_caps_of(&hop_prov_tcp);
	const struct hop_prov_caps *s = hop_prov_caps_of(&hop_prov_shm);

	(void)state;
	ops = hop_mux_new(&hop_prov_shm, &hop_prov_tcp, 3, host_of, 4);
	assert_non_null(ops);
	assert_true(hop_mux_is(ops));
	assert_false(hop_mux_is(&hop_prov_tcp));
	assert_string_equal(ops->name, "shm+tcp");
	c = hop_prov_caps_of(ops);
	assert_non_null(c);
	assert_int_equal(c->flags, (s ? s->flags : 0) & (t ? t->flags : 0));
	if (t) {
		assert_true(c->beta == t->beta && c->alpha == t->alpha);
	}
	assert_true(c->eager_size > 0);
	assert_non_null(ops->mem_alloc);
	assert_non_null(ops->peer_closed);
	hop_mux_free(ops);
	hop_mux_free(&hop_prov_tcp); /* not a mux table: left alone */
	assert_null(hop_mux_new(NULL, &hop_prov_tcp, 3, host_of, 4));
	assert_null(hop_mux_new(&hop_prov_shm, &hop_prov_tcp, 3, host_of, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
