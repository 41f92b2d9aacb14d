/*
 * tcp_conn.c - connecting the tcp provider's ranks: every pair once, the
 * lower rank dialling the higher, both sides checking the other's hello
 * (magic, version, secret, nranks, rank). A bad incoming hello is dropped
 * with a warning and the acceptor keeps waiting; all under the deadline.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/bootstrap.h"
#include "core/wire.h"
#include "transport/tcp/tcp.h"

/* Socket buffers asked for when the system maximum allows (else autotune). */
#define TCP_SOCKBUF (4u << 20)

enum hs_state { HS_FREE = 0, HS_CONNECTING, HS_SEND, HS_RECV, HS_DONE };

/* One handshake in progress. */
struct tcp_hs {
	int fd;
	int peer;               /* expected (outgoing) or claimed (incoming) */
	int outgoing;
	int state;
	uint64_t retry_at;      /* outgoing: reconnect time after a refusal */
	uint8_t out[TCP_HELLO_LEN];
	size_t outoff;
	uint8_t in[TCP_HELLO_LEN];
	size_t inoff;
};

static void tcp_tune(int fd)
{
	static int bufs = -1; /* 1 when the system max allows TCP_SOCKBUF */
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (bufs < 0) {
		FILE *f = fopen("/proc/sys/net/core/wmem_max", "r");
		unsigned long w = 0, r = 0;

		if (f) {
			if (fscanf(f, "%lu", &w) != 1)
				w = 0;
			fclose(f);
		}
		f = fopen("/proc/sys/net/core/rmem_max", "r");
		if (f) {
			if (fscanf(f, "%lu", &r) != 1)
				r = 0;
			fclose(f);
		}
		bufs = w >= TCP_SOCKBUF && r >= TCP_SOCKBUF;
	}
	if (bufs) {
		int sz = TCP_SOCKBUF;

		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
}

static int hs_connect(struct tcp_hs *h, const struct tcp_addr *a)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };

	h->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (h->fd < 0)
		return -errno;
	sa.sin_addr.s_addr = a->ip;
	sa.sin_port = a->port;
	h->state = HS_CONNECTING;
	h->outoff = h->inoff = 0;
	if (connect(h->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		h->state = HS_SEND;
	else if (errno != EINPROGRESS)
		return -errno;
	return 0;
}

/* Move handshake @h forward after poll reported @rev. Returns 0, or a
 * negative hop code that fails open(). */
static int hs_step(struct hop_prov *prov, struct tcp_hs *h, short rev,
		   const uint8_t *secret)
{
	struct hop_comm *comm = prov->comm;
	char why[160];
	ssize_t n;

	if (h->state == HS_CONNECTING && (rev & (POLLOUT | POLLERR | POLLHUP))) {
		int err = 0;
		socklen_t el = sizeof(err);

		getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			/* refused or reset: the peer may still be starting */
			close(h->fd);
			h->fd = -1;
			h->state = HS_FREE;
			h->retry_at = hop_now_ns() + 20000000ull;
			HOP_TRACE("tcp: connect to rank %d: %s; retrying",
				  h->peer, strerror(err));
			return 0;
		}
		h->state = HS_SEND;
	}
	if (h->state == HS_SEND) {
		n = send(h->fd, h->out + h->outoff, TCP_HELLO_LEN - h->outoff,
			 MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			goto conn_lost;
		if (n > 0)
			h->outoff += (size_t)n;
		if (h->outoff == TCP_HELLO_LEN)
			h->state = h->outgoing ? HS_RECV : HS_DONE;
		return 0;
	}
	if (h->state == HS_RECV && (rev & (POLLIN | POLLERR | POLLHUP))) {
		struct tcp_hello hello;

		n = recv(h->fd, h->in + h->inoff, TCP_HELLO_LEN - h->inoff, 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			goto conn_lost;
		if (n < 0)
			return 0;
		h->inoff += (size_t)n;
		if (h->inoff < TCP_HELLO_LEN)
			return 0;
		if (tcp_hello_parse(h->in, TCP_HELLO_LEN, &hello, why,
				    sizeof(why)))
			goto bad_hello;
		if (!hop_ct_equal(hello.secret, secret, HOP_SECRET_BYTES)) {
			snprintf(why, sizeof(why), "wrong secret");
			goto bad_hello;
		}
		if (hello.nranks != (uint32_t)prov->nranks) {
			snprintf(why, sizeof(why), "nranks %u, expected %d",
				 hello.nranks, prov->nranks);
			goto bad_hello;
		}
		if (h->outgoing ? hello.rank != (uint32_t)h->peer
				: (hello.rank >= (uint32_t)prov->rank ||
				   prov->peers[hello.rank].fd >= 0)) {
			snprintf(why, sizeof(why),
				 "claims rank %u (%s)", hello.rank,
				 h->outgoing ? "not the rank dialled"
					     : "not a lower rank or a duplicate");
			goto bad_hello;
		}
		if (h->outgoing) {
			h->state = HS_DONE;
		} else {
			struct tcp_hello me = {
				.version = TCP_HELLO_VERSION,
				.rank = (uint32_t)prov->rank,
				.nranks = (uint32_t)prov->nranks,
			};

			memcpy(me.secret, secret, HOP_SECRET_BYTES);
			tcp_hello_pack(&me, h->out);
			h->peer = (int)hello.rank;
			/* claim the rank now so a duplicate is refused */
			prov->peers[h->peer].fd = h->fd;
			h->state = HS_SEND;
			return hs_step(prov, h, 0, secret);
		}
	}
	return 0;

bad_hello:
	if (h->outgoing)
		return hop_comm_fail(comm, HOP_ERR_AUTH,
				     "tcp: rank %d answered with a bad hello: %s",
				     h->peer, why);
	HOP_WARN_LIMITED("tcp: dropped an incoming connection: %s", why);
	close(h->fd);
	h->fd = -1;
	h->state = HS_FREE;
	return 0;
conn_lost:
	if (h->outgoing)
		return hop_comm_fail(comm, HOP_ERR_PEER_FAILED,
				     "tcp: rank %d closed the connection "
				     "during the handshake",
				     h->peer);
	HOP_WARN_LIMITED("tcp: an incoming connection closed during its hello");
	if (h->peer >= 0 && prov->peers[h->peer].fd == h->fd)
		prov->peers[h->peer].fd = -1;
	close(h->fd);
	h->fd = -1;
	h->state = HS_FREE;
	return 0;
}

/* Connect every pair under the deadline. */
int tcp_connect_all(struct hop_prov *prov, int lfd,
		    const struct tcp_addr *addrs, const uint8_t *secret,
		    uint64_t deadline)
{
	int me = prov->rank, n = prov->nranks;
	int nout = n - 1 - me, nin_max = me + 8, nhs = nout + nin_max;
	struct tcp_hs *hs = calloc((size_t)nhs, sizeof(*hs));
	struct pollfd *pfd = calloc((size_t)nhs + 1, sizeof(*pfd));
	int *map = calloc((size_t)nhs + 1, sizeof(*map));
	int ret = 0, done = 0, want = n - 1;
	struct tcp_hello hello = { .version = TCP_HELLO_VERSION,
				   .rank = (uint32_t)me,
				   .nranks = (uint32_t)n };

	if (!hs || !pfd || !map) {
		ret = hop_comm_fail(prov->comm, HOP_ERR_NO_MEMORY,
				    "tcp: out of memory connecting %d ranks", n);
		goto out;
	}
	memcpy(hello.secret, secret, HOP_SECRET_BYTES);
	for (int i = 0; i < nhs; i++) {
		hs[i].fd = -1;
		hs[i].peer = -1;
	}
	for (int i = 0; i < nout; i++) {
		struct tcp_hs *h = &hs[i];

		h->outgoing = 1;
		h->peer = me + 1 + i;
		h->state = HS_FREE;
		h->retry_at = 0;
		tcp_hello_pack(&hello, h->out);
	}

	while (done < want) {
		int np = 0, timeout;
		uint64_t now = hop_now_ns();

		if (now >= deadline) {
			char miss[256];
			size_t off = 0;

			miss[0] = '\0';
			for (int r = 0; r < n && off < sizeof(miss) - 12; r++)
				if (r != me && prov->peers[r].fd < 0)
					off += (size_t)snprintf(miss + off,
						sizeof(miss) - off, "%s%d",
						off ? "," : "", r);
			ret = hop_comm_fail(prov->comm, HOP_ERR_TIMEOUT,
					    "tcp: connecting to rank(s) %s "
					    "timed out after %d ms (HOP_TIMEOUT)",
					    miss[0] ? miss : "?",
					    prov->comm->cfg.timeout_ms);
			goto out;
		}
		/* (re)start outgoing connects that are due */
		for (int i = 0; i < nout; i++) {
			struct tcp_hs *h = &hs[i];

			if (h->state != HS_FREE || h->retry_at > now)
				continue;
			int err = hs_connect(h, &addrs[h->peer]);

			if (err) {
				if (h->fd >= 0)
					close(h->fd);
				h->fd = -1;
				h->state = HS_FREE;
				h->retry_at = now + 20000000ull;
				HOP_TRACE("tcp: connect to rank %d: %s",
					  h->peer, strerror(-err));
			}
		}
		if (me > 0) {
			pfd[np].fd = lfd;
			pfd[np].events = POLLIN;
			map[np++] = -1;
		}
		for (int i = 0; i < nhs; i++) {
			struct tcp_hs *h = &hs[i];
			short ev = 0;

			if (h->fd < 0 || h->state == HS_DONE ||
			    h->state == HS_FREE)
				continue;
			ev = (h->state == HS_RECV) ? POLLIN : POLLOUT;
			pfd[np].fd = h->fd;
			pfd[np].events = ev;
			map[np++] = i;
		}
		timeout = hop_deadline_ms_left(deadline);
		if (timeout > 20)
			timeout = 20; /* retries of refused connects */
		if (poll(pfd, (nfds_t)np, timeout) < 0 && errno != EINTR) {
			ret = hop_comm_fail(prov->comm, HOP_ERR_SYSTEM,
					    "tcp: poll: %s", strerror(errno));
			goto out;
		}
		for (int k = 0; k < np; k++) {
			if (!pfd[k].revents)
				continue;
			if (map[k] < 0) {
				int fd = accept4(lfd, NULL, NULL,
						 SOCK_NONBLOCK | SOCK_CLOEXEC);
				int slot = -1;

				if (fd < 0)
					continue;
				for (int i = nout; i < nhs && slot < 0; i++)
					if (hs[i].state == HS_FREE)
						slot = i;
				if (slot < 0) {
					HOP_WARN_LIMITED("tcp: too many "
							 "pending connections;"
							 " dropped one");
					close(fd);
					continue;
				}
				memset(&hs[slot], 0, sizeof(hs[slot]));
				hs[slot].fd = fd;
				hs[slot].peer = -1;
				hs[slot].state = HS_RECV;
				continue;
			}
			struct tcp_hs *h = &hs[map[k]];

			ret = hs_step(prov, h, pfd[k].revents, secret);
			if (ret)
				goto out;
		}
		/* collect finished handshakes */
		for (int i = 0; i < nhs; i++) {
			struct tcp_hs *h = &hs[i];

			if (h->state != HS_DONE || h->fd < 0)
				continue;
			prov->peers[h->peer].fd = h->fd;
			tcp_tune(h->fd);
			h->fd = -1; /* owned by the peer now */
			if (!h->outgoing)
				h->state = HS_FREE; /* slot reusable */
			done++;
		}
	}
out:
	if (hs)
		for (int i = 0; i < nhs; i++)
			if (hs[i].fd >= 0) {
				if (hs[i].peer >= 0 &&
				    prov->peers[hs[i].peer].fd == hs[i].fd)
					prov->peers[hs[i].peer].fd = -1;
				close(hs[i].fd);
			}
	free(hs);
	free(pfd);
	free(map);
	return ret;
}

