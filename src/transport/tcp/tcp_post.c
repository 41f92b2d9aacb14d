/*
 * tcp_post.c - posting writes and sends on the tcp provider.
 *
 * A post packs the wire header into a slot of the peer's send queue and,
 * when the queue was empty, tries to send at once (the latency path: no
 * poll needed for data to leave). Write payloads are sent from the
 * caller's source (contract 2: stable until the signaled completion);
 * sends and unregistered writes are copied into the slot. A full queue
 * returns HOP_PROV_AGAIN after one attempt to drain it; so does a
 * registered write while TCP_SQ_BULK bytes are queued (tcp.h: what is
 * queued delays every later post, a clear-to-send too).
 */
#include <string.h>

#include "core/copy.h"
#include "transport/tcp/tcp.h"

size_t tcp_max_inline(const struct hop_prov *prov)
{
	(void)prov;
	return TCP_INLINE;
}

static int tcp_failed(struct hop_prov *prov)
{
	return prov->ctx->failed(prov->ctx);
}

/* Common checks of a post to @peer; 0 when it may go ahead. */
static int tcp_post_check(struct hop_prov *prov, int peer, unsigned flags,
			  const char *what)
{
	int f = tcp_failed(prov);

	if (f)
		return f;
	if (peer < 0 || peer >= prov->nranks)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "tcp: %s to rank %d: no such rank "
				     "(size %d)", what, peer, prov->nranks);
	if (flags & ~(unsigned)(HOP_WR_SIGNALED | HOP_WR_IMM))
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "tcp: %s to rank %d: unknown flags 0x%x",
				     what, peer, flags);
	/* lazy: a peer never connected is dialled by the post */
	if (peer != prov->rank &&
	    ((prov->peers[peer].fd < 0 &&
	      (!prov->lazy || prov->peers[peer].ever)) ||
	     prov->peers[peer].bye)) {
		if (prov->peers[peer].bye)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PEER_FAILED,
					     "tcp: %s to rank %d, which has "
					     "closed its communicator",
					     what, peer);
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PEER_FAILED,
				     "tcp: %s to rank %d: not connected",
				     what, peer);
	}
	return 0;
}

static int tcp_local_cqe(struct hop_prov *prov, int op, int peer,
			 uint64_t wr_id)
{
	struct hop_cqe *c = hop_cqring_push(&prov->cq);

	if (!c)
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
				     "tcp: out of memory queueing a "
				     "completion for rank %d", peer);
	c->op = op;
	c->peer = peer;
	c->wr_id = wr_id;
	return 0;
}

/* A slot at the tail of @p's send queue, or NULL when full. */
static struct tcp_sqe *tcp_sq_slot(struct hop_prov *prov, struct tcp_peer *p)
{
	if (p->sq_count == TCP_SQ_DEPTH) {
		if (tcp_tx_progress(prov, p) || p->sq_count == TCP_SQ_DEPTH)
			return NULL;
	}
	return &p->sq[(p->sq_head + p->sq_count) % TCP_SQ_DEPTH];
}

/* May a registered write be queued to @p now? (TCP_SQ_BULK, tcp.h) */
static int tcp_sq_room(struct hop_prov *prov, struct tcp_peer *p)
{
	if (p->sq_bytes < TCP_SQ_BULK)
		return 1;
	return !tcp_tx_progress(prov, p) && p->fd >= 0 &&
	       p->sq_bytes < TCP_SQ_BULK;
}

static int tcp_sq_commit(struct hop_prov *prov, struct tcp_peer *p,
			 struct tcp_sqe *e)
{
	p->sq_bytes += TCP_HDR_LEN + e->len;
	if (p->sq_count++ == 0) {
		prov->sq_busy++;
		if (p->fd < 0) /* lazy: sent once connected */
			return tcp_lazy_want(prov, p->rank);
		return tcp_tx_progress(prov, p);
	}
	return 0;
}

/* Write to ourselves: check our own table and copy. */
static int tcp_write_self(struct hop_prov *prov, const void *laddr,
			  size_t len, uint64_t raddr, uint64_t rkey,
			  uint32_t imm, unsigned flags, uint64_t wr_id)
{
	char why[200];
	struct hop_cqe *c;

	if (len) {
		if (hop_mrtab_check(prov->mrs.tab, rkey, raddr, len,
				    HOP_PROV_REMOTE_WRITE, why, sizeof(why)))
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_OUT_OF_BOUNDS,
					     "tcp: write of %zu bytes to rank "
					     "%d (self): %s",
					     len, prov->rank, why);
		hop_move((void *)(uintptr_t)raddr, laddr, len);
	}
	if (flags & HOP_WR_IMM) {
		if (!(c = hop_cqring_push(&prov->cq)))
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
					     "tcp: out of memory");
		c->op = HOP_CQE_RECV_IMM;
		c->peer = prov->rank;
		c->imm = imm;
		c->len = (uint32_t)len;
	}
	if (flags & HOP_WR_SIGNALED)
		return tcp_local_cqe(prov, HOP_CQE_WRITE, prov->rank, wr_id);
	return 0;
}

int tcp_post_write(struct hop_prov *prov, int peer, struct hop_prov_mr *lmr,
		   const void *laddr, size_t len, uint64_t raddr,
		   uint64_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id)
{
	struct tcp_hdr h;
	struct tcp_peer *p;
	struct tcp_sqe *e;
	int ret;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	if ((ret = tcp_post_check(prov, peer, flags, "write")))
		return ret;
	if (len && !laddr)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "tcp: write to rank %d: NULL source", peer);
	if (lmr) {
		uintptr_t a = (uintptr_t)laddr, b = (uintptr_t)lmr->addr;

		if (a < b || len > lmr->len || a - b > lmr->len - len)
			return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
					     "tcp: write to rank %d: source "
					     "[%p, +%zu) is outside its local "
					     "region [%p, +%zu)",
					     peer, laddr, len, lmr->addr,
					     lmr->len);
	} else if (len > TCP_INLINE) {
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "tcp: write of %zu bytes to rank %d "
				     "without a registered source (max_inline "
				     "%d)", len, peer, TCP_INLINE);
	}
	if (len > TCP_MAX_WRITE)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "tcp: write of %zu bytes to rank %d "
				     "exceeds %llu", len, peer,
				     (unsigned long long)TCP_MAX_WRITE);
	if (peer == prov->rank)
		return tcp_write_self(prov, laddr, len, raddr, rkey, imm,
				      flags, wr_id);

	p = &prov->peers[peer];
	if ((ret = tcp_peer_mem(prov, p)))
		return ret;
	if ((lmr && !tcp_sq_room(prov, p)) || !(e = tcp_sq_slot(prov, p)))
		return tcp_failed(prov) ? tcp_failed(prov) : HOP_PROV_AGAIN;
	h.op = TCP_OP_WRITE;
	h.flags = (flags & HOP_WR_IMM) ? TCP_F_IMM : 0;
	h.imm = (flags & HOP_WR_IMM) ? imm : 0;
	h.len = len;
	h.raddr = raddr;
	h.rkey = rkey;
	tcp_hdr_pack(&h, e->hdr);
	if (lmr) {
		e->payload = laddr;
	} else {
		if (len)
			hop_copy(e->data, laddr, len);
		e->payload = e->data;
	}
	e->len = len;
	e->off = 0;
	e->wr_id = wr_id;
	e->signaled = (flags & HOP_WR_SIGNALED) != 0;
	e->op = HOP_CQE_WRITE;
	return tcp_sq_commit(prov, p, e);
}

int tcp_post_send(struct hop_prov *prov, int peer, const void *buf,
		  size_t len, unsigned flags, uint64_t wr_id)
{
	struct tcp_hdr h = { .op = TCP_OP_SEND };
	struct tcp_peer *p;
	struct tcp_sqe *e;
	int ret;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	if ((ret = tcp_post_check(prov, peer, flags & ~(unsigned)HOP_WR_IMM,
				  "send")))
		return ret;
	if (flags & HOP_WR_IMM)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "tcp: send to rank %d: IMM is for writes",
				     peer);
	if (len > HOP_PROV_SEND_MAX || (len && !buf))
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "tcp: send of %zu bytes to rank %d: "
				     "%s", len, peer,
				     buf ? "larger than HOP_PROV_SEND_MAX (64)"
					 : "NULL buffer");
	if (peer == prov->rank) {
		struct hop_cqe *c = hop_cqring_push(&prov->cq);

		if (!c)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
					     "tcp: out of memory");
		c->op = HOP_CQE_RECV;
		c->peer = peer;
		c->len = (uint32_t)len;
		if (len)
			hop_copy(c->data, buf, len);
		if (flags & HOP_WR_SIGNALED)
			return tcp_local_cqe(prov, HOP_CQE_SEND, peer, wr_id);
		return 0;
	}
	p = &prov->peers[peer];
	if ((ret = tcp_peer_mem(prov, p)))
		return ret;
	if (!(e = tcp_sq_slot(prov, p)))
		return tcp_failed(prov) ? tcp_failed(prov) : HOP_PROV_AGAIN;
	h.len = len;
	tcp_hdr_pack(&h, e->hdr);
	if (len)
		hop_copy(e->data, buf, len);
	e->payload = e->data;
	e->len = len;
	e->off = 0;
	e->wr_id = wr_id;
	e->signaled = (flags & HOP_WR_SIGNALED) != 0;
	e->op = HOP_CQE_SEND;
	return tcp_sq_commit(prov, p, e);
}
