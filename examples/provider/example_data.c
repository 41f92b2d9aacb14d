/*
 * example_data.c - the data path of the example provider: regions, posts
 * (queued per peer, pushed fragment by fragment as the socket takes them),
 * receiving (every fragment checked against the region table before it is
 * copied), completions, and the exported descriptor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "example.h"

/* The build of the version-mismatch test sets another value. */
#ifndef EX_ABI_VERSION
#define EX_ABI_VERSION HOP_PROV_ABI_VERSION
#endif

/* ------------------------------------------------------------------ */
/* regions                                                            */

static int ex_mr_reg(struct hop_prov *prov, void *addr, size_t len,
		     unsigned access, struct hop_prov_mr **out)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct ex_region *r;
	struct ex_mr *mr;
	uint32_t slot;

	if (!out || (!addr && len) ||
	    (access & ~(unsigned)(HOP_PROV_REMOTE_WRITE | HOP_PROV_REMOTE_READ)))
		return ctx->error(ctx, HOP_ERR_INVALID_ARG, EX_NAME ": mr_reg of "
				  "%zu bytes at %p, access 0x%x", len, addr,
				  access);
	if (!prov->nfree)
		return ctx->error(ctx, HOP_ERR_NO_MEMORY, EX_NAME ": rank %d: "
				  "all %u regions in use", prov->rank,
				  EX_MAX_MR);
	if (!(mr = calloc(1, sizeof(*mr))))
		return ctx->error(ctx, HOP_ERR_NO_MEMORY, EX_NAME ": out of memory");
	slot = prov->free_slots[--prov->nfree];
	r = &prov->mrs[slot];
	r->addr = (uint64_t)(uintptr_t)addr;
	r->len = len;
	r->access = access;
	r->gen++;
	r->live = 1;
	mr->slot = slot;
	mr->pub.addr = addr;
	mr->pub.len = len;
	mr->pub.access = access;
	mr->pub.key = ((uint64_t)r->gen << 32) | slot;
	*out = &mr->pub;
	return 0;
}

static int ex_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *pub)
{
	struct ex_mr *mr = (struct ex_mr *)pub;

	if (!mr || mr->slot >= EX_MAX_MR || !prov->mrs[mr->slot].live)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_HANDLE,
					EX_NAME ": mr_dereg of a region that "
					"is not registered");
	prov->mrs[mr->slot].live = 0;
	prov->free_slots[prov->nfree++] = mr->slot;
	free(mr);
	return 0;
}

/* May a peer write [raddr, raddr + len) of region @key? */
static int ex_mr_check(const struct hop_prov *prov, uint64_t key,
		       uint64_t raddr, uint64_t len, char *why, size_t n)
{
	uint32_t slot = (uint32_t)key, gen = (uint32_t)(key >> 32);
	const struct ex_region *r = &prov->mrs[slot < EX_MAX_MR ? slot : 0];

	if (slot >= EX_MAX_MR || !r->live || r->gen != gen)
		snprintf(why, n, "key 0x%llx is not a live region",
			 (unsigned long long)key);
	else if (!(r->access & HOP_PROV_REMOTE_WRITE))
		snprintf(why, n, "region 0x%llx is not remotely writable",
			 (unsigned long long)key);
	else if (raddr < r->addr || len > r->len ||
		 raddr - r->addr > r->len - len)
		snprintf(why, n, "%llu bytes at 0x%llx are outside the region "
			 "of %llu bytes at 0x%llx", (unsigned long long)len,
			 (unsigned long long)raddr, (unsigned long long)r->len,
			 (unsigned long long)r->addr);
	else
		return 0;
	return HOP_ERR_OUT_OF_BOUNDS;
}

/* ------------------------------------------------------------------ */
/* completions                                                        */

struct hop_cqe *ex_cq_push(struct hop_prov *prov)
{
	struct hop_cqe *c;

	if (prov->cq_count == prov->cq_cap) {
		uint32_t cap = prov->cq_cap * 2;
		struct hop_cqe *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (uint32_t i = 0; i < prov->cq_count; i++)
			n[i] = prov->cq[(prov->cq_head + i) % prov->cq_cap];
		free(prov->cq);
		prov->cq = n;
		prov->cq_cap = cap;
		prov->cq_head = 0;
	}
	c = &prov->cq[(prov->cq_head + prov->cq_count++) % prov->cq_cap];
	memset(c, 0, sizeof(*c));
	return c;
}

static int ex_cqe(struct hop_prov *prov, int op, int peer, uint64_t wr_id)
{
	struct hop_cqe *c = ex_cq_push(prov);

	if (!c)
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY, EX_NAME
				       ": rank %d: out of memory for a "
				       "completion", prov->rank);
	c->op = op;
	c->peer = peer;
	c->wr_id = wr_id;
	return 0;
}

/* ------------------------------------------------------------------ */
/* sending                                                            */

/* Push queued fragments to @peer until its socket is full. */
int ex_flush(struct hop_prov *prov, int peer)
{
	struct ex_peer *pe = &prov->peers[peer];
	struct ex_op *o;
	int ret;

	while ((o = pe->sq_head) && pe->fd >= 0) {
		size_t n = o->len - o->off < prov->frag ? o->len - o->off
							: prov->frag;
		struct ex_hdr h = o->hdr;
		struct iovec iov[2] = {
			{ .iov_base = &h, .iov_len = sizeof(h) },
			{ .iov_base = (void *)(uintptr_t)(o->src + o->off),
			  .iov_len = n },
		};
		struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };

		h.raddr += o->off;
		if (o->off + n == o->len)
			h.flags |= EX_F_LAST;
		else
			h.flags &= (uint8_t)~EX_F_IMM; /* the last carries it */
		if (sendmsg(pe->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				return 0;
			/* after its goodbye, what is queued has no reader:
			 * ex_close() frees it */
			return ex_peer_lost(prov, peer, errno);
		}
		o->off += n;
		o->started = 1;
		if (o->off < o->len)
			continue;
		pe->sq_head = o->next;
		if (!pe->sq_head)
			pe->sq_tail = NULL;
		pe->sq_len--;
		ret = o->cqe_op ? ex_cqe(prov, o->cqe_op, peer, o->wr_id) : 0;
		free(o);
		if (ret)
			return ret;
	}
	return 0;
}

/* Checks common to both posts; 0 or the code to return. */
static int ex_post_check(struct hop_prov *prov, int peer, unsigned flags,
			 const char *what)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	int f = ctx->failed(ctx);

	if (f)
		return f;
	if (peer < 0 || peer >= prov->nranks)
		return ctx->error(ctx, HOP_ERR_INVALID_ARG, EX_NAME ": %s to "
				  "rank %d: no such rank (size %d)", what, peer,
				  prov->nranks);
	if (flags & ~(unsigned)(HOP_WR_SIGNALED | HOP_WR_IMM))
		return ctx->error(ctx, HOP_ERR_INVALID_ARG, EX_NAME ": %s to "
				  "rank %d: unknown flags 0x%x", what, peer,
				  flags);
	if (peer != prov->rank && prov->peers[peer].fd < 0)
		return ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, EX_NAME ": %s to rank "
				 "%d, which %s", what, peer,
				 prov->peers[peer].bye ? "closed its communicator"
						       : "is not connected");
	if (prov->peers[peer].sq_len >= EX_SQ_MAX) {
		int ret = ex_flush(prov, peer);

		return ret ? ret : HOP_PROV_AGAIN;
	}
	return 0;
}

/* Queue @o for @peer and push what the socket takes now. */
static int ex_enqueue(struct hop_prov *prov, int peer, struct ex_op *o)
{
	struct ex_peer *pe = &prov->peers[peer];

	if (pe->sq_tail)
		pe->sq_tail->next = o;
	else
		pe->sq_head = o;
	pe->sq_tail = o;
	pe->sq_len++;
	return ex_flush(prov, peer);
}

/* A write or send to this rank itself: checked, copied, completed. */
static int ex_self(struct hop_prov *prov, const struct ex_hdr *h,
		   const void *src, size_t len, int cqe_op, uint64_t wr_id)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct hop_cqe *c;
	char why[160];

	if (h->op == EX_WRITE && len &&
	    ex_mr_check(prov, h->rkey, h->raddr, len, why, sizeof(why)))
		return ctx->fail_comm(ctx, HOP_ERR_OUT_OF_BOUNDS, EX_NAME ": rank %d: "
				 "write to itself rejected: %s", prov->rank, why);
	if (h->op == EX_WRITE && len)
		memmove((void *)(uintptr_t)h->raddr, src, len);
	if (h->op == EX_SEND || (h->flags & EX_F_IMM)) {
		if (!(c = ex_cq_push(prov)))
			return ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY, EX_NAME ": out "
					 "of memory");
		c->op = h->op == EX_SEND ? HOP_CQE_RECV : HOP_CQE_RECV_IMM;
		c->peer = prov->rank;
		c->imm = h->imm;
		c->len = (uint32_t)len;
		if (h->op == EX_SEND)
			memcpy(c->data, src, len);
	}
	return cqe_op ? ex_cqe(prov, cqe_op, prov->rank, wr_id) : 0;
}

/* Build the queued form of a post; @copy: keep a copy of the bytes. */
static int ex_post(struct hop_prov *prov, int peer, const struct ex_hdr *h,
		   const void *src, size_t len, int copy, int cqe_op,
		   uint64_t wr_id)
{
	struct ex_op *o;

	if (peer == prov->rank)
		return ex_self(prov, h, src, len, cqe_op, wr_id);
	if (!(o = calloc(1, sizeof(*o) + (copy ? len : 0))))
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY, EX_NAME
				       ": rank %d: out of memory queueing %zu "
				       "bytes for rank %d", prov->rank, len,
				       peer);
	o->hdr = *h;
	o->len = len;
	o->src = copy ? o->inl : src;
	if (copy && len)
		memcpy(o->inl, src, len);
	o->cqe_op = cqe_op;
	o->wr_id = wr_id;
	return ex_enqueue(prov, peer, o);
}

static int ex_post_write(struct hop_prov *prov, int peer,
			 struct hop_prov_mr *lmr, const void *laddr,
			 size_t len, uint64_t raddr, uint64_t rkey,
			 uint32_t imm, unsigned flags, uint64_t wr_id)
{
	struct ex_hdr h = { .op = EX_WRITE, .imm = imm, .rkey = rkey,
			    .raddr = raddr, .total = len };
	int ret;

	if ((ret = ex_post_check(prov, peer, flags, "write")))
		return ret;
	if ((!lmr && len > EX_INLINE) || (len && !laddr) ||
	    (lmr && ((const uint8_t *)laddr < (uint8_t *)lmr->addr ||
		     (size_t)((const uint8_t *)laddr - (uint8_t *)lmr->addr) +
				     len > lmr->len)))
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG, EX_NAME
					": write of %zu bytes to rank %d: "
					"source outside %s", len, peer,
					lmr ? "its region" : "the inline limit");
	if (flags & HOP_WR_IMM)
		h.flags = EX_F_IMM;
	return ex_post(prov, peer, &h, laddr, len, lmr == NULL,
		       flags & HOP_WR_SIGNALED ? HOP_CQE_WRITE : 0, wr_id);
}

static int ex_post_send(struct hop_prov *prov, int peer, const void *buf,
			size_t len, unsigned flags, uint64_t wr_id)
{
	struct ex_hdr h = { .op = EX_SEND, .total = len };
	int ret;

	if ((ret = ex_post_check(prov, peer, flags, "send")))
		return ret;
	if (len > HOP_PROV_SEND_MAX || (len && !buf))
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG, EX_NAME
					": send of %zu bytes to rank %d (at "
					"most %d)", len, peer,
					HOP_PROV_SEND_MAX);
	return ex_post(prov, peer, &h, buf, len, 1,
		       flags & HOP_WR_SIGNALED ? HOP_CQE_SEND : 0, wr_id);
}

/* ------------------------------------------------------------------ */
/* receiving                                                          */

/* The target refuses @peer's data: tell it, and fail here too. */
static int ex_reject(struct hop_prov *prov, int peer, const char *why)
{
	struct ex_hdr r = { .op = EX_REJECT,
			    .imm = (uint32_t)-HOP_ERR_OUT_OF_BOUNDS };

	(void)!send(prov->peers[peer].fd, &r, sizeof(r),
		    MSG_DONTWAIT | MSG_NOSIGNAL);
	return prov->ctx->fail_comm(prov->ctx, HOP_ERR_OUT_OF_BOUNDS, EX_NAME
			       ": rank %d: write from rank %d rejected: %s",
			       prov->rank, peer, why);
}

/* One message of @n bytes from @peer, in prov->rx. */
static int ex_rx_msg(struct hop_prov *prov, int peer, size_t n)
{
	const struct ex_hdr *h = (const struct ex_hdr *)prov->rx;
	size_t len = n - sizeof(*h);
	struct hop_cqe *c;
	char why[160];

	switch (h->op) {
	case EX_WRITE:
		if (len && ex_mr_check(prov, h->rkey, h->raddr, len, why,
				       sizeof(why)))
			return ex_reject(prov, peer, why);
		memcpy((void *)(uintptr_t)h->raddr, h + 1, len);
		if (!(h->flags & EX_F_LAST) || !(h->flags & EX_F_IMM))
			return 0;
		break;
	case EX_SEND:
		if (len > HOP_PROV_SEND_MAX)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PROTOCOL,
					       EX_NAME ": rank %d sent a "
					       "%zu-byte message", peer, len);
		break;
	case EX_BYE:
		prov->peers[peer].bye = 1;
		return 0;
	case EX_REJECT:
		return prov->ctx->fail_comm(prov->ctx, -(int)h->imm, EX_NAME ": rank "
				       "%d rejected data from rank %d (code "
				       "%d); its log names the cause", peer,
				       prov->rank, -(int)h->imm);
	default:
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PROTOCOL, EX_NAME
				       ": rank %d sent unknown op %u", peer,
				       h->op);
	}
	if (!(c = ex_cq_push(prov)))
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY, EX_NAME
				       ": out of memory");
	c->peer = peer;
	if (h->op == EX_SEND) {
		c->op = HOP_CQE_RECV;
		c->len = (uint32_t)len;
		memcpy(c->data, h + 1, len);
	} else {
		c->op = HOP_CQE_RECV_IMM;
		c->imm = h->imm;
		c->len = h->total > UINT32_MAX ? UINT32_MAX : (uint32_t)h->total;
	}
	return 0;
}

/* Read what @peer has sent, up to a budget so no peer starves others. */
static int ex_rx(struct hop_prov *prov, int peer)
{
	struct ex_peer *pe = &prov->peers[peer];
	int ret;

	for (int i = 0; i < EX_RX_BUDGET && pe->fd >= 0; i++) {
		ssize_t n = recv(pe->fd, prov->rx, sizeof(struct ex_hdr) + EX_FRAG,
				 MSG_DONTWAIT | MSG_TRUNC);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
			      errno == EINTR))
			return 0;
		if (n <= 0)
			return ex_peer_lost(prov, peer, n < 0 ? errno : 0);
		if ((size_t)n < sizeof(struct ex_hdr) ||
		    (size_t)n > sizeof(struct ex_hdr) + EX_FRAG)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PROTOCOL, EX_NAME
					       ": rank %d sent a %zd-byte "
					       "message", peer, n);
		if ((ret = ex_rx_msg(prov, peer, (size_t)n)))
			return ret;
	}
	return 0;
}

static int ex_poll(struct hop_prov *prov, struct hop_cqe *cqe, int max)
{
	int ret, n = 0;

	if ((ret = prov->ctx->failed(prov->ctx)))
		return ret;
	for (int p = 0; p < prov->nranks; p++) {
		if ((ret = ex_flush(prov, p)) || (ret = ex_rx(prov, p)))
			return ret;
	}
	while (n < max && prov->cq_count) {
		cqe[n++] = prov->cq[prov->cq_head];
		prov->cq_head = (prov->cq_head + 1) % prov->cq_cap;
		prov->cq_count--;
	}
	return n;
}

/* Sleep in poll(2) on the peers' sockets (the first 64: an example's
 * limit; more ranks still work, waking on the timeout). */
static void ex_wait(struct hop_prov *prov, int timeout_us)
{
	struct pollfd fds[64];
	nfds_t n = 0;

	if (prov->cq_count)
		return;
	for (int p = 0; p < prov->nranks && n < 64; p++) {
		struct ex_peer *pe = &prov->peers[p];

		if (pe->fd < 0)
			continue;
		fds[n].fd = pe->fd;
		fds[n].events = POLLIN | (pe->sq_head ? POLLOUT : 0);
		fds[n++].revents = 0;
	}
	(void)!poll(fds, n, timeout_us > 0 ? (timeout_us + 999) / 1000 : 0);
}

static size_t ex_max_inline(const struct hop_prov *prov)
{
	(void)prov;
	return EX_INLINE;
}

static int ex_peer_closed(struct hop_prov *prov, int peer)
{
	return peer >= 0 && peer < prov->nranks && prov->peers[peer].bye;
}

/* UNIX sockets work on any Linux host: usable unless sockets fail. */
static int ex_usable(const struct hop_prov_ctx *ctx, char *why, size_t n)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	(void)ctx;
	if (fd < 0) {
		snprintf(why, n, "socket(AF_UNIX, SOCK_SEQPACKET): %s",
			 strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

static const struct hop_prov_ops ex_ops = {
	.size = sizeof(struct hop_prov_ops),
	.name = EX_NAME,
	.usable = ex_usable,
	.open = ex_open,
	.close = ex_close,
	.mr_reg = ex_mr_reg,
	.mr_dereg = ex_mr_dereg,
	.post_write = ex_post_write,
	.post_send = ex_post_send,
	.poll = ex_poll,
	.wait = ex_wait,
	.max_inline = ex_max_inline,
	.peer_closed = ex_peer_closed,
};

/* What hop looks for (HOP_PROV_PLUGIN(EX_NAME, &ex_ops) spelled out, so
 * the version-mismatch test can build it with another version). */
__attribute__((visibility("default")))
const struct hop_prov_plugin hop_provider_plugin = {
	.abi_version = EX_ABI_VERSION,
	.name = EX_NAME,
	.ops = &ex_ops,
};
