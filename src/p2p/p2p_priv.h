/*
 * p2p_priv.h - private state of the channel layer, shared by the files of
 * src/p2p only.
 *
 * Per communicator (struct hop_p2p):
 *   - ring: one region registered REMOTE_WRITE, nranks * slots slots of
 *     slot_bytes; peer q writes into slots [q * slots, (q + 1) * slots).
 *     Its address and key are published with hop_bootstrap_allgather().
 *   - stage: registered bounce slots for eager messages too large to be
 *     posted inline; freed by the write's local completion.
 *   - per peer: where our slots are in the peer's ring, eager sequence
 *     numbers, credits, matching queues, a send queue (messages waiting for
 *     credits or for the provider) and a control queue (control messages
 *     the provider refused with HOP_PROV_AGAIN).
 *   - id tables of rendezvous and puts in flight, the registration cache, the put
 *     notes queue, free lists of public requests.
 *
 * Every message to a peer (eager or RTS) leaves in the order it was
 * started: once anything waits in the peer's send queue, later messages
 * queue behind it. Control messages have their own queue so that credits
 * and clear-to-sends never wait behind sends that wait for credits.
 */
#ifndef HOP_P2P_PRIV_H
#define HOP_P2P_PRIV_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/core.h"
#include "p2p/credit.h"
#include "p2p/match.h"
#include "p2p/p2p.h"
#include "p2p/proto.h"
#include "p2p/regcache.h"
#include "p2p/request.h"
#include "transport/provider.h"

#define P2P_POLL_BATCH 32
#define P2P_WAIT_US 1000        /* longest single provider wait() */
/* A provider that wakes its waiter (HOP_PROV_CAP_WAKES): after this many
 * quiet waits in a row, each wait doubles, up to P2P_WAIT_MAX_US. A job
 * of 1024 ranks on 2 cores otherwise wakes each rank 1000 times a
 * second, and the wake-ups take the cores from the rank that has work. */
#define P2P_WAIT_GROW_AFTER 16
#define P2P_WAIT_MAX_US 100000
/* quiet rounds of a wait on a peer that closed before it fails (about
 * as many ms: what the peer sent before closing is taken by then) */
#define P2P_CLOSED_ROUNDS 16
#define P2P_FLUSH_QUIET_MS 20   /* fini: longest grace for provider queues */
/* LL eager messages (eager_ll.c): a rank polls the slots of the peers it
 * posted to within the window and does not block while it is open; a
 * sender writes LL only to a peer heard from within half of it. */
#define P2P_LL_WINDOW_NS 50000000ull
#define P2P_LL_FULL_SCAN 256    /* progress calls between scans of all peers */
#define P2P_LL_CQ_EVERY 8       /* progress calls per provider poll meanwhile */
/* p2p_direct_recv(): reads of the slot between two progress calls. On
 * verbs the peer's write lands without us, and a message that lands during
 * a progress call goes the general way: 1024 reads are ~1-3 us on
 * hardware, ~30 us under TCG. Software providers land writes inside
 * poll(): one read per call there. */
#define P2P_DIRECT_SPINS_RDMA 1024u

/* hop_p2p_req.kind */
enum { P2P_KIND_SEND = 1, P2P_KIND_RECV = 2, P2P_KIND_PUT = 3 };

/* request state, in priv[0] */
enum p2p_state {
	ST_IDLE = 0,
	ST_SENDQ,        /* send waiting in the peer's send queue */
	ST_POSTED,       /* receive in the posted queue */
	ST_WAIT_CTS,     /* rendezvous send: RTS out, id in sids */
	ST_RNDV_WRITE,   /* rendezvous send: writing, in rndv_active */
	ST_RNDV_LAST,    /* rendezvous send: all written, waiting completion */
	ST_RNDV_RECV,    /* rendezvous receive: CTS out, id in rids */
	ST_SELF_UX,      /* large send to self, in our unexpected queue */
	ST_DEFERRED,     /* complete, callback pending (deferred list) */
	ST_DONE,
};

/* private request fields */
#define RQ_STATE(r) ((r)->priv[0])
#define RQ_ID(r) ((r)->priv[1])    /* sid (send) or rid (recv) */
#define RQ_RADDR(r) ((r)->priv[2]) /* rndv send: target address */
#define RQ_RKEY(r) ((r)->priv[3])  /* rndv send: target key */
#define RQ_OFF(r) ((r)->priv[4])   /* rndv send: bytes posted */
#define RQ_RCE(r) ((r)->priv[5])   /* registration cache entry */
#define RQ_MLEN(r) ((r)->priv[6])  /* rndv: message length */
#define RQ_RID(r) ((r)->priv[7])   /* rndv send: receiver's id */
#define RQ_ADV(r) ((r)->priv[4])   /* posted recv: advert slot + 1, or 0 */

static inline struct hop_rc_entry *rq_rce(const struct hop_p2p_req *r)
{
	return (struct hop_rc_entry *)(uintptr_t)RQ_RCE(r);
}

/* wr_id of signaled writes: kind in the top 4 bits */
#define WR_STAGE (1ull << 60)
#define WR_RNDV (2ull << 60)
#define WR_PUT (3ull << 60)
#define WR_KIND(w) ((w) & (15ull << 60))
#define WR_VAL(w) ((w) & ~(15ull << 60))

/* A control message waiting for the provider. */
struct p2p_ctlq_ent {
	struct p2p_ctlq_ent *next;
	struct hop_ctl msg;
};

/* An immediate delivered by a put, waiting for hop_wait_imm(). */
struct p2p_note {
	struct p2p_note *next;
	int peer;
	uint32_t imm;
	uint64_t len;
};

struct p2p_peer {
	uint64_t ring_raddr;     /* our first slot in the peer's ring */
	uint64_t ring_rkey;
	uint32_t send_seq;       /* eager messages sent to the peer */
	uint32_t recv_seq;       /* eager messages received from it */
	uint32_t ll_upto;        /* LL: p2p_ll_peek() saw seqs below this */
	struct hop_credit cr;
	struct hop_match mq;
	struct hop_rlist sendq;
	struct p2p_ctlq_ent *ctl_head, *ctl_tail;
	int credit_queued;       /* a CREDIT message waits in the ctl queue */
	int in_backlog;
	int dirty;               /* we posted to this peer (flushed at fini) */
	int in_hot;              /* in hop_p2p.hot (eager_ll.c) */
	int in_waited;           /* in hop_p2p.waited */
	uint64_t last_send_ns;   /* LL on: when we last posted to the peer */
	uint64_t last_recv_ns;   /* LL on: when its last message arrived */
	/* messages (eager, RTS, direct) sent to the peer, and from it
	 * matched or kept, in order: what adverts count (advert.c) */
	uint32_t msg_sent, msg_recv;
	struct p2p_adv_in *adv_in;   /* our receives advertised to it */
	struct p2p_adv_out *adv_out; /* its adverts to us */
};

/* Public hop_mr_t. */
struct hop_mr {
	uint32_t magic;
	struct hop_comm *comm;
	struct hop_prov_mr *pmr; /* NULL for an empty region */
	void *addr;
	size_t len;
	unsigned access;
	struct hop_mr *prev, *next;
};
#define HOP_MR_MAGIC 0x686d7272u /* "hmrr" */

struct p2p_req_chunk {
	struct p2p_req_chunk *next;
	struct hop_request req[];
};
#define P2P_REQ_CHUNK 64

/* What this rank knows of one collective's signature (collsig.c). */
struct p2p_collsig {
	uint32_t seq, sig;
	int peer;                /* who sent it first, when not begun here */
	int state;
	uint64_t tag, len;       /* that first message */
};
#define P2P_COLLSIG_SLOTS 64

struct hop_p2p {
	struct hop_comm *comm;
	const struct hop_prov_ops *ops;
	struct hop_prov *prov;
	int rank, nranks;
	uint32_t slots;
	size_t eager_size, slot_bytes, max_inline, rndv_chunk;
	size_t adv_min;          /* HOP_RNDV_ADVERT, 0: no adverts */
	size_t adv_min_cls[2];   /* per link class (p2p_adv_init()) */
	uint64_t adv_direct;     /* sends written into advertised receives */

	unsigned char *ring;
	size_t ring_len;
	int ring_prov_alloc;     /* ring from ops->mem_alloc */
	struct hop_prov_mr *ring_mr;

	unsigned char *stage;
	size_t stage_len;
	struct hop_prov_mr *stage_mr;
	uint32_t *stage_free;
	uint32_t nstage, stage_nfree;

	unsigned char *inl;      /* inline eager write, built here */
	size_t inl_len;

	int ll_on;               /* HOP_EAGER_POLL resolved */
	size_t ll_max;           /* largest LL message (header + payload) */
	int *hot;                /* peers whose slots we poll (eager_ll.c) */
	int nhot;
	unsigned ll_polls, ll_cq_skip;
	int ll_peek_all;         /* the last p2p_ll_peek() scanned every peer */
	uint64_t ll_sent, ll_received;
	uint64_t ll_direct;      /* of ll_received: by p2p_direct_recv() */
	int ll_direct_peer;      /* whose slot p2p_direct_recv() spins on, or -1:
				    p2p_ll_peek() leaves it alone */
	unsigned direct_spins;   /* its slot reads per progress call */
	uint64_t ll_last_send_ns;
	uint64_t batch_ns;       /* clock of the completions being dispatched */

	struct p2p_peer *peers;
	struct hop_match_any any;   /* receives from any source (match.h) */
	struct p2p_group *group;    /* hop_group_start() queue (group.c) */
	int *backlog;            /* peers with queued sends or control msgs */
	int nbacklog;
	/* peers a receive was posted from, or a send queued for credits
	 * to, since the last look (a superset of those with one still
	 * there): what p2p_closed_waited() looks at */
	int *waited;
	int nwaited;
	struct hop_rlist rndv_active;
	struct hop_idtab sids, rids;
	struct hop_ux_pool uxpool;
	struct p2p_ctlq_ent *ctl_free;

	struct p2p_note *notes_head, *notes_tail, *notes_free;
	size_t nnotes_free;      /* kept up to HOP_UX_KEEP */

	struct hop_regcache rc;
	struct hop_mr *mrs;      /* live public regions */

	struct hop_request *req_free;
	struct p2p_req_chunk *req_chunks;

	struct hop_rlist deferred;  /* completions whose callback is pending */
	int post_depth;          /* inside hop_p2p_isend/irecv */
	int fail_code;           /* set once every request was failed */
	int tearing_down;        /* fini: no callbacks */
	struct hop_cqe cqe[P2P_POLL_BATCH];
	struct p2p_collsig collsig[P2P_COLLSIG_SLOTS];
	struct hop_p2p_req *probe;  /* per peer, sent at a deadline */
};

/* Our slot of @q's eager message number @seq. */
static inline unsigned char *p2p_ring_slot(const struct hop_p2p *p, int q,
					   uint32_t seq)
{
	return p->ring + ((size_t)q * p->slots + seq % p->slots) *
				 p->slot_bytes;
}

/* The peer's slot our next eager message to it (@pp) goes to. */
static inline uint64_t p2p_send_slot_raddr(const struct hop_p2p *p,
					   const struct p2p_peer *pp)
{
	return pp->ring_raddr + (uint64_t)(pp->send_seq % p->slots) *
					p->slot_bytes;
}

/* Has @peer closed its comm in order? (optional provider op) */
static inline int p2p_peer_closed(const struct hop_p2p *p, int peer)
{
	const struct hop_prov_ops *o = p->ops;

	return o->size >= offsetof(struct hop_prov_ops, peer_closed) +
			  sizeof(o->peer_closed) &&
	       o->peer_closed && o->peer_closed(p->prov, peer);
}

/*
 * Was @p failed by a peer (it died, or refused a write)? Every rank is
 * being failed then, and the memory this rank offered to senders (adverts,
 * rendezvous CTS) keeps its key: a sender still writing must meet the
 * peer's failure itself, not a key withdrawn here, or it would name this
 * rank instead of the cause.
 */
static inline int p2p_keeps_offers(const struct hop_p2p *p)
{
	return p->fail_code == HOP_ERR_PEER_FAILED ||
	       p->fail_code == HOP_ERR_OUT_OF_BOUNDS;
}

/* advert.c: drop a reference to a region offered to a sender */
void p2p_offer_put(struct hop_p2p *p, struct hop_rc_entry *e);

/* channel.c */
void p2p_backlog_add(struct hop_p2p *p, int peer);
int p2p_ctl_send(struct hop_p2p *p, int peer, struct hop_ctl *m);
int p2p_ctl_post_now(struct hop_p2p *p, int peer, struct hop_ctl *m);
int p2p_ctl_post_flags(struct hop_p2p *p, int peer, struct hop_ctl *m,
		       unsigned flags, uint64_t wr_id);
int p2p_flush_backlog(struct hop_p2p *p);
void p2p_credit_freed(struct hop_p2p *p, int peer);
int p2p_grant(struct hop_p2p *p, int peer, uint32_t n);
const char *p2p_tag_str(uint64_t tag, char *buf, size_t len);
/* A receive from @peer was posted, or a send to it queued for credits:
 * note it for p2p_closed_waited() */
void p2p_waited_add(struct hop_p2p *p, int peer);
/* A peer that closed while a receive from it is posted or a send to it
 * waits for credits, or -1 */
int p2p_closed_waited(struct hop_p2p *p);
/* A slow wait: connect every rank, so any dead one is seen */
void p2p_connect_all(struct hop_p2p *p);

/* progress.c */
void p2p_complete(struct hop_p2p *p, struct hop_p2p_req *r, int status);
/* Dispatch the @n completions just polled into p->cqe (and, when
 * @ll_seen, the LL messages p2p_ll_peek() marked before that poll), post
 * queued work, run callbacks. Returns what arrived, or the failure. */
int p2p_dispatch_batch(struct hop_p2p *p, int n, int ll_seen);
void p2p_fail_all(struct hop_p2p *p, int code);
int p2p_failed_recording(const struct hop_comm *comm);
/* 0, or the code that failed @comm; its fail_msg is then complete. */
static inline int p2p_failed(const struct hop_comm *comm)
{
	int f = atomic_load_explicit(&((struct hop_comm *)comm)->failed,
				     memory_order_acquire);

	if (f < 0)
		return f;
	if (f > 0 || atomic_load_explicit(&((struct hop_comm *)comm)->aborted,
					  memory_order_relaxed))
		return p2p_failed_recording(comm);
	return 0;
}

/* wait.c */
typedef hop_p2p_describe_fn p2p_describe_fn;
int p2p_wait_loop(struct hop_comm *comm, int (*done)(void *), void *arg,
		  p2p_describe_fn describe, void *darg);
void p2p_describe_req(const struct hop_p2p_req *r, char *buf, size_t len);

/* eager.c */
/* hop_p2p_irecv() with wildcards: @peer may be HOP_MATCH_ANY_PEER, and
 * the bits of @ignore are left out of the tag comparison. */
int hop_p2p_irecv_match(struct hop_comm *comm, struct hop_p2p_req *r,
			int peer, uint64_t tag, uint64_t ignore, void *buf,
			size_t len, uint32_t sig);
int p2p_eager_post(struct hop_p2p *p, struct hop_p2p_req *r);
/* Post @r, the next message to its peer: into an advertised receive,
 * eagerly or by RTS. 0, HOP_PROV_AGAIN or a failure. */
int p2p_send_post(struct hop_p2p *p, struct hop_p2p_req *r);
int p2p_eager_arrived(struct hop_p2p *p, const struct hop_cqe *c);
void p2p_deliver_ux(struct hop_p2p *p, struct hop_p2p_req *r,
		    struct hop_ux *ux);
int p2p_check_match(struct hop_p2p *p, struct hop_p2p_req *r, int peer,
		    uint64_t len, uint32_t sig, uint32_t sid);
int p2p_self_send(struct hop_p2p *p, struct hop_p2p_req *r);
/* An unexpected entry for @what from rank @q (payload room when
 * @with_data), or the comm failed with HOP_ERR_NO_MEMORY naming @q and,
 * when that is why, HOP_UNEXPECTED_MAX. */
int p2p_ux_new(struct hop_p2p *p, int q, int with_data, const char *what,
	       struct hop_ux **out);
/* The failure of p2p_ux_new() for @bytes more of @what from @q. */
int p2p_ux_fail(struct hop_p2p *p, int q, size_t bytes, const char *what);
int p2p_eager_deliver(struct hop_p2p *p, int q, const unsigned char *msg,
		      size_t written);
/* The header of the next eager message to the peer @pp, carrying back
 * the credits we owe it. */
void p2p_eager_hdr(const struct hop_p2p *p, const struct p2p_peer *pp,
		   uint64_t tag, size_t len, uint32_t sig,
		   struct hop_eager_hdr *h);
/* The eager message of header @h went out to @peer: its slot and the
 * credits it returned are accounted. */
void p2p_eager_sent(struct hop_p2p *p, int peer, const struct hop_eager_hdr *h);
/* The eager message of header @h is the next one from @q: take its
 * sequence number and the credits it returns (a wrong one fails the
 * comm). */
int p2p_eager_accept(struct hop_p2p *p, int q, const struct hop_eager_hdr *h);

/* eager_ll.c: eager messages noticed in memory */
int p2p_ll_init(struct hop_p2p *p);
int p2p_ll_post(struct hop_p2p *p, int peer, const struct hop_eager_hdr *h,
		const void *payload, uint64_t raddr);
int p2p_ll_usable(struct hop_p2p *p, int peer, size_t len);
void p2p_ll_note_send(struct hop_p2p *p, int peer);
/* How many LL messages have begun to land in the slots of the hot peers
 * (every peer on each P2P_LL_FULL_SCAN-th call, or when @all); marks them
 * for p2p_ll_deliver(), which may run only after the CQ was emptied. */
int p2p_ll_peek(struct hop_p2p *p, int all);
/* Deliver the LL messages p2p_ll_peek() marked: the CQ, polled empty
 * since, held every completion (an RTS) sent before them. */
int p2p_ll_deliver(struct hop_p2p *p);
/* Deliver up to @max LL messages waiting in @q's slots, in sequence order:
 * the ones sent before something that arrived through a completion from
 * @q. Returns how many, or a failure. */
int p2p_ll_drain(struct hop_p2p *p, int q, uint32_t max);
int p2p_ll_keep_awake(struct hop_p2p *p);

/* eager_direct.c: blocking small messages to and from an LL peer without
 * a request. Each returns 1 (done), 0 (not possible now: nothing was
 * consumed or sent, use the general path) or a failure. @peer is a valid
 * other rank, @tag an internal tag (user traffic: signature 0). */
int p2p_direct_recv(struct hop_comm *comm, int peer, uint64_t tag, void *buf,
		    size_t len, size_t *bytes);
int p2p_direct_send(struct hop_comm *comm, int peer, uint64_t tag,
		    const void *buf, size_t len);

/* collsig.c: a collective's message that no receive took */
void p2p_collsig_unexpected(struct hop_p2p *p, int peer, uint64_t tag,
			    uint64_t len, uint32_t sig);
int p2p_collsig_probe(struct hop_p2p *p);

/* rndv.c */
int p2p_rts_post(struct hop_p2p *p, struct hop_p2p_req *r);
int p2p_rts_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m);
void p2p_rndv_recv_start(struct hop_p2p *p, struct hop_p2p_req *r,
			 uint64_t len, uint32_t sid);
int p2p_cts_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m);
int p2p_nak_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m);
int p2p_rndv_push(struct hop_p2p *p, struct hop_p2p_req *r);
int p2p_rndv_write_done(struct hop_p2p *p, const struct hop_cqe *c);
int p2p_rndv_recv_done(struct hop_p2p *p, const struct hop_cqe *c);

/* advert.c: receives posted first tell the sender where to write */
/* @r was just posted to its peer's queue: advertise it if it may. */
void p2p_adv_post(struct hop_p2p *p, struct hop_p2p_req *r);
/* Advertised receive @r was matched by a message the ordinary way. */
void p2p_adv_taken(struct hop_p2p *p, struct hop_p2p_req *r);
/* Advertised receive @r completes without its message: kill its key. */
void p2p_adv_retract(struct hop_p2p *p, struct hop_p2p_req *r);
int p2p_adv_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m);
/* A message of @tag left for @peer (any protocol): count it. */
void p2p_adv_sent(struct hop_p2p *p, int peer, uint64_t tag);
/* Write send @r into the receive an advert names: P2P_ADV_SENT, 0 (no
 * usable advert: send it the ordinary way), HOP_PROV_AGAIN or a failure. */
#define P2P_ADV_SENT 2
int p2p_adv_send(struct hop_p2p *p, struct hop_p2p_req *r);
int p2p_adv_recv_done(struct hop_p2p *p, const struct hop_cqe *c);
int p2p_adv_init(struct hop_p2p *p);
void p2p_adv_free(struct hop_p2p *p);

/* put.c */
int p2p_put_note_arrived(struct hop_p2p *p, int peer,
			 const struct hop_ctl *m);
int p2p_note_push(struct hop_p2p *p, int peer, uint32_t imm, uint64_t len);
int p2p_put_write_done(struct hop_p2p *p, const struct hop_cqe *c);
void p2p_notes_free(struct hop_p2p *p);

/* group.c */
struct p2p_group;
void p2p_group_free(struct hop_p2p *p);

/* request.c / mem.c */
void p2p_requests_free(struct hop_p2p *p);
void p2p_mrs_free(struct hop_p2p *p);
struct hop_mr *p2p_mr_find_key(struct hop_p2p *p, uint64_t key,
			       uint64_t addr, uint64_t len);

#endif /* HOP_P2P_PRIV_H */
