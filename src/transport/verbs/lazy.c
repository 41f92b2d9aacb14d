/*
 * lazy.c - HOP_CONNECT=lazy on verbs: a pair's QPs are made and connected
 * by the first post between them, so a rank's QPs, receive buffers and CQ
 * entries grow with the peers it talks to, not with the job.
 *
 * open() listens, makes the QP to itself and allgathers the listeners'
 * addresses through the bootstrap (the side channel; HOP_IB_CM=oob has no
 * connection manager to dial with later, so it connects every pair as in
 * the eager path). A post to a peer that is not connected makes its QP,
 * dials it with rdma_cm and returns HOP_PROV_AGAIN: nothing is posted
 * before the pair is connected, so per-peer post order is that of the
 * eager path. poll() drives the connection manager: requests from any rank
 * are accepted (cm.c checks rank and secret as in the eager path), and of
 * two ranks dialling each other at once the lower rank's dial wins (cm.c).
 *
 * Every listener is up before the addresses are exchanged, so a request
 * rejected for want of a listener means the peer has exited or closed its
 * communicator: after VRB_LAZY_REFUSED_MS (at most half of HOP_TIMEOUT) of
 * such rejections the comm fails naming it. Any wanted peer not connected
 * within HOP_TIMEOUT of the first post fails it with a timeout naming it.
 * Once connected a pair is watched by liveness.c as in the eager path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/wire.h"
#include "transport/verbs/verbs.h"

#define VRB_LAZY_REFUSED_MS 2000
/* poll() looks at the connection manager every this many calls while no
 * dial of ours is under way: requests of peers that dial us */
#define VRB_LAZY_IDLE_POLLS 64
#define VRB_YIELD_MAGIC 0x59504f48u /* "HOPY" */

uint64_t vrb_lazy_limit_ns(int timeout_ms, int refused)
{
	uint64_t t = (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;

	if (!refused)
		return t;
	return t / 2 < VRB_LAZY_REFUSED_MS * 1000000ull ? t / 2 :
	       VRB_LAZY_REFUSED_MS * 1000000ull;
}

void vrb_lazy_yield_pack(int rank, uint8_t *buf)
{
	hop_put_le32(buf, VRB_YIELD_MAGIC);
	hop_put_le32(buf + 4, (uint32_t)rank);
}

int vrb_lazy_yield_from(const uint8_t *buf, size_t len)
{
	uint32_t r;

	if (!buf || len < VRB_YIELD_LEN || hop_get_le32(buf) != VRB_YIELD_MAGIC)
		return -1;
	r = hop_get_le32(buf + 4);
	return r > (uint32_t)INT32_MAX ? -1 : (int)r;
}

int vrb_lazy_wanted(struct hop_prov *prov)
{
	if (strcmp(prov->cfg.connect, "lazy"))
		return 0;
	if (prov->use_cm)
		return 1;
	HOP_PROV_INFO(prov->pctx, "rank %d: HOP_CONNECT=lazy (the default) needs "
		      "HOP_IB_CM=rdmacm: with HOP_IB_CM=oob every pair is "
		      "connected at open (eager)", prov->rank);
	return 0;
}

/* Room in the one CQ for the completions of @nqp QPs. */
static int grow_cq(struct hop_prov *prov, int nqp)
{
	int cqe = (int)(prov->sq_depth + prov->rq_depth) * nqp;
	int rc;

	if (nqp <= 1 || prov->cq->cqe >= cqe)
		return 0;
	rc = ibv_resize_cq(prov->cq, cqe);
	if (rc)
		return prov->pctx->fail_comm(prov->pctx, rc == ENOMEM ? HOP_ERR_NO_MEMORY :
					     HOP_ERR_TRANSPORT, "verbs: rank %d: "
					     "ibv_resize_cq(%d) on %s for a QP to a new "
					     "peer: %s (HOP_CONNECT=eager sizes it once)",
					     prov->rank, cqe, prov->devname, strerror(rc));
	return 0;
}

int vrb_lazy_peer_setup(struct hop_prov *prov, struct vrb_peer *p)
{
	size_t rlen = (size_t)prov->rq_depth * VRB_RBUF;
	size_t len = rlen + (size_t)prov->sq_depth * VRB_RBUF;
	int rc;

	if (p->qp)
		return 0;
	if ((rc = grow_cq(prov, prov->nqp + 1)))
		return rc;
	/* bounce slots whatever the inline size: it is known per QP only */
	p->buf = vrb_zalloc_aligned(len);
	if (!p->buf || vrb_sq_init(&p->sq, prov->sq_depth, prov->signal_every)) {
		rc = prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY, "verbs: rank %d: "
					   "out of memory for the QP to rank %d",
					   prov->rank, p->rank);
		goto err_free;
	}
	p->buf_mr = ibv_reg_mr(prov->pd, p->buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!p->buf_mr) {
		rc = prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT, "verbs: rank %d: "
					   "ibv_reg_mr(buffers of rank %d, %zu bytes): %s",
					   prov->rank, p->rank, len, strerror(errno));
		goto err_free;
	}
	p->rbuf = p->buf;
	p->sbuf = p->buf + rlen;
	p->rlkey = p->slkey = p->buf_mr->lkey;
	if ((rc = vrb_create_qp(prov, p)))
		goto err_free;
	p->psn = (uint32_t)((hop_now_ns() ^ (p->qp->qp_num * 2654435761u)) & 0xffffff);
	prov->nqp++;
	HOP_PROV_TRACE(prov->pctx, "rank %d: QP 0x%x for rank %d (%d QPs)", prov->rank,
		       p->qp->qp_num, p->rank, prov->nqp);
	return 0;
err_free:
	vrb_sq_fini(&p->sq);
	vrb_lazy_peer_free(p);
	return rc;
}

void vrb_lazy_peer_free(struct vrb_peer *p)
{
	if (p->buf_mr)
		ibv_dereg_mr(p->buf_mr);
	p->buf_mr = NULL;
	free(p->buf);
	p->buf = p->rbuf = p->sbuf = NULL;
}

int vrb_lazy_open(struct hop_prov *prov)
{
	prov->addrs = calloc((size_t)prov->nranks, sizeof(*prov->addrs));
	if (!prov->addrs)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY, "verbs: "
					     "rank %d: out of memory for %d ranks' "
					     "addresses", prov->rank, prov->nranks);
	HOP_PROV_INFO(prov->pctx, "rank %d: HOP_CONNECT=lazy: QPs made on first use",
		      prov->rank);
	return vrb_cm_exchange(prov, prov->addrs);
}

/* Wanted @p is not connected in time: fail naming it. */
static int give_up(struct hop_prov *prov, struct vrb_peer *p, uint64_t now)
{
	unsigned long long ms = (now - p->since_ns) / 1000000ull;

	if (p->refused)
		return vrb_peer_fail(prov, p, HOP_ERR_PEER_FAILED, "rank %d has no "
				     "listener (every connection rejected for %llu ms): "
				     "it has exited or closed its communicator before "
				     "rank %d first posted to it", p->rank, ms, prov->rank);
	return vrb_peer_fail(prov, p, HOP_ERR_TIMEOUT, "connecting to rank %d on "
			     "first use: not connected after %llu ms (HOP_TIMEOUT), "
			     "%d attempt(s)%s%s", p->rank, ms, p->attempts,
			     p->last_err[0] ? ", last: " : "", p->last_err);
}

/* Dial the wanted peers whose retry time came; fail those past their
 * deadline. Sets prov->lazy_busy. */
static int dial_due(struct hop_prov *prov)
{
	uint64_t now = hop_now_ns();
	int busy = 0, rc;

	for (int r = 0; r < prov->nranks; r++) {
		struct vrb_peer *p = &prov->peers[r];

		if (!p->want || p->state == VRB_PEER_RTS || p->state == VRB_PEER_CLOSED)
			continue;
		busy = 1;
		if (now - p->since_ns > vrb_lazy_limit_ns(prov->pctx->timeout_ms, p->refused))
			return give_up(prov, p, now);
		if (p->state == VRB_PEER_INIT && !p->yielded && p->retry_at_ns <= now &&
		    (rc = vrb_cm_start(prov, p, &prov->addrs[r])))
			return rc;
	}
	prov->lazy_busy = busy;
	return 0;
}

int vrb_lazy_poll(struct hop_prov *prov, int now)
{
	int rc;

	if (!prov->lazy_busy && !now && !prov->cm_pending &&
	    (++prov->lazy_polls % VRB_LAZY_IDLE_POLLS) != 0)
		return 0;
	prov->cm_pending = 0;
	if ((rc = vrb_cm_progress(prov)) < 0)
		return rc;
	return prov->lazy_busy ? dial_due(prov) : 0;
}

int vrb_lazy_want(struct hop_prov *prov, struct vrb_peer *p)
{
	int rc;

	if (!p->want) {
		HOP_PROV_TRACE(prov->pctx, "rank %d: connecting to rank %d on first use",
			       prov->rank, p->rank);
		p->want = 1;
		p->since_ns = hop_now_ns();
		p->retry_at_ns = 0;
		p->attempts = 0;
		p->refused = 0;
		p->yielded = 0;
		if ((rc = vrb_lazy_peer_setup(prov, p)))
			return rc;
		prov->lazy_busy = 1;
		if ((rc = dial_due(prov)))
			return rc;
	}
	if ((rc = vrb_lazy_poll(prov, 1)) < 0)
		return rc;
	return HOP_PROV_AGAIN;  /* posted once connected: post order holds */
}

/*
 * A receive from @peer is posted: dial it now, as a post would, so a peer
 * that is gone is named by the refused dials and a connected one is
 * watched (ops->connect; posts still wait for the pair to be ready).
 */
int vrb_lazy_connect(struct hop_prov *prov, int peer)
{
	struct vrb_peer *p;
	int rc;

	if (!prov->lazy || peer < 0 || peer >= prov->nranks ||
	    peer == prov->rank)
		return 0;
	p = &prov->peers[peer];
	if (p->want || p->state == VRB_PEER_RTS ||
	    p->state == VRB_PEER_CLOSED)
		return 0;
	rc = vrb_lazy_want(prov, p);
	return rc == HOP_PROV_AGAIN ? 0 : rc;
}
