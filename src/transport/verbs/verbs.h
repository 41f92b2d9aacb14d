/*
 * verbs.h - private header of the verbs provider (rdma-core: libibverbs,
 * librdmacm).
 *
 * One RC QP per peer (and one connected to itself for writes to self), all
 * on one PD and one CQ. The ops map almost one to one:
 *   post_write  -> IBV_WR_RDMA_WRITE[_WITH_IMM], inline up to the QP's
 *                  max_inline_data
 *   post_send   -> IBV_WR_SEND of <= HOP_PROV_SEND_MAX bytes (inline, or
 *                  through a registered bounce slot when the device cannot
 *                  inline that much), landing in a provider-owned receive
 *                  buffer of the target
 *   poll        -> ibv_poll_cq; every receive consumed (RECV and the
 *                  RECV_RDMA_WITH_IMM of a write with immediate) is reposted
 *                  at once; internal control messages (BYE) are SENDs with
 *                  an immediate and never reach the caller.
 * Selective signalling: a WR is signalled to the hardware every
 * cfg.ib_signal_every posts, or when it asks for a completion on an idle QP
 * (the latency path); the other completions the caller asked for are
 * synthesised, in order, when a later signalled WR of the same QP completes
 * (RC completes in order), or after a zero-length signalled "flush" write
 * when the caller keeps polling with nothing else in flight.
 *
 * Liveness (liveness.c): a waiter that saw no completion for
 * HOP_IB_LIVENESS_MS sends every idle peer a zero-length write, so a peer
 * behind a cut link fails with a retry error naming it; async events
 * (port down) fail the cut rank itself.
 *
 * Connections: librdmacm (HOP_IB_CM=rdmacm, default) with the QPs kept in
 * our hands (rdma_init_qp_attr + our overrides of MTU, timeout, retry
 * count), private data carrying rank and the bootstrap secret both ways; or
 * an out-of-band exchange of QP numbers and GIDs through the bootstrap's
 * allgather (HOP_IB_CM=oob). Both connect every pair at open; with
 * HOP_CONNECT=lazy and rdmacm a pair's QPs are made by its first post
 * (lazy.c).
 *
 * The pure logic (GID choice, send-queue accounting, status mapping,
 * connection hello) needs no device and is unit tested.
 */
#ifndef HOP_TRANSPORT_VERBS_H
#define HOP_TRANSPORT_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "hop_autoconf.h"       /* HOP_HAVE_VERBS */
#include <hop/provider.h>

#include "transport/prov_common.h"

extern const struct hop_prov_ops hop_prov_verbs;

/*
 * struct vrb_cfg - hop's settings the provider reads (docs/config.md),
 * taken once through ctx->setting() (vrb_cfg_load()).
 */
struct vrb_cfg {
	char ib_device[64];     /* HOP_IB_DEVICE, "" = first ACTIVE */
	char ib_cm[16];         /* HOP_IB_CM rdmacm|oob */
	char socket_ifname[64]; /* HOP_SOCKET_IFNAME (rdma_cm's address) */
	char connect[16];       /* HOP_CONNECT eager|lazy (lazy.c) */
	int ib_port, ib_gid_index, ib_timeout, ib_retry_cnt, ib_mtu;
	int ib_signal_every, ib_liveness_ms;
	int yield_us, spin_count, timeout_ms;
};

/* Fill @cfg from @ctx; settings this hop lacks keep their defaults. */
void vrb_cfg_load(const struct hop_prov_ctx *ctx, struct vrb_cfg *cfg);

/* ------------------------------------------------------------------ */
/* Pure logic (no device needed)                                      */

/* device.c: GID choice */
enum vrb_gid_type {
	VRB_GID_IB = 0,
	VRB_GID_ROCE_V1,
	VRB_GID_ROCE_V2,
};

struct vrb_gid {
	int index;
	int type;               /* enum vrb_gid_type */
	uint8_t raw[16];
};

/*
 * vrb_gid_choose() - Pick the GID to use from a port's table.
 * @g, @n:     the valid entries (any order).
 * @override:  HOP_IB_GID_INDEX, or -1 for automatic.
 * @pref_ipv4: address (network byte order) the bootstrap uses, or 0; an
 *             IPv4-mapped GID of that address wins ties.
 * Automatic order: RoCE v2 IPv4-mapped (the bootstrap's address first),
 * RoCE v2 global IPv6, RoCE v2 link-local, RoCE v1 IPv4-mapped, RoCE v1,
 * IB; lowest index among equals. All-zero GIDs are never chosen.
 * Return: the chosen index, or -1 with the reason in @why.
 */
int vrb_gid_choose(const struct vrb_gid *g, int n, int override,
		   uint32_t pref_ipv4, char *why, size_t whylen);

/* Text form of a GID: "::ffff:10.0.0.1" for IPv4-mapped, else IPv6. */
void vrb_gid_str(const uint8_t raw[16], char *buf, size_t len);
const char *vrb_gid_type_str(int type);

/* MTU in bytes (256..4096, a power of two) -> enum ibv_mtu; 0 if invalid. */
int vrb_mtu_from_bytes(int bytes);

/* post.c: send-queue accounting with selective signalling */
struct vrb_pend {
	uint64_t seq;           /* WR sequence number on its QP */
	uint64_t wr_id;         /* the caller's */
	uint8_t op;             /* HOP_CQE_WRITE / HOP_CQE_SEND */
};

struct vrb_sq {
	uint64_t posted;        /* sequence number of the next WR */
	uint64_t done;          /* every WR with seq < done has completed */
	uint64_t sig_end;       /* 1 + seq of the newest signalled WR */
	uint32_t depth;         /* WRs outstanding at most */
	uint32_t every;         /* signal at least every this many WRs */
	uint32_t unsig;         /* WRs posted since the last signalled one */
	struct vrb_pend *pend;  /* ring of completions the caller wants */
	uint32_t pend_head, pend_count;
	uint64_t tail_ns;       /* post time of the newest deferred one */
};

int vrb_sq_init(struct vrb_sq *sq, uint32_t depth, uint32_t every);
void vrb_sq_fini(struct vrb_sq *sq);
/* Room for one more WR? */
static inline int vrb_sq_full(const struct vrb_sq *sq)
{
	return sq->posted - sq->done >= sq->depth || sq->pend_count >= sq->depth;
}
/*
 * vrb_sq_signal() - Must the next WR carry IBV_SEND_SIGNALED? @want: the
 * caller asked for a completion; @force: internal WR that must complete.
 * Yes when forced, every sq->every WRs, and for a wanted completion on an
 * idle QP (nothing outstanding: the latency path pays no flush).
 */
int vrb_sq_signal(const struct vrb_sq *sq, int want, int force);
/*
 * vrb_sq_commit() - Account the WR just posted (sequence sq->posted) once
 * ibv_post_send succeeded; queue @wr_id/@op when @want.
 */
void vrb_sq_commit(struct vrb_sq *sq, int want, int signaled, uint64_t wr_id,
		   int op, uint64_t now_ns);
/* A signalled WR completed: everything up to @seq is done. */
void vrb_sq_complete(struct vrb_sq *sq, uint64_t seq);
/* Pop the oldest completed caller completion; 1 when one was popped. */
int vrb_sq_pop(struct vrb_sq *sq, uint64_t *wr_id, int *op);
/* Pop the oldest caller completion, completed or not (error path). */
int vrb_sq_pop_any(struct vrb_sq *sq, uint64_t *wr_id, int *op);
/* Does a deferred completion wait for a flush (older than @delay_ns)? */
int vrb_sq_need_flush(const struct vrb_sq *sq, uint64_t now_ns,
		      uint64_t delay_ns);
/* Full sequence number from the low 32 bits carried in a wr_id. */
static inline uint64_t vrb_sq_seq(const struct vrb_sq *sq, uint32_t lo)
{
	return sq->done + (uint32_t)(lo - (uint32_t)sq->done);
}

/* poll.c: completion status -> hop code */
int vrb_wc_status_to_hop(int status);

/* cm.c: the connection hello carried in CM private data */
#define VRB_HELLO_MAGIC 0x56504f48u /* "HOPV" */
#define VRB_HELLO_VERSION 1
#define VRB_HELLO_LEN 32
struct vrb_hello {
	uint32_t rank;
	uint32_t nranks;
	uint8_t secret[16];
};
void vrb_hello_pack(const struct vrb_hello *h, uint8_t *buf);
/* Check length, magic, version; fill @out. 0 or HOP_ERR_PROTOCOL. */
int vrb_hello_parse(const void *buf, size_t len, struct vrb_hello *out,
		    char *why, size_t whylen);

/*
 * liveness.c: the transport retry count to program. Soft-RoCE (rxe, vendor
 * id 0xffffff) takes retry_cnt 7 as "retry forever", as the spec does only
 * for rnr_retry: its completer never decrements a 7, so a write to a cut
 * link would never fail. There 7 becomes 6.
 */
#define VRB_RXE_VENDOR_ID 0xffffffu
int vrb_retry_cnt(int want, uint32_t vendor_id);

/* lazy.c: when two ranks dial each other at once, does @me's dial win? */
static inline int vrb_lazy_dial_wins(int me, int peer)
{
	return me < peer;
}
/* How long a wanted peer may stay unconnected: HOP_TIMEOUT, or while its
 * host rejects us for want of a listener, half of it and at most 2 s. */
uint64_t vrb_lazy_limit_ns(int timeout_ms, int refused);
/* The private data of a reject by @rank whose own dial wins ("HOPY", rank);
 * vrb_lazy_yield_from() returns that rank, or -1 for any other data. */
#define VRB_YIELD_LEN 8
void vrb_lazy_yield_pack(int rank, uint8_t *buf);
int vrb_lazy_yield_from(const uint8_t *buf, size_t len);

/* mr.c: hop access bits -> ibv access flags (least needed) */
int vrb_access_flags(unsigned access);

/* ------------------------------------------------------------------ */
/* The provider                                                       */

#define VRB_RBUF 64             /* bytes per receive buffer (SEND_MAX) */
#define VRB_SQ_DEPTH 256
#define VRB_RQ_DEPTH 256
#define VRB_INLINE_WANT 256     /* max_inline_data asked for */
#define VRB_FLUSH_NS 20000ull   /* deferred completion age before a flush */
/* wait() polls, not sleeps, this long after a completion. Long enough for a
 * ping-pong on a loaded TCG host (round trips of 1..4 ms typical), short
 * enough that a waiter for a streaming transfer (one completion per 1 MiB,
 * ~50 ms there) sleeps most of the time: a spinning receiver keeps its vCPU
 * busy and takes the host CPU its own packet processing needs (1 MiB
 * streaming measured 0.72 x ib_write_bw, whose receiver idles). */
#define VRB_BUSY_NS 10000000ull
/* ... and this long after a small write with immediate arrived (at most
 * VRB_SMALL_LEN bytes: hop's eager messages, small rendezvous): a
 * ping-pong's next message. On a loaded TCG host round trips of 10-20 ms
 * happen; a waiter that then sleeps wakes ms late, so does its peer, and
 * the pair stayed in that state (2 B medians of 3-5 ms beside perftest's
 * 0.4 ms). Streaming receivers see large writes: 10 ms holds for them. */
#define VRB_BUSY_SMALL_NS 50000000ull
#define VRB_SMALL_LEN 16384u

/* wr_id layout: bit 63 receive; bits 32..62 peer; bits 0..31 seq/slot */
#define VRB_WRID_RECV (1ull << 63)
#define VRB_WRID(peer, lo) (((uint64_t)(uint32_t)(peer) << 32) | (uint32_t)(lo))
#define VRB_WRID_PEER(w) ((int)(((w) >> 32) & 0x7fffffffu))

/* internal control messages: a SEND with an immediate */
#define VRB_CTRL_BYE 0x42594521u /* closing: a later disconnect is no failure */
#define VRB_CTRL_IMM 0x494d4d21u /* {imm u32, len u64}: immediate of a split write */

enum vrb_peer_state {
	VRB_PEER_INIT = 0,      /* QP created, not connected */
	VRB_PEER_CONNECTING,
	VRB_PEER_RTS,           /* connected */
	VRB_PEER_CLOSED,        /* said BYE: closed its communicator */
};

struct vrb_peer {
	int rank;
	int state;              /* enum vrb_peer_state */
	struct ibv_qp *qp;
	struct rdma_cm_id *id;  /* rdmacm: this pair's connection */
	struct vrb_sq sq;
	uint8_t *rbuf;          /* rq_depth * VRB_RBUF bytes */
	uint8_t *sbuf;          /* bounce slots, sq.depth * VRB_RBUF, or NULL */
	uint32_t rlkey, slkey;  /* lkeys of rbuf and sbuf */
	/* lazy.c: rbuf and sbuf of this peer alone, made with its QP */
	uint8_t *buf;
	struct ibv_mr *buf_mr;
	int want;               /* a post needs this peer connected */
	int yielded;            /* our dial lost: the peer's dial comes */
	int refused;            /* the last attempt found no listener */
	uint64_t since_ns;      /* first post that wanted it */
	uint32_t psn;
	int recvs_posted;
	int disconnected;       /* rdmacm reported DISCONNECTED */
	int in_ready, in_dirty;
	/* rdmacm connection set-up */
	int active;             /* we connect (peer < rank) */
	int attempts;
	uint64_t retry_at_ns;
	char last_err[128];
	/* liveness.c: 1 + sequence number of the newest probe, 0: none */
	uint64_t probe_end;
};

struct vrb_mr {
	struct hop_prov_mr pub;
	uint32_t magic;
	struct ibv_mr *mr;      /* NULL for a zero-length region */
	struct vrb_mr *prev, *next;
};
#define VRB_MR_MAGIC 0x76726d72u /* "vrmr" */

struct hop_prov {
	const struct hop_prov_ctx *pctx; /* hop's services (hop/provider.h) */
	struct vrb_cfg cfg;
	int rank, nranks;
	int use_cm;             /* HOP_IB_CM=rdmacm */
	/* device */
	struct ibv_context *ctx;
	int ctx_owned;          /* opened by us (oob), else librdmacm's */
	char devname[64];
	int port;
	int gid_index;
	union ibv_gid gid;
	uint16_t lid;
	int link_layer;         /* IBV_LINK_LAYER_* */
	int active_mtu;         /* enum ibv_mtu of the port */
	int mtu;                /* enum ibv_mtu used (cfg.ib_mtu or active) */
	int rd_atom;            /* max_qp_rd_atom, capped at 1 */
	int retry_cnt;          /* HOP_IB_RETRY_CNT, or 6 for rxe's 7 */
	uint64_t max_msg;
	/* resources */
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	int cq_armed;
	unsigned cq_events;     /* events received, not yet acked */
	uint32_t sq_depth, rq_depth, signal_every;
	uint32_t max_inline;
	uint8_t *rslab;         /* receive buffers of every peer */
	struct ibv_mr *rslab_mr;
	uint8_t *sslab;         /* bounce slots of every peer, or NULL */
	struct ibv_mr *sslab_mr;
	struct vrb_peer *peers;
	/* lazy.c (HOP_CONNECT=lazy) */
	int lazy;
	int lazy_busy;          /* some wanted peer is not connected yet */
	unsigned lazy_polls;
	int nqp;                /* QPs made, the CQ holds their completions */
	struct vrb_cm_addr *addrs; /* every rank's listener */
	/* lists of peer indices */
	int *ready;             /* peers with synthesised completions due */
	int nready;
	int *dirty;             /* peers with deferred completions */
	int ndirty;
	/* completions taken by wait() while arming, handed to poll() */
	struct ibv_wc stash[16];
	int nstash, stash_head;
	unsigned polls;
	int ndisc;              /* peers with disconnected set, not yet judged */
	int cm_pending;         /* wait() saw the CM channel readable */
	uint64_t last_event_ns; /* last poll() that returned completions */
	uint64_t last_small_ns; /* ... that returned a small RECV_IMM */
	int small_seen;         /* handle_wc() saw a small RECV_IMM */
	/* liveness.c */
	uint64_t live_ns;       /* HOP_IB_LIVENESS_MS in ns, 0: no probes */
	uint64_t live_next_ns;  /* no probe round before this */
	unsigned live_polls;    /* empty polls since the last check */
	int live_waited;        /* wait() ran since the last check */
	int async_ok;           /* the device's async fd is non-blocking */
	/* rdmacm */
	struct rdma_event_channel *cm_ch;
	struct rdma_cm_id *listen_id;
	struct vrb_mr *mrs;     /* live regions, freed by close() */
};

/* device.c */
int vrb_usable(const struct hop_prov_ctx *ctx, char *why, size_t whylen);
/* oob: choose and open the device and port (HOP_IB_DEVICE/HOP_IB_PORT). */
int vrb_dev_open(struct hop_prov *prov, uint32_t pref_ipv4);
/* Query the chosen port: LID, MTU, GID choice (both modes). */
int vrb_port_setup(struct hop_prov *prov, uint32_t pref_ipv4);

/* ep.c */
/* Create @p's RC QP on the shared CQ (prov->max_inline may shrink). */
int vrb_create_qp(struct hop_prov *prov, struct vrb_peer *p);
void *vrb_zalloc_aligned(size_t len);
int vrb_open(const struct hop_prov_ctx *ctx, struct hop_prov **out);
void vrb_close(struct hop_prov *prov);
/* RESET -> INIT with our access flags, then post every receive. */
int vrb_qp_init(struct hop_prov *prov, struct vrb_peer *p,
		struct ibv_qp_attr *a, int mask);
/* INIT -> RTR -> RTS; @a/@mask from rdma_init_qp_attr or filled by oob. */
int vrb_qp_rtr(struct hop_prov *prov, struct vrb_peer *p,
	       struct ibv_qp_attr *a, int mask);
int vrb_qp_rts(struct hop_prov *prov, struct vrb_peer *p,
	       struct ibv_qp_attr *a, int mask);
int vrb_qp_reset(struct hop_prov *prov, struct vrb_peer *p);
/* Fill RTR/RTS attributes of an oob/self connection to (qpn, psn, gid, lid). */
void vrb_qp_attr_rtr(const struct hop_prov *prov, struct ibv_qp_attr *a,
		     int *mask, uint32_t qpn, uint32_t psn,
		     const union ibv_gid *gid, uint16_t lid, int mtu);
void vrb_qp_attr_rts(const struct hop_prov *prov, struct ibv_qp_attr *a,
		     int *mask, uint32_t psn);

/* cm.c */
struct vrb_cm_addr {            /* a listener, network byte order */
	uint32_t ip;
	uint16_t port;
	uint16_t pad;
};
int vrb_cm_listen(struct hop_prov *prov);
/* Allgather the listeners' addresses; @all: nranks entries. */
int vrb_cm_exchange(struct hop_prov *prov, struct vrb_cm_addr *all);
/* Start an active connect of @p to @dst (cm.c's retry rules apply). */
int vrb_cm_start(struct hop_prov *prov, struct vrb_peer *p,
		 const struct vrb_cm_addr *dst);
int vrb_cm_connect_all(struct hop_prov *prov, uint64_t deadline_ns);
int vrb_oob_connect_all(struct hop_prov *prov);
/* Non-blocking: handle CM events after set-up (DISCONNECTED). */
int vrb_cm_progress(struct hop_prov *prov);
void vrb_cm_close(struct hop_prov *prov);

/* lazy.c */
/* HOP_CONNECT=lazy with rdmacm: 1; lazy with oob is told and ignored. */
int vrb_lazy_wanted(struct hop_prov *prov);
/* Make @p's QP, its receive buffers and bounce slots, and CQ room. */
int vrb_lazy_peer_setup(struct hop_prov *prov, struct vrb_peer *p);
/* At open: exchange the listeners' addresses, connect nobody. */
int vrb_lazy_open(struct hop_prov *prov);
/* A post to @p, not connected: dial it. HOP_PROV_AGAIN or the error. */
int vrb_lazy_want(struct hop_prov *prov, struct vrb_peer *p);
/* ops->connect: start dialling @peer for a posted receive (lazy). */
int vrb_lazy_connect(struct hop_prov *prov, int peer);
/* CM events, dials due, deadlines of wanted peers: every call while a
 * dial is under way, or when @now; else every VRB_LAZY_IDLE_POLLS calls. */
int vrb_lazy_poll(struct hop_prov *prov, int now);
void vrb_lazy_peer_free(struct vrb_peer *p);

/* liveness.c */
/* After connecting: arm the probe clock, make async events pollable. */
void vrb_live_init(struct hop_prov *prov);
/*
 * vrb_live_tick() - Called by poll() when nothing arrived: handle the
 * device's async events (port down, QP fatal), and after
 * prov->live_ns without a completion post a zero-length write to every
 * connected peer with nothing outstanding, so a silent peer fails with
 * IBV_WC_RETRY_EXC_ERR naming it. Return: 0 or the comm's error.
 */
int vrb_live_tick(struct hop_prov *prov);
/* Is the send completion @wc of @p the liveness probe? */
int vrb_live_is_probe(const struct vrb_peer *p, const struct ibv_wc *wc);

/* mr.c */
int vrb_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out);
int vrb_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *mr);
void vrb_mr_free_all(struct hop_prov *prov);

/* post.c */
int vrb_post_write(struct hop_prov *prov, int peer, struct hop_prov_mr *lmr,
		   const void *laddr, size_t len, uint64_t raddr,
		   uint64_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id);
int vrb_post_send(struct hop_prov *prov, int peer, const void *buf,
		  size_t len, unsigned flags, uint64_t wr_id);
/* Internal: a zero-length signalled write that flushes deferred ones. */
int vrb_post_flush(struct hop_prov *prov, struct vrb_peer *p);
/* Internal: BYE to @p (signalled). */
int vrb_post_ctrl(struct hop_prov *prov, struct vrb_peer *p, uint32_t what);
size_t vrb_max_inline(const struct hop_prov *prov);
/* Post receive slot @slot of @p. */
int vrb_post_recv(struct hop_prov *prov, struct vrb_peer *p, uint32_t slot);

/* poll.c */
int vrb_poll(struct hop_prov *prov, struct hop_cqe *cqe, int max);
void vrb_wait(struct hop_prov *prov, int timeout_us);
/* Fail the comm for @p: message names both ranks and the QP. */
int vrb_peer_fail(struct hop_prov *prov, struct vrb_peer *p, int code,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void vrb_mark_ready(struct hop_prov *prov, struct vrb_peer *p);
void vrb_mark_dirty(struct hop_prov *prov, struct vrb_peer *p);

static inline uint32_t vrb_qpn(const struct vrb_peer *p)
{
	return p->qp ? p->qp->qp_num : 0;
}

#endif /* HOP_TRANSPORT_VERBS_H */
