/*
 * tcp_conn.c - connecting the tcp provider's ranks: every pair once, the
 * lower rank dialling the higher (eager, at open), or either rank when it
 * first posts to the other (lazy, from the progress pass: tcp_lazy.c);
 * both sides check the other's hello (magic, version, secret, nranks,
 * rank). All under the deadline.
 *
 * Anyone on the host can connect to a listener, so an incoming connection
 * is a stranger until its hello is authenticated, and strangers never cost
 * a rank its connection: each gets TCP_HS_SILENT_MS to say hello, a full
 * set of pending slots makes room by closing the oldest stranger (never an
 * authenticated one), and handshakes are read before the next accept, so a
 * rank's connection is authenticated before it could become the oldest. A
 * dialler whose connection is closed before the answer (evicted as a
 * stranger would be) connects again rather than blame the rank it dialled.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/wire.h"
#include "transport/tcp/tcp.h"

/* Socket buffers asked for when the system maximum allows (else autotune). */
#define TCP_SOCKBUF (4u << 20)

/* An incoming connection has this long to present a valid hello. */
#define TCP_HS_SILENT_MS 1000
/* An outgoing connect is retried this long after a refusal or a reset. */
#define TCP_HS_RETRY_NS 20000000ull

/*
 * Does connected @fd lead to another host (its two ends' addresses
 * differ)? Ranks of one host share their listening address, and their
 * loopback has no link whose idle direction a late clear-to-send could
 * waste: the copies on both ends' cores set its pace, and there
 * TCP_UNSENT_MAX cost 10-20 % of a 1-16 MiB stream (the sender must come
 * back for every 256 KiB the receiver's full window left unsent).
 */
static int tcp_other_host(int fd)
{
	struct sockaddr_in a, b;
	socklen_t la = sizeof(a), lb = sizeof(b);

	if (getsockname(fd, (struct sockaddr *)&a, &la) ||
	    getpeername(fd, (struct sockaddr *)&b, &lb) ||
	    a.sin_family != AF_INET || b.sin_family != AF_INET)
		return 1;
	return a.sin_addr.s_addr != b.sin_addr.s_addr;
}

void tcp_tune(int fd)
{
	/* 1 when the system max allows TCP_SOCKBUF; inits may run on
	 * several threads at once (the NCCL plugin) */
	static _Atomic int bufs = -1;
	int one = 1, lowat = TCP_UNSENT_MAX;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* unsent bytes delay every later post (TCP_SQ_BULK, tcp.h) */
	if (tcp_other_host(fd))
		setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat,
			   sizeof(lowat));
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
	h->state = TCP_HS_CONNECTING;
	h->outoff = h->inoff = 0;
	if (connect(h->fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		h->state = TCP_HS_SEND;
	else if (errno != EINPROGRESS)
		return -errno;
	return 0;
}

/* Outgoing @h failed before the answer: connect again a little later. */
static void hs_retry(struct tcp_hs_set *set, struct tcp_hs *h, const char *why)
{
	HOP_PROV_TRACE(set->prov->ctx, "connection to rank %d: %s; retrying",
		       h->peer, why);
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
	h->state = TCP_HS_FREE;
	h->retry_at = hop_now_ns() + TCP_HS_RETRY_NS;
}

/* Is a socket to rank @r connected or being answered (lazy: incoming
 * hellos do not claim the peer's fd, so no post can write to a socket
 * before its answer is out)? */
int tcp_hs_claimed(const struct tcp_hs_set *set, int r)
{
	if (set->prov->peers[r].fd >= 0 || set->prov->peers[r].ever)
		return 1;
	if (!set->lazy)
		return 0;
	if (set->hs[r].state == TCP_HS_DONE)
		return 1;
	for (int i = set->nout; i < set->nhs; i++)
		if (set->hs[i].peer == r && (set->hs[i].state == TCP_HS_SEND ||
					     set->hs[i].state == TCP_HS_DONE))
			return 1;
	return 0;
}

/*
 * May an authenticated incoming hello from rank @r have the pair's
 * socket? Eager: lower ranks dial. Lazy: either may dial, one socket per
 * pair; when both dial at once the lower rank's dial wins, so this rank
 * refuses a higher rank while its own dial to it is under way (the
 * higher rank gives up its dial when this one reaches it).
 */
static int hs_wanted(const struct tcp_hs_set *set, int r)
{
	int me = set->prov->rank;

	if (!set->lazy)
		return r < me && !tcp_hs_claimed(set, r);
	if (r == me || tcp_hs_claimed(set, r))
		return 0;
	return !(me < r && set->hs[r].state != TCP_HS_IDLE);
}

/* Close incoming @h, releasing the rank it may have claimed. */
static void hs_drop(struct tcp_hs_set *set, struct tcp_hs *h)
{
	struct hop_prov *prov = set->prov;

	if (h->peer >= 0 && prov->peers[h->peer].fd == h->fd)
		prov->peers[h->peer].fd = -1;
	close(h->fd);
	h->fd = -1;
	h->peer = -1;
	h->state = TCP_HS_FREE;
}

/* Incoming @h has not authenticated: close it, blaming no rank. */
static void hs_drop_stranger(struct tcp_hs_set *set, struct tcp_hs *h,
			     const char *why)
{
	HOP_PROV_INFO(set->prov->ctx, "closed an unauthenticated incoming "
		      "connection: %s", why);
	set->strangers++;
	hs_drop(set, h);
}

/* Check the peer's hello in @h->in. 0; HOP_ERR_AUTH with @why; lazy:
 * 1 with @why for an authentic rank that may not have this socket. */
static int hs_check_hello(struct tcp_hs_set *set, struct tcp_hs *h,
			  struct tcp_hello *hello, char *why, size_t whylen)
{
	struct hop_prov *prov = set->prov;

	if (tcp_hello_parse(h->in, TCP_HELLO_LEN, hello, why, whylen))
		return HOP_ERR_AUTH;
	if (!hop_ct_equal(hello->secret, set->secret, HOP_PROV_SECRET_LEN)) {
		snprintf(why, whylen, "wrong secret");
		return HOP_ERR_AUTH;
	}
	if (hello->nranks != (uint32_t)prov->nranks) {
		snprintf(why, whylen, "nranks %u, expected %d", hello->nranks,
			 prov->nranks);
		return HOP_ERR_AUTH;
	}
	if (h->outgoing && hello->rank != (uint32_t)h->peer) {
		snprintf(why, whylen, "claims rank %u (not the rank dialled)",
			 hello->rank);
		return HOP_ERR_AUTH;
	}
	if (!h->outgoing && !hs_wanted(set, (int)hello->rank)) {
		snprintf(why, whylen, "claims rank %u (%s)", hello->rank,
			 set->lazy ? "connected or dialled by this rank"
				   : "not a lower rank or a duplicate");
		/* lazy: an authentic rank that lost a simultaneous dial */
		return set->lazy ? 1 : HOP_ERR_AUTH;
	}
	return 0;
}

/* A valid hello arrived on incoming @h: claim its rank, answer. */
static void hs_accept_hello(struct tcp_hs_set *set, struct tcp_hs *h,
			    const struct tcp_hello *hello)
{
	struct hop_prov *prov = set->prov;
	struct tcp_hello me = {
		.version = TCP_HELLO_VERSION,
		.rank = (uint32_t)prov->rank,
		.nranks = (uint32_t)prov->nranks,
	};

	memcpy(me.secret, set->secret, HOP_PROV_SECRET_LEN);
	tcp_hello_pack(&me, h->out);
	h->peer = (int)hello->rank;
	h->state = TCP_HS_SEND;
	if (set->lazy) {
		/* the higher rank of a simultaneous dial gives up its own */
		struct tcp_hs *mine = &set->hs[h->peer];

		if (mine->fd >= 0)
			close(mine->fd);
		mine->fd = -1;
		mine->state = TCP_HS_IDLE;
		return;
	}
	/* claim the rank now so a duplicate is refused */
	prov->peers[h->peer].fd = h->fd;
}

/* Move handshake @h forward after poll reported @rev. Returns 0, or a
 * negative hop code that fails open(). */
static int hs_step(struct tcp_hs_set *set, struct tcp_hs *h, short rev)
{
	struct hop_prov *prov = set->prov;
	struct tcp_hello hello;
	char why[160];
	ssize_t n;
	int bad;

	if (h->state == TCP_HS_CONNECTING && (rev & (POLLOUT | POLLERR | POLLHUP))) {
		int err = 0;
		socklen_t el = sizeof(err);

		getsockopt(h->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			/* refused or reset: the peer may still be starting */
			hs_retry(set, h, strerror(err));
			h->refused = err == ECONNREFUSED;
			return 0;
		}
		h->state = TCP_HS_SEND;
	}
	if (h->state == TCP_HS_SEND) {
		n = send(h->fd, h->out + h->outoff, TCP_HELLO_LEN - h->outoff,
			 MSG_NOSIGNAL);
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			goto conn_lost;
		if (n > 0)
			h->outoff += (size_t)n;
		if (h->outoff == TCP_HELLO_LEN)
			h->state = h->outgoing ? TCP_HS_RECV : TCP_HS_DONE;
		return 0;
	}
	if (h->state != TCP_HS_RECV || !(rev & (POLLIN | POLLERR | POLLHUP)))
		return 0;
	n = recv(h->fd, h->in + h->inoff, TCP_HELLO_LEN - h->inoff, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		goto conn_lost;
	if (n < 0)
		return 0;
	h->inoff += (size_t)n;
	if (h->inoff < TCP_HELLO_LEN)
		return 0;
	if ((bad = hs_check_hello(set, h, &hello, why, sizeof(why))) > 0) {
		HOP_PROV_TRACE(prov->ctx, "closed an incoming connection: %s",
			       why);
		hs_drop(set, h);
		return 0;
	}
	if (bad) {
		if (h->outgoing)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_AUTH,
					     "tcp: rank %d answered with a bad "
					     "hello: %s", h->peer, why);
		/* a stranger may knock at will: the first few are news */
		prov->ctx->log(prov->ctx, set->strangers < 3 ? HOP_PROV_LOG_WARN
				   : HOP_PROV_LOG_TRACE, "dropped an incoming "
				   "connection: %s", why);
		set->strangers++;
		hs_drop(set, h);
		return 0;
	}
	if (h->outgoing) {
		h->state = TCP_HS_DONE;
		h->refused = 0;
		return 0;
	}
	hs_accept_hello(set, h, &hello);
	return hs_step(set, h, 0);

conn_lost:
	if (h->outgoing) {
		/* closed before its answer: our connection may have been
		 * taken for a stranger's; the deadline bounds the retries */
		h->resets++;
		hs_retry(set, h, "closed during the handshake");
	} else if (h->state == TCP_HS_RECV) {
		hs_drop_stranger(set, h, "closed before its hello");
	} else {
		HOP_PROV_INFO(prov->ctx, "rank %d closed its connection during "
			      "the handshake; waiting for it again", h->peer);
		hs_drop(set, h);
	}
	return 0;
}

/* A free incoming slot, making one by closing the oldest stranger (an
 * incoming connection whose hello is not read yet); -1 when every slot
 * holds an authenticated rank. */
static int hs_free_slot(struct tcp_hs_set *set)
{
	struct tcp_hs *oldest = NULL;

	for (int i = set->nout; i < set->nhs; i++) {
		struct tcp_hs *h = &set->hs[i];

		if (h->state == TCP_HS_FREE)
			return i;
		if (h->state == TCP_HS_RECV && (!oldest || h->since < oldest->since))
			oldest = h;
	}
	if (!oldest)
		return -1;
	hs_drop_stranger(set, oldest, "all pending slots in use; it is the "
			 "oldest");
	return (int)(oldest - set->hs);
}

/* Accept one queued connection into a slot. */
static void hs_accept(struct tcp_hs_set *set, int lfd)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	int slot;
	struct tcp_hs *h;

	if (fd < 0)
		return;
	if ((slot = hs_free_slot(set)) < 0) {
		HOP_PROV_INFO(set->prov->ctx, "every pending slot holds a "
			      "rank; closed an incoming connection");
		set->strangers++;
		close(fd);
		return;
	}
	h = &set->hs[slot];
	memset(h, 0, sizeof(*h));
	h->fd = fd;
	h->peer = -1;
	h->state = TCP_HS_RECV;
	h->since = hop_now_ns();
}

/* Close incoming connections that did not say hello in time. */
static void hs_expire(struct tcp_hs_set *set, uint64_t now)
{
	char why[48];

	snprintf(why, sizeof(why), "no hello within %d ms", TCP_HS_SILENT_MS);
	for (int i = set->nout; i < set->nhs; i++) {
		struct tcp_hs *h = &set->hs[i];

		if (h->state == TCP_HS_RECV &&
		    now - h->since > TCP_HS_SILENT_MS * 1000000ull)
			hs_drop_stranger(set, h, why);
	}
}

/* (Re)start outgoing connects that are due. */
static void hs_dial(struct tcp_hs_set *set, const struct tcp_addr *addrs,
		    uint64_t now)
{
	for (int i = 0; i < set->nout; i++) {
		struct tcp_hs *h = &set->hs[i];
		int err;

		if (h->state != TCP_HS_FREE || h->retry_at > now)
			continue;
		if ((err = hs_connect(h, &addrs[h->peer]))) {
			hs_retry(set, h, strerror(-err));
			h->refused = err == -ECONNREFUSED;
		}
	}
}

/* Hand finished handshakes' sockets to their peers; returns how many,
 * or a negative hop code. */
static int hs_collect(struct tcp_hs_set *set)
{
	int done = 0, ret;

	for (int i = 0; i < set->nhs; i++) {
		struct tcp_hs *h = &set->hs[i];

		if (h->state != TCP_HS_DONE || h->fd < 0)
			continue;
		ret = tcp_peer_attach(set->prov, h->peer, h->fd);
		h->fd = -1; /* owned by the peer now */
		if (!h->outgoing)
			h->state = TCP_HS_FREE; /* slot reusable */
		else if (set->lazy)
			h->state = TCP_HS_IDLE;
		if (ret)
			return ret;
		done++;
	}
	return done;
}

static int hs_timeout(struct tcp_hs_set *set)
{
	struct hop_prov *prov = set->prov;
	char miss[256], note[160] = "";
	size_t off = 0;
	int resets = 0;

	miss[0] = '\0';
	for (int r = 0; r < prov->nranks && off < sizeof(miss) - 12; r++)
		if (r != prov->rank && prov->peers[r].fd < 0)
			off += (size_t)snprintf(miss + off, sizeof(miss) - off,
						"%s%d", off ? "," : "", r);
	for (int i = 0; i < set->nout; i++)
		resets += set->hs[i].resets;
	if (resets || set->strangers)
		snprintf(note, sizeof(note), "; %d of our connects were closed "
			 "during the handshake, %d unauthenticated incoming "
			 "connection(s) were closed", resets, set->strangers);
	return prov->ctx->fail_comm(prov->ctx, HOP_ERR_TIMEOUT,
			     "tcp: connecting to rank(s) %s timed out after %d "
			     "ms (HOP_TIMEOUT)%s", miss[0] ? miss : "?",
			     prov->ctx->timeout_ms, note);
}

int tcp_hs_set_init(struct tcp_hs_set *set, struct hop_prov *prov, int lfd,
		    const struct tcp_addr *addrs, const uint8_t *secret,
		    int lazy)
{
	int me = prov->rank, n = prov->nranks;
	struct tcp_hello hello = { .version = TCP_HELLO_VERSION,
				   .rank = (uint32_t)me,
				   .nranks = (uint32_t)n };

	memset(set, 0, sizeof(*set));
	set->prov = prov;
	set->secret = secret;
	set->addrs = addrs;
	set->lfd = lfd;
	set->lazy = lazy;
	/* lazy: slot r dials rank r; incoming slots are only held for a
	 * hello's round trip, so a few dozen serve any job size */
	set->nout = lazy ? n : n - 1 - me;
	set->nhs = set->nout + (lazy ? (n - 1 < 64 ? n - 1 : 64) : me) + 8;
	set->hs = calloc((size_t)set->nhs, sizeof(*set->hs));
	set->pfd = calloc((size_t)set->nhs + 1, sizeof(*set->pfd));
	set->map = calloc((size_t)set->nhs + 1, sizeof(*set->map));
	if (!set->hs || !set->pfd || !set->map) {
		tcp_hs_set_fini(set);
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
				     "tcp: out of memory for the handshakes "
				     "of %d ranks", n);
	}
	memcpy(hello.secret, secret, HOP_PROV_SECRET_LEN);
	for (int i = 0; i < set->nhs; i++) {
		set->hs[i].fd = -1;
		set->hs[i].peer = -1;
	}
	for (int i = 0; i < set->nout; i++) {
		set->hs[i].outgoing = 1;
		set->hs[i].peer = lazy ? i : me + 1 + i;
		set->hs[i].state = lazy ? TCP_HS_IDLE : TCP_HS_FREE;
		tcp_hello_pack(&hello, set->hs[i].out);
	}
	return 0;
}

void tcp_hs_set_fini(struct tcp_hs_set *set)
{
	for (int i = 0; set->hs && i < set->nhs; i++)
		if (set->hs[i].fd >= 0)
			hs_drop(set, &set->hs[i]);
	free(set->hs);
	free(set->pfd);
	free(set->map);
	set->hs = NULL;
	set->pfd = NULL;
	set->map = NULL;
}

int tcp_hs_pollfds(const struct tcp_hs_set *set, struct pollfd *pfd,
		   int *map)
{
	int np = 0;

	for (int i = 0; i < set->nhs; i++) {
		const struct tcp_hs *h = &set->hs[i];

		if (h->fd < 0 || h->state == TCP_HS_DONE ||
		    h->state == TCP_HS_FREE)
			continue;
		pfd[np].fd = h->fd;
		pfd[np].events = h->state == TCP_HS_RECV ? POLLIN : POLLOUT;
		pfd[np].revents = 0;
		if (map)
			map[np] = i;
		np++;
	}
	return np;
}

int tcp_hs_pass(struct tcp_hs_set *set, int timeout_ms)
{
	struct hop_prov *prov = set->prov;
	struct pollfd *pfd = set->pfd;
	uint64_t now = hop_now_ns();
	int np = 0, ret;

	hs_dial(set, set->addrs, now);
	hs_expire(set, now);
	np = tcp_hs_pollfds(set, pfd, set->map);
	/* last: handshakes are read before another accept can evict one of
	 * them; eager rank 0 is dialled by no one */
	if (set->lazy || prov->rank > 0) {
		pfd[np].fd = set->lfd;
		pfd[np].events = POLLIN;
		set->map[np++] = -1;
	}
	if (poll(pfd, (nfds_t)np, timeout_ms) < 0 && errno != EINTR)
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_SYSTEM,
				     "tcp: poll: %s", strerror(errno));
	for (int k = 0; k < np; k++) {
		if (!pfd[k].revents)
			continue;
		if (set->map[k] < 0)
			hs_accept(set, set->lfd);
		else if ((ret = hs_step(set, &set->hs[set->map[k]],
					pfd[k].revents)))
			return ret;
	}
	return hs_collect(set);
}

/* Connect every pair under the deadline. */
int tcp_connect_all(struct hop_prov *prov, int lfd,
		    const struct tcp_addr *addrs, const uint8_t *secret,
		    uint64_t deadline)
{
	struct tcp_hs_set set;
	int ret, done = 0, want = prov->nranks - 1;

	if ((ret = tcp_hs_set_init(&set, prov, lfd, addrs, secret, 0)))
		return ret;
	while (done < want) {
		int timeout = hop_deadline_ms_left(deadline);

		if (hop_now_ns() >= deadline) {
			ret = hs_timeout(&set);
			break;
		}
		/* at most 20 ms: retries of refused connects */
		if ((ret = tcp_hs_pass(&set, timeout > 20 ? 20 : timeout)) < 0)
			break;
		done += ret;
		ret = 0;
	}
	if (set.strangers)
		HOP_PROV_WARN(prov->ctx, "closed %d incoming connection(s) that did not "
			 "authenticate while connecting the ranks (another "
			 "process connected to this rank's listener)",
			 set.strangers);
	tcp_hs_set_fini(&set);
	return ret;
}
