/*
 * cm.c - connecting the QPs with librdmacm (HOP_IB_CM=rdmacm); oob.c has
 * the out-of-band exchange through the bootstrap (HOP_IB_CM=oob).
 *
 * rdmacm: every rank listens on its bootstrap address (the listener also
 * picks the device: the one owning that address); listener addresses are
 * allgathered; rank r connects to every lower rank and accepts the higher
 * ones. QPs stay ours (not rdma_create_qp): rdma_init_qp_attr gives the
 * attributes of each state, we override MTU, timeout and retry count, and
 * pass our QP number in the connection parameters. The private data of the
 * request and of the reply carry rank, nranks and the bootstrap secret; a
 * wrong one is rejected. Failed attempts (unreachable, timeouts of CM MADs
 * on a loaded host) are retried until the comm deadline.
 *
 * HOP_CONNECT=lazy (lazy.c): any rank may dial any other, on its first
 * post to it. When two ranks dial each other at once the lower rank's
 * dial wins: it rejects the higher one's request with a "yield" private
 * data ("HOPY", its rank: vrb_lazy_yield_pack()), and the higher rank drops its own
 * attempt and accepts the lower one's request, whichever comes first.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/wire.h"
#include "transport/verbs/verbs.h"

#define VRB_CM_INFLIGHT 32      /* active connects at once */
#define VRB_CM_STEP_MS 2000     /* address / route resolution timeout */
#define VRB_REJ_NO_LISTENER 8   /* IB_CM_REJ_INVALID_SERVICE_ID */

/* ------------------------------------------------------------------ */
/* hello (pure)                                                       */

void vrb_hello_pack(const struct vrb_hello *h, uint8_t *buf)
{
	hop_put_le32(buf, VRB_HELLO_MAGIC);
	hop_put_le32(buf + 4, VRB_HELLO_VERSION);
	hop_put_le32(buf + 8, h->rank);
	hop_put_le32(buf + 12, h->nranks);
	memcpy(buf + 16, h->secret, 16);
}

int vrb_hello_parse(const void *buf, size_t len, struct vrb_hello *out,
		    char *why, size_t whylen)
{
	const uint8_t *b = buf;

	if (!buf || len < VRB_HELLO_LEN) {
		snprintf(why, whylen, "private data of %zu bytes, expected %d", len,
			 VRB_HELLO_LEN);
		return HOP_ERR_PROTOCOL;
	}
	if (hop_get_le32(b) != VRB_HELLO_MAGIC) {
		snprintf(why, whylen, "bad magic 0x%08x", hop_get_le32(b));
		return HOP_ERR_PROTOCOL;
	}
	if (hop_get_le32(b + 4) != VRB_HELLO_VERSION) {
		snprintf(why, whylen, "version %u, expected %d", hop_get_le32(b + 4),
			 VRB_HELLO_VERSION);
		return HOP_ERR_PROTOCOL;
	}
	out->rank = hop_get_le32(b + 8);
	out->nranks = hop_get_le32(b + 12);
	memcpy(out->secret, b + 16, 16);
	return 0;
}

/* constant time */
/* ------------------------------------------------------------------ */
/* rdmacm                                                             */

int vrb_cm_listen(struct hop_prov *prov)
{
	const struct vrb_cfg *cfg = &prov->cfg;
	struct sockaddr_in sin;
	char ip[INET_ADDRSTRLEN];
	int flags;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = prov->pctx->local_addr;
	inet_ntop(AF_INET, &sin.sin_addr, ip, sizeof(ip));
	prov->cm_ch = rdma_create_event_channel();
	if (!prov->cm_ch)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
				     "verbs: rank %d: rdma_create_event_channel: %s "
				     "(is rdma_ucm loaded? /dev/infiniband/rdma_cm; "
				     "or use HOP_IB_CM=oob)", prov->rank, strerror(errno));
	flags = fcntl(prov->cm_ch->fd, F_GETFL);
	if (flags < 0 || fcntl(prov->cm_ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_SYSTEM,
				     "verbs: rank %d: fcntl(rdma_cm channel): %s",
				     prov->rank, strerror(errno));
	if (rdma_create_id(prov->cm_ch, &prov->listen_id, NULL, RDMA_PS_TCP))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: rdma_create_id: %s", prov->rank,
				     strerror(errno));
	if (rdma_bind_addr(prov->listen_id, (struct sockaddr *)&sin))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
				     "verbs: rank %d: rdma_bind_addr(%s): %s", prov->rank,
				     ip, strerror(errno));
	if (!prov->listen_id->verbs)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
				     "verbs: rank %d: the bootstrap address %s "
				     "(HOP_SOCKET_IFNAME=%s) is not on an RDMA device: "
				     "set HOP_SOCKET_IFNAME to the RDMA netdev, or "
				     "HOP_IB_CM=oob", prov->rank, ip,
				     cfg->socket_ifname[0] ? cfg->socket_ifname : "(auto)");
	prov->ctx = prov->listen_id->verbs;
	prov->ctx_owned = 0;
	snprintf(prov->devname, sizeof(prov->devname), "%s",
		 ibv_get_device_name(prov->ctx->device));
	prov->port = prov->listen_id->port_num;
	if (cfg->ib_device[0] && strcmp(cfg->ib_device, prov->devname))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
				     "verbs: rank %d: HOP_IB_DEVICE=%s, but the bootstrap "
				     "address %s is on %s: set HOP_SOCKET_IFNAME to a "
				     "netdev of %s, or HOP_IB_CM=oob", prov->rank,
				     cfg->ib_device, ip, prov->devname, cfg->ib_device);
	if (rdma_listen(prov->listen_id, prov->nranks < 1024 ? prov->nranks + 8 : 1024))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: rdma_listen(%s): %s", prov->rank,
				     ip, strerror(errno));
	return 0;
}

static void hello_param(struct hop_prov *prov, struct vrb_peer *p,
			uint8_t *buf,
			struct rdma_conn_param *cp)
{
	struct vrb_hello h;

	h.rank = (uint32_t)prov->rank;
	h.nranks = (uint32_t)prov->nranks;
	memcpy(h.secret, prov->pctx->secret, HOP_PROV_SECRET_LEN);
	vrb_hello_pack(&h, buf);
	memset(cp, 0, sizeof(*cp));
	cp->private_data = buf;
	cp->private_data_len = VRB_HELLO_LEN;
	cp->responder_resources = (uint8_t)prov->rd_atom;
	cp->initiator_depth = (uint8_t)prov->rd_atom;
	cp->retry_count = (uint8_t)prov->retry_cnt;
	cp->rnr_retry_count = 7;
	cp->qp_num = p->qp->qp_num;
}

/* Move @p's QP through INIT, RTR, RTS with rdma_init_qp_attr on its id. */
static int cm_qp_to(struct hop_prov *prov, struct vrb_peer *p, int upto)
{
	static const enum ibv_qp_state st[] = { IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS };
	int rc;

	for (int i = 0; i < 3 && st[i] <= (enum ibv_qp_state)upto; i++) {
		struct ibv_qp_attr a;
		int mask = 0;

		if (i == 0 && p->recvs_posted)
			continue;       /* already INIT */
		memset(&a, 0, sizeof(a));
		a.qp_state = st[i];
		if (rdma_init_qp_attr(p->id, &a, &mask))
			return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT,
					     "rdma_init_qp_attr(state %d): %s", st[i],
					     strerror(errno));
		rc = i == 0 ? vrb_qp_init(prov, p, &a, mask) :
		     i == 1 ? vrb_qp_rtr(prov, p, &a, mask) :
			      vrb_qp_rts(prov, p, &a, mask);
		if (rc)
			return rc;
	}
	return 0;
}

/* Drop @p's current attempt: QP back to RESET, id destroyed. */
static int cm_drop(struct hop_prov *prov, struct vrb_peer *p, const char *why,
		   uint64_t retry_ns)
{
	snprintf(p->last_err, sizeof(p->last_err), "%s", why);
	if (p->id) {
		rdma_destroy_id(p->id);
		p->id = NULL;
	}
	p->state = VRB_PEER_INIT;
	p->retry_at_ns = hop_now_ns() + retry_ns;
	return vrb_qp_reset(prov, p);
}

int vrb_cm_start(struct hop_prov *prov, struct vrb_peer *p,
		 const struct vrb_cm_addr *dst)
{
	struct sockaddr_in src, to;

	memset(&src, 0, sizeof(src));
	src.sin_family = AF_INET;
	src.sin_addr.s_addr = prov->pctx->local_addr;
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_addr.s_addr = dst->ip;
	to.sin_port = dst->port;
	p->attempts++;
	p->active = 1;
	p->state = VRB_PEER_CONNECTING;
	if (rdma_create_id(prov->cm_ch, &p->id, p, RDMA_PS_TCP))
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT, "rdma_create_id: %s",
				     strerror(errno));
	if (rdma_resolve_addr(p->id, (struct sockaddr *)&src, (struct sockaddr *)&to,
			      VRB_CM_STEP_MS)) {
		char why[96];

		snprintf(why, sizeof(why), "rdma_resolve_addr: %s", strerror(errno));
		return cm_drop(prov, p, why, 200000000ull);
	}
	return 0;
}

struct cm_ctx {
	struct hop_prov *prov;
	int setup;              /* connecting the ranks: requests welcome */
	int left;               /* peers not connected yet */
	int inflight;           /* active attempts in progress */
};

static int secret_ok(const struct cm_ctx *c, const uint8_t *secret)
{
	return hop_ct_equal(secret, c->prov->pctx->secret, HOP_PROV_SECRET_LEN);
}

static int cm_established(struct cm_ctx *c, struct vrb_peer *p)
{
	p->yielded = 0;
	p->refused = 0;
	if (p->state != VRB_PEER_RTS) {
		p->state = VRB_PEER_RTS;
		c->left--;
		if (p->active)
			c->inflight--;
	}
	return 0;
}

/* Lazy: both ranks dialled; we are the lower, our own dial stands. */
static int cm_reject_yield(struct hop_prov *prov, struct rdma_cm_id *id)
{
	uint8_t pd[VRB_YIELD_LEN];

	vrb_lazy_yield_pack(prov->rank, pd);
	rdma_reject(id, pd, sizeof(pd));
	rdma_destroy_id(id);
	return 0;
}

/* Is this REJECTED's private data a lower rank's "I dial you"? */
static int cm_is_yield(const struct hop_prov *prov, const struct vrb_peer *p,
		       const uint8_t *pd, size_t pdlen)
{
	return prov->lazy && vrb_lazy_yield_from(pd, pdlen) == p->rank &&
	       vrb_lazy_dial_wins(p->rank, prov->rank);
}

/* Our dial lost to the lower rank's: drop it, its request will come. */
static int cm_yield(struct cm_ctx *c, struct vrb_peer *p)
{
	HOP_PROV_TRACE(c->prov->pctx, "rank %d: rank %d dials us as we dial it; "
		       "its dial wins", c->prov->rank, p->rank);
	p->yielded = 1;
	return cm_drop(c->prov, p, "yielded to the peer's own dial", 0);
}

/* A connection request from a higher rank, or any rank when lazy (event
 * already copied). */
static int cm_request(struct cm_ctx *c, struct rdma_cm_id *id, const void *pd,
		      size_t pdlen)
{
	struct hop_prov *prov = c->prov;
	struct rdma_conn_param cp;
	uint8_t buf[VRB_HELLO_LEN];
	struct vrb_hello h;
	struct vrb_peer *p;
	char why[128] = "";
	int rc;

	if (vrb_hello_parse(pd, pdlen, &h, why, sizeof(why)) == 0) {
		if (h.nranks != (uint32_t)prov->nranks)
			snprintf(why, sizeof(why), "nranks %u, expected %d", h.nranks,
				 prov->nranks);
		else if (h.rank >= (uint32_t)prov->nranks ||
			 (prov->lazy ? h.rank == (uint32_t)prov->rank :
				       h.rank <= (uint32_t)prov->rank))
			snprintf(why, sizeof(why), "rank %u does not connect to rank %d",
				 h.rank, prov->rank);
		else if (!secret_ok(c, h.secret))
			snprintf(why, sizeof(why), "wrong secret from rank %u", h.rank);
		else if (prov->peers[h.rank].state == VRB_PEER_RTS)
			snprintf(why, sizeof(why), "rank %u is already connected", h.rank);
	}
	if (why[0]) {
		HOP_PROV_WARN(prov->pctx, "rank %d: rejecting a connection: %s", prov->rank, why);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return 0;
	}
	p = &prov->peers[h.rank];
	if (prov->lazy && p->id && p->active && vrb_lazy_dial_wins(prov->rank, p->rank))
		return cm_reject_yield(prov, id);       /* our dial wins */
	if (p->id && (rc = cm_drop(prov, p, "superseded by a new request", 0)))
		return rc;
	if (prov->lazy && (rc = vrb_lazy_peer_setup(prov, p)))
		return rc;
	p->id = id;
	id->context = p;
	p->state = VRB_PEER_CONNECTING;
	p->active = 0;
	p->attempts++;
	if ((rc = cm_qp_to(prov, p, IBV_QPS_RTS)))
		return rc;
	hello_param(prov, p, buf, &cp);
	if (rdma_accept(id, &cp)) {
		snprintf(why, sizeof(why), "rdma_accept: %s", strerror(errno));
		return cm_drop(prov, p, why, 0);
	}
	return 0;
}

static const char *ev_str(enum rdma_cm_event_type t)
{
	return rdma_event_str(t);
}

static int cm_event(struct cm_ctx *c, struct rdma_cm_event *ev)
{
	struct hop_prov *prov = c->prov;
	enum rdma_cm_event_type type = ev->event;
	struct rdma_cm_id *id = ev->id;
	struct vrb_peer *p = id->context;
	int status = ev->status;
	uint8_t pd[64];
	size_t pdlen = 0;
	char why[160];
	int rc = 0;

	if ((type == RDMA_CM_EVENT_CONNECT_REQUEST || type == RDMA_CM_EVENT_CONNECT_RESPONSE ||
	     type == RDMA_CM_EVENT_ESTABLISHED || type == RDMA_CM_EVENT_REJECTED) &&
	    ev->param.conn.private_data) {
		pdlen = ev->param.conn.private_data_len;
		if (pdlen > sizeof(pd))
			pdlen = sizeof(pd);
		memcpy(pd, ev->param.conn.private_data, pdlen);
	}
	rdma_ack_cm_event(ev);  /* before any rdma_destroy_id below */

	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (c->setup)
			return cm_request(c, id, pd, pdlen);
		HOP_PROV_WARN(prov->pctx, "rank %d: rejecting a connection request after "
			 "set-up", prov->rank);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return 0;
	}
	if (!p)
		return 0;       /* the listener: nothing else to do */
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (id->verbs != prov->ctx)
			return vrb_peer_fail(prov, p, HOP_ERR_NO_DEVICE,
					     "rdma_cm routes rank %d over %s, not %s "
					     "(set HOP_SOCKET_IFNAME to a netdev of %s)",
					     p->rank, id->verbs ?
					     ibv_get_device_name(id->verbs->device) : "no device",
					     prov->devname, prov->devname);
		if (rdma_resolve_route(id, VRB_CM_STEP_MS)) {
			snprintf(why, sizeof(why), "rdma_resolve_route: %s", strerror(errno));
			return cm_drop(prov, p, why, 200000000ull);
		}
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED: {
		struct rdma_conn_param cp;
		uint8_t buf[VRB_HELLO_LEN];

		if ((rc = cm_qp_to(prov, p, IBV_QPS_INIT)))
			return rc;
		hello_param(prov, p, buf, &cp);
		if (rdma_connect(id, &cp)) {
			snprintf(why, sizeof(why), "rdma_connect: %s", strerror(errno));
			return cm_drop(prov, p, why, 200000000ull);
		}
		return 0;
	}
	case RDMA_CM_EVENT_CONNECT_RESPONSE: {
		struct vrb_hello h;

		if (vrb_hello_parse(pd, pdlen, &h, why, sizeof(why)))
			return vrb_peer_fail(prov, p, HOP_ERR_PROTOCOL,
					     "connection reply: %s", why);
		if (!secret_ok(c, h.secret))
			return vrb_peer_fail(prov, p, HOP_ERR_AUTH, "connection "
					     "reply from rank %u of %u with a wrong "
					     "secret", h.rank, h.nranks);
		if (h.rank != (uint32_t)p->rank || h.nranks != (uint32_t)prov->nranks)
			return vrb_peer_fail(prov, p, HOP_ERR_PROTOCOL, "connection "
					     "reply from rank %u of %u, expected "
					     "rank %d of %d", h.rank, h.nranks,
					     p->rank, prov->nranks);
		if ((rc = cm_qp_to(prov, p, IBV_QPS_RTS)))
			return rc;
		if (rdma_establish(id)) {
			snprintf(why, sizeof(why), "rdma_establish: %s", strerror(errno));
			return cm_drop(prov, p, why, 200000000ull);
		}
		return cm_established(c, p);
	}
	case RDMA_CM_EVENT_ESTABLISHED:
		return cm_established(c, p);
	case RDMA_CM_EVENT_REJECTED:
		if (cm_is_yield(prov, p, pd, pdlen))
			return cm_yield(c, p);
		if (prov->lazy && !p->active && p->state != VRB_PEER_RTS)
			/* the dialer gave up on its attempt (closed, or
			 * failed): it dials again if it still wants us */
			return cm_drop(prov, p, "the dialer abandoned the attempt", 0);
		p->refused = status == VRB_REJ_NO_LISTENER;
		if (status == 28)       /* IB_CM_REJ_CONSUMER_DEFINED: the peer said no */
			return vrb_peer_fail(prov, p, HOP_ERR_AUTH, "rank %d rejected "
					     "the connection (wrong secret or job? see "
					     "its log)", p->rank);
		/* fall through */
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		snprintf(why, sizeof(why), "%s (status %d) after %d attempt(s)",
			 ev_str(type), status, p->attempts);
		HOP_PROV_INFO(prov->pctx, "rank %d: connection with rank %d: %s; retrying",
			 prov->rank, p->rank, why);
		if (p->state == VRB_PEER_RTS)
			return vrb_peer_fail(prov, p, HOP_ERR_PEER_FAILED, "%s", why);
		if (p->active)
			c->inflight--;
		return cm_drop(prov, p, why, 100000000ull * (uint64_t)(p->attempts < 10 ? p->attempts : 10));
	case RDMA_CM_EVENT_DISCONNECTED:
		if (prov->lazy && p->state != VRB_PEER_RTS)
			return 0;       /* an attempt that lost: its peer retries */
		if (!p->disconnected) {
			p->disconnected = 1;
			prov->ndisc++;
		}
		if (c->left)    /* still connecting: that is a failure */
			return vrb_peer_fail(prov, p, HOP_ERR_PEER_FAILED,
					     "disconnected while connecting");
		return 0;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return vrb_peer_fail(prov, p, HOP_ERR_TRANSPORT, "device %s removed",
				     prov->devname);
	default:
		return 0;
	}
}

/* Handle every pending event; 0, or a failure code. */
static int cm_drain(struct cm_ctx *c)
{
	struct rdma_cm_event *ev;
	int rc;

	while (rdma_get_cm_event(c->prov->cm_ch, &ev) == 0)
		if ((rc = cm_event(c, ev)) < 0)
			return rc;
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
		return c->prov->pctx->fail_comm(c->prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: rdma_get_cm_event: %s",
				     c->prov->rank, strerror(errno));
	return 0;
}

static int cm_timeout(struct hop_prov *prov)
{
	char list[768] = "";
	size_t used = 0;

	for (int r = 0; r < prov->nranks && used + 1 < sizeof(list); r++) {
		struct vrb_peer *p = &prov->peers[r];
		int w;

		if (r == prov->rank || p->state == VRB_PEER_RTS)
			continue;
		w = snprintf(list + used, sizeof(list) - used, "%s rank %d (%s, %d "
			     "attempt(s)%s%s)", used ? ";" : "", r,
			     p->active ? "we connect" : "it connects", p->attempts,
			     p->last_err[0] ? ", last: " : "", p->last_err);
		if (w > 0)
			used += (size_t)w;
	}
	return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TIMEOUT,
			     "verbs: rank %d: rdma_cm connections not established "
			     "before the deadline (HOP_TIMEOUT):%s", prov->rank, list);
}

int vrb_cm_exchange(struct hop_prov *prov, struct vrb_cm_addr *all)
{
	struct sockaddr_in *sin;
	struct vrb_cm_addr me;

	sin = (struct sockaddr_in *)rdma_get_local_addr(prov->listen_id);
	me.ip = sin->sin_addr.s_addr;
	me.port = rdma_get_src_port(prov->listen_id);
	me.pad = 0;
	/* a failed exchange is described by hop already */
	return prov->pctx->allgather(prov->pctx, &me, all, sizeof(me));
}

int vrb_cm_connect_all(struct hop_prov *prov, uint64_t deadline_ns)
{
	struct cm_ctx c = { .prov = prov, .setup = 1 };
	struct vrb_cm_addr *all;
	int rc;

	all = calloc((size_t)prov->nranks, sizeof(*all));
	if (!all)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY, "verbs: out of memory");
	if ((rc = vrb_cm_exchange(prov, all)))
		goto out;
	c.left = prov->nranks - 1;
	for (int r = 0; r < prov->nranks; r++)
		prov->peers[r].active = r < prov->rank;
	while (c.left > 0) {
		struct pollfd pf = { .fd = prov->cm_ch->fd, .events = POLLIN };
		uint64_t now = hop_now_ns();
		int ms;

		if (now >= deadline_ns) {
			rc = cm_timeout(prov);
			goto out;
		}
		for (int r = 0; r < prov->rank && c.inflight < VRB_CM_INFLIGHT; r++) {
			struct vrb_peer *p = &prov->peers[r];

			if (p->state != VRB_PEER_INIT || p->retry_at_ns > now)
				continue;
			c.inflight++;
			if ((rc = vrb_cm_start(prov, p, &all[r])))
				goto out;
			if (p->state != VRB_PEER_CONNECTING)
				c.inflight--;   /* dropped at once, retried later */
		}
		ms = hop_deadline_ms_left(deadline_ns);
		poll(&pf, 1, ms < 20 ? ms : 20);
		if ((rc = cm_drain(&c)))
			goto out;
	}
	rc = 0;
	HOP_PROV_INFO(prov->pctx, "rank %d: %d rdma_cm connections on %s", prov->rank,
		 prov->nranks - 1, prov->devname);
out:
	free(all);
	return rc;
}

int vrb_cm_progress(struct hop_prov *prov)
{
	struct cm_ctx c = { .prov = prov, .setup = prov->lazy };

	if (!prov->cm_ch)
		return 0;
	return cm_drain(&c);
}

void vrb_cm_close(struct hop_prov *prov)
{
	if (prov->peers)
		for (int r = 0; r < prov->nranks; r++)
			if (prov->peers[r].id) {
				rdma_destroy_id(prov->peers[r].id);
				prov->peers[r].id = NULL;
			}
	if (prov->listen_id) {
		rdma_destroy_id(prov->listen_id);
		prov->listen_id = NULL;
	}
	if (prov->cm_ch) {
		/* events still queued must be acked before the channel goes */
		struct rdma_cm_event *ev;

		while (rdma_get_cm_event(prov->cm_ch, &ev) == 0)
			rdma_ack_cm_event(ev);
		rdma_destroy_event_channel(prov->cm_ch);
		prov->cm_ch = NULL;
	}
}
