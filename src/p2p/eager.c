/*
 * eager.c - starting sends and receives (hop_p2p_isend/irecv), the eager
 * protocol (one write of header + payload into the peer's next slot, with
 * an immediate naming the slot), matching checks, and messages to self.
 */
#include <stdio.h>
#include <string.h>

#include "core/copy.h"
#include "p2p/p2p_priv.h"

static void req_init(struct hop_p2p_req *r, int kind, int peer, uint64_t tag,
		     const void *buf, size_t len, uint32_t sig)
{
	r->done = 0;
	r->status = 0;
	r->bytes = 0;
	r->peer = peer;
	r->tag = tag;
	r->kind = kind;
	r->buf = (void *)(uintptr_t)buf;
	r->len = len;
	r->sig = sig;
	memset(r->priv, 0, sizeof(r->priv));
	r->next = r->prev = NULL;
}

static int check_peer(struct hop_p2p *p, const char *what, int peer,
		      const void *buf, size_t len)
{
	if (peer < 0 || peer >= p->nranks)
		return hop_set_error(p->comm, HOP_ERR_INVALID_ARG,
				     "p2p: %s rank %d out of range (comm has "
				     "%d ranks)", what, peer, p->nranks);
	if (!buf && len)
		return hop_set_error(p->comm, HOP_ERR_INVALID_ARG,
				     "p2p: %s rank %d: buffer is NULL with "
				     "len %zu", what, peer, len);
	return 0;
}

void p2p_eager_hdr(const struct hop_p2p *p, const struct p2p_peer *pp,
		   uint64_t tag, size_t len, uint32_t sig,
		   struct hop_eager_hdr *h)
{
	h->tag = tag;
	h->len = (uint32_t)len;
	h->sig = sig;
	h->seq = pp->send_seq;
	h->credits = (uint16_t)(pp->cr.owed > 0xffff ? 0xffff : pp->cr.owed);
	h->type = HOP_MSG_EAGER;
	h->flags = 0;
	h->src = (uint32_t)p->rank;
}

void p2p_eager_sent(struct hop_p2p *p, int peer, const struct hop_eager_hdr *h)
{
	struct p2p_peer *pp = &p->peers[peer];

	p2p_ll_note_send(p, peer);
	p2p_adv_sent(p, peer, h->tag);
	hop_credit_take(&pp->cr);
	hop_credit_returned(&pp->cr, h->credits);
	pp->dirty = 1;
	pp->send_seq++;
}

/*
 * Post @r eagerly if a credit (and, above max_inline, a staging slot) is
 * available. Returns 0 (posted, @r complete), HOP_PROV_AGAIN, or a failure.
 */
int p2p_eager_post(struct hop_p2p *p, struct hop_p2p_req *r)
{
	struct p2p_peer *pp = &p->peers[r->peer];
	size_t wlen = HOP_EAGER_HDR + r->len;
	uint32_t slot, idx = 0;
	struct hop_eager_hdr h;
	unsigned char *dst;
	uint64_t raddr;
	int ret;

	if (!pp->cr.avail)
		return HOP_PROV_AGAIN;
	slot = pp->send_seq % p->slots;
	raddr = p2p_send_slot_raddr(p, pp);
	p2p_eager_hdr(p, pp, r->tag, r->len, r->sig, &h);
	if (p2p_ll_usable(p, r->peer, r->len)) {
		ret = p2p_ll_post(p, r->peer, &h, r->buf, raddr);
	} else if (wlen <= p->inl_len) {
		dst = p->inl;
		hop_eager_hdr_encode(dst, &h);
		if (r->len)
			hop_copy(dst + HOP_EAGER_HDR, r->buf, r->len);
		ret = p->ops->post_write(p->prov, r->peer, NULL, dst, wlen,
					 raddr, pp->ring_rkey,
					 hop_imm_make(HOP_IMM_EAGER, slot),
					 HOP_WR_IMM, 0);
	} else {
		if (!p->stage_nfree)
			return HOP_PROV_AGAIN;
		idx = p->stage_free[--p->stage_nfree];
		dst = p->stage + (size_t)idx * p->slot_bytes;
		hop_eager_hdr_encode(dst, &h);
		if (r->len)
			hop_copy(dst + HOP_EAGER_HDR, r->buf, r->len);
		ret = p->ops->post_write(p->prov, r->peer, p->stage_mr, dst,
					 wlen, raddr, pp->ring_rkey,
					 hop_imm_make(HOP_IMM_EAGER, slot),
					 HOP_WR_IMM | HOP_WR_SIGNALED,
					 WR_STAGE | idx);
		if (ret)
			p->stage_free[p->stage_nfree++] = idx;
	}
	if (ret)
		return ret;
	p2p_eager_sent(p, r->peer, &h);
	if (RQ_STATE(r) == ST_SENDQ)
		hop_rlist_remove(&pp->sendq, r);
	r->bytes = r->len;
	p2p_complete(p, r, 0);
	return 0;
}

int p2p_send_post(struct hop_p2p *p, struct hop_p2p_req *r)
{
	int ret = p2p_adv_send(p, r);

	if (ret)
		return ret == P2P_ADV_SENT ? 0 : ret;
	return r->len <= p->eager_size ? p2p_eager_post(p, r)
				       : p2p_rts_post(p, r);
}

int hop_p2p_isend(struct hop_comm *comm, struct hop_p2p_req *r, int peer,
		  uint64_t tag, const void *buf, size_t len, uint32_t sig)
{
	struct hop_p2p *p = comm->p2p;
	struct p2p_peer *pp;
	uint32_t id;
	int ret;

	req_init(r, P2P_KIND_SEND, peer, tag, buf, len, sig);
	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	if ((ret = p2p_failed(comm)))
		return ret;
	if ((ret = check_peer(p, "send to", peer, buf, len)))
		return ret;
	p->post_depth++;
	if (peer == p->rank) {
		ret = p2p_self_send(p, r);
		goto out;
	}
	pp = &p->peers[peer];
	if (len > p->eager_size) {
		if (hop_idtab_alloc(&p->sids, r, &id)) {
			ret = hop_comm_fail(comm, HOP_ERR_NO_MEMORY,
					    "p2p: out of memory starting a "
					    "rendezvous send to rank %d", peer);
			goto out;
		}
		RQ_ID(r) = id;
	}
	ret = pp->sendq.head ? HOP_PROV_AGAIN : p2p_send_post(p, r);
	if (ret < 0 && len > p->eager_size)
		hop_idtab_free(&p->sids, RQ_ID(r));
	if (ret == HOP_PROV_AGAIN) {
		RQ_STATE(r) = ST_SENDQ;
		hop_rlist_push(&pp->sendq, r);
		p2p_backlog_add(p, peer);
		/* waiting for its credits: a close of @peer ends the wait */
		p2p_waited_add(p, peer);
		ret = 0;
	}
out:
	p->post_depth--;
	return ret;
}

int hop_p2p_irecv(struct hop_comm *comm, struct hop_p2p_req *r, int peer,
		  uint64_t tag, void *buf, size_t len, uint32_t sig)
{
	return hop_p2p_irecv_match(comm, r, peer, tag, 0, buf, len, sig);
}

static struct hop_match *peer_mq(void *arg, int q)
{
	return &((struct hop_p2p *)arg)->peers[q].mq;
}

int hop_p2p_irecv_match(struct hop_comm *comm, struct hop_p2p_req *r,
			int peer, uint64_t tag, uint64_t ignore, void *buf,
			size_t len, uint32_t sig)
{
	struct hop_p2p *p = comm->p2p;
	struct hop_ux *ux;
	int ret, q = peer;

	req_init(r, P2P_KIND_RECV, peer, tag, buf, len, sig);
	HOP_MATCH_IGNORE(r) = ignore;
	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	if ((ret = p2p_failed(comm)))
		return ret;
	if (peer != HOP_MATCH_ANY_PEER &&
	    (ret = check_peer(p, "receive from", peer, buf, len)))
		return ret;
	p->post_depth++;
	if (peer == HOP_MATCH_ANY_PEER)
		q = hop_match_oldest_unexp(peer_mq, p, p->nranks, r, &ux);
	else
		ux = hop_match_find_unexp(&p->peers[peer].mq, r);
	if (ux) {
		hop_match_remove_unexp(&p->peers[q].mq, ux);
		r->peer = q;
		r->tag = ux->tag;
		HOP_MATCH_IGNORE(r) = 0;
		p2p_deliver_ux(p, r, ux);
	} else {
		RQ_STATE(r) = ST_POSTED;
		if (peer == HOP_MATCH_ANY_PEER) {
			hop_match_post_any(&p->any, r);
		} else {
			hop_match_post(&p->peers[peer].mq, r);
			p2p_waited_add(p, peer);
			/* waiting on @peer: with connections made on first
			 * use it is connected, and so watched, from now (a
			 * failure is the comm's, which the wait reports) */
			if (peer != p->rank)
				(void)hop_prov_connect(p->ops, p->prov, peer);
			p2p_adv_post(p, r);
		}
	}
	p->post_depth--;
	return 0;
}

/*
 * A message from @peer of @len bytes with signature @sig matched receive
 * @r: check signature and size. On a problem the receive fails, the
 * sender is told (NAK with its id @sid, HOP_NO_ID for eager) and the code
 * is returned.
 */
int p2p_check_match(struct hop_p2p *p, struct hop_p2p_req *r, int peer,
		    uint64_t len, uint32_t sig, uint32_t sid)
{
	struct hop_ctl nak = { .type = HOP_MSG_NAK };
	char tag[48];
	int code;

	if (sig == r->sig && len <= r->len)
		return 0;
	p2p_tag_str(r->tag, tag, sizeof(tag));
	nak.u.nak.tag = r->tag;
	nak.u.nak.slen = len;
	nak.u.nak.rlen = r->len;
	nak.u.nak.sid = sid;
	nak.u.nak.ssig = sig;
	nak.u.nak.rsig = r->sig;
	code = sig != r->sig ? HOP_ERR_MISMATCH : HOP_ERR_TRUNCATED;
	nak.u.nak.code = code;
	/* an eager sender that already closed has nothing left to fail */
	if (peer != p->rank &&
	    !(sid == HOP_NO_ID && p2p_peer_closed(p, peer)))
		p2p_ctl_send(p, peer, &nak);
	if (code == HOP_ERR_MISMATCH)
		hop_comm_fail(p->comm, code, "p2p: mismatched operations: rank "
			      "%d posted a receive from rank %d tag %s with "
			      "signature 0x%08x, rank %d sent one with "
			      "signature 0x%08x (%llu B)", p->rank, peer, tag,
			      r->sig, peer, sig, (unsigned long long)len);
	else
		hop_set_error(p->comm, code, "recv from rank %d tag %s: the "
			      "%llu B message does not fit the %zu B receive "
			      "buffer (nothing was written)", peer, tag,
			      (unsigned long long)len, r->len);
	r->bytes = 0;
	p2p_complete(p, r, code);
	return code;
}

/* Receive @r matched the unexpected message @ux (which it consumes). */
void p2p_deliver_ux(struct hop_p2p *p, struct hop_p2p_req *r,
		    struct hop_ux *ux)
{
	struct hop_p2p_req *s;
	int ret;

	switch (ux->kind) {
	case HOP_UX_EAGER:
		if (!p2p_check_match(p, r, r->peer, ux->len, ux->sig,
				     HOP_NO_ID)) {
			if (ux->len)
				hop_copy(r->buf, ux->data, ux->len);
			r->bytes = ux->len;
			p2p_complete(p, r, 0);
		}
		break;
	case HOP_UX_RTS:
		if (!p2p_check_match(p, r, r->peer, ux->len, ux->sig, ux->sid))
			p2p_rndv_recv_start(p, r, ux->len, ux->sid);
		break;
	case HOP_UX_SELF:
		s = ux->sreq;
		ret = p2p_check_match(p, r, r->peer, ux->len, ux->sig,
				      HOP_NO_ID);
		if (!ret) {
			hop_copy(r->buf, s->buf, s->len);
			r->bytes = s->len;
			p2p_complete(p, r, 0);
		}
		s->bytes = ret ? 0 : s->len;
		p2p_complete(p, s, ret);
		break;
	}
	hop_ux_put(&p->uxpool, ux);
}

int p2p_ux_fail(struct hop_p2p *p, int q, size_t bytes, const char *what)
{
	const struct hop_ux_pool *u = &p->uxpool;

	if (!hop_ux_full(u, bytes))
		return hop_comm_fail(p->comm, HOP_ERR_NO_MEMORY, "p2p: out of "
				     "memory keeping %s from rank %d", what, q);
	return hop_comm_fail(p->comm, HOP_ERR_NO_MEMORY, "p2p: %s from rank "
			     "%d would pass HOP_UNEXPECTED_MAX (%zu B): that "
			     "much is held by messages and put immediates no "
			     "call asked for yet, %zu of them messages from "
			     "rank %d; receive sooner, or raise "
			     "HOP_UNEXPECTED_MAX", what, q, u->max_held,
			     p->peers[q].mq.unexp.count, q);
}

int p2p_ux_new(struct hop_p2p *p, int q, int with_data, const char *what,
	       struct hop_ux **out)
{
	if (!hop_ux_get(&p->uxpool, with_data, out))
		return 0;
	return p2p_ux_fail(p, q, hop_ux_entry_bytes(&p->uxpool, with_data),
			   what);
}

/* A send to this rank: matched at once, or kept as unexpected (small ones
 * copied, so the send completes; large ones keep the sender's buffer). */
int p2p_self_send(struct hop_p2p *p, struct hop_p2p_req *r)
{
	struct p2p_peer *pp = &p->peers[p->rank];
	struct hop_p2p_req *rr = hop_match_take_posted(&pp->mq, r->tag);
	struct hop_ux *ux;
	int ret;

	if (rr) {
		ret = p2p_check_match(p, rr, p->rank, r->len, r->sig,
				      HOP_NO_ID);
		if (!ret) {
			if (r->len)
				hop_copy(rr->buf, r->buf, r->len);
			rr->bytes = r->len;
			p2p_complete(p, rr, 0);
		}
		r->bytes = ret ? 0 : r->len;
		p2p_complete(p, r, ret);
		return 0;
	}
	if ((ret = p2p_ux_new(p, p->rank, r->len <= p->eager_size,
			      "a message to itself", &ux)))
		return ret;
	ux->tag = r->tag;
	ux->len = r->len;
	ux->sig = r->sig;
	if (r->len <= p->eager_size) {
		ux->kind = HOP_UX_EAGER;
		if (r->len)
			hop_copy(ux->data, r->buf, r->len);
		hop_match_add_unexp(&pp->mq, ux);
		r->bytes = r->len;
		p2p_complete(p, r, 0);
	} else {
		ux->kind = HOP_UX_SELF;
		ux->sreq = r;
		RQ_STATE(r) = ST_SELF_UX;
		hop_match_add_unexp(&pp->mq, ux);
	}
	return 0;
}

/* RECV_IMM of an eager slot. */
int p2p_eager_arrived(struct hop_p2p *p, const struct hop_cqe *c)
{
	int q = c->peer;
	struct p2p_peer *pp = &p->peers[q];
	uint32_t slot = hop_imm_val(c->imm), want = pp->recv_seq % p->slots;

	if (slot != want)
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL,
				     "p2p: eager message from rank %d landed "
				     "in slot %u, expected slot %u", q, slot,
				     want);
	return p2p_eager_deliver(p, q, p2p_ring_slot(p, q, pp->recv_seq),
				 c->len);
}

int p2p_eager_accept(struct hop_p2p *p, int q, const struct hop_eager_hdr *h)
{
	struct p2p_peer *pp = &p->peers[q];

	if (h->seq != pp->recv_seq || h->src != (uint32_t)q)
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL,
				     "p2p: eager message from rank %d has "
				     "sequence %u (expected %u) and source "
				     "%u", q, h->seq, pp->recv_seq, h->src);
	pp->recv_seq++;
	pp->msg_recv++;
	return p2p_grant(p, q, h->credits);
}

/* The eager message @msg (@written bytes, header + payload) is the next
 * one from @q: match it or keep it, and free its slot. */
int p2p_eager_deliver(struct hop_p2p *p, int q, const unsigned char *msg,
		      size_t written)
{
	struct p2p_peer *pp = &p->peers[q];
	struct hop_eager_hdr h;
	struct hop_p2p_req *r;
	char err[160];
	int ret;

	if ((ret = hop_eager_hdr_decode(msg, written, p->eager_size, &h, err,
					sizeof(err))))
		return hop_comm_fail(p->comm, ret, "p2p: from rank %d: %s", q,
				     err);
	if ((ret = p2p_eager_accept(p, q, &h)))
		return ret;
	if ((r = hop_match_take_posted(&pp->mq, h.tag))) {
		p2p_adv_taken(p, r);
		if (!p2p_check_match(p, r, q, h.len, h.sig, HOP_NO_ID)) {
			if (h.len)
				hop_copy(r->buf, msg + HOP_EAGER_HDR, h.len);
			r->bytes = h.len;
			p2p_complete(p, r, 0);
		}
	} else {
		struct hop_ux *ux;

		if ((ret = p2p_ux_new(p, q, 1, "an eager message", &ux)))
			return ret;
		ux->kind = HOP_UX_EAGER;
		ux->tag = h.tag;
		ux->len = h.len;
		ux->sig = h.sig;
		if (h.len)
			hop_copy(ux->data, msg + HOP_EAGER_HDR, h.len);
		hop_match_add_unexp(&pp->mq, ux);
		p2p_collsig_unexpected(p, q, h.tag, h.len, h.sig);
	}
	p2p_credit_freed(p, q);
	return 0;
}
