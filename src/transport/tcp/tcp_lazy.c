/*
 * tcp_lazy.c - HOP_CONNECT=lazy: a pair of ranks is connected when the
 * first post between them needs it, so a rank's sockets grow with the
 * peers it talks to, not with the job.
 *
 * open() listens and allgathers the listening addresses through the
 * bootstrap as the eager path does, then dials no one. A post to a peer
 * without a socket queues in the peer's send queue and dials it; the
 * progress pass (poll and wait) moves the non-blocking connect and the
 * hellos on, and accepts and authenticates incoming connections with the
 * rules of tcp_conn.c (a stranger never costs a rank its connection).
 * One socket per pair: when two ranks dial each other at once, the lower
 * rank's dial wins (tcp_conn.c, hs_wanted()), so both ends agree on one
 * stream and per-peer post order holds as in the eager path.
 *
 * Every listener is up before the addresses are exchanged, so a refused
 * connect means the peer has closed its listener: it has exited or closed
 * its communicator. Refusals for TCP_LAZY_REFUSED_MS (at most half of
 * HOP_TIMEOUT) fail the comm naming it; any other connect that has not
 * finished within HOP_TIMEOUT of the first post fails it with a timeout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/tcp/tcp.h"

#define TCP_LAZY_REFUSED_MS 2000
/* Longest close() waits for connects that still hold queued posts */
#define TCP_LAZY_FLUSH_MS 2000
/* Longest sleep in wait() while a refused connect waits to be redialled */
#define TCP_LAZY_REDIAL_US 20000

struct tcp_lazy {
	int lfd;
	struct tcp_addr *addrs;
	uint8_t secret[HOP_PROV_SECRET_LEN];
	struct tcp_hs_set set;
	int busy;               /* some handshake is in progress */
};

int tcp_lazy_open(struct hop_prov *prov, int lfd,
		  const struct tcp_addr *addrs)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct tcp_lazy *L = calloc(1, sizeof(*L));
	size_t naddr = (size_t)prov->nranks * sizeof(*addrs);
	struct pollfd *pfd;
	int ret;

	if (!L || !(L->addrs = malloc(naddr))) {
		free(L);
		return ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY, "tcp: out of "
				      "memory for %d ranks' addresses",
				      prov->nranks);
	}
	memcpy(L->addrs, addrs, naddr);
	memcpy(L->secret, ctx->secret, HOP_PROV_SECRET_LEN);
	L->lfd = lfd;
	ret = tcp_hs_set_init(&L->set, prov, lfd, L->addrs, L->secret, 1);
	if (ret)
		goto err_free;
	/* wait() polls the peers, the listener and the handshakes */
	pfd = realloc(prov->pfd, ((size_t)prov->nranks + (size_t)L->set.nhs +
				  1) * sizeof(*pfd));
	if (!pfd) {
		tcp_hs_set_fini(&L->set);
		ret = ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY,
				     "tcp: out of memory for %d ranks",
				     prov->nranks);
		goto err_free;
	}
	prov->pfd = pfd;
	prov->lazy = L;
	return 0;

err_free:
	free(L->addrs);
	free(L);
	return ret;
}

void tcp_lazy_close(struct hop_prov *prov)
{
	struct tcp_lazy *L = prov->lazy;

	if (!L)
		return;
	tcp_hs_set_fini(&L->set);
	close(L->lfd);
	free(L->addrs);
	free(L);
	prov->lazy = NULL;
}

/* Outgoing @h to rank @r has not connected in time: fail naming it. */
static int lazy_give_up(struct hop_prov *prov, const struct tcp_hs *h, int r)
{
	const struct hop_prov_ctx *ctx = prov->ctx;

	if (h->refused)
		return ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, "tcp: rank %d "
				      "refused every connection from rank %d "
				      "for %llu ms: it has exited or closed "
				      "its communicator before this rank "
				      "first sent to it", r, prov->rank,
				      (unsigned long long)((hop_now_ns() -
							    h->since) / 1000000));
	return ctx->fail_comm(ctx, HOP_ERR_TIMEOUT, "tcp: connecting to "
			      "rank %d on first use timed out after %d ms "
			      "(HOP_TIMEOUT); %d attempt(s) were closed during "
			      "the handshake", r, ctx->timeout_ms, h->resets);
}

/* Is any handshake in progress? Fails a connect past its deadline. */
static int lazy_check(struct hop_prov *prov)
{
	struct tcp_lazy *L = prov->lazy;
	uint64_t now = hop_now_ns(), refused_ns, timeout_ns;
	int busy = 0;

	timeout_ns = (uint64_t)prov->ctx->timeout_ms * 1000000ull;
	refused_ns = timeout_ns / 2 < TCP_LAZY_REFUSED_MS * 1000000ull
			     ? timeout_ns / 2
			     : TCP_LAZY_REFUSED_MS * 1000000ull;
	for (int r = 0; r < L->set.nout; r++) {
		const struct tcp_hs *h = &L->set.hs[r];

		if (h->state == TCP_HS_IDLE)
			continue;
		busy = 1;
		/* a dial for a receive alone (ops->connect) is bounded by
		 * that receive's own deadline, which names what waited */
		if (!h->refused && !prov->peers[r].sq_count)
			continue;
		if (now - h->since > (h->refused ? refused_ns : timeout_ns))
			return lazy_give_up(prov, h, r);
	}
	for (int i = L->set.nout; i < L->set.nhs && !busy; i++)
		busy = L->set.hs[i].state != TCP_HS_FREE;
	L->busy = busy;
	return 0;
}

/* Dial the peers receives have waited on for TCP_RECV_DIAL_MS. */
static int lazy_recv_dials(struct hop_prov *prov)
{
	uint64_t now = hop_now_ns();
	int ret;

	for (int r = 0; r < prov->nranks && prov->recv_dials; r++) {
		struct tcp_peer *p = &prov->peers[r];

		if (!p->recv_dial_at || p->recv_dial_at > now)
			continue;
		p->recv_dial_at = 0;
		prov->recv_dials--;
		if (p->fd < 0 && !p->ever && (ret = tcp_lazy_want(prov, r)))
			return ret;
	}
	return 0;
}

int tcp_lazy_progress(struct hop_prov *prov, int listen)
{
	struct tcp_lazy *L = prov->lazy;
	int ret;

	if (L && prov->recv_dials && (ret = lazy_recv_dials(prov)))
		return ret;
	if (!L || (!L->busy && !listen))
		return 0;
	if ((ret = tcp_hs_pass(&L->set, 0)) < 0)
		return ret;
	return lazy_check(prov);
}

int tcp_lazy_want(struct hop_prov *prov, int peer)
{
	struct tcp_lazy *L = prov->lazy;
	struct tcp_hs *h = &L->set.hs[peer];

	if (h->state != TCP_HS_IDLE || tcp_hs_claimed(&L->set, peer))
		return 0;
	HOP_PROV_TRACE(prov->ctx, "connecting to rank %d on first use", peer);
	h->state = TCP_HS_FREE;
	h->retry_at = 0;
	h->since = hop_now_ns();
	h->resets = 0;
	h->refused = 0;
	L->busy = 1;
	return tcp_lazy_progress(prov, 0);
}

int tcp_lazy_pollfds(struct hop_prov *prov, struct pollfd *pfd,
		     int *timeout_us)
{
	struct tcp_lazy *L = prov->lazy;
	int np = 0;

	if (!L)
		return 0;
	pfd[np].fd = L->lfd;
	pfd[np].events = POLLIN;
	pfd[np++].revents = 0;
	if (!L->busy)
		return np;
	np += tcp_hs_pollfds(&L->set, pfd + np, NULL);
	/* a refused connect is redialled on a timer, not on an event */
	if (*timeout_us > TCP_LAZY_REDIAL_US)
		*timeout_us = TCP_LAZY_REDIAL_US;
	return np;
}

/* Posts queued to a peer whose connect is still under way? */
static int lazy_pending(const struct hop_prov *prov)
{
	for (int r = 0; r < prov->nranks; r++)
		if (prov->peers[r].sq_count && prov->peers[r].fd < 0)
			return 1;
	return 0;
}

/*
 * Before close: an eager post is in the socket once posted, and hop may
 * have completed it for its caller (a buffered send); a lazy one may still
 * wait for its connect. Finish those connects and hand their queues to
 * the sockets, bounded by TCP_LAZY_FLUSH_MS and the comm failing.
 */
void tcp_lazy_flush(struct hop_prov *prov)
{
	int ms = prov->ctx->timeout_ms < TCP_LAZY_FLUSH_MS
			 ? prov->ctx->timeout_ms : TCP_LAZY_FLUSH_MS;
	uint64_t deadline = hop_now_ns() + (uint64_t)ms * 1000000ull;

	if (!prov->lazy)
		return;
	while (lazy_pending(prov) && hop_now_ns() < deadline &&
	       !prov->ctx->failed(prov->ctx)) {
		if (tcp_lazy_progress(prov, 1))
			return;
		for (int r = 0; r < prov->nranks; r++)
			if (prov->peers[r].sq_count && prov->peers[r].fd >= 0 &&
			    tcp_tx_progress(prov, &prov->peers[r]))
				return;
		tcp_wait(prov, 1000);
	}
}
