/*
 * test_prov_tcp_hdr.c - the tcp provider's wire header and hello parsers:
 * round trips, and every invalid field rejected with a reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "transport/tcp/tcp.h"

static char why[256];

static void pack_write(uint8_t *buf, uint64_t len, uint64_t raddr,
		       uint64_t rkey, int imm)
{
	struct tcp_hdr h = { .op = TCP_OP_WRITE, .len = len, .raddr = raddr,
			     .rkey = rkey };

	if (imm) {
		h.flags = TCP_F_IMM;
		h.imm = 0xdeadbeefu;
	}
	tcp_hdr_pack(&h, buf);
}

static int parse(const uint8_t *buf, size_t len, struct tcp_hdr *h)
{
	why[0] = '\0';
	return tcp_hdr_parse(buf, len, h, why, sizeof(why));
}

static void test_roundtrip_write(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h;

	(void)state;
	pack_write(buf, 12345, 0x7f0012345678ull, 0x500000003ull, 1);
	assert_int_equal(parse(buf, sizeof(buf), &h), 0);
	assert_int_equal(h.op, TCP_OP_WRITE);
	assert_int_equal(h.flags, TCP_F_IMM);
	assert_int_equal(h.imm, 0xdeadbeefu);
	assert_int_equal(h.len, 12345);
	assert_int_equal(h.raddr, 0x7f0012345678ull);
	assert_int_equal(h.rkey, 0x500000003ull);
	/* little-endian on the wire whatever the host */
	assert_int_equal(buf[0], 0x48); /* 'H' */
	assert_int_equal(buf[16], 12345 & 0xff);
	assert_int_equal(buf[17], 12345 >> 8);
}

static void test_roundtrip_send_bye(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h = { .op = TCP_OP_SEND, .len = HOP_PROV_SEND_MAX }, o;

	(void)state;
	tcp_hdr_pack(&h, buf);
	assert_int_equal(parse(buf, sizeof(buf), &o), 0);
	assert_int_equal(o.op, TCP_OP_SEND);
	assert_int_equal(o.len, HOP_PROV_SEND_MAX);
	h = (struct tcp_hdr){ .op = TCP_OP_BYE };
	tcp_hdr_pack(&h, buf);
	assert_int_equal(parse(buf, sizeof(buf), &o), 0);
	assert_int_equal(o.op, TCP_OP_BYE);
	/* zero-length write with immediate only */
	pack_write(buf, 0, 0, 0, 1);
	assert_int_equal(parse(buf, sizeof(buf), &o), 0);
	assert_int_equal(o.len, 0);
}

static void test_truncated(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h;

	(void)state;
	pack_write(buf, 1, 0x1000, 1ull << 32, 0);
	for (size_t n = 0; n < TCP_HDR_LEN; n++) {
		assert_int_equal(parse(buf, n, &h), HOP_ERR_PROTOCOL);
		assert_non_null(strstr(why, "truncated"));
	}
	assert_int_equal(parse(NULL, 100, &h), HOP_ERR_PROTOCOL);
}

static void test_bad_magic(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h;

	(void)state;
	for (int i = 0; i < 4; i++) {
		pack_write(buf, 1, 0x1000, 1ull << 32, 0);
		buf[i] ^= 0x20;
		assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
		assert_non_null(strstr(why, "magic"));
	}
}

static void test_bad_op(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h;
	const uint8_t bad[] = { 0, 5, 6, 0x7f, 0x80, 0xff };

	(void)state;
	for (size_t i = 0; i < sizeof(bad); i++) {
		pack_write(buf, 1, 0x1000, 1ull << 32, 0);
		buf[4] = bad[i];
		assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
		assert_non_null(strstr(why, "unknown op"));
	}
}

static void test_bad_flags(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h;

	(void)state;
	for (int bit = 1; bit < 8; bit++) {
		pack_write(buf, 1, 0x1000, 1ull << 32, 1);
		buf[5] |= (uint8_t)(1u << bit);
		assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
		assert_non_null(strstr(why, "flags"));
	}
	/* IMM on a send */
	{
		struct tcp_hdr s = { .op = TCP_OP_SEND, .flags = TCP_F_IMM };

		tcp_hdr_pack(&s, buf);
		assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	}
	/* immediate value without the flag */
	pack_write(buf, 1, 0x1000, 1ull << 32, 0);
	buf[8] = 1;
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "IMM"));
}

static void test_reserved(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h;
	const int off[] = { 6, 7, 12, 13, 14, 15 };

	(void)state;
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		pack_write(buf, 1, 0x1000, 1ull << 32, 0);
		buf[off[i]] = 1;
		assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
		assert_non_null(strstr(why, "reserved"));
	}
}

static void test_lengths(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h, s = { .op = TCP_OP_SEND };

	(void)state;
	pack_write(buf, TCP_MAX_WRITE, 0x1000, 1ull << 32, 0);
	assert_int_equal(parse(buf, sizeof(buf), &h), 0);
	pack_write(buf, TCP_MAX_WRITE + 1, 0x1000, 1ull << 32, 0);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "exceeds"));
	pack_write(buf, UINT64_MAX, 0x1000, 1ull << 32, 0);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	/* address range wrapping around */
	pack_write(buf, 0x100, UINT64_MAX - 0x10, 1ull << 32, 0);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "wraps"));
	/* sends: at most HOP_PROV_SEND_MAX, no address/key/imm */
	s.len = HOP_PROV_SEND_MAX + 1;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	s.len = 8;
	s.raddr = 0x1000;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	s.raddr = 0;
	s.rkey = 1;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	/* a close notice carries nothing */
	s = (struct tcp_hdr){ .op = TCP_OP_BYE, .len = 1 };
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
}

static void test_reject(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h, s = { .op = TCP_OP_REJECT, .imm = 14 };

	(void)state;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), 0);
	assert_int_equal(h.op, TCP_OP_REJECT);
	assert_int_equal(h.imm, 14);
	s.imm = 0; /* must carry an error */
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	s.imm = 1001;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	s.imm = 14;
	s.len = 1;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	s.len = 0;
	s.flags = TCP_F_IMM;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
	s.flags = 0;
	s.rkey = 5;
	tcp_hdr_pack(&s, buf);
	assert_int_equal(parse(buf, sizeof(buf), &h), HOP_ERR_PROTOCOL);
}

/* Every single-byte corruption either parses to the same fields it names
 * or is rejected: the parser never reads past TCP_HDR_LEN or crashes. */
static void test_fuzz_bytes(void **state)
{
	uint8_t buf[TCP_HDR_LEN];
	struct tcp_hdr h;

	(void)state;
	for (int i = 0; i < TCP_HDR_LEN; i++)
		for (int v = 0; v < 256; v++) {
			int ret;

			pack_write(buf, 64, 0x1000, 1ull << 32, 1);
			buf[i] = (uint8_t)v;
			ret = parse(buf, sizeof(buf), &h);
			assert_true(ret == 0 || ret == HOP_ERR_PROTOCOL);
			if (ret == 0)
				assert_true(h.op >= TCP_OP_WRITE &&
					    h.op <= TCP_OP_REJECT);
			else
				assert_true(why[0] != '\0');
		}
}

static void test_hello(void **state)
{
	uint8_t buf[TCP_HELLO_LEN];
	struct tcp_hello h = { .version = TCP_HELLO_VERSION, .rank = 7,
			       .nranks = 9 }, o;

	(void)state;
	memset(h.secret, 0xa5, sizeof(h.secret));
	tcp_hello_pack(&h, buf);
	assert_int_equal(tcp_hello_parse(buf, sizeof(buf), &o, why,
					 sizeof(why)), 0);
	assert_int_equal(o.rank, 7);
	assert_int_equal(o.nranks, 9);
	assert_memory_equal(o.secret, h.secret, sizeof(h.secret));
	assert_int_equal(tcp_hello_parse(buf, sizeof(buf) - 1, &o, why,
					 sizeof(why)), HOP_ERR_PROTOCOL);
	buf[0] ^= 1;
	assert_int_equal(tcp_hello_parse(buf, sizeof(buf), &o, why,
					 sizeof(why)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "magic"));
	h.version = 2;
	tcp_hello_pack(&h, buf);
	assert_int_equal(tcp_hello_parse(buf, sizeof(buf), &o, why,
					 sizeof(why)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "version"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_write),
		cmocka_unit_test(test_roundtrip_send_bye),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_magic),
		cmocka_unit_test(test_bad_op),
		cmocka_unit_test(test_bad_flags),
		cmocka_unit_test(test_reserved),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_reject),
		cmocka_unit_test(test_fuzz_bytes),
		cmocka_unit_test(test_hello),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
