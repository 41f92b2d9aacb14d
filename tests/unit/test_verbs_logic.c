/*
 * test_verbs_logic.c - the verbs provider's logic that needs no device:
 * GID choice, send-queue accounting behind selective signalling, work
 * completion status -> hop code, the CM hello, access flags; and usable()
 * on a machine without RDMA devices.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "transport/provider.h"
#include "transport/verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* GID choice                                                         */

static struct vrb_gid gid(int index, int type, const char *kind, uint8_t last)
{
	struct vrb_gid g;

	memset(&g, 0, sizeof(g));
	g.index = index;
	g.type = type;
	if (!strcmp(kind, "v4")) {      /* ::ffff:10.0.0.last */
		g.raw[10] = g.raw[11] = 0xff;
		g.raw[12] = 10;
		g.raw[15] = last;
	} else if (!strcmp(kind, "ll")) { /* fe80::...:last */
		g.raw[0] = 0xfe;
		g.raw[1] = 0x80;
		g.raw[15] = last;
	} else if (!strcmp(kind, "v6")) { /* 2001:db8::last */
		g.raw[0] = 0x20;
		g.raw[1] = 0x01;
		g.raw[2] = 0x0d;
		g.raw[3] = 0xb8;
		g.raw[15] = last;
	}                                /* "zero": all zero */
	return g;
}

static uint32_t ip(uint8_t last)
{
	uint8_t b[4] = { 10, 0, 0, last };
	uint32_t v;

	memcpy(&v, b, 4);
	return v;
}

static void gid_rxe_table(void **state)
{
	/* what rxe shows: [0] fe80:: v1+v2, [1] ::ffff:10.0.0.1 v1+v2 */
	struct vrb_gid t[] = {
		gid(0, VRB_GID_ROCE_V1, "ll", 1), gid(0, VRB_GID_ROCE_V2, "ll", 1),
		gid(1, VRB_GID_ROCE_V1, "v4", 1), gid(1, VRB_GID_ROCE_V2, "v4", 1),
	};
	char why[128];

	(void)state;
	assert_int_equal(vrb_gid_choose(t, 4, -1, 0, why, sizeof(why)), 1);
	assert_string_equal(why, "");
	/* the rxe table of this kernel lists one type per index */
	struct vrb_gid u[] = { gid(0, VRB_GID_ROCE_V2, "ll", 1),
			       gid(1, VRB_GID_ROCE_V2, "v4", 1) };
	assert_int_equal(vrb_gid_choose(u, 2, -1, 0, why, sizeof(why)), 1);
}

static void gid_preferences(void **state)
{
	char why[128];

	(void)state;
	/* v2 IPv4-mapped beats v2 global IPv6 beats v2 link-local */
	struct vrb_gid a[] = { gid(0, VRB_GID_ROCE_V2, "ll", 1),
			       gid(3, VRB_GID_ROCE_V2, "v6", 1),
			       gid(5, VRB_GID_ROCE_V2, "v4", 9) };
	assert_int_equal(vrb_gid_choose(a, 3, -1, 0, why, sizeof(why)), 5);
	assert_int_equal(vrb_gid_choose(a, 2, -1, 0, why, sizeof(why)), 3);
	assert_int_equal(vrb_gid_choose(a, 1, -1, 0, why, sizeof(why)), 0);
	/* v2 of any kind beats v1 IPv4-mapped */
	struct vrb_gid b[] = { gid(2, VRB_GID_ROCE_V1, "v4", 1),
			       gid(4, VRB_GID_ROCE_V2, "ll", 1) };
	assert_int_equal(vrb_gid_choose(b, 2, -1, 0, why, sizeof(why)), 4);
	/* v1 IPv4-mapped beats v1 link-local; IB last */
	struct vrb_gid c[] = { gid(0, VRB_GID_IB, "v6", 1),
			       gid(1, VRB_GID_ROCE_V1, "ll", 1),
			       gid(2, VRB_GID_ROCE_V1, "v4", 1) };
	assert_int_equal(vrb_gid_choose(c, 3, -1, 0, why, sizeof(why)), 2);
	assert_int_equal(vrb_gid_choose(c, 2, -1, 0, why, sizeof(why)), 1);
	assert_int_equal(vrb_gid_choose(c, 1, -1, 0, why, sizeof(why)), 0);
}

static void gid_bootstrap_address_wins(void **state)
{
	/* two IPv4-mapped v2 GIDs (two netdevs): the bootstrap's address wins,
	 * else the lowest index */
	struct vrb_gid t[] = { gid(1, VRB_GID_ROCE_V2, "v4", 1),
			       gid(3, VRB_GID_ROCE_V2, "v4", 7) };
	char why[128];

	(void)state;
	assert_int_equal(vrb_gid_choose(t, 2, -1, ip(7), why, sizeof(why)), 3);
	assert_int_equal(vrb_gid_choose(t, 2, -1, ip(1), why, sizeof(why)), 1);
	assert_int_equal(vrb_gid_choose(t, 2, -1, ip(99), why, sizeof(why)), 1);
	assert_int_equal(vrb_gid_choose(t, 2, -1, 0, why, sizeof(why)), 1);
	/* order of the list does not matter */
	struct vrb_gid r[] = { t[1], t[0] };
	assert_int_equal(vrb_gid_choose(r, 2, -1, 0, why, sizeof(why)), 1);
}

static void gid_override_and_failures(void **state)
{
	struct vrb_gid t[] = { gid(0, VRB_GID_ROCE_V2, "ll", 1),
			       gid(1, VRB_GID_ROCE_V2, "v4", 1),
			       gid(2, VRB_GID_ROCE_V2, "zero", 0) };
	char why[128];

	(void)state;
	assert_int_equal(vrb_gid_choose(t, 3, 0, 0, why, sizeof(why)), 0);
	assert_int_equal(vrb_gid_choose(t, 3, 1, 0, why, sizeof(why)), 1);
	assert_int_equal(vrb_gid_choose(t, 3, 2, 0, why, sizeof(why)), -1);
	assert_string_equal(why, "HOP_IB_GID_INDEX=2 is not a valid GID of this port");
	assert_int_equal(vrb_gid_choose(t, 3, 7, 0, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "HOP_IB_GID_INDEX=7"));
	/* nothing usable */
	assert_int_equal(vrb_gid_choose(t + 2, 1, -1, 0, why, sizeof(why)), -1);
	assert_string_equal(why, "no usable GID (table empty or all zero)");
	assert_int_equal(vrb_gid_choose(NULL, 0, -1, 0, why, sizeof(why)), -1);
}

static void gid_text(void **state)
{
	struct vrb_gid a = gid(1, VRB_GID_ROCE_V2, "v4", 1);
	struct vrb_gid b = gid(0, VRB_GID_ROCE_V2, "ll", 1);
	char s[64];

	(void)state;
	vrb_gid_str(a.raw, s, sizeof(s));
	assert_string_equal(s, "::ffff:10.0.0.1");
	vrb_gid_str(b.raw, s, sizeof(s));
	assert_string_equal(s, "fe80::1");
	assert_string_equal(vrb_gid_type_str(VRB_GID_ROCE_V2), "RoCE v2");
	assert_string_equal(vrb_gid_type_str(VRB_GID_ROCE_V1), "RoCE v1");
	assert_string_equal(vrb_gid_type_str(VRB_GID_IB), "IB");
}

static void mtu_bytes(void **state)
{
	(void)state;
	assert_int_equal(vrb_mtu_from_bytes(256), IBV_MTU_256);
	assert_int_equal(vrb_mtu_from_bytes(1024), IBV_MTU_1024);
	assert_int_equal(vrb_mtu_from_bytes(4096), IBV_MTU_4096);
	assert_int_equal(vrb_mtu_from_bytes(1500), 0);
	assert_int_equal(vrb_mtu_from_bytes(0), 0);
	assert_int_equal(vrb_mtu_from_bytes(8192), 0);
}

/* ------------------------------------------------------------------ */
/* send-queue accounting                                              */

/* Post one WR the way post.c does; returns whether it was signalled. */
static int sq_post(struct vrb_sq *sq, int want, uint64_t wr_id, uint64_t now)
{
	int sig = vrb_sq_signal(sq, want, 0);

	vrb_sq_commit(sq, want, sig, wr_id, HOP_CQE_WRITE, now);
	return sig;
}

static void sq_every_kth(void **state)
{
	struct vrb_sq sq;
	int nsig = 0;

	(void)state;
	assert_int_equal(vrb_sq_init(&sq, 64, 8), 0);
	assert_int_equal(sq.every, 8);
	/* unwanted WRs: every 8th is signalled so the queue drains */
	for (int i = 0; i < 32; i++) {
		int sig = sq_post(&sq, 0, 0, 0);

		assert_int_equal(sig, (i % 8) == 7);
		nsig += sig;
	}
	assert_int_equal(nsig, 4);
	assert_int_equal(sq.pend_count, 0);
	assert_int_equal(sq.posted, 32);
	assert_int_equal(sq.sig_end, 32);
	vrb_sq_fini(&sq);
}

static void sq_every_clamped(void **state)
{
	struct vrb_sq sq;

	(void)state;
	assert_int_equal(vrb_sq_init(&sq, 16, 100), 0);
	assert_int_equal(sq.every, 8);  /* half the depth at most */
	vrb_sq_fini(&sq);
	assert_int_equal(vrb_sq_init(&sq, 16, 0), 0);
	assert_int_equal(sq.every, 1);
	assert_int_equal(vrb_sq_signal(&sq, 0, 0), 1);
	vrb_sq_fini(&sq);
	assert_int_equal(vrb_sq_init(&sq, 1, 1), HOP_ERR_INVALID_ARG);
}

static void sq_idle_wanted_is_signalled(void **state)
{
	struct vrb_sq sq;
	uint64_t id;
	int op;

	(void)state;
	assert_int_equal(vrb_sq_init(&sq, 64, 16), 0);
	/* latency path: a wanted WR on an idle QP is signalled at once */
	assert_int_equal(sq_post(&sq, 1, 100, 0), 1);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 0);      /* not done yet */
	vrb_sq_complete(&sq, 0);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 1);
	assert_int_equal(id, 100);
	assert_int_equal(op, HOP_CQE_WRITE);
	assert_int_equal(sq_post(&sq, 1, 101, 0), 1);        /* idle again */
	vrb_sq_fini(&sq);
}

static void sq_deferred_synthesised_in_order(void **state)
{
	struct vrb_sq sq;
	uint64_t id;
	int op;

	(void)state;
	assert_int_equal(vrb_sq_init(&sq, 64, 4), 0);
	assert_int_equal(sq_post(&sq, 1, 10, 0), 1);   /* idle: signalled, seq 0 */
	assert_int_equal(sq_post(&sq, 1, 11, 5), 0);   /* busy: deferred, seq 1 */
	assert_int_equal(sq_post(&sq, 0, 0, 0), 0);    /* seq 2 */
	assert_int_equal(sq_post(&sq, 1, 12, 9), 0);   /* deferred, seq 3 */
	assert_int_equal(sq.tail_ns, 9);
	assert_int_equal(sq_post(&sq, 0, 0, 0), 1);    /* 4th since: signalled, seq 4 */
	assert_int_equal(sq.pend_count, 3);
	/* seq 0 completes: only wr 10 is due */
	vrb_sq_complete(&sq, 0);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 1);
	assert_int_equal(id, 10);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 0);
	/* seq 4 completes: 11 and 12 (synthesised), in post order */
	vrb_sq_complete(&sq, 4);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 1);
	assert_int_equal(id, 11);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 1);
	assert_int_equal(id, 12);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 0);
	assert_int_equal(sq.done, 5);
	/* a stale (older) completion never moves done backwards */
	vrb_sq_complete(&sq, 1);
	assert_int_equal(sq.done, 5);
	/* nor does one beyond what was posted */
	vrb_sq_complete(&sq, 99);
	assert_int_equal(sq.done, 5);
	vrb_sq_fini(&sq);
}

static void sq_flush_needed(void **state)
{
	struct vrb_sq sq;

	(void)state;
	assert_int_equal(vrb_sq_init(&sq, 64, 16), 0);
	assert_int_equal(sq_post(&sq, 1, 1, 1000), 1);         /* seq 0 signalled */
	assert_int_equal(vrb_sq_need_flush(&sq, 1000000, 0), 0); /* covered */
	assert_int_equal(sq_post(&sq, 1, 2, 1000), 0);         /* seq 1 deferred */
	/* uncovered: a flush is due once it is old enough */
	assert_int_equal(vrb_sq_need_flush(&sq, 1000 + 19999, 20000), 0);
	assert_int_equal(vrb_sq_need_flush(&sq, 1000 + 20000, 20000), 1);
	/* an internal forced WR (the flush) covers it */
	assert_int_equal(vrb_sq_signal(&sq, 0, 1), 1);
	vrb_sq_commit(&sq, 0, 1, 0, 0, 0);
	assert_int_equal(vrb_sq_need_flush(&sq, 1000000, 0), 0);
	assert_int_equal(sq.pend_count, 2);
	vrb_sq_complete(&sq, 2);
	assert_int_equal(sq.done, 3);
	vrb_sq_fini(&sq);
}

static void sq_full_and_room(void **state)
{
	struct vrb_sq sq;
	uint64_t id;
	int op, nsig = 0;

	(void)state;
	assert_int_equal(vrb_sq_init(&sq, 8, 4), 0);
	for (int i = 0; i < 8; i++) {
		assert_false(vrb_sq_full(&sq));
		nsig += sq_post(&sq, 0, 0, 0);
	}
	assert_true(vrb_sq_full(&sq));
	assert_int_equal(nsig, 2);      /* seq 3 and 7: a completion will come */
	vrb_sq_complete(&sq, 3);
	assert_false(vrb_sq_full(&sq));
	assert_int_equal(sq.posted - sq.done, 4);
	vrb_sq_complete(&sq, 7);
	/* wanted completions not yet handed out also hold room */
	for (int i = 0; i < 8; i++) {
		int sig = vrb_sq_signal(&sq, 1, 0);

		vrb_sq_commit(&sq, 1, sig, (uint64_t)i, HOP_CQE_SEND, 0);
		vrb_sq_complete(&sq, sq.posted - 1);
	}
	assert_int_equal(sq.pend_count, 8);
	assert_true(vrb_sq_full(&sq));
	for (int i = 0; i < 8; i++) {
		assert_int_equal(vrb_sq_pop(&sq, &id, &op), 1);
		assert_int_equal(id, (uint64_t)i);
		assert_int_equal(op, HOP_CQE_SEND);
	}
	assert_false(vrb_sq_full(&sq));
	vrb_sq_fini(&sq);
}

static void sq_pop_any_on_error(void **state)
{
	struct vrb_sq sq;
	uint64_t id;
	int op;

	(void)state;
	assert_int_equal(vrb_sq_init(&sq, 16, 8), 0);
	sq_post(&sq, 1, 5, 0);
	sq_post(&sq, 1, 6, 0);
	assert_int_equal(vrb_sq_pop(&sq, &id, &op), 0);
	assert_int_equal(vrb_sq_pop_any(&sq, &id, &op), 1);
	assert_int_equal(id, 5);
	assert_int_equal(vrb_sq_pop_any(&sq, &id, &op), 1);
	assert_int_equal(id, 6);
	assert_int_equal(vrb_sq_pop_any(&sq, &id, &op), 0);
	vrb_sq_fini(&sq);
}

static void sq_seq_from_wr_id_wraps(void **state)
{
	struct vrb_sq sq;

	(void)state;
	memset(&sq, 0, sizeof(sq));
	sq.done = 0xfffffff0ull;
	assert_int_equal(vrb_sq_seq(&sq, 0xfffffff5u), 0xfffffff5ull);
	assert_int_equal(vrb_sq_seq(&sq, 0x00000003u), 0x100000003ull);
	sq.done = 0x500000000ull + 7;
	assert_int_equal(vrb_sq_seq(&sq, 9), 0x500000009ull);
	/* wr_id layout */
	assert_int_equal(VRB_WRID_PEER(VRB_WRID(12345, 0xdeadbeef)), 12345);
	assert_int_equal((uint32_t)VRB_WRID(7, 0xdeadbeef), 0xdeadbeefu);
	assert_int_equal(VRB_WRID_PEER(VRB_WRID_RECV | VRB_WRID(3, 1)), 3);
}

/* ------------------------------------------------------------------ */
/* status mapping, hello, access flags                                */

static void wc_status_mapping(void **state)
{
	(void)state;
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_SUCCESS), 0);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_REM_ACCESS_ERR), HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_LOC_PROT_ERR), HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_RETRY_EXC_ERR), HOP_ERR_PEER_FAILED);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_RNR_RETRY_EXC_ERR), HOP_ERR_PEER_FAILED);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_WR_FLUSH_ERR), HOP_ERR_PEER_FAILED);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_REM_ABORT_ERR), HOP_ERR_PEER_FAILED);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_LOC_LEN_ERR), HOP_ERR_TRANSPORT);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_REM_INV_REQ_ERR), HOP_ERR_TRANSPORT);
	assert_int_equal(vrb_wc_status_to_hop(IBV_WC_FATAL_ERR), HOP_ERR_TRANSPORT);
	assert_int_equal(vrb_wc_status_to_hop(9999), HOP_ERR_TRANSPORT);
}

static void hello_round_trip(void **state)
{
	struct vrb_hello h = { .rank = 70000, .nranks = 70001 }, out;
	uint8_t buf[56];
	char why[128];

	(void)state;
	for (int i = 0; i < 16; i++)
		h.secret[i] = (uint8_t)(0xa0 + i);
	memset(buf, 0, sizeof(buf));
	vrb_hello_pack(&h, buf);
	/* little-endian on the wire: "HOPV" then version 1 */
	assert_memory_equal(buf, "HOPV\1\0\0\0", 8);
	/* rdma_cm pads private data: longer is fine */
	assert_int_equal(vrb_hello_parse(buf, sizeof(buf), &out, why, sizeof(why)), 0);
	assert_int_equal(out.rank, 70000);
	assert_int_equal(out.nranks, 70001);
	assert_memory_equal(out.secret, h.secret, 16);
	assert_int_equal(vrb_hello_parse(buf, VRB_HELLO_LEN - 1, &out, why, sizeof(why)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "31 bytes"));
	assert_int_equal(vrb_hello_parse(NULL, 0, &out, why, sizeof(why)), HOP_ERR_PROTOCOL);
	buf[0] ^= 1;
	assert_int_equal(vrb_hello_parse(buf, sizeof(buf), &out, why, sizeof(why)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "magic"));
	buf[0] ^= 1;
	buf[4] = 2;
	assert_int_equal(vrb_hello_parse(buf, sizeof(buf), &out, why, sizeof(why)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(why, "version 2"));
}

static void access_least(void **state)
{
	(void)state;
	assert_int_equal(vrb_access_flags(0), 0);
	assert_int_equal(vrb_access_flags(HOP_PROV_REMOTE_WRITE),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	assert_int_equal(vrb_access_flags(HOP_PROV_REMOTE_READ), IBV_ACCESS_REMOTE_READ);
	assert_int_equal(vrb_access_flags(HOP_PROV_REMOTE_WRITE | HOP_PROV_REMOTE_READ),
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ);
}

/* ------------------------------------------------------------------ */
/* usable() here                                                      */

/* rxe retries forever with retry_cnt 7: a cut link would never fail */
static void retry_cnt_rxe(void **state)
{
	(void)state;
	assert_int_equal(vrb_retry_cnt(7, VRB_RXE_VENDOR_ID), 6);
	assert_int_equal(vrb_retry_cnt(6, VRB_RXE_VENDOR_ID), 6);
	assert_int_equal(vrb_retry_cnt(0, VRB_RXE_VENDOR_ID), 0);
	assert_int_equal(vrb_retry_cnt(7, 0x02c9), 7);     /* Mellanox: 7 retries */
}

/* of two ranks dialling each other exactly one dial wins */
static void lazy_one_dial_wins(void **state)
{
	(void)state;
	for (int a = 0; a < 5; a++)
		for (int b = 0; b < 5; b++)
			if (a != b)
				assert_int_equal(vrb_lazy_dial_wins(a, b) +
						 vrb_lazy_dial_wins(b, a), 1);
	assert_true(vrb_lazy_dial_wins(0, 3));
}

/* no listener: half of HOP_TIMEOUT, at most 2 s; else HOP_TIMEOUT */
static void lazy_limits(void **state)
{
	(void)state;
	assert_true(vrb_lazy_limit_ns(60000, 0) == 60000000000ull);
	assert_true(vrb_lazy_limit_ns(60000, 1) == 2000000000ull);
	assert_true(vrb_lazy_limit_ns(2000, 1) == 1000000000ull);
	assert_true(vrb_lazy_limit_ns(0, 1) == 0);
}

static void lazy_yield_round_trip(void **state)
{
	uint8_t b[VRB_YIELD_LEN + 4] = { 0 };

	(void)state;
	vrb_lazy_yield_pack(7, b);
	assert_int_equal(vrb_lazy_yield_from(b, VRB_YIELD_LEN), 7);
	assert_int_equal(vrb_lazy_yield_from(b, VRB_YIELD_LEN - 1), -1);
	assert_int_equal(vrb_lazy_yield_from(NULL, 8), -1);
	b[0] ^= 1;      /* another magic: a plain reject */
	assert_int_equal(vrb_lazy_yield_from(b, VRB_YIELD_LEN), -1);
	memset(b, 0, sizeof(b));        /* a REJ without private data */
	assert_int_equal(vrb_lazy_yield_from(b, sizeof(b)), -1);
}

static void usable_without_devices(void **state)
{
	struct hop_prov_ctx ctx;
	struct ibv_device **l;
	char why[512] = "";
	int num = 0;

	(void)state;
	l = ibv_get_device_list(&num);
	if (l)
		ibv_free_device_list(l);
	if (num > 0) {
		skip();         /* this machine has RDMA devices: nothing to show */
		return;
	}
	/* a context without setting(): every setting at its default */
	memset(&ctx, 0, sizeof(ctx));
	assert_int_equal(hop_prov_verbs.usable(&ctx, why, sizeof(why)), 0);
	assert_string_equal(why, "no RDMA devices found (ibv_get_device_list returned 0)");
	assert_string_equal(hop_prov_verbs.name, "verbs");
	assert_int_equal(hop_prov_verbs.size, sizeof(struct hop_prov_ops));
	assert_ptr_equal(hop_prov_find("verbs"), &hop_prov_verbs);
	/* RDMA hardware, whole 8-byte words (LL), 64 KiB eager, a link */
	assert_true(hop_prov_has(&hop_prov_verbs,
				 HOP_PROV_CAP_RDMA | HOP_PROV_CAP_ATOMIC8));
	assert_int_equal(hop_prov_caps_of(&hop_prov_verbs)->eager_size, 65536);
	assert_true(hop_prov_caps_of(&hop_prov_verbs)->alpha > 0);
}

/* open() checks its arguments before reading through them. */
static void open_bad_args(void **state)
{
	struct hop_prov_ctx ctx;
	struct hop_prov *prov = NULL;

	(void)state;
	assert_int_equal(vrb_open(NULL, &prov), HOP_ERR_INVALID_ARG);
	assert_null(prov);
	memset(&ctx, 0, sizeof(ctx));
	ctx.size = sizeof(ctx);
	assert_int_equal(vrb_open(&ctx, NULL), HOP_ERR_INVALID_ARG);
	/* a context hop did not fill (older, without the bootstrap
	 * callbacks and the secret open() needs) */
	ctx.size = offsetof(struct hop_prov_ctx, setting);
	assert_int_equal(vrb_open(&ctx, &prov), HOP_ERR_INVALID_ARG);
	assert_null(prov);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gid_rxe_table),
		cmocka_unit_test(gid_preferences),
		cmocka_unit_test(gid_bootstrap_address_wins),
		cmocka_unit_test(gid_override_and_failures),
		cmocka_unit_test(gid_text),
		cmocka_unit_test(mtu_bytes),
		cmocka_unit_test(sq_every_kth),
		cmocka_unit_test(sq_every_clamped),
		cmocka_unit_test(sq_idle_wanted_is_signalled),
		cmocka_unit_test(sq_deferred_synthesised_in_order),
		cmocka_unit_test(sq_flush_needed),
		cmocka_unit_test(sq_full_and_room),
		cmocka_unit_test(sq_pop_any_on_error),
		cmocka_unit_test(sq_seq_from_wr_id_wraps),
		cmocka_unit_test(wc_status_mapping),
		cmocka_unit_test(hello_round_trip),
		cmocka_unit_test(access_least),
		cmocka_unit_test(usable_without_devices),
		cmocka_unit_test(open_bad_args),
		cmocka_unit_test(retry_cnt_rxe),
		cmocka_unit_test(lazy_one_dial_wins),
		cmocka_unit_test(lazy_limits),
		cmocka_unit_test(lazy_yield_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
