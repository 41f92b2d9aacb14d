/*
 * liveness.c - finding a silent peer on verbs.
 *
 * A peer whose process dies is reported by rdma_cm (DISCONNECTED) or by the
 * QP errors of what we still send it. A peer whose link is cut says
 * nothing: its QPs and process live on, and a rank that only waits for
 * data (a receive, a write into its memory) has nothing in flight that
 * could fail. Without help, every survivor would only see its own
 * HOP_TIMEOUT, naming whichever peer it happened to wait on - in a ring,
 * often another survivor that is itself stuck.
 *
 * So a rank that has been waiting HOP_IB_LIVENESS_MS without any
 * completion sends a zero-length RDMA WRITE (no SGE: no memory, no rkey
 * checked) to every connected peer with nothing outstanding. A live peer
 * ACKs it in microseconds; a cut link lets its retries run out and it
 * completes with IBV_WC_RETRY_EXC_ERR after
 *   (HOP_IB_RETRY_CNT + 1) x 4.096 us x 2^HOP_IB_TIMEOUT
 * (default 8 x 1.07 s = 8.6 s), which poll.c turns into
 * HOP_ERR_PEER_FAILED naming that peer. A peer with a signalled WR in
 * flight needs no probe: that one fails the same way, or completes and
 * lets the next round probe. Unsignalled WRs do not count: with selective
 * signalling they stay "outstanding" in the send-queue accounting long
 * after the peer ACKed them, and nothing would ever complete or fail them
 * (the probe, signalled, retires them in order). One round per
 * HOP_IB_LIVENESS_MS while the wait goes on. Cost: one 0-byte packet per
 * idle peer and second, only while this rank waits.
 *
 * The rank whose own link is cut learns it sooner: the device raises
 * IBV_EVENT_PORT_ERR, read here from the async fd (non-blocking).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "transport/verbs/verbs.h"

int vrb_retry_cnt(int want, uint32_t vendor_id)
{
	return want == 7 && vendor_id == VRB_RXE_VENDOR_ID ? 6 : want;
}

/* poll() reads the clock only every this many empty polls, or after a wait() */
#define VRB_LIVE_POLLS 256

void vrb_live_init(struct hop_prov *prov)
{
	const struct vrb_cfg *cfg = &prov->cfg;
	double ack_s = 4.096e-6 * (double)(1ull << cfg->ib_timeout);
	double budget_s = (double)cfg->ib_liveness_ms / 1000.0 +
			  (prov->retry_cnt + 1) * ack_s;
	int fl;

	prov->live_ns = (uint64_t)cfg->ib_liveness_ms * 1000000ull;
	prov->last_event_ns = hop_now_ns();
	prov->live_next_ns = 0;
	/* librdmacm's shared context included: nobody else reads its events */
	fl = fcntl(prov->ctx->async_fd, F_GETFL);
	prov->async_ok = fl >= 0 &&
			 fcntl(prov->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) == 0;
	if (!prov->async_ok)
		HOP_PROV_INFO(prov->pctx, "rank %d: async events of %s not pollable (%s): a "
			 "port going down is found by the probes only", prov->rank,
			 prov->devname, strerror(errno));
	if (prov->live_ns && budget_s >= (double)cfg->timeout_ms / 1000.0)
		HOP_PROV_INFO(prov->pctx, "rank %d: a cut link takes HOP_IB_LIVENESS_MS + "
			 "(HOP_IB_RETRY_CNT + 1) x 4.096 us x 2^HOP_IB_TIMEOUT = "
			 "%.1f s to be named, not less than HOP_TIMEOUT (%g s): a "
			 "wait on a silent peer reports its timeout instead",
			 prov->rank, budget_s, cfg->timeout_ms / 1000.0);
}

int vrb_live_is_probe(const struct vrb_peer *p, const struct ibv_wc *wc)
{
	return p->probe_end &&
	       vrb_sq_seq(&p->sq, (uint32_t)wc->wr_id) + 1 == p->probe_end;
}

static struct vrb_peer *peer_of_qp(struct hop_prov *prov, const struct ibv_qp *qp)
{
	for (int r = 0; r < prov->nranks; r++)
		if (prov->peers[r].qp == qp)
			return &prov->peers[r];
	return NULL;
}

/* Drain the device's async events; a lost port or a fatal QP fails the comm. */
static int async_events(struct hop_prov *prov)
{
	struct ibv_async_event ev;
	struct vrb_peer *p;
	int rc = 0;

	while (rc == 0 && ibv_get_async_event(prov->ctx, &ev) == 0) {
		switch (ev.event_type) {
		case IBV_EVENT_PORT_ERR:
			if (ev.element.port_num != prov->port)
				break;
			rc = prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
					   "verbs: rank %d: port %d of %s went down "
					   "(IBV_EVENT_PORT_ERR: link lost), no peer of "
					   "its %d is reachable", prov->rank, prov->port,
					   prov->devname, prov->nranks - 1);
			break;
		case IBV_EVENT_DEVICE_FATAL:
			rc = prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
					   "verbs: rank %d: device %s failed "
					   "(IBV_EVENT_DEVICE_FATAL)", prov->rank,
					   prov->devname);
			break;
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			p = peer_of_qp(prov, ev.element.qp);
			if (p && p->state == VRB_PEER_RTS)
				rc = vrb_peer_fail(prov, p, HOP_ERR_PEER_FAILED,
						   "QP went to the error state (%s)",
						   ibv_event_type_str(ev.event_type));
			break;
		default:        /* PORT_ACTIVE, GID_CHANGE, COMM_EST, ...: no failure */
			HOP_PROV_INFO(prov->pctx, "rank %d: async event on %s: %s", prov->rank,
				 prov->devname, ibv_event_type_str(ev.event_type));
			break;
		}
		ibv_ack_async_event(&ev);
	}
	return rc;
}

/* One probe per connected peer with nothing in flight. */
static int probe_round(struct hop_prov *prov)
{
	int rc;

	for (int r = 0; r < prov->nranks; r++) {
		struct vrb_peer *p = &prov->peers[r];

		if (r == prov->rank || p->state != VRB_PEER_RTS || p->disconnected ||
		    p->sq.sig_end > p->sq.done)
			continue;
		p->probe_end = p->sq.posted + 1;
		rc = vrb_post_flush(prov, p);
		if (rc == HOP_PROV_AGAIN) {     /* full: those WRs fail if it is dead */
			p->probe_end = 0;
			continue;
		}
		if (rc < 0)
			return rc;
		HOP_PROV_TRACE(prov->pctx, "rank %d: liveness probe to rank %d (QP 0x%x)",
			  prov->rank, r, vrb_qpn(p));
	}
	return 0;
}

int vrb_live_tick(struct hop_prov *prov)
{
	uint64_t now;
	int rc;

	if ((++prov->live_polls % VRB_LIVE_POLLS) && !prov->live_waited)
		return 0;
	prov->live_polls = 0;
	prov->live_waited = 0;
	if (prov->async_ok && (rc = async_events(prov)) < 0)
		return rc;
	if (!prov->live_ns)
		return 0;
	now = hop_now_ns();
	if (now - prov->last_event_ns < prov->live_ns || now < prov->live_next_ns)
		return 0;
	prov->live_next_ns = now + prov->live_ns;
	return probe_round(prov);
}
