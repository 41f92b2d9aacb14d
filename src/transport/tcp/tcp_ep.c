/*
 * tcp_ep.c - the tcp provider's instance: listen, exchange addresses,
 * connect every pair (the lower rank connects to the higher, which
 * authenticates the hello) or, with HOP_CONNECT=lazy, each pair on its
 * first use (tcp_lazy.c); close; and its ops table.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "transport/tcp/tcp.h"

/* Above this many peers, poll() finds readable sockets with epoll first. */
#define TCP_EPOLL_PEERS 4

int tcp_usable(const struct hop_prov_ctx *ctx, char *why, size_t whylen)
{
	(void)ctx;
	if (why && whylen)
		why[0] = '\0';
	return 1;
}

void tcp_peer_forget(struct hop_prov *prov, struct tcp_peer *p)
{
	if (prov->epfd >= 0)
		epoll_ctl(prov->epfd, EPOLL_CTL_DEL, p->fd, NULL);
	close(p->fd);
	p->fd = -1;
	if (p->sq_count)
		prov->sq_busy--;
	p->sq_count = 0;
	p->sq_bytes = 0;
}

/* Close @p's socket. @notice: send this op first (best effort), then let
 * our FIN go out before unread input could turn it into a reset. */
static void tcp_peer_drop(struct hop_prov *prov, struct tcp_peer *p,
			  int notice, uint32_t imm)
{
	if (p->fd < 0)
		return;
	if (notice && (p->sq_count == 0 || p->sq[p->sq_head].off == 0)) {
		/* only at a message boundary of our stream */
		struct tcp_hdr h = { .op = (uint8_t)notice, .imm = imm };
		uint8_t buf[TCP_HDR_LEN];

		tcp_hdr_pack(&h, buf);
		if (send(p->fd, buf, sizeof(buf), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			HOP_PROV_TRACE(prov->ctx, "notice %d to rank %d: %s",
				       notice, p->rank, strerror(errno));
	}
	if (notice) {
		shutdown(p->fd, SHUT_WR);
		for (int i = 0; i < 64 && recv(p->fd, p->rx, TCP_RX_BUF,
					       MSG_DONTWAIT) > 0; i++)
			;
	}
	tcp_peer_forget(prov, p);
}

static int tcp_peer_fail_v(struct hop_prov *prov, struct tcp_peer *p,
			   int code, int notice, const char *fmt, va_list ap)
{
	char msg[HOP_PROV_MSG_LEN];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	tcp_peer_drop(prov, p, notice, (uint32_t)-code);
	return prov->ctx->fail_comm(prov->ctx, code, "%s", msg);
}

int tcp_peer_fail(struct hop_prov *prov, struct tcp_peer *p, int code,
		  const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = tcp_peer_fail_v(prov, p, code, 0, fmt, ap);
	va_end(ap);
	return ret;
}

int tcp_peer_reject(struct hop_prov *prov, struct tcp_peer *p, int code,
		    const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = tcp_peer_fail_v(prov, p, code, TCP_OP_REJECT, fmt, ap);
	va_end(ap);
	return ret;
}

int tcp_peer_mem(struct hop_prov *prov, struct tcp_peer *p)
{
	if (!p->sq && !(p->sq = malloc(TCP_SQ_DEPTH * sizeof(*p->sq))))
		goto err_nomem;
	if (!p->rx && p->rank != prov->rank && !(p->rx = malloc(TCP_RX_BUF)))
		goto err_nomem;
	return 0;

err_nomem:
	return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY, "tcp: out "
			     "of memory for the queues of rank %d", p->rank);
}

int tcp_peer_attach(struct hop_prov *prov, int r, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)r };
	int ret;

	if ((ret = tcp_peer_mem(prov, &prov->peers[r]))) {
		close(fd);
		return ret;
	}
	prov->peers[r].fd = fd;
	prov->peers[r].ever = 1;
	tcp_tune(fd);
	/* eager: the epoll set is made once every pair is connected */
	if (prov->epfd >= 0 && epoll_ctl(prov->epfd, EPOLL_CTL_ADD, fd, &ev))
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_SYSTEM,
				     "tcp: epoll_ctl adding rank %d: %s", r,
				     strerror(errno));
	HOP_PROV_TRACE(prov->ctx, "connected to rank %d", r);
	return 0;
}

static void tcp_free(struct hop_prov *prov)
{
	if (prov->peers) {
		for (int r = 0; r < prov->nranks; r++) {
			struct tcp_peer *p = &prov->peers[r];

			if (p->fd >= 0)
				close(p->fd);
			free(p->sq);
			free(p->rx);
		}
	}
	tcp_lazy_close(prov);
	if (prov->epfd >= 0)
		close(prov->epfd);
	free(prov->peers);
	free(prov->pfd);
	hop_cqring_fini(&prov->cq);
	tcp_mr_free_all(prov);
	free(prov->mrs.tab);
	hop_mrtab_fini(&prov->mrs);
	free(prov);
}

static int tcp_listen(struct hop_prov *prov, struct tcp_addr *mine)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_SYSTEM,
				     "tcp: socket: %s", strerror(errno));
	sa.sin_addr.s_addr = prov->ctx->local_addr;
	sa.sin_port = 0;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(fd, SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		int e = errno;

		close(fd);
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_SYSTEM,
				     "tcp: cannot listen on %s: %s",
				     inet_ntoa(sa.sin_addr), strerror(e));
	}
	mine->ip = sa.sin_addr.s_addr;
	mine->port = sa.sin_port;
	mine->pad = 0;
	return fd;
}

/* HOP_CONNECT=lazy? (hop's setting; older cores have none: eager) */
static int tcp_want_lazy(const struct hop_prov_ctx *ctx)
{
	char mode[16] = "";

	if (!HOP_PROV_CTX_HAS(ctx, setting) || !ctx->setting ||
	    ctx->setting(ctx, "HOP_CONNECT", NULL, mode, sizeof(mode)))
		return 0;
	return !strcmp(mode, "lazy");
}

/* Lazy: keep listening, watch the listener with the peers (epoll), and
 * connect nobody yet. Takes @lfd. */
static int tcp_open_lazy(struct hop_prov *prov, int lfd,
			 const struct tcp_addr *addrs)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u32 = TCP_EV_LISTEN };
	int ret;

	prov->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (prov->epfd < 0 ||
	    epoll_ctl(prov->epfd, EPOLL_CTL_ADD, lfd, &ev)) {
		close(lfd);
		return ctx->fail_comm(ctx, HOP_ERR_SYSTEM, "tcp: epoll: %s",
				      strerror(errno));
	}
	if ((ret = tcp_lazy_open(prov, lfd, addrs))) {
		close(lfd);
		return ret;
	}
	HOP_PROV_INFO(ctx, "listening; %d peer(s) are connected on first use "
		      "(HOP_CONNECT=lazy)", prov->nranks - 1);
	return 0;
}

int tcp_open(const struct hop_prov_ctx *ctx, struct hop_prov **out)
{
	uint64_t deadline = hop_prov_deadline(ctx);
	struct tcp_addr mine, *addrs = NULL;
	struct hop_prov *prov;
	int ret, lfd = -1, n = ctx->nranks, lazy = tcp_want_lazy(ctx);

	if (!HOP_PROV_CTX_HAS(ctx, secret) || !ctx->secret)
		return ctx->error(ctx, HOP_ERR_NOT_SUPPORTED, "tcp: this hop's "
				  "provider context (%zu bytes) has no bootstrap "
				  "address and secret to connect the ranks "
				  "with", ctx->size);
	prov = calloc(1, sizeof(*prov));
	if (!prov)
		return ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY,
				     "tcp: out of memory");
	prov->ctx = ctx;
	prov->rank = ctx->rank;
	prov->nranks = n;
	prov->epfd = -1;
	prov->peers = calloc((size_t)n, sizeof(*prov->peers));
	prov->pfd = calloc((size_t)n, sizeof(*prov->pfd));
	addrs = calloc((size_t)n, sizeof(*addrs));
	if (!prov->peers || !prov->pfd || !addrs ||
	    hop_cqring_init(&prov->cq, 1024))
		goto err_nomem;
	for (int r = 0; r < n; r++) {
		struct tcp_peer *p = &prov->peers[r];

		p->fd = -1;
		p->rank = r;
		/* lazy: at the first post to or connection with the peer */
		if (!lazy && (ret = tcp_peer_mem(prov, p)))
			goto err_free;
	}
	{
		uint32_t nslots = 1u << 16;
		void *mem = calloc(1, hop_mrtab_size(nslots));

		if (!mem || hop_mrtab_init(&prov->mrs, mem, nslots)) {
			free(mem);
			goto err_nomem;
		}
	}

	lfd = tcp_listen(prov, &mine);
	if (lfd < 0) {
		ret = lfd;
		goto err_free;
	}
	/* a failed exchange is described by hop already */
	ret = ctx->allgather(ctx, &mine, addrs, sizeof(mine));
	if (ret)
		goto err_close;
	if (lazy) {
		ret = tcp_open_lazy(prov, lfd, addrs);
		lfd = -1;
		if (ret)
			goto err_free;
		free(addrs);
		*out = prov;
		return 0;
	}
	ret = tcp_connect_all(prov, lfd, addrs, ctx->secret, deadline);
	if (ret)
		goto err_close;
	close(lfd);
	lfd = -1;

	if (n - 1 > TCP_EPOLL_PEERS) {
		prov->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (prov->epfd < 0) {
			ret = ctx->fail_comm(ctx, HOP_ERR_SYSTEM,
					    "tcp: epoll_create1: %s",
					    strerror(errno));
			goto err_free;
		}
		for (int r = 0; r < n; r++) {
			struct epoll_event ev = { .events = EPOLLIN,
						  .data.u32 = (uint32_t)r };

			if (prov->peers[r].fd >= 0 &&
			    epoll_ctl(prov->epfd, EPOLL_CTL_ADD,
				      prov->peers[r].fd, &ev)) {
				ret = ctx->fail_comm(ctx, HOP_ERR_SYSTEM,
						    "tcp: epoll_ctl: %s",
						    strerror(errno));
				goto err_free;
			}
		}
	}
	free(addrs);
	HOP_PROV_INFO(ctx, "connected to %d peer(s)", n - 1);
	*out = prov;
	return 0;

err_nomem:
	ret = ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY,
			    "tcp: out of memory opening %d ranks", n);
	goto err_free;
err_close:
	if (lfd >= 0)
		close(lfd);
err_free:
	free(addrs);
	tcp_free(prov);
	return ret;
}

void tcp_close(struct hop_prov *prov)
{
	if (!prov)
		return;
	tcp_lazy_flush(prov);
	prov->closing = 1;
	/* tell every peer this EOF is orderly */
	for (int r = 0; r < prov->nranks; r++)
		tcp_peer_drop(prov, &prov->peers[r], TCP_OP_BYE, 0);
	tcp_free(prov);
}

/* The peer said BYE: its close() has begun, nothing sent reaches it. */
static int tcp_peer_closed(struct hop_prov *prov, int peer)
{
	return peer >= 0 && peer < prov->nranks && prov->peers[peer].bye;
}

/*
 * Emulated: every byte is moved by the processes at both ends, and a
 * receiver copies a write out of its socket in pieces of any size, so a
 * word may land torn. Link: loopback, 17 us one-way 1-byte ping-pong
 * (TCP_NODELAY), 1.3-1.75 GB/s streaming 16 MiB writes, both directions at
 * once 1.57x slower (docs/model.md, "Built-in defaults").
 */
/*
 * A receive from @peer is posted (lazy): dial it if it has not connected
 * within TCP_RECV_DIAL_MS, so that its socket, once up, reports its exit
 * and a peer that is gone is named by the refused dials. Not at once: a
 * sender dials us with its first message, and a lower rank's dial wins
 * a simultaneous one, so our dial would make the pair wait for the
 * sender's next call into hop. Nothing to do once connected or lost.
 */
static int tcp_connect(struct hop_prov *prov, int peer)
{
	struct tcp_peer *p;

	if (!prov->lazy || peer < 0 || peer >= prov->nranks ||
	    peer == prov->rank)
		return 0;
	p = &prov->peers[peer];
	if (p->fd >= 0 || p->ever || p->recv_dial_at)
		return 0;
	p->recv_dial_at = hop_now_ns() + TCP_RECV_DIAL_MS * 1000000ull;
	prov->recv_dials++;
	return 0;
}

static const struct hop_prov_caps tcp_caps = {
	.size = sizeof(struct hop_prov_caps),
	.flags = HOP_PROV_CAP_WAKES,
	.eager_size = 32768,  /* HOP_EAGER_SIZE=auto: config.c says why */
	.alpha = 17.0e-6,
	.beta = 1.5e9,
	.duplex = 1.6,
	.min_chunk = 16384,
};

const struct hop_prov_ops hop_prov_tcp = {
	.size = sizeof(struct hop_prov_ops),
	.name = "tcp",
	.usable = tcp_usable,
	.open = tcp_open,
	.close = tcp_close,
	.mr_reg = tcp_mr_reg,
	.mr_dereg = tcp_mr_dereg,
	.post_write = tcp_post_write,
	.post_send = tcp_post_send,
	.poll = tcp_poll,
	.wait = tcp_wait,
	.max_inline = tcp_max_inline,
	.peer_closed = tcp_peer_closed,
	.caps = &tcp_caps,
	.connect = tcp_connect,
};
