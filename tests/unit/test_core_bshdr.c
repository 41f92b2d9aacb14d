/*
 * test_core_bshdr - the bootstrap wire header parser (a pure function the
 * fuzzer calls): round trip, bad magic, unknown type, oversize length,
 * every truncation; the REJECT/ABORT reason codec; rank lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/bs_int.h"

static void test_round_trip(void **state)
{
	uint8_t b[HOP_BS_HDR_LEN];
	struct hop_bs_hdr h;
	char err[128] = "untouched";

	(void)state;
	hop_bs_hdr_pack(b, HOP_BS_GATHER, 0xbeef, 65535, 4096);
	assert_int_equal(hop_bs_hdr_parse(b, sizeof(b), 4096, &h, err,
					  sizeof(err)), 0);
	assert_int_equal(h.magic, HOP_BS_MAGIC);
	assert_int_equal(h.type, HOP_BS_GATHER);
	assert_int_equal(h.flags, 0xbeef);
	assert_int_equal(h.rank, 65535);
	assert_int_equal(h.len, 4096);
	assert_string_equal(err, "untouched");
	/* big-endian on the wire */
	assert_memory_equal(b, "HOPB", 4);
	assert_int_equal(b[15], 0x00);
	assert_int_equal(b[14], 0x10);
	/* extra bytes after the header are not the parser's business */
	uint8_t big[64] = { 0 };

	memcpy(big, b, sizeof(b));
	assert_int_equal(hop_bs_hdr_parse(big, sizeof(big), 4096, &h, NULL, 0), 0);
}

static void test_bad_magic(void **state)
{
	uint8_t b[HOP_BS_HDR_LEN];
	struct hop_bs_hdr h = { 0 };
	char err[128];

	(void)state;
	hop_bs_hdr_pack(b, HOP_BS_HELLO, 0, 1, 32);
	for (int byte = 0; byte < 4; byte++) {
		uint8_t c[HOP_BS_HDR_LEN];

		memcpy(c, b, sizeof(c));
		c[byte] ^= 0x20;
		assert_int_equal(hop_bs_hdr_parse(c, sizeof(c), 32, &h, err,
						  sizeof(err)), HOP_ERR_PROTOCOL);
		assert_non_null(strstr(err, "magic"));
	}
	/* a HTTP client or port scanner talking to the rendezvous */
	assert_int_equal(hop_bs_hdr_parse("GET / HTTP/1.1\r\n", 16, 32, &h, err,
					  sizeof(err)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "not a hop peer"));
	assert_int_equal(h.magic, 0); /* out untouched on failure */
}

static void test_bad_type(void **state)
{
	uint8_t b[HOP_BS_HDR_LEN];
	char err[128];

	(void)state;
	for (unsigned t = 0; t < 0x10000; t += (t < 16 ? 1 : 0x1000 - 1)) {
		int ok = t >= 1 && t <= HOP_BS_TYPE_MAX;

		hop_bs_hdr_pack(b, (uint16_t)t, 0, 0, 0);
		assert_int_equal(hop_bs_hdr_parse(b, sizeof(b), 0, NULL, err,
						  sizeof(err)),
				 ok ? 0 : HOP_ERR_PROTOCOL);
		if (!ok)
			assert_non_null(strstr(err, "unknown"));
	}
}

static void test_oversize(void **state)
{
	uint8_t b[HOP_BS_HDR_LEN];
	struct hop_bs_hdr h;
	char err[128];

	(void)state;
	hop_bs_hdr_pack(b, HOP_BS_HELLO, 0, 1, 33);
	assert_int_equal(hop_bs_hdr_parse(b, sizeof(b), 32, &h, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "33"));
	assert_non_null(strstr(err, "HELLO"));
	/* the global cap holds whatever the caller allows */
	hop_bs_hdr_pack(b, HOP_BS_START, 0, 0, HOP_BS_MAX_MSG + 1);
	assert_int_equal(hop_bs_hdr_parse(b, sizeof(b), UINT32_MAX, &h, err,
					  sizeof(err)), HOP_ERR_PROTOCOL);
	hop_bs_hdr_pack(b, HOP_BS_START, 0, 0, 0xffffffffu);
	assert_int_equal(hop_bs_hdr_parse(b, sizeof(b), UINT32_MAX, &h, err,
					  sizeof(err)), HOP_ERR_PROTOCOL);
	hop_bs_hdr_pack(b, HOP_BS_START, 0, 0, HOP_BS_MAX_MSG);
	assert_int_equal(hop_bs_hdr_parse(b, sizeof(b), UINT32_MAX, &h, err,
					  sizeof(err)), 0);
	assert_int_equal(h.len, HOP_BS_MAX_MSG);
}

static void test_truncated(void **state)
{
	uint8_t b[HOP_BS_HDR_LEN];
	char err[128];

	(void)state;
	hop_bs_hdr_pack(b, HOP_BS_READY, 0, 0, 0);
	for (size_t n = 0; n < HOP_BS_HDR_LEN; n++) {
		/* exactly n readable bytes: a heap copy lets ASan/valgrind
		 * catch any read past them */
		uint8_t *c = malloc(n ? n : 1);

		memcpy(c, b, n);
		assert_int_equal(hop_bs_hdr_parse(c, n, 0, NULL, err, sizeof(err)),
				 HOP_ERR_PROTOCOL);
		assert_non_null(strstr(err, "truncated"));
		free(c);
	}
	assert_int_equal(hop_bs_hdr_parse(NULL, 16, 0, NULL, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	/* a tiny error buffer is fine */
	assert_int_equal(hop_bs_hdr_parse(b, 3, 0, NULL, err, 4), HOP_ERR_PROTOCOL);
	assert_int_equal(strlen(err), 3);
}

/* Random headers: either rejected, or a known type with len <= max. */
static void test_random(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		uint8_t b[HOP_BS_HDR_LEN];
		struct hop_bs_hdr h;
		uint32_t max = (uint32_t)(x >> 40);

		for (int k = 0; k < HOP_BS_HDR_LEN; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			b[k] = (uint8_t)x;
		}
		if (i & 1) /* half with a good magic to reach the later checks */
			memcpy(b, "HOPB", 4);
		if (hop_bs_hdr_parse(b, sizeof(b), max, &h, NULL, 0) == 0) {
			assert_true(h.type >= 1 && h.type <= HOP_BS_TYPE_MAX);
			assert_true(h.len <= max && h.len <= HOP_BS_MAX_MSG);
		}
	}
}

static void test_reason(void **state)
{
	uint8_t b[4 + HOP_BS_REASON_MAX + 8];
	char r[64], big[HOP_BS_REASON_MAX + 50];
	size_t n;

	(void)state;
	n = hop_bs_reason_pack(b, HOP_ERR_AUTH, "wrong secret");
	assert_int_equal(n, 4 + 12);
	assert_int_equal(hop_bs_reason_unpack(b, n, r, sizeof(r)), HOP_ERR_AUTH);
	assert_string_equal(r, "wrong secret");

	/* codes hop does not know become BOOTSTRAP; control bytes are masked */
	memcpy(b, "\x00\x00\x03\xe8" "a\nb\x1b", 8);
	assert_int_equal(hop_bs_reason_unpack(b, 8, r, sizeof(r)), HOP_ERR_BOOTSTRAP);
	assert_string_equal(r, "a?b?");
	memset(b, 0, 4);
	assert_int_equal(hop_bs_reason_unpack(b, 4, r, sizeof(r)), HOP_ERR_BOOTSTRAP);
	assert_int_equal(hop_bs_reason_unpack(b, 3, r, sizeof(r)), HOP_ERR_BOOTSTRAP);

	/* long reasons are capped on the way out and on the way in */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	n = hop_bs_reason_pack(b, HOP_ERR_TIMEOUT, big);
	assert_int_equal(n, 4 + HOP_BS_REASON_MAX);
	assert_int_equal(hop_bs_reason_unpack(b, n, r, sizeof(r)), HOP_ERR_TIMEOUT);
	assert_int_equal(strlen(r), sizeof(r) - 1);
}

static void test_rank_list(void **state)
{
	uint8_t m[100] = { 0 };
	char buf[64];
	int n;

	(void)state;
	m[2] = m[5] = 1;
	hop_bs_rank_list(m, 8, buf, sizeof(buf), &n);
	assert_string_equal(buf, "2,5");
	assert_int_equal(n, 2);
	m[6] = m[7] = 1;
	hop_bs_rank_list(m, 8, buf, sizeof(buf), &n);
	assert_string_equal(buf, "2,5-7");
	assert_int_equal(n, 4);
	memset(m, 0, sizeof(m));
	hop_bs_rank_list(m, 8, buf, sizeof(buf), &n);
	assert_string_equal(buf, "");
	assert_int_equal(n, 0);
	for (int r = 1; r < 100; r += 2) /* 50 isolated ranks: shortened */
		m[r] = 1;
	hop_bs_rank_list(m, 100, buf, sizeof(buf), &n);
	assert_int_equal(n, 50);
	assert_true(strlen(buf) < sizeof(buf));
	assert_non_null(strstr(buf, "more)"));
	assert_memory_equal(buf, "1,3,5,", 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_type),
		cmocka_unit_test(test_oversize),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_rank_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
