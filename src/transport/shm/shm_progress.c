/*
 * shm_progress.c - the shm provider's poll (push queued posts, apply
 * incoming ring entries, check peers are alive) and wait (sleep on this
 * rank's doorbell futex until a peer publishes something or the timeout).
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/copy.h"
#include "transport/shm/shm.h"

/* Release the consumer position after entries this large (let a producer
 * streaming chunks refill at once) and at the end of every batch. */
#define SHM_RELEASE_EARLY 4096

/* Apply everything peer @p has published to us. */
static int shm_rx(struct hop_prov *prov, struct shm_peer *p)
{
	const struct shm_ent *e;
	struct shm_ent h;
	char why[200];
	int got = 0, ret;

	while (prov->cq.count < SHM_CQ_HIGH) {
		ret = shm_ring_peek(&p->in, &h, &e, why, sizeof(why));
		if (ret == 0)
			break;
		if (ret < 0)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PROTOCOL,
					     "shm: rank %d's ring is corrupt: "
					     "%s", p->rank, why);
		if (h.op == SHM_OP_WRITE) {
			if ((h.flags & SHM_F_DATA) && h.len) {
				/* our private table: peers can reach the
				 * published one */
				if (hop_mrtab_check(prov->mrs.tab, h.rkey,
						    h.raddr, h.len,
						    HOP_PROV_REMOTE_WRITE, why,
						    sizeof(why)))
					return prov->ctx->fail_comm(
						prov->ctx,
						HOP_ERR_OUT_OF_BOUNDS,
						"shm: rank %d wrote %u bytes "
						"outside a registered region: "
						"%s", p->rank, h.len, why);
				hop_copy((void *)(uintptr_t)h.raddr, e->data,
					 h.len);
			}
			if (h.flags & SHM_F_MORE) {
				p->acc += h.len;
			} else {
				if (h.flags & SHM_F_IMM) {
					struct hop_cqe *c =
						hop_cqring_push(&prov->cq);
					uint64_t tot = p->acc + h.len;

					if (!c)
						goto nomem;
					c->op = HOP_CQE_RECV_IMM;
					c->peer = p->rank;
					c->imm = h.imm;
					c->len = tot > UINT32_MAX
							 ? UINT32_MAX
							 : (uint32_t)tot;
				}
				p->acc = 0;
			}
		} else if (h.op == SHM_OP_SEND) {
			struct hop_cqe *c;

			if (!(h.flags & SHM_F_DATA) ||
			    h.len > HOP_PROV_SEND_MAX)
				return prov->ctx->fail_comm(prov->ctx,
						     HOP_ERR_PROTOCOL,
						     "shm: rank %d sent a "
						     "message of %u bytes",
						     p->rank, h.len);
			if (!(c = hop_cqring_push(&prov->cq)))
				goto nomem;
			c->op = HOP_CQE_RECV;
			c->peer = p->rank;
			c->len = h.len;
			hop_copy(c->data, e->data, h.len);
		} else {
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PROTOCOL,
					     "shm: rank %d's ring holds an "
					     "entry with unknown op %u",
					     p->rank, h.op);
		}
		shm_ring_consume(&p->in, &h);
		got++;
		if (h.size >= SHM_RELEASE_EARLY) {
			shm_ring_release(&p->in);
			shm_ring_bell(p->seg);
			got = 0;
		}
	}
	if (got) {
		shm_ring_release(&p->in);
		/* the producer may sleep waiting for this space */
		shm_ring_bell(p->seg);
	}
	return 0;
nomem:
	return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
			     "shm: out of memory queueing a completion");
}

int shm_dead(const struct shm_peer *p)
{
	if (p->pidfd >= 0) {
		struct pollfd pf = { .fd = p->pidfd, .events = POLLIN };

		return poll(&pf, 1, 0) == 1;
	}
	if (kill(p->pid, 0) < 0 && errno == ESRCH)
		return 1;
	{
		/* a zombie still answers kill(); its state says 'Z' */
		char path[64], buf[256], *rp;
		FILE *f;
		size_t n;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)p->pid);
		if (!(f = fopen(path, "r")))
			return 0;
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		rp = strrchr(buf, ')');
		return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
	}
}

int shm_check_peer(struct hop_prov *prov, struct shm_peer *p)
{
	if (p->rank == prov->rank || p->gone)
		return 0;
	if (shm_peer_left(prov, p)) {
		p->gone = 1; /* orderly: whatever happens next is fine */
		return 0;
	}
	if (!shm_dead(p))
		return 0;
	p->gone = 1;
	/* it may have closed just before exiting */
	if (shm_peer_left(prov, p))
		return 0;
	return prov->ctx->fail_comm(prov->ctx, HOP_ERR_PEER_FAILED,
			     "shm: rank %d (pid %d) died", p->rank,
			     (int)p->pid);
}

int shm_check_peers(struct hop_prov *prov)
{
	for (int i = 0; i < prov->nact; i++) {
		int ret = shm_check_peer(prov, &prov->peers[prov->act[i]]);

		if (ret)
			return ret;
	}
	return 0;
}

int shm_poll(struct hop_prov *prov, struct hop_cqe *cqe, int max)
{
	int ret, f;
	uint32_t start, n;

	if ((f = prov->ctx->failed(prov->ctx)))
		return f;
	if ((ret = shm_lazy_accept(prov)))
		return ret;
	n = (uint32_t)prov->nact;
	if (prov->sq_busy) {
		for (uint32_t i = 0; i < n; i++) {
			struct shm_peer *p = &prov->peers[prov->act[i]];

			if (p->sq_count && (ret = shm_tx_progress(prov, p)))
				return ret;
		}
	}
	start = prov->rr++ % n;
	for (uint32_t i = 0; i < n; i++) {
		struct shm_peer *p = &prov->peers[prov->act[(start + i) % n]];

		if (shm_ring_pending(&p->in) && (ret = shm_rx(prov, p)))
			return ret;
	}
	if ((++prov->polls & 63) == 0) {
		uint64_t now = hop_now_ns();

		if (now >= prov->next_live) {
			prov->next_live = now + SHM_LIVENESS_NS;
			if ((ret = shm_check_peers(prov)))
				return ret;
		}
	}
	return hop_cqring_pop(&prov->cq, cqe, max);
}

/* Could poll() report or advance anything right now? */
static int shm_ready(struct hop_prov *prov)
{
	if (shm_lazy_joined(prov))
		return 1;
	for (int i = 0; i < prov->nact; i++) {
		struct shm_peer *p = &prov->peers[prov->act[i]];

		if (shm_ring_pending(&p->in))
			return 1;
		/* a stalled post can move once the target freed space */
		if (p->sq_count &&
		    atomic_load_explicit(&p->out.r->head,
					 memory_order_acquire) !=
			    p->out.head_cache)
			return 1;
	}
	return 0;
}

void shm_wait(struct hop_prov *prov, int timeout_us)
{
	struct shm_seg *seg = prov->seg;
	struct timespec ts;
	uint32_t bell;

	if (prov->cq.count ||
	    prov->ctx->failed(prov->ctx) ||
	    timeout_us <= 0 || shm_ready(prov))
		return;
	/* at most one liveness period, so a dead peer is noticed in time */
	if ((uint64_t)timeout_us * 1000ull > SHM_LIVENESS_NS)
		timeout_us = (int)(SHM_LIVENESS_NS / 1000ull);
	bell = atomic_load_explicit(&seg->bell, memory_order_acquire);
	atomic_store_explicit(&seg->waiting, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (!shm_ready(prov)) {
		ts.tv_sec = timeout_us / 1000000;
		ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
		syscall(SYS_futex, &seg->bell, FUTEX_WAIT, bell, &ts, NULL, 0);
	}
	atomic_store_explicit(&seg->waiting, 0, memory_order_relaxed);
	/* the next poll checks liveness */
	prov->polls |= 63;
}
