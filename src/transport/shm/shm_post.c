/*
 * shm_post.c - posting writes and sends on the shm provider.
 *
 * A write is checked against the target's published MR table first (key,
 * generation, bounds, access: HOP_ERR_OUT_OF_BOUNDS on the writer), then:
 *   - len <= inline_max (ring / 16: 16 KiB up to 8 ranks): one ring
 *     entry with the payload; the target's poll copies it into place (no
 *     system call);
 *   - larger, CMA allowed: process_vm_writev straight into the target
 *     (one copy), then an entry announcing the immediate, if any;
 *   - larger, no CMA: chunks copied through the ring.
 * Ordering (contract 1): CMA lands at once, so it waits until the target
 * has applied every inline payload posted before it (the ring's head has
 * passed our last data entry); everything else is ordered by the ring.
 *
 * A post that cannot finish (ring full, CMA waiting for order) is queued
 * per peer and pushed by poll(); only a full queue (SHM_SQ_DEPTH posts)
 * returns HOP_PROV_AGAIN. Queued writes keep pointing at their source
 * (contract 2); sends and unregistered writes are copied.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "core/copy.h"
#include "transport/shm/shm.h"

size_t shm_max_inline(const struct hop_prov *prov)
{
	(void)prov;
	return SHM_POST_COPY;
}

void shm_ring_bell(struct shm_seg *seg)
{
	if (!seg)
		return; /* a lazy peer that left before we linked: none */
	/* pairs with the fence in shm_wait(): either it sees our entry or
	 * we see its flag */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&seg->waiting, memory_order_relaxed)) {
		atomic_fetch_add_explicit(&seg->bell, 1, memory_order_release);
		syscall(SYS_futex, &seg->bell, FUTEX_WAKE, INT_MAX, NULL, NULL,
			0);
	}
}

static int shm_local_cqe(struct hop_prov *prov, int op, int peer,
			 uint64_t wr_id)
{
	struct hop_cqe *c = hop_cqring_push(&prov->cq);

	if (!c)
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
				     "shm: out of memory queueing a "
				     "completion for rank %d", peer);
	c->op = op;
	c->peer = peer;
	c->wr_id = wr_id;
	return 0;
}

/* process_vm_writev the whole write. 0 done, 1 CMA not permitted (fall
 * back), or a failure code. */
static int shm_cma(struct hop_prov *prov, struct shm_peer *p,
		   const struct shm_sqe *w)
{
	size_t done = 0;

	if (p->rank == prov->rank) {
		hop_move((void *)(uintptr_t)w->raddr, w->src, w->len);
		return 0;
	}
	while (done < w->len) {
		struct iovec l = { (void *)(w->src + done), w->len - done };
		struct iovec r = { (void *)(uintptr_t)(w->raddr + done),
				   w->len - done };
		ssize_t n = process_vm_writev(p->pid, &l, 1, &r, 1, 0);

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && done == 0 &&
		    (errno == EPERM || errno == ENOSYS || errno == EACCES)) {
			HOP_PROV_INFO(prov->ctx, "process_vm_writev to rank %d not "
				 "permitted (%s); copying through the ring",
				 p->rank, strerror(errno));
			p->cma = 0;
			return 1;
		}
		if (n < 0 && errno == ESRCH)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PEER_FAILED,
					     "shm: rank %d (pid %d) is gone "
					     "(process_vm_writev: %s)",
					     p->rank, (int)p->pid,
					     strerror(errno));
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_OUT_OF_BOUNDS,
				     "shm: write of %zu bytes to rank %d at "
				     "0x%llx failed after %zu bytes: %s",
				     w->len, p->rank,
				     (unsigned long long)w->raddr, done,
				     n < 0 ? strerror(errno)
					   : "target memory not mapped");
	}
	return 0;
}

/*
 * Has @p closed its communicator, or does it within SHM_CLOSE_GRACE_NS?
 * A closing rank deregisters its p2p ring before its provider sets the
 * closed flag, so a write to it may find the ring's key retired first:
 * only a failed check waits (an error either way), and it names the
 * close instead of a stale key.
 */
static int shm_peer_closing(const struct shm_peer *p)
{
	uint64_t until = shm_coarse_ns() + SHM_CLOSE_GRACE_NS;
	struct timespec nap = { 0, 100000 };

	for (;;) {
		if (p->gone || (p->seg && atomic_load_explicit(
				&p->seg->closed, memory_order_acquire)))
			return 1;
		if (shm_coarse_ns() >= until)
			return 0;
		nanosleep(&nap, NULL);
	}
}

/* Is [raddr, +len) inside @p's published region @rkey, writable? */
static int shm_check_key(struct hop_prov *prov, struct shm_peer *p,
			 uint64_t rkey, uint64_t raddr, size_t len)
{
	char why[200];

	if (!hop_mrtab_check(p->mrtab, rkey, raddr, len, HOP_PROV_REMOTE_WRITE,
			     why, sizeof(why)))
		return 0;
	if (shm_peer_closing(p))
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PEER_FAILED,
				     "shm: write of %zu bytes to rank %d, "
				     "which has closed its communicator", len,
				     p->rank);
	return prov->ctx->fail_comm(prov->ctx, HOP_ERR_OUT_OF_BOUNDS,
			     "shm: write of %zu bytes to rank %d rejected: %s",
			     len, p->rank, why);
}

/*
 * The CMA copy of @w, fenced against deregistration (shm_mr.c): announce
 * the key in our ring of the target's segment, check the key again (it
 * may have been retired while the write was queued), copy, withdraw.
 */
static int shm_cma_fenced(struct hop_prov *prov, struct shm_peer *p,
			  const struct shm_sqe *w)
{
	_Atomic uint64_t *busy = &p->out.r->cma_key;
	int ret;

	for (;;) {
		atomic_store_explicit(busy, w->rkey, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (!hop_mrtab_check(p->mrtab, w->rkey, w->raddr, w->len,
				     HOP_PROV_REMOTE_WRITE, NULL, 0))
			break;
		/* withdraw before the report, which may wait for the peer's
		 * close: its mr_dereg waits for this announcement to go */
		atomic_store_explicit(busy, 0, memory_order_release);
		if ((ret = shm_check_key(prov, p, w->rkey, w->raddr, w->len)))
			return ret;
		/* a slot busy for a moment: announce and check again */
	}
	ret = shm_cma(prov, p, w);
	atomic_store_explicit(busy, 0, memory_order_release);
	return ret;
}

static void shm_ent_fill(struct shm_ent *e, uint8_t op, uint8_t flags,
			 uint32_t imm, uint32_t len, uint64_t raddr,
			 uint64_t rkey)
{
	e->op = op;
	e->flags = flags;
	e->rsvd = 0;
	e->imm = imm;
	e->len = len;
	e->raddr = raddr;
	e->rkey = rkey;
}

/* Move @w forward. 0 finished, HOP_PROV_AGAIN not yet (progress kept in
 * @w), or a failure code. */
static int shm_step(struct hop_prov *prov, struct shm_peer *p,
		    struct shm_sqe *w)
{
	uint8_t immf = w->imm_flag ? SHM_F_IMM : 0;
	struct shm_ent *e;
	int ret;

	if (w->kind == SHM_SQ_SEND || w->len <= prov->inline_max) {
		if (!(e = shm_ring_reserve(&p->out, w->len)))
			return HOP_PROV_AGAIN;
		if (w->kind == SHM_SQ_SEND)
			shm_ent_fill(e, SHM_OP_SEND, SHM_F_DATA, 0,
				     (uint32_t)w->len, 0, 0);
		else
			shm_ent_fill(e, SHM_OP_WRITE, SHM_F_DATA | immf,
				     w->imm, (uint32_t)w->len, w->raddr,
				     w->rkey);
		if (w->len)
			hop_copy(e->data, w->src, w->len);
		shm_ring_commit(&p->out, e);
		if (w->kind != SHM_SQ_SEND)
			p->data_end = p->out.tail;
		shm_ring_bell(p->seg);
		return 0;
	}
	if (p->cma && w->off == 0 && !w->cma_done) {
		/* the target must have applied our earlier inline data */
		if (p->out.head_cache < p->data_end) {
			shm_ring_used(&p->out); /* refreshes head_cache */
			if (p->out.head_cache < p->data_end)
				return HOP_PROV_AGAIN;
		}
		ret = shm_cma_fenced(prov, p, w);
		if (ret < 0)
			return ret;
		if (ret == 0)
			w->cma_done = 1;
	}
	if (w->cma_done) {
		if (!w->imm_flag)
			return 0;
		if (!(e = shm_ring_reserve(&p->out, 0)))
			return HOP_PROV_AGAIN;
		shm_ent_fill(e, SHM_OP_WRITE, SHM_F_IMM, w->imm,
			     w->len > UINT32_MAX ? UINT32_MAX
						 : (uint32_t)w->len,
			     w->raddr, w->rkey);
		shm_ring_commit(&p->out, e);
		shm_ring_bell(p->seg);
		return 0;
	}
	/* through the ring, chunk by chunk */
	ret = 0;
	while (w->off < w->len) {
		size_t c = w->len - w->off;
		int last;

		if (c > prov->chunk)
			c = prov->chunk;
		if (!(e = shm_ring_reserve(&p->out, c))) {
			ret = HOP_PROV_AGAIN;
			break;
		}
		last = w->off + c == w->len;
		shm_ent_fill(e, SHM_OP_WRITE,
			     SHM_F_DATA | (last ? immf : SHM_F_MORE),
			     last ? w->imm : 0, (uint32_t)c,
			     w->raddr + w->off, w->rkey);
		hop_copy(e->data, w->src + w->off, c);
		shm_ring_commit(&p->out, e);
		p->data_end = p->out.tail;
		w->off += c;
		/* let the target start copying out while we fill */
		shm_ring_bell(p->seg);
	}
	return ret;
}

int shm_tx_progress(struct hop_prov *prov, struct shm_peer *p)
{
	while (p->sq_count) {
		struct shm_sqe *w = &p->sq[p->sq_head];
		int ret = shm_step(prov, p, w);

		if (ret == HOP_PROV_AGAIN)
			return 0;
		if (ret < 0)
			return ret;
		if (w->signaled &&
		    (ret = shm_local_cqe(prov, w->kind == SHM_SQ_SEND
							? HOP_CQE_SEND
							: HOP_CQE_WRITE,
					 p->rank, w->wr_id)))
			return ret;
		p->sq_head = (p->sq_head + 1) % SHM_SQ_DEPTH;
		if (--p->sq_count == 0)
			prov->sq_busy--;
	}
	return 0;
}

static int shm_post_check(struct hop_prov *prov, int peer, unsigned flags,
			  const char *what)
{
	int f = prov->ctx->failed(prov->ctx);
	struct shm_peer *p;

	if (f)
		return f;
	if (peer < 0 || peer >= prov->nranks)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "shm: %s to rank %d: no such rank "
				     "(size %d)", what, peer, prov->nranks);
	if (flags & ~(unsigned)(HOP_WR_SIGNALED | HOP_WR_IMM))
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "shm: %s to rank %d: unknown flags 0x%x",
				     what, peer, flags);
	p = &prov->peers[peer];
	if (!p->linked && (f = shm_lazy_link(prov, peer)))
		return f;
	if (p->gone || atomic_load_explicit(&p->seg->closed,
					    memory_order_relaxed))
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PEER_FAILED,
				     "shm: %s to rank %d, which has closed "
				     "its communicator", what, peer);
	/* a dead peer's ring still takes entries: ask the kernel, at most
	 * once per SHM_POST_LIVE_NS (a system call costs more than a post) */
	if (peer != prov->rank) {
		uint64_t now = shm_coarse_ns();

		if (now >= p->live_next) {
			p->live_next = now + SHM_POST_LIVE_NS;
			return shm_check_peer(prov, p);
		}
	}
	return 0;
}

/* Run @w now if nothing is queued before it, else (or if it cannot
 * finish) queue it. @copy: the source must be copied when queued. */
static int shm_submit(struct hop_prov *prov, struct shm_peer *p,
		      struct shm_sqe *w, int copy)
{
	struct shm_sqe *q;
	int ret;

	if (p->sq_count == 0) {
		ret = shm_step(prov, p, w);
		if (ret < 0)
			return ret;
		if (ret == 0)
			return w->signaled
				       ? shm_local_cqe(prov,
						       w->kind == SHM_SQ_SEND
							       ? HOP_CQE_SEND
							       : HOP_CQE_WRITE,
						       p->rank, w->wr_id)
				       : 0;
		/* queue is empty: a slot is free, partial progress is kept */
	} else if (p->sq_count == SHM_SQ_DEPTH) {
		if ((ret = shm_tx_progress(prov, p)))
			return ret;
		if (p->sq_count == SHM_SQ_DEPTH)
			return HOP_PROV_AGAIN;
	}
	q = &p->sq[(p->sq_head + p->sq_count) % SHM_SQ_DEPTH];
	memcpy(q, w, offsetof(struct shm_sqe, data));
	if (copy) {
		if (w->len)
			hop_copy(q->data, w->src, w->len);
		q->src = q->data;
	}
	if (p->sq_count++ == 0)
		prov->sq_busy++;
	return 0;
}

int shm_post_write(struct hop_prov *prov, int peer, struct hop_prov_mr *lmr,
		   const void *laddr, size_t len, uint64_t raddr,
		   uint64_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id)
{
	struct shm_sqe w;
	int ret;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	if ((ret = shm_post_check(prov, peer, flags, "write")))
		return ret;
	if (len && !laddr)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "shm: write to rank %d: NULL source", peer);
	if (lmr) {
		uintptr_t a = (uintptr_t)laddr, b = (uintptr_t)lmr->addr;

		if (a < b || len > lmr->len || a - b > lmr->len - len)
			return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
					     "shm: write to rank %d: source "
					     "[%p, +%zu) is outside its local "
					     "region [%p, +%zu)",
					     peer, laddr, len, lmr->addr,
					     lmr->len);
	} else if (len > SHM_POST_COPY) {
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "shm: write of %zu bytes to rank %d "
				     "without a registered source (max_inline "
				     "%d)", len, peer, SHM_POST_COPY);
	}
	if (len && (ret = shm_check_key(prov, &prov->peers[peer], rkey, raddr,
					len)))
		return ret;
	w.kind = SHM_SQ_WRITE;
	w.signaled = (flags & HOP_WR_SIGNALED) != 0;
	w.imm_flag = (flags & HOP_WR_IMM) != 0;
	w.cma_done = 0;
	w.imm = w.imm_flag ? imm : 0;
	w.src = laddr;
	w.len = len;
	w.off = 0;
	w.raddr = raddr;
	w.rkey = rkey;
	w.wr_id = wr_id;
	return shm_submit(prov, &prov->peers[peer], &w, lmr == NULL);
}

int shm_post_send(struct hop_prov *prov, int peer, const void *buf,
		  size_t len, unsigned flags, uint64_t wr_id)
{
	struct shm_sqe w;
	int ret;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	if ((ret = shm_post_check(prov, peer, flags & ~(unsigned)HOP_WR_IMM,
				  "send")))
		return ret;
	if (flags & HOP_WR_IMM)
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "shm: send to rank %d: IMM is for writes",
				     peer);
	if (len > HOP_PROV_SEND_MAX || (len && !buf))
		return prov->ctx->error(prov->ctx, HOP_ERR_INVALID_ARG,
				     "shm: send of %zu bytes to rank %d: %s",
				     len, peer,
				     buf ? "larger than HOP_PROV_SEND_MAX (64)"
					 : "NULL buffer");
	memset(&w, 0, offsetof(struct shm_sqe, data));
	w.kind = SHM_SQ_SEND;
	w.signaled = (flags & HOP_WR_SIGNALED) != 0;
	w.src = buf;
	w.len = len;
	w.wr_id = wr_id;
	return shm_submit(prov, &prov->peers[peer], &w, 1);
}
