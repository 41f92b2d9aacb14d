/*
 * advert.c - receiver-driven rendezvous: a receive posted before its
 * message tells the sender where the message goes (ADVERT), and the sender
 * writes the message straight from its buffer into the receive's, one
 * write with immediate (docs/p2p.md, "Receives posted first").
 *
 * Both ends must name the same message for a receive without talking: a
 * sender's messages are matched in the order they were sent, so the
 * receive takes the (ahead + 1)-th message of its tag numbered seq or
 * later, where seq counts the sender's messages matched or kept when the
 * receive was posted and ahead the advertised receives of the tag posted
 * before it. The sender numbers its messages to each peer and keeps the
 * tags of the last HOP_ADV_HIST, so it can tell whether that message has
 * already left some other way (then the advert is dropped and the receive
 * is matched as any other).
 */
#include <stdint.h>
#include <stdlib.h>

#include "p2p/p2p_priv.h"

#define HOP_ADV_HIST 256u
#define HOP_ADV_WALK 256u   /* posted receives a new one looks past */

/* Receiver side, per peer: the receives advertised to it, by slot. */
struct p2p_adv_in {
	struct hop_p2p_req *r[HOP_ADV_SLOTS];
	struct hop_rc_entry *e[HOP_ADV_SLOTS];
	uint64_t used;          /* bit per slot */
};

/* Sender side, per peer: its adverts not yet used or dropped. */
struct p2p_adv {
	uint64_t addr, key, len, tag;
	uint32_t sig;
	uint32_t need;          /* messages of the tag to send before it */
	int live;
};

struct p2p_adv_out {
	struct p2p_adv a[HOP_ADV_SLOTS];
	unsigned nlive;
	uint32_t hist_from;     /* first message whose tag hist[] holds */
	uint64_t hist[HOP_ADV_HIST];
};

/* ------------------------------------------------------------------ */
/* receiver                                                            */

/* Can @r advertise: every posted receive that could take its message
 * before it advertised too? Their count in *@ahead. */
static int adv_order_known(const struct hop_p2p *p,
			   const struct p2p_peer *pp,
			   const struct hop_p2p_req *r, uint32_t *ahead)
{
	uint32_t n = 0, seen = 0;

	/* bounded: a deep queue costs each post a walk, not the rank */
	for (const struct hop_p2p_req *o = p->any.posted.head; o; o = o->next)
		if (hop_match_tag(o, r->tag) || ++seen > HOP_ADV_WALK)
			return 0;
	for (const struct hop_p2p_req *o = pp->mq.posted.head; o && o != r;
	     o = o->next) {
		if (++seen > HOP_ADV_WALK)
			return 0;
		if (!hop_match_tag(o, r->tag))
			continue;
		if (!RQ_ADV(o) || ++n >= HOP_ADV_SLOTS)
			return 0;
	}
	*ahead = n;
	return 1;
}

static void adv_release(struct hop_p2p *p, struct hop_p2p_req *r);

/*
 * The smallest message that goes by an advert over a pair of link class
 * @cls. Where that class's provider moves the bytes with the CPU (tcp,
 * shm: no HOP_PROV_CAP_RDMA), a direct write of an eager-size message
 * costs what the eager message costs and its advert is one control
 * message more, so there only receives above the eager size advertise.
 * Measured on tcp, 2 ranks: 4-8 KiB ping-pong 9.4-10.2 us against
 * 10.4-11.6 us, AllToAll of 8-16 KiB 13.8-15.1 us against 22-23 us.
 *
 * Between hosts over such a provider (tcp: no HOP_PROV_CAP_RDMA, no
 * HOP_PROV_CAP_HOST_MEMORY) nothing advertises (SIZE_MAX). There a direct
 * write travels on the same ordered byte stream as the control messages: in a
 * pairwise exchange the rank whose send met the peer's advert queues its
 * whole message ahead of its clear-to-send for the peer's, and the two
 * directions run one after the other. On 2 emulated hosts x 2 ranks
 * (200 Mbit/s) a hierarchical AllReduce of 1 MiB took 71-74 ms with
 * adverts and 44-46 ms without, Rabenseifner of 16 MiB on 4 hosts x 1
 * (1 Gbit/s) 351-374 against 262-275 ms
 * (docs/results/2026-12-07-tcp-inter-adverts.md).
 */
static size_t adv_min_class(const struct hop_p2p *p, int cls)
{
	const struct hop_prov_ops *ops = hop_comm_class_ops(p->comm, cls);

	if (!p->adv_min || hop_prov_has(ops, HOP_PROV_CAP_RDMA))
		return p->adv_min;
	if (cls == HOP_LINK_INTER &&
	    !hop_prov_has(ops, HOP_PROV_CAP_HOST_MEMORY))
		return SIZE_MAX;
	return p->adv_min > p->eager_size ? p->adv_min : p->eager_size + 1;
}

/* The smallest message that goes by an advert to or from @peer. */
static size_t adv_min_of(const struct hop_p2p *p, int peer)
{
	const struct hop_comm *c = p->comm;

	return p->adv_min_cls[hop_comm_host(c, peer) ==
			      hop_comm_host(c, p->rank) ? HOP_LINK_INTRA
							: HOP_LINK_INTER];
}

void p2p_adv_post(struct hop_p2p *p, struct hop_p2p_req *r)
{
	struct p2p_peer *pp = &p->peers[r->peer];
	struct hop_ctl m = { .type = HOP_MSG_ADVERT };
	struct p2p_adv_in *in = pp->adv_in;
	struct hop_rc_entry *e;
	uint32_t ahead, slot;

	if (!p->adv_min || r->peer == p->rank || HOP_MATCH_IGNORE(r) ||
	    r->len < adv_min_of(p, r->peer) || r->len > UINT32_MAX)
		return;
	/* without a cache every advert would register and deregister:
	 * worth it only where a rendezvous registers anyway */
	if (!p->rc.mon && r->len <= p->eager_size)
		return;
	/* a peer nothing went to or came from yet may not be connected
	 * (HOP_CONNECT=lazy): an advert would dial it, and a dial that fails
	 * would fail the receive for its connect, not for the receive */
	if (!pp->dirty && !pp->msg_recv)
		return;
	/* a peer that sent its last message and closed needs no advert:
	 * posting one would fail the comm (its message waits in the ring) */
	if (p2p_peer_closed(p, r->peer))
		return;
	if (!in || in->used == UINT64_MAX || !adv_order_known(p, pp, r, &ahead))
		return;
	if (hop_regcache_get(&p->rc, r->buf, r->len, HOP_PROV_REMOTE_WRITE,
			     &e))
		return;         /* an RTS will report it */
	for (slot = 0; in->used & (1ull << slot); slot++)
		;
	in->used |= 1ull << slot;
	in->r[slot] = r;
	in->e[slot] = e;
	RQ_ADV(r) = slot + 1;
	m.u.adv.addr = (uint64_t)(uintptr_t)r->buf;
	m.u.adv.key = e->mr->key;
	m.u.adv.len = r->len;
	m.u.adv.tag = r->tag;
	m.u.adv.sig = r->sig;
	m.u.adv.seq = pp->msg_recv;
	m.u.adv.ahead = ahead;
	m.u.adv.slot = slot;
	/* best effort: when the provider is busy the receive goes without
	 * an advert rather than growing the control queue */
	if (p2p_ctl_post_now(p, r->peer, &m))
		adv_release(p, r);
}

/* Forget @r's advert; the caller owns the reference to its region. */
static struct hop_rc_entry *adv_forget(struct hop_p2p *p,
				       struct hop_p2p_req *r)
{
	struct p2p_adv_in *in = p->peers[r->peer].adv_in;
	uint32_t slot = (uint32_t)RQ_ADV(r) - 1;
	struct hop_rc_entry *e = in->e[slot];

	in->r[slot] = NULL;
	in->e[slot] = NULL;
	in->used &= ~(1ull << slot);
	RQ_ADV(r) = 0;
	return e;
}

/* Forget @r's advert; its registration stays cached. */
static void adv_release(struct hop_p2p *p, struct hop_p2p_req *r)
{
	hop_regcache_put(&p->rc, adv_forget(p, r));
}

void p2p_offer_put(struct hop_p2p *p, struct hop_rc_entry *e)
{
	/* a peer's failure (p2p_keeps_offers()): on RDMA a region pins its
	 * pages, so the reference stays until hop_regcache_fini() and a late
	 * write lands in pages the caller may have unmapped meanwhile, never
	 * on a refused key; elsewhere a region names addresses only and an
	 * unmap must end it */
	if (p2p_keeps_offers(p) && hop_prov_has(p->ops, HOP_PROV_CAP_RDMA))
		return;
	hop_regcache_put(&p->rc, e);
}

void p2p_adv_taken(struct hop_p2p *p, struct hop_p2p_req *r)
{
	if (RQ_ADV(r))
		adv_release(p, r);
}

void p2p_adv_retract(struct hop_p2p *p, struct hop_p2p_req *r)
{
	struct hop_ctl m = { .type = HOP_MSG_ADVERT };

	m.u.adv.slot = (uint32_t)RQ_ADV(r) - 1;
	p2p_offer_put(p, adv_forget(p, r));
	if (p2p_keeps_offers(p))
		return;
	/* the sender may still write: kill the key, not the caller's
	 * memory once it has it back */
	hop_regcache_invalidate(&p->rc, r->buf, r->len);
	/* a cancelled communicator's tags may come back with a new one:
	 * withdraw the advert (capacity 0) so no later message takes it */
	if (!p->fail_code && !p->tearing_down)
		p2p_ctl_send(p, r->peer, &m);
}

int p2p_adv_recv_done(struct hop_p2p *p, const struct hop_cqe *c)
{
	int q = c->peer;
	struct p2p_peer *pp = &p->peers[q];
	uint32_t val = hop_imm_val(c->imm);
	uint32_t slot = val >> HOP_IMM_SEQ_BITS;
	uint32_t before = ((val & HOP_IMM_SEQ_MASK) - pp->recv_seq) &
			  HOP_IMM_SEQ_MASK;
	struct hop_p2p_req *r;
	int ret;

	/* the memory-polled eager messages sent before it come first */
	if (p->ll_on && before && before <= HOP_IMM_SEQ_MASK / 2 &&
	    (ret = p2p_ll_drain(p, q, before)) < 0)
		return ret;
	r = slot < HOP_ADV_SLOTS && pp->adv_in ? pp->adv_in->r[slot] : NULL;
	if (!r || RQ_STATE(r) != ST_POSTED || c->len > r->len)
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL,
				     "p2p: rank %d wrote %u B into advertised "
				     "receive %u, which %s", q, c->len, slot,
				     r && RQ_STATE(r) == ST_POSTED
					     ? "is smaller"
					     : "is not posted");
	pp->msg_recv++;
	hop_rlist_remove(&pp->mq.posted, r);
	adv_release(p, r);
	r->bytes = c->len;
	p2p_complete(p, r, c->status);
	return 0;
}

/* ------------------------------------------------------------------ */
/* sender                                                              */

/* Messages of @tag among ours to @pp numbered @from and later. */
static uint32_t hist_count(const struct p2p_adv_out *o, uint32_t from,
			   uint32_t upto, uint64_t tag)
{
	uint32_t n = 0;

	for (uint32_t s = from; s != upto; s++)
		n += o->hist[s % HOP_ADV_HIST] == tag;
	return n;
}

int p2p_adv_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m)
{
	struct p2p_peer *pp = &p->peers[peer];
	struct p2p_adv_out *o = pp->adv_out;
	struct p2p_adv *a;
	uint32_t since, sent;

	if (!o)
		return 0;       /* adverts are off here: matched the ordinary way */
	a = &o->a[m->u.adv.slot];
	if (a->live) {          /* its receive went without its message */
		a->live = 0;
		o->nlive--;
	}
	if (!m->u.adv.len)
		return 0;       /* withdrawn */
	since = pp->msg_sent - m->u.adv.seq;
	if ((int32_t)(m->u.adv.seq - o->hist_from) < 0 ||
	    since > HOP_ADV_HIST)
		return 0;
	sent = hist_count(o, m->u.adv.seq, pp->msg_sent, m->u.adv.tag);
	if (sent > m->u.adv.ahead)
		return 0;       /* its message already left */
	a->addr = m->u.adv.addr;
	a->key = m->u.adv.key;
	a->len = m->u.adv.len;
	a->tag = m->u.adv.tag;
	a->sig = m->u.adv.sig;
	a->need = m->u.adv.ahead - sent;
	a->live = 1;
	o->nlive++;
	return 0;
}

void p2p_adv_sent(struct hop_p2p *p, int peer, uint64_t tag)
{
	struct p2p_peer *pp = &p->peers[peer];
	struct p2p_adv_out *o = pp->adv_out;

	pp->msg_sent++;
	if (!o)
		return;
	o->hist[(pp->msg_sent - 1) % HOP_ADV_HIST] = tag;
	for (unsigned i = 0; o->nlive && i < HOP_ADV_SLOTS; i++) {
		struct p2p_adv *a = &o->a[i];

		if (!a->live || a->tag != tag)
			continue;
		if (a->need--)
			continue;
		a->live = 0;    /* this message takes that receive */
		o->nlive--;
	}
}

/* The advert the next message of @tag to @pp takes, or NULL. */
static struct p2p_adv *adv_next(struct p2p_peer *pp, uint64_t tag)
{
	struct p2p_adv_out *o = pp->adv_out;

	if (!o || !o->nlive)
		return NULL;
	for (unsigned i = 0; i < HOP_ADV_SLOTS; i++)
		if (o->a[i].live && o->a[i].tag == tag && !o->a[i].need)
			return &o->a[i];
	return NULL;
}

int p2p_adv_send(struct hop_p2p *p, struct hop_p2p_req *r)
{
	struct p2p_peer *pp = &p->peers[r->peer];
	struct p2p_adv *a = adv_next(pp, r->tag);
	int own_id = r->len <= p->eager_size;
	struct hop_rc_entry *e;
	uint32_t sid, imm;
	int ret;

	if (!a || r->len > a->len || r->sig != a->sig ||
	    r->len < adv_min_of(p, r->peer) || r->len > UINT32_MAX)
		return 0;       /* goes the ordinary way, as its receive expects */
	if (hop_regcache_get(&p->rc, r->buf, r->len, 0, &e))
		return 0;       /* the rendezvous reports it */
	if (own_id && hop_idtab_alloc(&p->sids, r, &sid)) {
		hop_regcache_put(&p->rc, e);
		return 0;
	}
	if (!own_id)
		sid = (uint32_t)RQ_ID(r);
	imm = hop_imm_make(HOP_IMM_DIRECT,
			   (uint32_t)(a - pp->adv_out->a) << HOP_IMM_SEQ_BITS |
				   (pp->send_seq & HOP_IMM_SEQ_MASK));
	ret = p->ops->post_write(p->prov, r->peer, e->mr, r->buf, r->len,
				 a->addr, a->key, imm,
				 HOP_WR_IMM | HOP_WR_SIGNALED, WR_RNDV | sid);
	if (ret) {
		if (own_id)
			hop_idtab_free(&p->sids, sid);
		hop_regcache_put(&p->rc, e);
		return ret;
	}
	pp->dirty = 1;
	p2p_adv_sent(p, r->peer, r->tag);
	if (RQ_STATE(r) == ST_SENDQ)
		hop_rlist_remove(&pp->sendq, r);
	RQ_ID(r) = sid;
	RQ_RCE(r) = (uint64_t)(uintptr_t)e;
	RQ_STATE(r) = ST_RNDV_LAST;
	p->adv_direct++;
	return P2P_ADV_SENT;
}

/* Allocated once for every peer: a collective's repeated calls allocate
 * nothing, whichever pair first talks in which call. The thresholds of
 * each link class are fixed here, once the providers are. */
int p2p_adv_init(struct hop_p2p *p)
{
	struct p2p_adv_in *in;
	struct p2p_adv_out *out;

	p->adv_min_cls[HOP_LINK_INTRA] = adv_min_class(p, HOP_LINK_INTRA);
	p->adv_min_cls[HOP_LINK_INTER] = adv_min_class(p, HOP_LINK_INTER);
	if (!p->adv_min)
		return 0;
	in = calloc((size_t)p->nranks, sizeof(*in));
	out = calloc((size_t)p->nranks, sizeof(*out));
	if (!in || !out) {
		free(in);
		free(out);
		return hop_comm_fail(p->comm, HOP_ERR_NO_MEMORY, "p2p: out of "
				     "memory for the adverts of %d ranks "
				     "(HOP_RNDV_ADVERT=0 needs none)",
				     p->nranks);
	}
	for (int q = 0; q < p->nranks; q++) {
		p->peers[q].adv_in = &in[q];
		p->peers[q].adv_out = &out[q];
	}
	return 0;
}

void p2p_adv_free(struct hop_p2p *p)
{
	if (!p->nranks || !p->peers[0].adv_in)
		return;
	free(p->peers[0].adv_in);
	free(p->peers[0].adv_out);
	for (int q = 0; q < p->nranks; q++) {
		p->peers[q].adv_in = NULL;
		p->peers[q].adv_out = NULL;
	}
}
