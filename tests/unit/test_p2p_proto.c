/*
 * test_p2p_proto.c - wire formats of the channel protocol: eager headers
 * and control messages survive encode/decode field for field, every
 * malformed input is rejected with a reason, control messages fit a
 * provider send, immediates pack kind and value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "p2p/p2p.h"
#include "p2p/proto.h"
#include "transport/provider.h"

static char err[256];

static void test_eager_roundtrip(void **state)
{
	unsigned char slot[HOP_EAGER_HDR + 100];
	struct hop_eager_hdr h = {
		.tag = HOP_TAG(HOP_CTX_COLL, 0xabcdef, 0xdeadbeef),
		.len = 100, .sig = 0x12345678, .seq = 0xfffffffe,
		.credits = 65535, .type = HOP_MSG_EAGER, .flags = 0, .src = 7,
	}, d;
	(void)state;

	hop_eager_hdr_encode(slot, &h);
	memset(&d, 0x5a, sizeof(d));
	assert_int_equal(hop_eager_hdr_decode(slot, sizeof(slot), 100, &d, err,
					      sizeof(err)), 0);
	assert_int_equal(d.tag, h.tag);
	assert_int_equal(d.tag >> 56, HOP_CTX_COLL);
	assert_int_equal(d.len, 100);
	assert_int_equal(d.sig, 0x12345678);
	assert_int_equal(d.seq, 0xfffffffe);
	assert_int_equal(d.credits, 65535);
	assert_int_equal(d.src, 7);
	/* zero-length message: header alone */
	h.len = 0;
	hop_eager_hdr_encode(slot, &h);
	assert_int_equal(hop_eager_hdr_decode(slot, HOP_EAGER_HDR, 64, &d, err,
					      sizeof(err)), 0);
	assert_int_equal(d.len, 0);
}

static void test_eager_rejects(void **state)
{
	unsigned char slot[HOP_EAGER_HDR + 64];
	struct hop_eager_hdr h = { .tag = 1, .len = 64, .type = HOP_MSG_EAGER },
			     d;
	(void)state;

	hop_eager_hdr_encode(slot, &h);
	/* shorter than a header */
	assert_int_equal(hop_eager_hdr_decode(slot, 31, 64, &d, err,
					      sizeof(err)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "shorter"));
	/* payload larger than the slot */
	assert_int_equal(hop_eager_hdr_decode(slot, sizeof(slot), 63, &d, err,
					      sizeof(err)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "exceeds"));
	/* written bytes disagree with the header */
	assert_int_equal(hop_eager_hdr_decode(slot, sizeof(slot) - 1, 64, &d,
					      err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "64 payload bytes"));
	/* garbage: bad magic */
	slot[4] ^= 0xff;
	assert_int_equal(hop_eager_hdr_decode(slot, sizeof(slot), 64, &d, err,
					      sizeof(err)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "magic"));
	slot[4] ^= 0xff;
	/* wrong type */
	slot[26] = HOP_MSG_RTS;
	assert_int_equal(hop_eager_hdr_decode(slot, sizeof(slot), 64, &d, err,
					      sizeof(err)), HOP_ERR_PROTOCOL);
}

static void roundtrip(const struct hop_ctl *m, struct hop_ctl *d)
{
	unsigned char buf[HOP_CTL_MAX];
	size_t len = hop_ctl_encode(m, buf);

	assert_true(len >= 8);
	assert_true(len <= HOP_CTL_MAX);
	assert_true(len <= HOP_PROV_SEND_MAX);
	memset(d, 0x77, sizeof(*d));
	assert_int_equal(hop_ctl_decode(buf, len, d, err, sizeof(err)), 0);
	assert_int_equal(d->type, m->type);
	assert_int_equal(d->credits, m->credits);
	/* one byte short is rejected */
	struct hop_ctl scratch;
	assert_int_equal(hop_ctl_decode(buf, len - 1, &scratch, err,
					sizeof(err)), HOP_ERR_PROTOCOL);
}

/* The LL form: every message length up to HOP_LL_MAX comes back byte for
 * byte, and nothing is read before its last word carries the flag. */
static void test_ll_roundtrip(void **state)
{
	uint64_t slot[HOP_LL_MAX / 4 + 8];
	unsigned char msg[HOP_LL_MAX], out[HOP_LL_MAX];
	struct hop_eager_hdr h = { .tag = 42, .type = HOP_MSG_EAGER, .src = 3 };
	uint32_t seq = 0x7ffffffe;
	size_t len;
	(void)state;

	for (size_t plen = 0; HOP_EAGER_HDR + plen <= HOP_LL_MAX; plen++) {
		size_t total = HOP_EAGER_HDR + plen;
		uint32_t flag = hop_ll_flag(seq + (uint32_t)plen);

		h.len = (uint32_t)plen;
		h.seq = seq + (uint32_t)plen;
		hop_eager_hdr_encode(msg, &h);
		for (size_t i = 0; i < plen; i++)
			msg[HOP_EAGER_HDR + i] = (unsigned char)(i * 37 + plen);
		memset(slot, 0, sizeof(slot));
		hop_ll_encode(slot, msg, total, flag);
		assert_int_equal(hop_ll_bytes(total), (total + 3) / 4 * 8);
		/* the wire form, word by word: the flag above 4 message bytes
		 * in memory order, the last word's missing bytes zero */
		for (size_t w = 0; w < (total + 3) / 4; w++) {
			unsigned char bytes[4] = { 0 };
			uint32_t piece;

			for (size_t k = 0; k < 4 && 4 * w + k < total; k++)
				bytes[k] = msg[4 * w + k];
			memcpy(&piece, bytes, 4);
			assert_true(slot[w] == ((uint64_t)flag << 32 | piece));
		}
		assert_int_equal(slot[(total + 3) / 4], 0);
		memset(out, 0xee, sizeof(out));
		assert_int_equal(hop_ll_read(slot, sizeof(slot), flag, out, &len,
					     err, sizeof(err)), 1);
		assert_int_equal(len, total);
		assert_memory_equal(out, msg, total);
		for (size_t k = total; k < sizeof(out); k++)
			assert_int_equal(out[k], 0xee);
		/* the message decodes as the eager header it carries */
		assert_int_equal(hop_eager_hdr_decode(out, len, 1024, &h, err,
						      sizeof(err)), 0);
		assert_int_equal(h.len, plen);
		/* the previous sequence number's reader sees nothing */
		assert_int_equal(hop_ll_read(slot, sizeof(slot), flag - 1, out,
					     &len, err, sizeof(err)), 0);
		/* any word still on its way: not there yet */
		for (size_t w = 0; w < hop_ll_bytes(total) / 8; w++) {
			uint64_t keep = slot[w];

			slot[w] = (uint64_t)hop_ll_flag(seq - 16) << 32 | 0xffu;
			assert_int_equal(hop_ll_read(slot, sizeof(slot), flag,
						     out, &len, err,
						     sizeof(err)), 0);
			slot[w] = keep;
		}
	}
}

/* A slot holding a message written with an immediate, or nothing, is never
 * read as an LL message; a flagged first word with an impossible length is
 * a protocol error that names it. */
static void test_ll_rejects(void **state)
{
	uint64_t slot[64];
	unsigned char out[HOP_LL_MAX];
	struct hop_eager_hdr h = { .tag = ~0ull, .len = 64,
				   .type = HOP_MSG_EAGER, .seq = 5 };
	size_t len;
	(void)state;

	memset(slot, 0, sizeof(slot));
	assert_int_equal(hop_ll_read(slot, sizeof(slot), hop_ll_flag(0), out,
				     &len, err, sizeof(err)), 0);
	/* the plain form keeps the magic, top bit clear, where a flag goes */
	assert_int_equal(HOP_EAGER_MAGIC & 0x80000000u, 0);
	for (uint32_t seq = 0; seq < 64; seq++) {
		h.seq = seq;
		hop_eager_hdr_encode(slot, &h);
		assert_int_equal(hop_ll_read(slot, sizeof(slot),
					     hop_ll_flag(seq), out, &len, err,
					     sizeof(err)), 0);
	}
	slot[0] = (uint64_t)hop_ll_flag(9) << 32 | (HOP_LL_MAX - HOP_EAGER_HDR + 1);
	assert_int_equal(hop_ll_read(slot, sizeof(slot), hop_ll_flag(9), out,
				     &len, err, sizeof(err)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "225 payload bytes"));
	/* a small slot bounds the length further */
	slot[0] = (uint64_t)hop_ll_flag(9) << 32 | 20;
	assert_int_equal(hop_ll_read(slot, 96, hop_ll_flag(9), out, &len, err,
				     sizeof(err)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "more than the 16"));
}

static void test_ctl_roundtrip(void **state)
{
	unsigned char buf[HOP_CTL_MAX];
	struct hop_ctl m, d;
	(void)state;

	memset(&m, 0, sizeof(m));
	m.type = HOP_MSG_RTS;
	m.credits = 9;
	m.u.rts.tag = ~0ull;
	m.u.rts.len = 64ull << 20;
	m.u.rts.sig = 0xcafe;
	m.u.rts.sid = 12345;
	m.u.rts.seq = 0xfffffffeu;
	assert_int_equal(hop_ctl_encode(&m, buf), 8 + 28);
	roundtrip(&m, &d);
	assert_int_equal(d.u.rts.tag, ~0ull);
	assert_int_equal(d.u.rts.len, 64ull << 20);
	assert_int_equal(d.u.rts.sig, 0xcafe);
	assert_int_equal(d.u.rts.sid, 12345);
	assert_int_equal(d.u.rts.seq, 0xfffffffeu);

	memset(&m, 0, sizeof(m));
	m.type = HOP_MSG_CTS;
	m.u.cts.addr = 0x7fff12345678ull;
	m.u.cts.key = 0x100000003ull;
	m.u.cts.sid = 1;
	m.u.cts.rid = 0x0fffffff;
	roundtrip(&m, &d);
	assert_int_equal(d.u.cts.addr, 0x7fff12345678ull);
	assert_int_equal(d.u.cts.key, 0x100000003ull);
	assert_int_equal(d.u.cts.sid, 1);
	assert_int_equal(d.u.cts.rid, 0x0fffffff);

	memset(&m, 0, sizeof(m));
	m.type = HOP_MSG_NAK;
	m.u.nak.tag = 5;
	m.u.nak.slen = 1000003;
	m.u.nak.rlen = 4097;
	m.u.nak.code = HOP_ERR_TRUNCATED;
	m.u.nak.sid = HOP_NO_ID;
	m.u.nak.ssig = 1;
	m.u.nak.rsig = 2;
	roundtrip(&m, &d);
	assert_int_equal(d.u.nak.slen, 1000003);
	assert_int_equal(d.u.nak.rlen, 4097);
	assert_int_equal(d.u.nak.code, HOP_ERR_TRUNCATED);
	assert_int_equal(d.u.nak.sid, HOP_NO_ID);
	assert_int_equal(d.u.nak.ssig, 1);
	assert_int_equal(d.u.nak.rsig, 2);

	memset(&m, 0, sizeof(m));
	m.type = HOP_MSG_PUT;
	m.credits = 65536;
	m.u.put.len = 1ull << 33;
	m.u.put.imm = 0xffffffffu;
	roundtrip(&m, &d);
	assert_int_equal(d.u.put.len, 1ull << 33);
	assert_int_equal(d.u.put.imm, 0xffffffffu);

	memset(&m, 0, sizeof(m));
	m.type = HOP_MSG_ADVERT;
	m.credits = 3;
	m.u.adv.addr = 0x7fff12345678ull;
	m.u.adv.key = 0x100000003ull;
	m.u.adv.len = (1ull << 32) - 1;
	m.u.adv.tag = ~1ull;
	m.u.adv.sig = 0xbeef;
	m.u.adv.seq = 0xfffffffdu;
	m.u.adv.ahead = HOP_ADV_SLOTS - 1;
	m.u.adv.slot = HOP_ADV_SLOTS - 1;
	assert_int_equal(hop_ctl_encode(&m, buf), HOP_CTL_MAX);
	roundtrip(&m, &d);
	assert_int_equal(d.u.adv.addr, 0x7fff12345678ull);
	assert_int_equal(d.u.adv.key, 0x100000003ull);
	assert_int_equal(d.u.adv.len, (1ull << 32) - 1);
	assert_int_equal(d.u.adv.tag, ~1ull);
	assert_int_equal(d.u.adv.sig, 0xbeef);
	assert_int_equal(d.u.adv.seq, 0xfffffffdu);
	assert_int_equal(d.u.adv.ahead, HOP_ADV_SLOTS - 1);
	assert_int_equal(d.u.adv.slot, HOP_ADV_SLOTS - 1);
	/* a slot the immediate cannot name is refused */
	m.u.adv.slot = HOP_ADV_SLOTS;
	hop_ctl_encode(&m, buf);
	assert_int_equal(hop_ctl_decode(buf, HOP_CTL_MAX, &d, err,
					sizeof(err)), HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "ADVERT names slot 64"));

	memset(&m, 0, sizeof(m));
	m.type = HOP_MSG_CREDIT;
	m.credits = 8;
	roundtrip(&m, &d);
	assert_int_equal(d.credits, 8);
}

static void test_ctl_rejects(void **state)
{
	unsigned char buf[HOP_CTL_MAX] = { 0 };
	struct hop_ctl m = { .type = HOP_MSG_NAK }, d;
	size_t len;
	(void)state;

	assert_int_equal(hop_ctl_decode(buf, 7, &d, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	memset(buf, 0, sizeof(buf));
	buf[0] = 0;
	assert_int_equal(hop_ctl_decode(buf, 8, &d, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	buf[0] = HOP_MSG_EAGER;         /* never a control message */
	assert_int_equal(hop_ctl_decode(buf, 8, &d, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	buf[0] = HOP_MSG_TYPE_MAX;
	assert_int_equal(hop_ctl_decode(buf, 8, &d, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "unknown type"));
	buf[0] = HOP_MSG_CREDIT;
	buf[2] = 1;                     /* reserved byte set */
	assert_int_equal(hop_ctl_decode(buf, 8, &d, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	/* a NAK must carry an error code */
	m.u.nak.code = 0;
	len = hop_ctl_encode(&m, buf);
	assert_int_equal(hop_ctl_decode(buf, len, &d, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "NAK"));
	/* length of another type */
	m.type = HOP_MSG_RTS;
	len = hop_ctl_encode(&m, buf);
	buf[0] = HOP_MSG_PUT;
	assert_int_equal(hop_ctl_decode(buf, len, &d, err, sizeof(err)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(err, "PUT"));
}

static void test_imm(void **state)
{
	uint32_t imm;
	(void)state;

	imm = hop_imm_make(HOP_IMM_EAGER, 15);
	assert_int_equal(hop_imm_kind(imm), HOP_IMM_EAGER);
	assert_int_equal(hop_imm_val(imm), 15);
	imm = hop_imm_make(HOP_IMM_RNDV, HOP_IMM_VAL_MASK);
	assert_int_equal(hop_imm_kind(imm), HOP_IMM_RNDV);
	assert_int_equal(hop_imm_val(imm), HOP_IMM_VAL_MASK);
	/* values wider than 28 bits do not spill into the kind */
	imm = hop_imm_make(HOP_IMM_EAGER, 0xffffffffu);
	assert_int_equal(hop_imm_kind(imm), HOP_IMM_EAGER);
	assert_string_equal(hop_msg_name(HOP_MSG_CTS), "CTS");
	assert_string_equal(hop_msg_name(200), "?");
}

static void test_tag_macro(void **state)
{
	(void)state;
	assert_int_equal(HOP_TAG(HOP_CTX_USER, 0, 7), 7);
	assert_int_equal(HOP_TAG(HOP_CTX_USER, 0, 0x7fffffff), 0x7fffffff);
	assert_int_equal(HOP_TAG(HOP_CTX_COLL, 1, 2),
			 (1ull << 56) | (1ull << 32) | 2);
	/* hi24 is masked, lo32 is not sign-extended */
	assert_int_equal(HOP_TAG(HOP_CTX_INTERNAL, 0x1ffffff, -1),
			 (2ull << 56) | (0xffffffull << 32) | 0xffffffffull);
	assert_true(HOP_TAG(HOP_CTX_USER, 0, 1) != HOP_TAG(HOP_CTX_COLL, 0, 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eager_roundtrip),
		cmocka_unit_test(test_eager_rejects),
		cmocka_unit_test(test_ll_roundtrip),
		cmocka_unit_test(test_ll_rejects),
		cmocka_unit_test(test_ctl_roundtrip),
		cmocka_unit_test(test_ctl_rejects),
		cmocka_unit_test(test_imm),
		cmocka_unit_test(test_tag_macro),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
