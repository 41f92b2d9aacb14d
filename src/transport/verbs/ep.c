/*
 * ep.c - the verbs provider instance: PD, completion channel, CQ, one RC
 * QP per peer (one to itself included), receive buffers, QP state changes,
 * open/close and the ops table. With HOP_CONNECT=lazy only the QP to itself
 * is made here; lazy.c makes the others on first use.
 */
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#endif
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "transport/verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* QP state changes                                                   */

int vrb_qp_reset(struct hop_prov *prov, struct vrb_peer *p)
{
	struct ibv_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	rc = ibv_modify_qp(p->qp, &a, IBV_QP_STATE);
	if (rc)
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT,
				     "ibv_modify_qp(RESET): %s", strerror(rc));
	p->recvs_posted = 0;
	return 0;
}

int vrb_qp_init(struct hop_prov *prov, struct vrb_peer *p,
		struct ibv_qp_attr *a, int mask)
{
	int rc;

	a->qp_state = IBV_QPS_INIT;
	/* peers only ever write into us: no remote read, no atomics */
	a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	mask |= IBV_QP_STATE | IBV_QP_ACCESS_FLAGS;
	rc = ibv_modify_qp(p->qp, a, mask);
	if (rc)
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT,
				     "ibv_modify_qp(INIT): %s", strerror(rc));
	if (!p->recvs_posted) {
		for (uint32_t i = 0; i < prov->rq_depth; i++)
			if ((rc = vrb_post_recv(prov, p, i)))
				return rc;
		p->recvs_posted = 1;
	}
	return 0;
}

int vrb_qp_rtr(struct hop_prov *prov, struct vrb_peer *p,
	       struct ibv_qp_attr *a, int mask)
{
	int rc;

	a->qp_state = IBV_QPS_RTR;
	if ((int)a->path_mtu > prov->mtu)
		a->path_mtu = (enum ibv_mtu)prov->mtu;  /* HOP_IB_MTU */
	a->min_rnr_timer = 12;          /* 0.64 ms */
	mask |= IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER;
	rc = ibv_modify_qp(p->qp, a, mask);
	if (rc)
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT,
				     "ibv_modify_qp(RTR, mtu %d, dest QP 0x%x): %s",
				     128 << a->path_mtu, a->dest_qp_num, strerror(rc));
	return 0;
}

int vrb_qp_rts(struct hop_prov *prov, struct vrb_peer *p,
	       struct ibv_qp_attr *a, int mask)
{
	const struct vrb_cfg *cfg = &prov->cfg;
	int rc;

	a->qp_state = IBV_QPS_RTS;
	a->timeout = (uint8_t)cfg->ib_timeout;
	a->retry_cnt = (uint8_t)prov->retry_cnt;
	a->rnr_retry = 7;               /* infinite: a receiver reposts */
	mask |= IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY;
	rc = ibv_modify_qp(p->qp, a, mask);
	if (rc)
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT,
				     "ibv_modify_qp(RTS, timeout %d, retry_cnt %d): %s",
				     cfg->ib_timeout, prov->retry_cnt, strerror(rc));
	return 0;
}

void vrb_qp_attr_rtr(const struct hop_prov *prov, struct ibv_qp_attr *a,
		     int *mask, uint32_t qpn, uint32_t psn,
		     const union ibv_gid *gid, uint16_t lid, int mtu)
{
	memset(a, 0, sizeof(*a));
	a->path_mtu = (enum ibv_mtu)(mtu < prov->mtu ? mtu : prov->mtu);
	a->dest_qp_num = qpn;
	a->rq_psn = psn & 0xffffff;
	a->max_dest_rd_atomic = (uint8_t)prov->rd_atom;
	a->ah_attr.port_num = (uint8_t)prov->port;
	a->ah_attr.dlid = lid;
	if (prov->link_layer == IBV_LINK_LAYER_ETHERNET || !lid) {
		a->ah_attr.is_global = 1;
		a->ah_attr.grh.dgid = *gid;
		a->ah_attr.grh.sgid_index = (uint8_t)prov->gid_index;
		a->ah_attr.grh.hop_limit = 64;
	}
	*mask = IBV_QP_AV | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		IBV_QP_MAX_DEST_RD_ATOMIC;
}

void vrb_qp_attr_rts(const struct hop_prov *prov, struct ibv_qp_attr *a,
		     int *mask, uint32_t psn)
{
	memset(a, 0, sizeof(*a));
	a->sq_psn = psn & 0xffffff;
	a->max_rd_atomic = (uint8_t)prov->rd_atom;
	*mask = IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
}

/* The QP to ourselves: connected to its own number, no exchange. */
static int connect_self(struct hop_prov *prov)
{
	struct vrb_peer *p = &prov->peers[prov->rank];
	struct ibv_qp_attr a;
	int mask, rc;

	memset(&a, 0, sizeof(a));
	a.port_num = (uint8_t)prov->port;
	if ((rc = vrb_qp_init(prov, p, &a, IBV_QP_PKEY_INDEX | IBV_QP_PORT)))
		return rc;
	vrb_qp_attr_rtr(prov, &a, &mask, p->qp->qp_num, p->psn, &prov->gid,
			prov->lid, prov->mtu);
	if ((rc = vrb_qp_rtr(prov, p, &a, mask)))
		return rc;
	vrb_qp_attr_rts(prov, &a, &mask, p->psn);
	if ((rc = vrb_qp_rts(prov, p, &a, mask)))
		return rc;
	p->state = VRB_PEER_RTS;
	return 0;
}

/* ------------------------------------------------------------------ */
/* resources                                                          */

int vrb_create_qp(struct hop_prov *prov, struct vrb_peer *p)
{
	static const uint32_t inl[] = { VRB_INLINE_WANT, 128, 64, 0 };
	struct ibv_qp_init_attr ia;
	int err = 0;

	for (size_t i = 0; i < sizeof(inl) / sizeof(inl[0]); i++) {
		if (prov->max_inline != UINT32_MAX && inl[i] > prov->max_inline)
			continue;
		memset(&ia, 0, sizeof(ia));
		ia.send_cq = prov->cq;
		ia.recv_cq = prov->cq;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = prov->sq_depth;
		ia.cap.max_recv_wr = prov->rq_depth;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		ia.cap.max_inline_data = inl[i];
		p->qp = ibv_create_qp(prov->pd, &ia);
		if (p->qp) {
			if (prov->max_inline == UINT32_MAX ||
			    ia.cap.max_inline_data < prov->max_inline)
				prov->max_inline = ia.cap.max_inline_data;
			return 0;
		}
		err = errno;
		if (err != EINVAL && err != ENOMEM)
			break;
	}
	return prov->pctx->fail_comm(prov->pctx, err == ENOMEM ? HOP_ERR_NO_MEMORY : HOP_ERR_TRANSPORT,
			     "verbs: rank %d: ibv_create_qp(RC, %u/%u WRs) for rank %d "
			     "on %s: %s", prov->rank, prov->sq_depth, prov->rq_depth,
			     p->rank, prov->devname, strerror(err));
}

void *vrb_zalloc_aligned(size_t len)
{
	void *m = NULL;

	if (posix_memalign(&m, 4096, len ? len : 1))
		return NULL;
	memset(m, 0, len);
	return m;
}

/* Eager: every peer's QP, and one slab of receive buffers (and one of
 * bounce slots) for all of them. */
static int create_peers(struct hop_prov *prov)
{
	size_t n = (size_t)prov->nranks;

	prov->rslab = vrb_zalloc_aligned(n * prov->rq_depth * VRB_RBUF);
	if (!prov->rslab)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY,
				     "verbs: rank %d: out of memory for %zu peers",
				     prov->rank, n);
	prov->rslab_mr = ibv_reg_mr(prov->pd, prov->rslab, n * prov->rq_depth * VRB_RBUF,
				    IBV_ACCESS_LOCAL_WRITE);
	if (!prov->rslab_mr)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: ibv_reg_mr(receive buffers, %zu "
				     "bytes): %s", prov->rank,
				     n * prov->rq_depth * VRB_RBUF, strerror(errno));
	for (size_t r = 0; r < n; r++) {
		struct vrb_peer *p = &prov->peers[r];
		int rc;

		p->rbuf = prov->rslab + r * prov->rq_depth * VRB_RBUF;
		p->rlkey = prov->rslab_mr->lkey;
		if ((rc = vrb_sq_init(&p->sq, prov->sq_depth, prov->signal_every)))
			return prov->pctx->fail_comm(prov->pctx, rc, "verbs: rank %d: out of "
					     "memory for send queue accounting", prov->rank);
		if ((rc = vrb_create_qp(prov, p)))
			return rc;
		p->psn = (uint32_t)((hop_now_ns() ^ (p->qp->qp_num * 2654435761u)) & 0xffffff);
	}
	prov->nqp = (int)n;
	/* a device that cannot inline a whole SEND gets bounce slots */
	if (prov->max_inline < HOP_PROV_SEND_MAX) {
		size_t len = n * prov->sq_depth * VRB_RBUF;

		prov->sslab = vrb_zalloc_aligned(len);
		if (!prov->sslab)
			return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY,
					     "verbs: rank %d: out of memory", prov->rank);
		prov->sslab_mr = ibv_reg_mr(prov->pd, prov->sslab, len, 0);
		if (!prov->sslab_mr)
			return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
					     "verbs: rank %d: ibv_reg_mr(send slots): %s",
					     prov->rank, strerror(errno));
		for (size_t r = 0; r < n; r++) {
			prov->peers[r].sbuf = prov->sslab + r * prov->sq_depth * VRB_RBUF;
			prov->peers[r].slkey = prov->sslab_mr->lkey;
		}
	}
	return 0;
}

static int create_resources(struct hop_prov *prov)
{
	const struct vrb_cfg *cfg = &prov->cfg;
	struct ibv_device_attr da;
	size_t n = (size_t)prov->nranks;
	int cqe, flags, rc;

	if (ibv_query_device(prov->ctx, &da))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: ibv_query_device(%s): %s",
				     prov->rank, prov->devname, strerror(errno));
	prov->sq_depth = VRB_SQ_DEPTH;
	prov->rq_depth = VRB_RQ_DEPTH;
	if ((int)prov->sq_depth > da.max_qp_wr)
		prov->sq_depth = prov->rq_depth = (uint32_t)da.max_qp_wr;
	/* one CQ must hold every completion that can be outstanding */
	while ((uint64_t)(prov->sq_depth + prov->rq_depth) * n > (uint64_t)da.max_cqe &&
	       prov->sq_depth > 16) {
		prov->sq_depth /= 2;
		prov->rq_depth /= 2;
	}
	cqe = (int)((prov->sq_depth + prov->rq_depth) * n);
	if (cqe > da.max_cqe)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY,
				     "verbs: rank %d: %zu QPs need a CQ of %d entries; "
				     "%s allows %d", prov->rank, n, cqe, prov->devname,
				     da.max_cqe);
	prov->signal_every = (uint32_t)(cfg->ib_signal_every > 0 ? cfg->ib_signal_every : 1);

	if (!(prov->pd = ibv_alloc_pd(prov->ctx)))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: ibv_alloc_pd(%s): %s", prov->rank,
				     prov->devname, strerror(errno));
	if (!(prov->ch = ibv_create_comp_channel(prov->ctx)))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: ibv_create_comp_channel(%s): %s",
				     prov->rank, prov->devname, strerror(errno));
	flags = fcntl(prov->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(prov->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_SYSTEM,
				     "verbs: rank %d: fcntl(completion channel): %s",
				     prov->rank, strerror(errno));
	/* lazy: room for the QP to ourselves; each new QP grows it */
	if (prov->lazy)
		cqe = (int)(prov->sq_depth + prov->rq_depth);
	if (!(prov->cq = ibv_create_cq(prov->ctx, cqe, prov, prov->ch, 0)))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: ibv_create_cq(%d) on %s: %s",
				     prov->rank, cqe, prov->devname, strerror(errno));

	prov->peers = calloc(n, sizeof(*prov->peers));
	prov->ready = calloc(n, sizeof(int));
	prov->dirty = calloc(n, sizeof(int));
	if (!prov->peers || !prov->ready || !prov->dirty)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY,
				     "verbs: rank %d: out of memory for %zu peers",
				     prov->rank, n);
	for (size_t r = 0; r < n; r++)
		prov->peers[r].rank = (int)r;
	prov->max_inline = UINT32_MAX;
	rc = prov->lazy ? vrb_lazy_peer_setup(prov, &prov->peers[prov->rank]) :
			  create_peers(prov);
	if (rc)
		return rc;
	HOP_PROV_INFO(prov->pctx, "rank %d: %d RC QPs%s, %u send / %u receive WRs each, "
		 "inline %u, signal every %u", prov->rank, prov->nqp,
		 prov->lazy ? " (more on first use)" : "", prov->sq_depth,
		 prov->rq_depth, prov->max_inline, prov->signal_every);
	return 0;
}

/* ------------------------------------------------------------------ */
/* open / close                                                       */

int vrb_open(const struct hop_prov_ctx *ctx, struct hop_prov **out)
{
	uint64_t deadline;
	struct hop_prov *prov;
	uint32_t pref;
	int rc;

	/* a context without the bootstrap services (not hop's) */
	if (!ctx || !out || !HOP_PROV_CTX_HAS(ctx, secret) || !ctx->secret)
		return HOP_ERR_INVALID_ARG;
	deadline = hop_prov_deadline(ctx);
	if (!(prov = calloc(1, sizeof(*prov))))
		return ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY, "verbs: out of memory");
	prov->pctx = ctx;
	vrb_cfg_load(ctx, &prov->cfg);
	if (strcmp(prov->cfg.ib_cm, "rdmacm") && strcmp(prov->cfg.ib_cm, "oob")) {
		rc = ctx->fail_comm(ctx, HOP_ERR_CONFIG, "verbs: HOP_IB_CM=%s: "
				    "expected rdmacm or oob", prov->cfg.ib_cm);
		free(prov);
		return rc;
	}
	prov->rank = ctx->rank;
	prov->nranks = ctx->nranks;
	prov->use_cm = !strcmp(prov->cfg.ib_cm, "rdmacm");
	prov->gid_index = -1;
	prov->lazy = vrb_lazy_wanted(prov);
	pref = ctx->local_addr;

	rc = prov->use_cm ? vrb_cm_listen(prov) : vrb_dev_open(prov, pref);
	if (rc)
		goto err_close;
	if ((rc = vrb_port_setup(prov, pref)))
		goto err_close;
	if ((rc = create_resources(prov)))
		goto err_close;
	if ((rc = connect_self(prov)))
		goto err_close;
	if (prov->lazy)
		rc = vrb_lazy_open(prov);
	else
		rc = prov->use_cm ? vrb_cm_connect_all(prov, deadline) :
				    vrb_oob_connect_all(prov);
	if (rc)
		goto err_close;
	/* nobody posts before every rank's QPs are ready (a failed barrier
	 * is described by hop already) */
	if ((rc = ctx->barrier(ctx)))
		goto err_close;
	vrb_live_init(prov);
	*out = prov;
	return 0;
err_close:
	vrb_close(prov);
	return rc;
}

/* Say BYE to every connected peer and give the BYEs a moment to leave. */
static void say_bye(struct hop_prov *prov)
{
	int64_t ms = prov->pctx->timeout_ms < 1000 ? prov->pctx->timeout_ms : 1000;
	uint64_t end = hop_deadline_after(ms);
	int left = 0;

	for (int r = 0; r < prov->nranks; r++) {
		struct vrb_peer *p = &prov->peers[r];

		if (r == prov->rank || p->state != VRB_PEER_RTS || p->disconnected)
			continue;
		if (vrb_post_ctrl(prov, p, VRB_CTRL_BYE) == 0)
			left++;
	}
	/* a failed comm has nobody to wait for (and no side effect here) */
	while (left && !hop_deadline_passed(end) &&
	       !prov->pctx->failed(prov->pctx)) {
		struct ibv_wc wc[32];
		int got = ibv_poll_cq(prov->cq, 32, wc);

		if (got < 0)
			break;
		for (int i = 0; i < got; i++) {
			struct vrb_peer *p;

			if (wc[i].wr_id & VRB_WRID_RECV ||
			    VRB_WRID_PEER(wc[i].wr_id) >= prov->nranks)
				continue;
			p = &prov->peers[VRB_WRID_PEER(wc[i].wr_id)];
			if (wc[i].status == IBV_WC_SUCCESS)
				vrb_sq_complete(&p->sq, vrb_sq_seq(&p->sq, (uint32_t)wc[i].wr_id));
			else
				p->sq.done = p->sq.posted;      /* give up on it */
		}
		left = 0;
		for (int r = 0; r < prov->nranks; r++) {
			struct vrb_peer *p = &prov->peers[r];

			if (r != prov->rank && p->state == VRB_PEER_RTS &&
			    !p->disconnected && p->sq.done != p->sq.posted)
				left++;
		}
	}
}

void vrb_close(struct hop_prov *prov)
{
	if (!prov)
		return;
	if (prov->peers && prov->cq)
		say_bye(prov);
	if (prov->peers) {
		for (int r = 0; r < prov->nranks; r++) {
			struct vrb_peer *p = &prov->peers[r];

			if (p->qp && ibv_destroy_qp(p->qp))
				HOP_PROV_WARN(prov->pctx, "rank %d: ibv_destroy_qp(0x%x) failed",
					 prov->rank, p->qp->qp_num);
			vrb_sq_fini(&p->sq);
			vrb_lazy_peer_free(p);
		}
	}
	vrb_mr_free_all(prov);
	if (prov->rslab_mr)
		ibv_dereg_mr(prov->rslab_mr);
	if (prov->sslab_mr)
		ibv_dereg_mr(prov->sslab_mr);
	if (prov->cq) {
		if (prov->cq_events)
			ibv_ack_cq_events(prov->cq, prov->cq_events);
		ibv_destroy_cq(prov->cq);
	}
	if (prov->ch)
		ibv_destroy_comp_channel(prov->ch);
	if (prov->pd)
		ibv_dealloc_pd(prov->pd);
	/* last: librdmacm's ids hold the device context we used (rdmacm) */
	vrb_cm_close(prov);
	if (prov->ctx && prov->ctx_owned)
		ibv_close_device(prov->ctx);
	free(prov->rslab);
	free(prov->sslab);
	free(prov->peers);
	free(prov->ready);
	free(prov->dirty);
	free(prov->addrs);
	free(prov);
}

/* The peer's BYE arrived: its QP is going away, a post to it would fail. */
static int vrb_peer_closed(struct hop_prov *prov, int peer)
{
	return peer >= 0 && peer < prov->nranks &&
	       prov->peers[peer].state == VRB_PEER_CLOSED;
}

/*
 * RDMA: the HCA (or rxe in the kernel) places writes; an 8-byte aligned
 * word of a write is placed whole and after the bytes before it, which
 * the LL protocol's flag words need. Eager: a rendezvous costs two more
 * crossings of the wire than an eager message's two copies, so up to 64
 * KiB (hop_config_eager_auto() shrinks it with the registered memory).
 * Link: SoftRoCE (rxe) on two cores, software on both sides: estimates,
 * to be replaced by a hop-probe profile.
 */
static const struct hop_prov_caps vrb_caps = {
	.size = sizeof(struct hop_prov_caps),
	.flags = HOP_PROV_CAP_RDMA | HOP_PROV_CAP_ATOMIC8,
	.eager_size = 65536,
	.alpha = 20.0e-6,
	.beta = 1.0e9,
	.duplex = 1.6,
	.min_chunk = 4096,
};

const struct hop_prov_ops hop_prov_verbs = {
	.size = sizeof(struct hop_prov_ops),
	.name = "verbs",
	.usable = vrb_usable,
	.open = vrb_open,
	.close = vrb_close,
	.mr_reg = vrb_mr_reg,
	.mr_dereg = vrb_mr_dereg,
	.post_write = vrb_post_write,
	.post_send = vrb_post_send,
	.poll = vrb_poll,
	.wait = vrb_wait,
	.max_inline = vrb_max_inline,
	.peer_closed = vrb_peer_closed,
	.connect = vrb_lazy_connect,
	.caps = &vrb_caps,
};
