/*
 * rndv.c - rendezvous for messages above eager_size.
 *
 *   sender                              receiver
 *   RTS {tag, len, sig, sid}   ---->    match; register the user buffer
 *                                       (registration cache, REMOTE_WRITE)
 *                              <----    CTS {addr, key, sid, rid}
 *   writes of rndv_chunk bytes ---->    (straight into the user buffer)
 *   last one with imm RNDV|rid ---->    receive complete
 *   its local completion: send complete
 *
 * A receive too small for the message, or with another signature, answers
 * NAK {code, sizes, signatures} instead of CTS: nothing is written and both
 * ends fail with the same code.
 */
#include <stdio.h>

#include "p2p/p2p_priv.h"

int p2p_rts_post(struct hop_p2p *p, struct hop_p2p_req *r)
{
	struct hop_ctl m = { .type = HOP_MSG_RTS };
	int ret;

	m.u.rts.tag = r->tag;
	m.u.rts.len = r->len;
	m.u.rts.sig = r->sig;
	m.u.rts.sid = (uint32_t)RQ_ID(r);
	m.u.rts.seq = p->peers[r->peer].send_seq;
	if ((ret = p2p_ctl_post_now(p, r->peer, &m)))
		return ret;
	p2p_adv_sent(p, r->peer, r->tag);
	if (RQ_STATE(r) == ST_SENDQ)
		hop_rlist_remove(&p->peers[r->peer].sendq, r);
	RQ_STATE(r) = ST_WAIT_CTS;
	/* waiting for its clear to send: a close of the peer ends the wait */
	p2p_waited_add(p, r->peer);
	return 0;
}

int p2p_rts_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m)
{
	struct p2p_peer *pp = &p->peers[peer];
	struct hop_p2p_req *r;
	struct hop_ux *ux;
	int ret;

	if (m->u.rts.len <= p->eager_size)
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL,
				     "p2p: rank %d announced a rendezvous of "
				     "only %llu B", peer,
				     (unsigned long long)m->u.rts.len);
	pp->msg_recv++;
	if ((r = hop_match_take_posted(&pp->mq, m->u.rts.tag))) {
		p2p_adv_taken(p, r);
		if (!p2p_check_match(p, r, peer, m->u.rts.len, m->u.rts.sig,
				     m->u.rts.sid))
			p2p_rndv_recv_start(p, r, m->u.rts.len, m->u.rts.sid);
		return 0;
	}
	if ((ret = p2p_ux_new(p, peer, 0, "a rendezvous request", &ux)))
		return ret;
	ux->kind = HOP_UX_RTS;
	ux->tag = m->u.rts.tag;
	ux->len = m->u.rts.len;
	ux->sig = m->u.rts.sig;
	ux->sid = m->u.rts.sid;
	hop_match_add_unexp(&pp->mq, ux);
	p2p_collsig_unexpected(p, peer, ux->tag, ux->len, ux->sig);
	return 0;
}

/* Receive @r matched an RTS of @len bytes (checked to fit): clear to send. */
void p2p_rndv_recv_start(struct hop_p2p *p, struct hop_p2p_req *r,
			 uint64_t len, uint32_t sid)
{
	struct hop_ctl m = { .type = HOP_MSG_CTS };
	struct hop_rc_entry *e;
	uint32_t rid;
	int ret;

	ret = hop_regcache_get(&p->rc, r->buf, len, HOP_PROV_REMOTE_WRITE, &e);
	if (ret == 0 && hop_idtab_alloc(&p->rids, r, &rid)) {
		hop_regcache_put(&p->rc, e);
		ret = HOP_ERR_NO_MEMORY;
	}
	if (ret) {
		struct hop_ctl nak = { .type = HOP_MSG_NAK };

		nak.u.nak.tag = r->tag;
		nak.u.nak.slen = len;
		nak.u.nak.rlen = r->len;
		nak.u.nak.code = ret < 0 ? ret : HOP_ERR_TRANSPORT;
		nak.u.nak.sid = sid;
		nak.u.nak.ssig = nak.u.nak.rsig = r->sig;
		p2p_ctl_send(p, r->peer, &nak);
		hop_set_error(p->comm, nak.u.nak.code, "recv from rank %d: "
			      "registering the %llu B receive buffer %p "
			      "failed: %s", r->peer, (unsigned long long)len,
			      r->buf, hop_strerror(ret));
		p2p_complete(p, r, nak.u.nak.code);
		return;
	}
	RQ_RCE(r) = (uint64_t)(uintptr_t)e;
	RQ_ID(r) = rid;
	RQ_MLEN(r) = len;
	RQ_STATE(r) = ST_RNDV_RECV;
	m.u.cts.addr = (uint64_t)(uintptr_t)r->buf;
	m.u.cts.key = e->mr->key;
	m.u.cts.sid = sid;
	m.u.cts.rid = rid;
	p2p_ctl_send(p, r->peer, &m);
}

static struct hop_p2p_req *sid_req(struct hop_p2p *p, int peer, uint32_t sid,
				   int state, const char *what)
{
	struct hop_p2p_req *r = hop_idtab_get(&p->sids, sid);

	if (!r || r->peer != peer || (int)RQ_STATE(r) != state) {
		hop_comm_fail(p->comm, HOP_ERR_PROTOCOL,
			      "p2p: %s from rank %d names send id %u, which "
			      "is not waiting for it", what, peer, sid);
		return NULL;
	}
	return r;
}

int p2p_cts_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m)
{
	struct hop_p2p_req *r;
	struct hop_rc_entry *e;
	int ret;

	if (!(r = sid_req(p, peer, m->u.cts.sid, ST_WAIT_CTS, "CTS")))
		return HOP_ERR_PROTOCOL;
	ret = hop_regcache_get(&p->rc, r->buf, r->len, 0, &e);
	if (ret)
		return hop_comm_fail(p->comm, ret < 0 ? ret : HOP_ERR_TRANSPORT,
				     "p2p: send to rank %d: registering the "
				     "%zu B source buffer %p failed: %s", peer,
				     r->len, r->buf, hop_strerror(ret));
	RQ_RCE(r) = (uint64_t)(uintptr_t)e;
	RQ_RADDR(r) = m->u.cts.addr;
	RQ_RKEY(r) = m->u.cts.key;
	RQ_RID(r) = m->u.cts.rid;
	RQ_OFF(r) = 0;
	RQ_STATE(r) = ST_RNDV_WRITE;
	hop_rlist_push(&p->rndv_active, r);
	return p2p_rndv_push(p, r);
}

/* Post the remaining chunks of @r (in rndv_active) until the provider is
 * full. Returns 0 or a failure code. */
int p2p_rndv_push(struct hop_p2p *p, struct hop_p2p_req *r)
{
	struct hop_rc_entry *e = rq_rce(r);
	const unsigned char *buf = r->buf;

	while (RQ_OFF(r) < r->len) {
		size_t off = RQ_OFF(r), chunk = r->len - off;
		unsigned flags = 0;
		uint32_t imm = 0;
		int ret;

		if (chunk > p->rndv_chunk) {
			chunk = p->rndv_chunk;
		} else {
			flags = HOP_WR_IMM | HOP_WR_SIGNALED;
			imm = hop_imm_make(HOP_IMM_RNDV, (uint32_t)RQ_RID(r));
		}
		ret = p->ops->post_write(p->prov, r->peer, e->mr, buf + off,
					 chunk, RQ_RADDR(r) + off, RQ_RKEY(r),
					 imm, flags, WR_RNDV | RQ_ID(r));
		if (ret == HOP_PROV_AGAIN)
			return 0;
		if (ret < 0)
			return ret;
		p->peers[r->peer].dirty = 1;
		RQ_OFF(r) = off + chunk;
	}
	hop_rlist_remove(&p->rndv_active, r);
	RQ_STATE(r) = ST_RNDV_LAST;
	return 0;
}

/* Local completion of the last write of a rendezvous send. */
int p2p_rndv_write_done(struct hop_p2p *p, const struct hop_cqe *c)
{
	uint32_t sid = (uint32_t)WR_VAL(c->wr_id);
	struct hop_p2p_req *r;

	if (!(r = sid_req(p, c->peer, sid, ST_RNDV_LAST, "write completion")))
		return HOP_ERR_PROTOCOL;
	hop_idtab_free(&p->sids, sid);
	hop_regcache_put(&p->rc, rq_rce(r));
	RQ_RCE(r) = 0;
	r->bytes = c->status ? 0 : r->len;
	p2p_complete(p, r, c->status);
	return 0;
}

/* RECV_IMM of the last write of a rendezvous receive. */
int p2p_rndv_recv_done(struct hop_p2p *p, const struct hop_cqe *c)
{
	uint32_t rid = hop_imm_val(c->imm);
	struct hop_p2p_req *r = hop_idtab_get(&p->rids, rid);

	if (!r || r->peer != c->peer || RQ_STATE(r) != ST_RNDV_RECV)
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL,
				     "p2p: rank %d completed rendezvous %u, "
				     "which is not in progress", c->peer, rid);
	hop_idtab_free(&p->rids, rid);
	hop_regcache_put(&p->rc, rq_rce(r));
	RQ_RCE(r) = 0;
	r->bytes = RQ_MLEN(r);
	p2p_complete(p, r, 0);
	return 0;
}

int p2p_nak_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m)
{
	int code = m->u.nak.code;
	struct hop_p2p_req *r = NULL;
	char tag[48];

	p2p_tag_str(m->u.nak.tag, tag, sizeof(tag));
	if (m->u.nak.sid != HOP_NO_ID) {
		if (!(r = sid_req(p, peer, m->u.nak.sid, ST_WAIT_CTS, "NAK")))
			return HOP_ERR_PROTOCOL;
		hop_idtab_free(&p->sids, m->u.nak.sid);
	}
	if (code == HOP_ERR_MISMATCH)
		hop_comm_fail(p->comm, code, "p2p: mismatched operations: rank "
			      "%d sent to rank %d tag %s with signature "
			      "0x%08x (%llu B), rank %d expected signature "
			      "0x%08x", p->rank, peer, tag,
			      m->u.nak.ssig,
			      (unsigned long long)m->u.nak.slen, peer,
			      m->u.nak.rsig);
	else if (code == HOP_ERR_TRUNCATED)
		hop_set_error(p->comm, code, "send to rank %d tag %s: the "
			      "%llu B message does not fit rank %d's %llu B "
			      "receive buffer", peer, tag,
			      (unsigned long long)m->u.nak.slen, peer,
			      (unsigned long long)m->u.nak.rlen);
	else
		hop_set_error(p->comm, code, "send to rank %d tag %s (%llu B):"
			      " the receiver failed: %s", peer, tag,
			      (unsigned long long)m->u.nak.slen,
			      hop_strerror(code));
	if (r)
		p2p_complete(p, r, code);
	else if (code != HOP_ERR_MISMATCH)
		HOP_WARN("%s", p->comm->last_error);
	return 0;
}
