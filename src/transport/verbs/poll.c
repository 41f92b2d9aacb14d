/*
 * poll.c - the completion side of the verbs provider: CQ polling, receive
 * reposting, synthesised completions of unsignalled WRs, flushes of
 * deferred ones, error completions -> hop_comm_fail naming the peer rank,
 * the QP number and ibv_wc_status_str, and the blocking wait.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "transport/verbs/verbs.h"

int vrb_wc_status_to_hop(int status)
{
	switch (status) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_REM_ACCESS_ERR:     /* rkey, bounds or rights at the target */
	case IBV_WC_LOC_PROT_ERR:       /* lkey or bounds of the source */
	case IBV_WC_MW_BIND_ERR:
		return HOP_ERR_OUT_OF_BOUNDS;
	case IBV_WC_RETRY_EXC_ERR:      /* no ACK: peer gone or link down */
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_WR_FLUSH_ERR:       /* QP in error: the cause came first */
	case IBV_WC_REM_ABORT_ERR:
	case IBV_WC_RESP_TIMEOUT_ERR:
		return HOP_ERR_PEER_FAILED;
	default:
		return HOP_ERR_TRANSPORT;
	}
}

int vrb_peer_fail(struct hop_prov *prov, struct vrb_peer *p, int code,
		  const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return prov->pctx->fail_comm(prov->pctx, code, "verbs: rank %d -> rank %d (QP 0x%x on %s): %s",
			     prov->rank, p->rank, vrb_qpn(p), prov->devname, msg);
}

void vrb_mark_ready(struct hop_prov *prov, struct vrb_peer *p)
{
	if (!p->in_ready) {
		p->in_ready = 1;
		prov->ready[prov->nready++] = p->rank;
	}
}

void vrb_mark_dirty(struct hop_prov *prov, struct vrb_peer *p)
{
	if (!p->in_dirty) {
		p->in_dirty = 1;
		prov->dirty[prov->ndirty++] = p->rank;
	}
}

static void fill(struct hop_cqe *c, int op, int peer, uint64_t wr_id)
{
	c->wr_id = wr_id;
	c->op = op;
	c->status = 0;
	c->peer = peer;
	c->imm = 0;
	c->len = 0;
}

/* Hand out synthesised (and real) local completions that are due. */
static int deliver_ready(struct hop_prov *prov, struct hop_cqe *cqe, int max)
{
	int n = 0;

	while (n < max && prov->nready) {
		struct vrb_peer *p = &prov->peers[prov->ready[prov->nready - 1]];
		uint64_t wr_id;
		int op;

		while (n < max && vrb_sq_pop(&p->sq, &wr_id, &op))
			fill(&cqe[n++], op, p->rank, wr_id);
		if (n == max)
			break;
		p->in_ready = 0;
		prov->nready--;
	}
	return n;
}

static int wc_fail(struct hop_prov *prov, struct vrb_peer *p,
		   const struct ibv_wc *wc, int recv)
{
	int code = vrb_wc_status_to_hop(wc->status);
	int probe = !recv && vrb_live_is_probe(p, wc);
	const char *hint = "";

	if (wc->status == IBV_WC_REM_ACCESS_ERR)
		hint = recv ? ": the peer wrote outside our regions (rkey, bounds "
			      "or access); nothing was written" :
			      ": the target refused the write (rkey, bounds or "
			      "access)";
	else if (wc->status == IBV_WC_RETRY_EXC_ERR)
		hint = ": no ACK within HOP_IB_TIMEOUT x HOP_IB_RETRY_CNT (peer "
		       "dead or link down)";
	else if (wc->status == IBV_WC_WR_FLUSH_ERR)
		hint = ": the QP had failed before";
	return vrb_peer_fail(prov, p, code, "%s completion failed: %s (status %d, "
			     "vendor_err 0x%x)%s", recv ? "receive" : probe ?
			     "liveness probe (zero-length RDMA write after "
			     "HOP_IB_LIVENESS_MS without a completion)" :
			     "send queue (RDMA write/send)",
			     ibv_wc_status_str(wc->status), wc->status,
			     wc->vendor_err, hint);
}

static int handle_wc(struct hop_prov *prov, const struct ibv_wc *wc,
		     struct hop_cqe *cqe, int *n)
{
	int peer = VRB_WRID_PEER(wc->wr_id);
	struct vrb_peer *p;

	if (peer >= prov->nranks)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_INTERNAL,
				     "verbs: rank %d: completion with a foreign wr_id "
				     "0x%llx (QP 0x%x): %s", prov->rank,
				     (unsigned long long)wc->wr_id, wc->qp_num,
				     ibv_wc_status_str(wc->status));
	p = &prov->peers[peer];
	if (wc->wr_id & VRB_WRID_RECV) {
		uint32_t slot = (uint32_t)wc->wr_id;
		struct hop_cqe *c;

		if (wc->status != IBV_WC_SUCCESS)
			return wc_fail(prov, p, wc, 1);
		if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
			c = &cqe[(*n)++];
			fill(c, HOP_CQE_RECV_IMM, p->rank, 0);
			c->imm = ntohl(wc->imm_data);
			c->len = wc->byte_len;
			if (wc->byte_len <= VRB_SMALL_LEN)
				prov->small_seen = 1;
		} else if (wc->wc_flags & IBV_WC_WITH_IMM) {
			uint32_t what = ntohl(wc->imm_data);

			if (what == VRB_CTRL_IMM && wc->byte_len == 12) {
				const uint8_t *m = p->rbuf + (size_t)slot * VRB_RBUF;
				uint64_t len;

				c = &cqe[(*n)++];
				fill(c, HOP_CQE_RECV_IMM, p->rank, 0);
				memcpy(&c->imm, m, 4);
				memcpy(&len, m + 4, 8);
				c->len = (uint32_t)len;
			} else if (what == VRB_CTRL_BYE) {
				HOP_PROV_INFO(prov->pctx, "rank %d: rank %d closed its communicator",
					 prov->rank, p->rank);
				p->state = VRB_PEER_CLOSED;
			} else {
				HOP_PROV_WARN(prov->pctx, "rank %d: unknown control message 0x%x "
					 "from rank %d", prov->rank, what, p->rank);
			}
		} else {
			uint32_t len = wc->byte_len;

			if (len > VRB_RBUF)
				return vrb_peer_fail(prov, p, HOP_ERR_PROTOCOL,
						     "received %u bytes, more than %d",
						     len, VRB_RBUF);
			c = &cqe[(*n)++];
			fill(c, HOP_CQE_RECV, p->rank, 0);
			c->len = len;
			memcpy(c->data, p->rbuf + (size_t)slot * VRB_RBUF, len);
		}
		return vrb_post_recv(prov, p, slot);
	}
	if (wc->status != IBV_WC_SUCCESS) {
		/* a probe raced the peer's orderly close (its BYE came first):
		 * no failure, and nothing is sent to a closed peer again */
		if (p->state == VRB_PEER_CLOSED && vrb_live_is_probe(p, wc)) {
			p->sq.done = p->sq.posted;
			return 0;
		}
		return wc_fail(prov, p, wc, 0);
	}
	vrb_sq_complete(&p->sq, vrb_sq_seq(&p->sq, (uint32_t)wc->wr_id));
	if (p->sq.pend_count && p->sq.pend[p->sq.pend_head].seq < p->sq.done)
		vrb_mark_ready(prov, p);
	return 0;
}

/* Post flushes for deferred completions older than @delay_ns. */
static int flush_dirty(struct hop_prov *prov, uint64_t delay_ns)
{
	uint64_t now = hop_now_ns();

	for (int i = 0; i < prov->ndirty;) {
		struct vrb_peer *p = &prov->peers[prov->dirty[i]];
		struct vrb_sq *sq = &p->sq;
		int rc;

		if (sq->pend_count && vrb_sq_need_flush(sq, now, delay_ns)) {
			rc = vrb_post_flush(prov, p);
			if (rc < 0)
				return rc;
		}
		if (!sq->pend_count ||
		    sq->pend[(sq->pend_head + sq->pend_count - 1) % sq->depth].seq <
			    sq->sig_end) {
			p->in_dirty = 0;
			prov->dirty[i] = prov->dirty[--prov->ndirty];
			continue;
		}
		i++;
	}
	return 0;
}

/* Peers reported DISCONNECTED by rdmacm and not closed with a BYE. */
static int judge_disconnects(struct hop_prov *prov)
{
	prov->ndisc = 0;
	for (int r = 0; r < prov->nranks; r++) {
		struct vrb_peer *p = &prov->peers[r];

		if (p->disconnected && p->state == VRB_PEER_RTS)
			return vrb_peer_fail(prov, p, HOP_ERR_PEER_FAILED,
					     "connection lost (rdma_cm DISCONNECTED "
					     "without a BYE: the peer process exited or "
					     "failed)");
	}
	return 0;
}

int vrb_poll(struct hop_prov *prov, struct hop_cqe *cqe, int max)
{
	struct ibv_wc wc[32];
	int n = 0, rc;

	if (max <= 0 || !cqe)
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
				     "verbs: poll(%p, %d)", (void *)cqe, max);
	if (prov->nready)
		n = deliver_ready(prov, cqe, max);
	while (n < max && prov->nstash) {
		rc = handle_wc(prov, &prov->stash[prov->stash_head], cqe, &n);
		prov->stash_head++;
		prov->nstash--;
		if (rc < 0)
			return rc;
	}
	while (n < max) {
		int want = max - n < 32 ? max - n : 32;
		int got = ibv_poll_cq(prov->cq, want, wc);

		if (got < 0)
			return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
					     "verbs: rank %d: ibv_poll_cq on %s failed (%d)",
					     prov->rank, prov->devname, got);
		for (int i = 0; i < got; i++)
			if ((rc = handle_wc(prov, &wc[i], cqe, &n)) < 0)
				return rc;
		if (prov->nready && n < max)
			n += deliver_ready(prov, cqe + n, max - n);
		if (got < want)
			break;
	}
	/* deferred completions nothing newer will cover: flush them, even
	 * while other peers keep the CQ busy */
	if (prov->ndirty && (rc = flush_dirty(prov, VRB_FLUSH_NS)) < 0)
		return rc;
	/* lazy: connections move on while other peers keep the CQ busy */
	if (prov->lazy && (rc = vrb_lazy_poll(prov, 0)) < 0)
		return rc;
	if (n) {
		prov->last_event_ns = hop_now_ns();
		if (prov->small_seen) {
			prov->last_small_ns = prov->last_event_ns;
			prov->small_seen = 0;
		}
		return n;
	}
	/* nothing arrived: the caller waits on something */
	if (prov->cm_ch && ((++prov->polls & 1023) == 0 || prov->cm_pending)) {
		prov->cm_pending = 0;
		if ((rc = vrb_cm_progress(prov)) < 0)
			return rc;
	}
	if (prov->ndisc && (rc = judge_disconnects(prov)) < 0)
		return rc;
	return vrb_live_tick(prov);
}

void vrb_wait(struct hop_prov *prov, int timeout_us)
{
	struct pollfd pf[2];
	struct timespec ts;
	uint64_t now;
	int got, nfd = 1;

	if (prov->nready || prov->nstash)
		return;
	if (prov->ndirty)
		(void)flush_dirty(prov, 0);     /* a waiter wants them now */
	prov->live_waited = 1;          /* poll() checks the probe clock */
	/* a dial of ours waits for a retry time, not for an event */
	if (prov->lazy_busy && timeout_us > 20000)
		timeout_us = 20000;
	if (timeout_us <= 0) {
		sched_yield();
		return;
	}
	/*
	 * Busy phase (something completed within VRB_BUSY_NS, or a small
	 * message arrived within VRB_BUSY_SMALL_NS): poll instead of
	 * sleeping. A blocked process lets its CPU idle, and waking it again
	 * costs far more than a message under a hypervisor or a loaded host.
	 * It spins on the CQ as ib_write_lat spins on its buffer; only a rank
	 * that shares its cores (HOP_YIELD_US > 0 or HOP_SPIN 0, the
	 * oversubscribed defaults) yields between polls, so that the rank it
	 * waits for runs at once. A yield per poll bought nothing otherwise
	 * (docs/verbs.md, "Waiting").
	 */
	now = hop_now_ns();
	if (now - prov->last_event_ns < VRB_BUSY_NS ||
	    now - prov->last_small_ns < VRB_BUSY_SMALL_NS) {
		uint64_t end = now + (uint64_t)timeout_us * 1000u;
		int yield = prov->cfg.yield_us > 0 ||
			    prov->cfg.spin_count == 0;

		do {
			got = ibv_poll_cq(prov->cq, (int)(sizeof(prov->stash) /
							  sizeof(prov->stash[0])), prov->stash);
			if (got > 0) {
				prov->nstash = got;
				prov->stash_head = 0;
				return;
			}
			if (got < 0)
				return;         /* poll() reports it */
			if (yield)
				sched_yield();
		} while (hop_now_ns() < end);
		return;
	}
	if (!prov->cq_armed) {
		if (ibv_req_notify_cq(prov->cq, 0)) {
			sched_yield();
			return;
		}
		prov->cq_armed = 1;
	}
	/* completions that came before the arming raise no event */
	got = ibv_poll_cq(prov->cq, (int)(sizeof(prov->stash) / sizeof(prov->stash[0])),
			  prov->stash);
	if (got > 0) {
		prov->nstash = got;
		prov->stash_head = 0;
		return;
	}
	pf[0].fd = prov->ch->fd;
	pf[0].events = POLLIN;
	if (prov->cm_ch) {
		pf[1].fd = prov->cm_ch->fd;
		pf[1].events = POLLIN;
		nfd = 2;
	}
	ts.tv_sec = timeout_us / 1000000;
	ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
	if (ppoll(pf, (nfds_t)nfd, &ts, NULL) <= 0)
		return;
	if (pf[0].revents & POLLIN) {
		struct ibv_cq *ev_cq;
		void *ev_ctx;

		if (!ibv_get_cq_event(prov->ch, &ev_cq, &ev_ctx)) {
			prov->cq_armed = 0;
			if (++prov->cq_events >= 64) {
				ibv_ack_cq_events(prov->cq, prov->cq_events);
				prov->cq_events = 0;
			}
		}
	}
	if (nfd == 2 && (pf[1].revents & POLLIN))
		prov->cm_pending = 1;
}
