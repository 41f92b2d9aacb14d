/*
 * example_conn.c - connecting the ranks and tearing down.
 *
 * Each rank listens on an abstract UNIX socket with a random name and
 * draws a random token; ctx->allgather() (hop's authenticated bootstrap)
 * tells every rank the others' names and tokens. A rank connects to every
 * lower rank and says hello {magic, its rank, the target's token}; then it
 * accepts one connection per higher rank, dropping any whose hello is
 * wrong (another local process guessing the name) while it keeps waiting.
 * Connecting first, accepting second cannot deadlock: a connect completes
 * into the listener's backlog.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "example.h"

struct ex_addr {
	char name[48];          /* abstract socket name, after the '\0' */
	uint8_t token[16];
};

struct ex_hello {
	uint32_t magic;
	int32_t rank;
	uint8_t token[16];      /* the target's */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static socklen_t ex_sockaddr(struct sockaddr_un *sa, const char *name)
{
	size_t n = strnlen(name, sizeof(sa->sun_path) - 1);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path + 1, name, n); /* sun_path[0] = 0: abstract */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Wait until @fd is readable, at most until @deadline (ms). 1, 0, -1. */
static int wait_in(int fd, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t now = now_ms();

	if (now >= deadline)
		return 0;
	if (poll(&p, 1, (int)(deadline - now)) < 0)
		return errno == EINTR ? 0 : -1;
	return (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

static int ex_listen(struct hop_prov *prov, struct ex_addr *mine)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct sockaddr_un sa;
	uint32_t r;
	int fd;

	if (getrandom(mine->token, sizeof(mine->token), 0) !=
		    (ssize_t)sizeof(mine->token) ||
	    getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return ctx->error(ctx, HOP_ERR_SYSTEM, EX_NAME ": rank %d: "
				  "getrandom: %s", ctx->rank, strerror(errno));
	snprintf(mine->name, sizeof(mine->name), "hop-example-%d-%08x",
		 (int)getpid(), r);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ctx->error(ctx, HOP_ERR_SYSTEM, EX_NAME ": rank %d: "
				  "socket: %s", ctx->rank, strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, ex_sockaddr(&sa, mine->name)) ||
	    listen(fd, ctx->nranks)) {
		int e = errno;

		close(fd);
		return ctx->error(ctx, HOP_ERR_SYSTEM, EX_NAME ": rank %d: "
				  "listen on @%s: %s", ctx->rank, mine->name,
				  strerror(e));
	}
	return fd;
}

static int ex_connect(struct hop_prov *prov, int peer,
		      const struct ex_addr *a)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct ex_hello h = { .magic = EX_HELLO_MAGIC, .rank = ctx->rank };
	struct timeval tv = { .tv_sec = ctx->timeout_ms / 1000,
			      .tv_usec = (ctx->timeout_ms % 1000) * 1000 };
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memcpy(h.token, a->token, sizeof(h.token));
	/* connect and the hello wait at most HOP_TIMEOUT (a full backlog) */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&sa, ex_sockaddr(&sa, a->name)) ||
	    send(fd, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return ctx->error(ctx, HOP_ERR_PEER_FAILED, EX_NAME ": rank %d: "
				  "connecting to rank %d (@%s): %s", ctx->rank,
				  peer, a->name, strerror(e));
	}
	prov->peers[peer].fd = fd;
	return 0;
}

/* One accepted connection: its rank after a valid hello, or -1. */
static int ex_hello_check(struct hop_prov *prov, int fd,
			  const struct ex_addr *mine, uint64_t deadline)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct ex_hello h;

	if (wait_in(fd, deadline) != 1 ||
	    recv(fd, &h, sizeof(h), MSG_DONTWAIT) != (ssize_t)sizeof(h))
		return -1;
	if (h.magic != EX_HELLO_MAGIC || h.rank <= ctx->rank ||
	    h.rank >= ctx->nranks || prov->peers[h.rank].fd >= 0 ||
	    memcmp(h.token, mine->token, sizeof(h.token))) {
		ctx->log(ctx, HOP_PROV_LOG_WARN, "rank %d: dropped a connection "
			 "with a wrong hello (claims rank %d)", ctx->rank,
			 (int)h.rank);
		return -1;
	}
	return h.rank;
}

static int ex_accept_all(struct hop_prov *prov, int lfd,
			 const struct ex_addr *mine)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	uint64_t deadline = now_ms() + (uint64_t)ctx->timeout_ms;
	int want = ctx->nranks - 1 - ctx->rank;

	while (want > 0) {
		int fd, r;

		if (ctx->failed(ctx))
			return ctx->failed(ctx);
		if (wait_in(lfd, deadline) != 1) {
			if (now_ms() < deadline)
				continue;
			return ctx->error(ctx, HOP_ERR_TIMEOUT, EX_NAME ": rank "
					  "%d: %d higher rank(s) did not "
					  "connect within %d ms", ctx->rank,
					  want, ctx->timeout_ms);
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if ((r = ex_hello_check(prov, fd, mine, deadline)) < 0) {
			close(fd);
			continue;
		}
		prov->peers[r].fd = fd;
		want--;
	}
	return 0;
}

/* Every socket non-blocking from here on: post and poll never block. */
static void ex_nonblock(struct hop_prov *prov)
{
	for (int p = 0; p < prov->nranks; p++) {
		int fd = prov->peers[p].fd;

		if (fd >= 0)
			(void)!fcntl(fd, F_SETFL, O_NONBLOCK);
	}
}

static int ex_alloc(struct hop_prov *prov)
{
	prov->peers = calloc((size_t)prov->nranks, sizeof(*prov->peers));
	prov->mrs = calloc(EX_MAX_MR, sizeof(*prov->mrs));
	prov->free_slots = calloc(EX_MAX_MR, sizeof(*prov->free_slots));
	prov->rx = malloc(sizeof(struct ex_hdr) + EX_FRAG);
	prov->cq_cap = 256;
	prov->cq = calloc(prov->cq_cap, sizeof(*prov->cq));
	if (!prov->peers || !prov->mrs || !prov->free_slots || !prov->rx ||
	    !prov->cq)
		return -1;
	for (int p = 0; p < prov->nranks; p++)
		prov->peers[p].fd = -1;
	for (uint32_t i = 0; i < EX_MAX_MR; i++)
		prov->free_slots[i] = EX_MAX_MR - 1 - i;
	prov->nfree = EX_MAX_MR;
	return 0;
}

/* HOP_PROV_EXAMPLE_FRAG: 1 .. EX_FRAG payload bytes per message. */
static int ex_config(struct hop_prov *prov)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	const char *v = ctx->config(ctx, "FRAG");
	unsigned long n;
	char *end;

	prov->frag = EX_FRAG;
	if (!v)
		return 0;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || n < 1 || n > EX_FRAG)
		return ctx->error(ctx, HOP_ERR_CONFIG, EX_NAME ": rank %d: "
				  "HOP_PROV_EXAMPLE_FRAG='%s': not a number of "
				  "bytes in 1..%u", ctx->rank, v, EX_FRAG);
	prov->frag = n;
	return 0;
}

int ex_open(const struct hop_prov_ctx *ctx, struct hop_prov **out)
{
	struct ex_addr mine, *all = NULL;
	struct hop_prov *prov;
	int ret, lfd;

	if (!ctx || !out)
		return HOP_ERR_INVALID_ARG;
	*out = NULL;
	if (!(prov = calloc(1, sizeof(*prov))))
		return ctx->error(ctx, HOP_ERR_NO_MEMORY, EX_NAME ": out of memory");
	prov->ctx = ctx;
	prov->rank = ctx->rank;
	prov->nranks = ctx->nranks;
	memset(&mine, 0, sizeof(mine));
	if ((ret = ex_config(prov)))
		goto err_free;
	if (ex_alloc(prov) ||
	    !(all = calloc((size_t)ctx->nranks, sizeof(*all)))) {
		ret = ctx->error(ctx, HOP_ERR_NO_MEMORY, EX_NAME ": rank %d: out "
				 "of memory for %d ranks", ctx->rank,
				 ctx->nranks);
		goto err_free;
	}
	if ((ret = lfd = ex_listen(prov, &mine)) < 0)
		goto err_free;
	if ((ret = ctx->allgather(ctx, &mine, all, sizeof(mine))))
		goto err_listen;
	for (int p = 0; p < ctx->rank; p++)
		if ((ret = ex_connect(prov, p, &all[p])))
			goto err_listen;
	if ((ret = ex_accept_all(prov, lfd, &mine)))
		goto err_listen;
	close(lfd);
	free(all);
	ex_nonblock(prov);
	ctx->log(ctx, HOP_PROV_LOG_INFO, "rank %d: connected to %d ranks over "
		 "UNIX sockets", ctx->rank, ctx->nranks - 1);
	*out = prov;
	return 0;

err_listen:
	close(lfd);
err_free:
	free(all);
	prov->closing = 1;
	ex_close(prov);
	return ret;
}

/* Read and drop what is queued, so closing does not reset the peer. */
static void ex_drain(struct hop_prov *prov, int fd)
{
	while (recv(fd, prov->rx, sizeof(struct ex_hdr) + EX_FRAG,
		    MSG_DONTWAIT) > 0)
		;
}

void ex_close(struct hop_prov *prov)
{
	struct ex_hdr bye = { .op = EX_BYE };

	if (!prov)
		return;
	for (int p = 0; prov->peers && p < prov->nranks; p++) {
		struct ex_peer *pe = &prov->peers[p];

		if (pe->fd >= 0) {
			if (!prov->closing)
				(void)!send(pe->fd, &bye, sizeof(bye),
					    MSG_DONTWAIT | MSG_NOSIGNAL);
			if (prov->rx)
				ex_drain(prov, pe->fd);
			close(pe->fd);
		}
		while (pe->sq_head) {
			struct ex_op *o = pe->sq_head;

			pe->sq_head = o->next;
			free(o);
		}
	}
	free(prov->peers);
	free(prov->mrs);
	free(prov->free_slots);
	free(prov->cq);
	free(prov->rx);
	free(prov);
}

/* @peer is gone (EOF, reset, refused data): orderly after its BYE. */
int ex_peer_lost(struct hop_prov *prov, int peer, int err)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	struct ex_peer *pe = &prov->peers[peer];
	int bye = pe->bye;

	if (pe->fd >= 0)
		close(pe->fd);
	pe->fd = -1;
	if (bye)
		return 0;
	if (err)
		return ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, EX_NAME ": rank %d: "
				 "connection to rank %d lost (%s)", ctx->rank,
				 peer, strerror(err));
	return ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, EX_NAME ": rank %d: rank %d "
			 "closed the connection (EOF) without saying goodbye",
			 ctx->rank, peer);
}
