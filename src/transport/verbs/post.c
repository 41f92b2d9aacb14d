/*
 * post.c - the send side of the verbs provider: RDMA write (with
 * immediate), SEND, the receive reposting helper, and the send-queue
 * accounting behind selective signalling (pure, unit tested).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "transport/verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* send-queue accounting (pure)                                       */

int vrb_sq_init(struct vrb_sq *sq, uint32_t depth, uint32_t every)
{
	memset(sq, 0, sizeof(*sq));
	if (depth < 2)
		return HOP_ERR_INVALID_ARG;
	sq->pend = calloc(depth, sizeof(*sq->pend));
	if (!sq->pend)
		return HOP_ERR_NO_MEMORY;
	sq->depth = depth;
	/* at least one signalled WR in every half queue, so a full queue
	 * always has a completion coming that frees room */
	if (every < 1)
		every = 1;
	if (every > depth / 2)
		every = depth / 2;
	sq->every = every;
	return 0;
}

void vrb_sq_fini(struct vrb_sq *sq)
{
	free(sq->pend);
	sq->pend = NULL;
	sq->pend_count = 0;
}

int vrb_sq_signal(const struct vrb_sq *sq, int want, int force)
{
	if (force)
		return 1;
	if (sq->unsig + 1 >= sq->every)
		return 1;
	if (sq->posted - sq->done + 1 >= sq->depth)
		return 1;
	/* idle QP: signal it, no flush will be needed */
	if (want && sq->posted == sq->done)
		return 1;
	return 0;
}

void vrb_sq_commit(struct vrb_sq *sq, int want, int signaled, uint64_t wr_id,
		   int op, uint64_t now_ns)
{
	uint64_t seq = sq->posted++;

	if (signaled) {
		sq->unsig = 0;
		sq->sig_end = seq + 1;
	} else {
		sq->unsig++;
	}
	if (want) {
		struct vrb_pend *e =
			&sq->pend[(sq->pend_head + sq->pend_count) % sq->depth];

		e->seq = seq;
		e->wr_id = wr_id;
		e->op = (uint8_t)op;
		sq->pend_count++;
		if (!signaled)
			sq->tail_ns = now_ns;
	}
}

void vrb_sq_complete(struct vrb_sq *sq, uint64_t seq)
{
	if (seq + 1 > sq->done && seq < sq->posted)
		sq->done = seq + 1;
}

int vrb_sq_pop_any(struct vrb_sq *sq, uint64_t *wr_id, int *op)
{
	struct vrb_pend *e;

	if (!sq->pend_count)
		return 0;
	e = &sq->pend[sq->pend_head];
	*wr_id = e->wr_id;
	*op = e->op;
	sq->pend_head = (sq->pend_head + 1) % sq->depth;
	sq->pend_count--;
	return 1;
}

int vrb_sq_pop(struct vrb_sq *sq, uint64_t *wr_id, int *op)
{
	if (!sq->pend_count || sq->pend[sq->pend_head].seq >= sq->done)
		return 0;
	return vrb_sq_pop_any(sq, wr_id, op);
}

int vrb_sq_need_flush(const struct vrb_sq *sq, uint64_t now_ns,
		      uint64_t delay_ns)
{
	const struct vrb_pend *last;

	if (!sq->pend_count)
		return 0;
	last = &sq->pend[(sq->pend_head + sq->pend_count - 1) % sq->depth];
	if (last->seq < sq->sig_end)
		return 0;       /* a signalled WR after it will complete it */
	return now_ns - sq->tail_ns >= delay_ns;
}

/* ------------------------------------------------------------------ */
/* posting                                                            */

size_t vrb_max_inline(const struct hop_prov *prov)
{
	return prov->max_inline;
}

static int check_peer(struct hop_prov *prov, int peer, struct vrb_peer **out)
{
	struct vrb_peer *p;
	int failed = prov->pctx->failed(prov->pctx);

	if (failed)
		return failed;  /* the cause is in the comm's message */
	if (peer < 0 || peer >= prov->nranks)
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
				     "verbs: rank %d: post to rank %d, not in 0..%d",
				     prov->rank, peer, prov->nranks - 1);
	p = &prov->peers[peer];
	if (p->state == VRB_PEER_RTS)
		*out = p;
	else if (p->state == VRB_PEER_CLOSED)
		return vrb_peer_fail(prov, p, HOP_ERR_PEER_FAILED,
				     "post after the peer closed its communicator");
	else if (prov->lazy)
		return vrb_lazy_want(prov, p);
	else
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT, "post on a QP "
				     "that is not connected");
	return 0;
}

/* Post @wr on @p and account it; the caller filled all but wr_id/flags. */
static int post(struct hop_prov *prov, struct vrb_peer *p, struct ibv_send_wr *wr,
		int want, int force, uint64_t wr_id, int op, const char *what)
{
	struct ibv_send_wr *bad = NULL;
	int sig = vrb_sq_signal(&p->sq, want, force);
	int rc;

	wr->wr_id = VRB_WRID(p->rank, p->sq.posted);
	if (sig)
		wr->send_flags |= IBV_SEND_SIGNALED;
	rc = ibv_post_send(p->qp, wr, &bad);
	if (rc == ENOMEM)
		return HOP_PROV_AGAIN;  /* the device's queue is shorter */
	if (rc)
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT,
				     "ibv_post_send(%s): %s", what, strerror(rc));
	vrb_sq_commit(&p->sq, want, sig, wr_id, op,
		      want && !sig ? hop_now_ns() : 0);
	if (want && !sig)
		vrb_mark_dirty(prov, p);
	return 0;
}

/* SEND of @len <= HOP_PROV_SEND_MAX bytes: inline, or via a bounce slot. */
static void send_sge(struct hop_prov *prov, struct vrb_peer *p, const void *buf,
		     size_t len, struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	memset(sge, 0, sizeof(*sge));
	sge->length = (uint32_t)len;
	if (len && len <= prov->max_inline) {
		sge->addr = (uintptr_t)buf;
		wr->send_flags |= IBV_SEND_INLINE;
	} else if (len) {
		/* slot of this WR's sequence: free, since the WR that used it
		 * depth posts ago has completed (the queue is not full) */
		uint8_t *slot = p->sbuf + (p->sq.posted % p->sq.depth) * VRB_RBUF;

		memcpy(slot, buf, len);
		sge->addr = (uintptr_t)slot;
		sge->lkey = p->slkey;
	}
	wr->sg_list = sge;
	wr->num_sge = len ? 1 : 0;
}

/* Internal control message: a SEND with immediate @what and a payload. */
static int post_ctrl(struct hop_prov *prov, struct vrb_peer *p, uint32_t what,
		     const void *data, size_t len, int want, uint64_t wr_id, int op)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;

	if (vrb_sq_full(&p->sq))
		return HOP_PROV_AGAIN;
	memset(&wr, 0, sizeof(wr));
	send_sge(prov, p, data, len, &wr, &sge);
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(what);
	return post(prov, p, &wr, want, !want, wr_id, op, "control message");
}

/*
 * A write longer than the port's max_msg_sz: consecutive plain writes of
 * at most max_msg_sz, all posted or none (AGAIN); the immediate then goes
 * in a control message carrying it and the total length (the target turns
 * it into one RECV_IMM), and the caller's completion rides on the last WR.
 * RC delivers and completes them in order.
 */
static int post_split(struct hop_prov *prov, struct vrb_peer *p, uint32_t lkey,
		      const void *laddr, size_t len, uint64_t raddr,
		      uint64_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id)
{
	uint64_t k = (len + prov->max_msg - 1) / prov->max_msg;
	int want = !!(flags & HOP_WR_SIGNALED), with_imm = !!(flags & HOP_WR_IMM);
	size_t off = 0;
	int rc;

	if (k + 1 > p->sq.depth / 2)
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
				     "verbs: write of %zu bytes to rank %d: more than "
				     "%u x max_msg_sz %llu", len, p->rank,
				     p->sq.depth / 2 - 1, (unsigned long long)prov->max_msg);
	if (p->sq.posted - p->sq.done + k + 1 > p->sq.depth ||
	    p->sq.pend_count >= p->sq.depth)
		return HOP_PROV_AGAIN;
	while (off < len) {
		size_t n = len - off < prov->max_msg ? len - off : (size_t)prov->max_msg;
		int last = off + n == len && !with_imm;
		struct ibv_send_wr wr;
		struct ibv_sge sge;

		sge.addr = (uintptr_t)laddr + off;
		sge.length = (uint32_t)n;
		sge.lkey = lkey;
		memset(&wr, 0, sizeof(wr));
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = raddr + off;
		wr.wr.rdma.rkey = (uint32_t)rkey;
		rc = post(prov, p, &wr, last && want, 0, wr_id, HOP_CQE_WRITE,
			  "RDMA write (part)");
		if (rc)
			goto err;
		off += n;
	}
	if (with_imm) {
		uint8_t msg[12];

		memcpy(msg, &imm, 4);
		memcpy(msg + 4, &(uint64_t){ len }, 8);
		rc = post_ctrl(prov, p, VRB_CTRL_IMM, msg, sizeof(msg), want, wr_id,
			       HOP_CQE_WRITE);
		if (rc)
			goto err;
	}
	return 0;
err:    /* AGAIN cannot happen (room was checked) unless the device lies */
	return rc < 0 ? rc : vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT, "device send "
					   "queue shorter than %u WRs", p->sq.depth);
}

int vrb_post_write(struct hop_prov *prov, int peer, struct hop_prov_mr *lmr,
		   const void *laddr, size_t len, uint64_t raddr,
		   uint64_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct vrb_peer *p;
	int rc, inl;

	if ((rc = check_peer(prov, peer, &p)))
		return rc;
	if (len && !laddr)
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
				     "verbs: write of %zu bytes to rank %d from NULL",
				     len, peer);
	inl = len && len <= prov->max_inline;
	memset(&sge, 0, sizeof(sge));
	if (len && !inl) {
		struct vrb_mr *m = (struct vrb_mr *)lmr;
		const char *a = laddr, *base;

		if (!m || m->magic != VRB_MR_MAGIC || !m->mr)
			return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
					     "verbs: write of %zu bytes to rank %d needs a "
					     "registered source (max inline %u)", len,
					     peer, prov->max_inline);
		base = m->pub.addr;
		if (a < base || len > m->pub.len || (size_t)(a - base) > m->pub.len - len)
			return prov->pctx->error(prov->pctx, HOP_ERR_OUT_OF_BOUNDS,
					     "verbs: write source [%p, +%zu) to rank %d "
					     "is outside its region [%p, +%zu)", laddr,
					     len, peer, m->pub.addr, m->pub.len);
		sge.lkey = m->mr->lkey;
	}
	if (len > prov->max_msg)
		return post_split(prov, p, sge.lkey, laddr, len, raddr, rkey, imm,
				  flags, wr_id);
	if (vrb_sq_full(&p->sq))
		return HOP_PROV_AGAIN;
	sge.addr = (uintptr_t)laddr;
	sge.length = (uint32_t)len;
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	wr.opcode = (flags & HOP_WR_IMM) ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr.send_flags = inl ? IBV_SEND_INLINE : 0;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = (uint32_t)rkey;
	return post(prov, p, &wr, !!(flags & HOP_WR_SIGNALED), 0, wr_id,
		    HOP_CQE_WRITE, "RDMA write");
}

int vrb_post_send(struct hop_prov *prov, int peer, const void *buf,
		  size_t len, unsigned flags, uint64_t wr_id)
{
	struct ibv_send_wr wr;
	struct ibv_sge sge;
	struct vrb_peer *p;
	int rc;

	if ((rc = check_peer(prov, peer, &p)))
		return rc;
	if (len > HOP_PROV_SEND_MAX || (len && !buf))
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
				     "verbs: send of %zu bytes to rank %d (%s)", len,
				     peer, len > HOP_PROV_SEND_MAX ? "more than 64" :
				     "NULL buffer");
	if (vrb_sq_full(&p->sq))
		return HOP_PROV_AGAIN;
	memset(&wr, 0, sizeof(wr));
	send_sge(prov, p, buf, len, &wr, &sge);
	wr.opcode = IBV_WR_SEND;
	return post(prov, p, &wr, !!(flags & HOP_WR_SIGNALED), 0, wr_id,
		    HOP_CQE_SEND, "send");
}

int vrb_post_flush(struct hop_prov *prov, struct vrb_peer *p)
{
	struct ibv_send_wr wr;

	if (vrb_sq_full(&p->sq))
		return HOP_PROV_AGAIN;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_RDMA_WRITE;  /* zero bytes: no rkey is checked */
	return post(prov, p, &wr, 0, 1, 0, 0, "flush (zero-length write)");
}

int vrb_post_ctrl(struct hop_prov *prov, struct vrb_peer *p, uint32_t what)
{
	return post_ctrl(prov, p, what, NULL, 0, 0, 0, 0);
}

int vrb_post_recv(struct hop_prov *prov, struct vrb_peer *p, uint32_t slot)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sge;
	int rc;

	sge.addr = (uintptr_t)(p->rbuf + (size_t)slot * VRB_RBUF);
	sge.length = VRB_RBUF;
	sge.lkey = p->rlkey;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = VRB_WRID_RECV | VRB_WRID(p->rank, slot);
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rc = ibv_post_recv(p->qp, &wr, &bad);
	if (rc)
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT,
				     "ibv_post_recv: %s", strerror(rc));
	return 0;
}
