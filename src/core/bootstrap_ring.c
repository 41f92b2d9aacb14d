/*
 * bootstrap_ring.c - the ring the bootstrap allgather's data travel on:
 * rank r sends to rank r + 1 and receives from rank r - 1 (mod n). Rank 0
 * sends the table it gathered once, to rank 1, where a star would send it
 * to each of n ranks; each rank passes n * len bytes on.
 *
 * The links are made once, at the end of the rendezvous: every rank
 * listens on its bootstrap address (the port travels in its HELLO), rank 0
 * hands each rank its successor's address in READY, then every rank
 * connects forward and accepts backward. A link opens with LINK {version,
 * nranks, secret}: a connection that does not prove the secret or claims
 * another rank is dropped, and the rank keeps waiting for the right one.
 *
 * Rank 0 stays the judge: it checks every rank's entry before the ring
 * starts (bootstrap_coll.c). A rank whose ring breaks (a neighbour's link
 * closed, a wrong block, no block in time) sends FAIL to rank 0, which
 * aborts every rank with that reason; while its ring runs, rank 0 watches
 * every rank's connection for FAIL, so each rank reports the same cause.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bs_int.h"
#include "core_int.h"
#include "wire.h"

/*
 * An address of this process's own network that routes to @to. Rank 0's
 * rendezvous listener may be inherited from a launcher on another host
 * (hop-run --hosts), so its address need not be one rank 0 can bind; its
 * ring listener then takes the address its predecessor is reached from.
 */
static int route_addr(const struct sockaddr_in *to, struct in_addr *out)
{
	struct sockaddr_in sa = *to, me;
	socklen_t slen = sizeof(me);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ok;

	if (fd < 0)
		return -1;
	if (!sa.sin_port)
		sa.sin_port = htons(9);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	     getsockname(fd, (struct sockaddr *)&me, &slen) == 0;
	close(fd);
	if (ok)
		*out = me.sin_addr;
	return ok ? 0 : -1;
}

int hop_bs_ring_listen(struct hop_bootstrap *bs)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr = bs->local_addr };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int bound;

	if (fd < 0)
		return hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank %d: ring listener: "
				   "socket: %s", bs->rank, strerror(errno));
	bound = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (!bound && errno == EADDRNOTAVAIL && bs->rank == 0 &&
	    bs->nranks > 1 &&
	    route_addr(&bs->peers[bs->nranks - 1].addr, &sa.sin_addr) == 0)
		bound = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (!bound || listen(fd, 16) < 0) {
		int e = errno;
		char where[32];

		close(fd);
		hop_sockaddr_str(&sa, where, sizeof(where));
		return hop_bs_fail(bs, HOP_ERR_BOOTSTRAP, "rank %d cannot listen "
				   "for its bootstrap ring link on %s: %s",
				   bs->rank, where, strerror(e));
	}
	bs->lfd = fd;
	return 0;
}

/* Does @fd open the link from rank @left with the id's secret? 0 or -1
 * with the reason in @why. */
static int link_check(struct hop_bootstrap *bs, int fd, int left,
		      uint64_t deadline, char *why, size_t wlen)
{
	uint8_t buf[HOP_BS_HDR_LEN + HOP_BS_LINK_LEN];
	const uint8_t *pl = buf + HOP_BS_HDR_LEN;
	struct hop_bs_hdr h;
	int ret = hop_bs_recv(fd, buf, HOP_BS_HDR_LEN, deadline);

	if (ret) {
		snprintf(why, wlen, "no LINK message: %s", strerror(-ret));
		return -1;
	}
	if (hop_bs_hdr_parse(buf, HOP_BS_HDR_LEN, HOP_BS_LINK_LEN, &h, why, wlen))
		return -1;
	if (h.type != HOP_BS_LINK || h.len != HOP_BS_LINK_LEN) {
		snprintf(why, wlen, "%u-byte %s instead of a LINK", h.len,
			 hop_bs_type_name(h.type));
		return -1;
	}
	if ((ret = hop_bs_recv(fd, buf + HOP_BS_HDR_LEN, h.len, deadline))) {
		snprintf(why, wlen, "LINK cut short: %s", strerror(-ret));
		return -1;
	}
	if (!hop_ct_equal(pl + 8, bs->secret, HOP_SECRET_BYTES)) {
		snprintf(why, wlen, "wrong secret");
		return -1;
	}
	if (hop_get_be32(pl) != HOP_BS_VERSION ||
	    hop_get_be32(pl + 4) != (uint32_t)bs->nranks || h.rank != (uint32_t)left) {
		snprintf(why, wlen, "claims rank %u of %u (version %u); expected "
			 "rank %d of %d", h.rank, hop_get_be32(pl + 4),
			 hop_get_be32(pl), left, bs->nranks);
		return -1;
	}
	return 0;
}

/*
 * Connections accepted on the ring listener that have not proved
 * themselves yet. They are read as their bytes arrive, each with a second
 * of its own, so silent connections (a stranger's) delay rank r - 1's link
 * by nothing; when RING_PENDING are waiting, the oldest is dropped.
 */
#define RING_PENDING 32
#define RING_HELLO_MS 1000

struct pending {
	int fd;
	uint64_t until;
	struct sockaddr_in sa;
};

static void pending_drop(struct hop_bootstrap *bs, struct pending *p,
			 const char *why)
{
	char who[32];

	hop_sockaddr_str(&p->sa, who, sizeof(who));
	HOP_WARN_LIMITED("rank %d: dropped a bootstrap ring connection from "
			 "%s: %s", bs->rank, who, why);
	close(p->fd);
	p->fd = -1;
}

/* Take every connection waiting on the listener into @pend (*@n). */
static void pending_accept(struct hop_bootstrap *bs, struct pending *pend,
			   int *n)
{
	for (;;) {
		struct pending p = { .until = hop_deadline_after(RING_HELLO_MS) };
		socklen_t slen = sizeof(p.sa);

		p.fd = accept4(bs->lfd, (struct sockaddr *)&p.sa, &slen,
			       SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (p.fd < 0)
			return; /* EAGAIN, ECONNABORTED: poll again */
		if (*n == RING_PENDING) {
			pending_drop(bs, &pend[0], "evicted: too many "
				     "connections that have not sent LINK");
			memmove(pend, pend + 1, sizeof(*pend) * (size_t)--*n);
		}
		pend[(*n)++] = p;
	}
}

/* Check the pending connections @pfd says are readable or whose second is
 * up; the one that is rank @left's link becomes bs->left. Compacts @pend. */
static void pending_check(struct hop_bootstrap *bs, struct pending *pend,
			  int *n, const struct pollfd *pfd, int left,
			  uint64_t deadline)
{
	char why[200];
	int k = 0;

	for (int i = 0; i < *n; i++) {
		struct pending *p = &pend[i];
		uint64_t until = p->until < deadline ? p->until : deadline;

		if (bs->left < 0 &&
		    (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (link_check(bs, p->fd, left, until, why,
				       sizeof(why)) == 0) {
				hop_bs_nodelay(p->fd);
				bs->left = p->fd;
				continue;
			}
			pending_drop(bs, p, why);
		} else if (hop_deadline_passed(p->until)) {
			pending_drop(bs, p, "no LINK message within 1 s");
		}
		if (p->fd >= 0)
			pend[k++] = *p;
	}
	*n = k;
}

/* Accept connections on the ring listener until rank r - 1's arrives. */
static int accept_left(struct hop_bootstrap *bs, uint64_t deadline)
{
	int left = (bs->rank + bs->nranks - 1) % bs->nranks, n = 0, ret = 0;
	struct pending pend[RING_PENDING];
	struct pollfd pfd[RING_PENDING + 1];
	char secs[32];

	bs->left = -1;
	while (bs->left < 0) {
		uint64_t wake = deadline;
		int r;

		for (int i = 0; i < n; i++) {
			pfd[i] = (struct pollfd){ .fd = pend[i].fd,
						  .events = POLLIN };
			if (pend[i].until < wake)
				wake = pend[i].until;
		}
		pfd[n] = (struct pollfd){ .fd = bs->lfd, .events = POLLIN };
		r = poll(pfd, (nfds_t)n + 1, hop_deadline_ms_left(wake));
		if (r < 0 && errno != EINTR) {
			ret = hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank %d: ring "
					  "listener: poll: %s", bs->rank,
					  strerror(errno));
			break;
		}
		if (r < 0)
			continue;
		pending_check(bs, pend, &n, pfd, left, deadline);
		if (bs->left >= 0)
			break;
		if (hop_deadline_passed(deadline)) {
			hop_bs_secs(bs->timeout_ms, secs, sizeof(secs));
			ret = hop_bs_fail(bs, HOP_ERR_TIMEOUT, "rank %d: rank %d "
					  "did not open its bootstrap ring link "
					  "within %s s", bs->rank, left, secs);
			break;
		}
		if (pfd[n].revents & POLLIN)
			pending_accept(bs, pend, &n);
	}
	for (int i = 0; i < n; i++)
		close(pend[i].fd);
	return ret;
}

int hop_bs_ring_link(struct hop_bootstrap *bs, uint64_t deadline)
{
	int right = (bs->rank + 1) % bs->nranks, ret;
	uint8_t link[HOP_BS_LINK_LEN];
	char who[48];

	snprintf(who, sizeof(who), "rank %d's ring listener", right);
	if ((ret = hop_bs_connect(bs, &bs->right_addr, who, deadline,
				  &bs->right)))
		return ret;
	hop_put_be32(link, HOP_BS_VERSION);
	hop_put_be32(link + 4, (uint32_t)bs->nranks);
	memcpy(link + 8, bs->secret, HOP_SECRET_BYTES);
	/* the successor's backlog holds the connection: no wait on it */
	ret = hop_bs_send_counted(bs, bs->right, HOP_BS_LINK, (uint32_t)bs->rank,
				  link, sizeof(link), deadline, 0);
	if (ret)
		return hop_bs_fail(bs, HOP_ERR_BOOTSTRAP, "rank %d: opening the "
				   "bootstrap ring link to rank %d: %s", bs->rank,
				   right, strerror(-ret));
	if ((ret = accept_left(bs, deadline)))
		return ret;
	close(bs->lfd);
	bs->lfd = -1;
	return 0;
}

int hop_bs_root_failmsg(struct hop_bootstrap *bs, int r,
			const struct hop_bs_hdr *h)
{
	uint8_t buf[4 + HOP_BS_REASON_MAX];
	char reason[HOP_BS_REASON_MAX + 1];
	int code;

	if (h->len > sizeof(buf) ||
	    hop_bs_recv(bs->peers[r].fd, buf, h->len, hop_deadline_after(1000)))
		return hop_bs_root_abort(bs, HOP_ERR_BOOTSTRAP, "rank %d reported "
					 "a bootstrap failure it did not "
					 "describe", r);
	code = hop_bs_reason_unpack(buf, h->len, reason, sizeof(reason));
	return hop_bs_root_abort(bs, code, "%s", reason);
}

/* One allgather's table on the ring (one BLOCK of n * len bytes): each
 * rank passes bytes on as they arrive, so it wakes once per segment, not
 * once per rank's block; rank n - 1's copy comes back to rank 0, which
 * compares it with what it sent: once back, every rank has it. */
struct ring {
	uint8_t *all;
	size_t total;           /* payload bytes: n * len */
	size_t txoff, rxoff;    /* message bytes (header included) */
	uint8_t txh[HOP_BS_HDR_LEN], rxh[HOP_BS_HDR_LEN];
	int closed;             /* rank 0: a rank whose connection closed */
	int code;               /* this rank's failure */
	char why[HOP_BS_REASON_MAX];
};

static size_t msg_len(const struct ring *g)
{
	return HOP_BS_HDR_LEN + g->total;
}

static void ring_err(struct ring *g, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ring_err(struct ring *g, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->why, sizeof(g->why), fmt, ap);
	va_end(ap);
	g->code = code;
}

/* Message bytes this rank may pass on: rank 0 holds them all, another
 * rank what it received (once the header proved right). */
static size_t ring_avail(const struct hop_bootstrap *bs, const struct ring *g)
{
	if (!bs->rank)
		return msg_len(g);
	return g->rxoff < HOP_BS_HDR_LEN ? 0 : g->rxoff;
}

/* Send the successor what is here and it has not had. */
static void ring_send(struct hop_bootstrap *bs, struct ring *g)
{
	int right = (bs->rank + 1) % bs->nranks;
	const uint8_t *hdr = bs->rank ? g->rxh : g->txh;

	while (!g->code && g->txoff < ring_avail(bs, g)) {
		ssize_t n = hop_bs_sendv(bs->right, hdr, g->all,
					 ring_avail(bs, g) - HOP_BS_HDR_LEN,
					 g->txoff);

		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				ring_err(g, HOP_ERR_BOOTSTRAP, "rank %d: bootstrap "
					 "allgather: rank %d closed its ring link "
					 "(sending: %s)", bs->rank, right,
					 strerror(errno));
			return;
		}
		bs->tx_bytes += (size_t)n;
		g->txoff += (size_t)n;
	}
}

/* The header from the predecessor is in: is it this operation's table? */
static void ring_check(struct hop_bootstrap *bs, struct ring *g, int left)
{
	struct hop_bs_hdr h;
	char msg[200];

	if (hop_bs_hdr_parse(g->rxh, HOP_BS_HDR_LEN, HOP_BS_MAX_MSG, &h, msg,
			     sizeof(msg)))
		ring_err(g, HOP_ERR_PROTOCOL, "rank %d: bootstrap allgather: "
			 "from rank %d: %s", bs->rank, left, msg);
	else if (h.type != HOP_BS_BLOCK || h.flags != bs->seq || h.rank != 0 ||
		 h.len != g->total)
		ring_err(g, HOP_ERR_PROTOCOL, "rank %d: bootstrap allgather: "
			 "rank %d sent %s #%u from rank %u, %u bytes; expected "
			 "BLOCK #%u from rank 0, %zu bytes", bs->rank, left,
			 hop_bs_type_name(h.type), (unsigned)h.flags, h.rank,
			 h.len, (unsigned)bs->seq, g->total);
}

/* Where the next received bytes go: the table, or (rank 0, whose table
 * comes back) @scratch, compared afterwards. */
static uint8_t *ring_dst(struct hop_bootstrap *bs, struct ring *g,
			 uint8_t *scratch, size_t *want)
{
	size_t off = g->rxoff - HOP_BS_HDR_LEN;

	if (g->rxoff < HOP_BS_HDR_LEN) {
		*want = HOP_BS_HDR_LEN - g->rxoff;
		return g->rxh + g->rxoff;
	}
	*want = g->total - off;
	if (bs->rank)
		return g->all + off;
	if (*want > HOP_BS_SCRATCH)
		*want = HOP_BS_SCRATCH;
	return scratch;
}

static void ring_recv(struct hop_bootstrap *bs, struct ring *g)
{
	int left = (bs->rank + bs->nranks - 1) % bs->nranks;
	uint8_t scratch[HOP_BS_SCRATCH];

	while (g->rxoff < msg_len(g) && !g->code) {
		size_t want, off = g->rxoff - HOP_BS_HDR_LEN;
		uint8_t *dst = ring_dst(bs, g, scratch, &want);
		ssize_t n = recv(bs->left, dst, want, 0);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK ||
			      errno == EINTR))
			return;
		if (n <= 0) {
			ring_err(g, HOP_ERR_BOOTSTRAP, "rank %d: bootstrap "
				 "allgather: rank %d closed its ring link (%s)",
				 bs->rank, left, n ? strerror(errno) :
				 "exited or failed?");
			return;
		}
		if (!bs->rank && dst == scratch &&
		    memcmp(scratch, g->all + off, (size_t)n))
			ring_err(g, HOP_ERR_PROTOCOL, "rank 0: bootstrap "
				 "allgather: the table came back from rank %d "
				 "changed within bytes %zu-%zu", left, off,
				 off + (size_t)n - 1);
		g->rxoff += (size_t)n;
		if (g->rxoff == HOP_BS_HDR_LEN)
			ring_check(bs, g, left);
	}
}

/* Rank 0: every rank's connection, to hear a FAIL while the ring runs. */
static int root_watch(struct hop_bootstrap *bs)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		return hop_bs_root_abort(bs, HOP_ERR_SYSTEM, "bootstrap "
					 "allgather: epoll_create1: %s",
					 strerror(errno));
	for (int r = 1; r < bs->nranks; r++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP,
					  .data.u32 = (uint32_t)r };

		epoll_ctl(ep, EPOLL_CTL_ADD, bs->peers[r].fd, &ev);
	}
	return ep;
}

/*
 * Rank 0: a rank spoke. A FAIL aborts everyone with its reason. Anything
 * else is its next operation (a rank that has every block may go on
 * before rank 0 has them all), left for that operation. A closed
 * connection is noted only: a rank that has all blocks may also leave, and
 * one that died breaks its neighbours' links, whose FAIL names it.
 */
static int root_heard(struct hop_bootstrap *bs, struct ring *g, int ep)
{
	struct epoll_event evs[16];
	int n = epoll_wait(ep, evs, 16, 0);

	for (int i = 0; i < n; i++) {
		int r = (int)evs[i].data.u32;
		struct hop_bs_peer *p = &bs->peers[r];
		uint8_t hdr[HOP_BS_HDR_LEN];
		struct hop_bs_hdr h;
		ssize_t got = recv(p->fd, hdr, sizeof(hdr), MSG_PEEK);

		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got <= 0) {
			epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
			g->closed = r;
			continue;
		}
		if (got < (ssize_t)sizeof(hdr))
			continue; /* the rest of the header is on its way */
		if (hop_bs_hdr_parse(hdr, sizeof(hdr), HOP_BS_MAX_MSG, &h, NULL,
				     0) || h.type != HOP_BS_FAIL) {
			/* its next operation's entry: for that operation */
			epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
			continue;
		}
		recv(p->fd, hdr, sizeof(hdr), 0);
		return hop_bs_root_failmsg(bs, r, &h);
	}
	return 0;
}

/*
 * Other ranks: rank 0 speaks mid-ring only to abort. Its connection
 * closing is not a failure: rank 0 may have every block and leave before
 * this rank has them; a rank 0 that died breaks its neighbours' links.
 */
static int peer_heard(struct hop_bootstrap *bs, uint64_t until, int *watch)
{
	char c;
	ssize_t n = recv(bs->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		*watch = -1;
		return 0;
	}
	hop_bs_peer_recv(bs, HOP_BS_FAIL, NULL, 0, until, "bootstrap allgather");
	return bs->failed ? bs->failed : hop_bs_fail(bs, HOP_ERR_PROTOCOL,
		"rank %d: bootstrap allgather: rank 0 sent FAIL", bs->rank);
}

/* A rank other than 0 found the ring broken: tell rank 0 and report its
 * verdict, or this rank's own reason when none comes. */
static int peer_fail(struct hop_bootstrap *bs, struct ring *g, uint64_t until)
{
	uint8_t payload[4 + HOP_BS_REASON_MAX];
	uint64_t soon = hop_deadline_after(HOP_BS_GRACE_MS);

	hop_bs_send_counted(bs, bs->fd, HOP_BS_FAIL, (uint32_t)bs->rank, payload,
			    hop_bs_reason_pack(payload, g->code, g->why),
			    hop_deadline_after(1000), 0);
	hop_bs_peer_recv(bs, HOP_BS_FAIL, NULL, 0, soon < until ? soon : until,
			 "bootstrap allgather");
	if (bs->aborted)
		return bs->failed;
	bs->failed = 0;
	return hop_bs_fail(bs, g->code, "%s", g->why);
}

static void ring_timeout(struct hop_bootstrap *bs, struct ring *g)
{
	int left = (bs->rank + bs->nranks - 1) % bs->nranks;
	char secs[32], note[64] = "";
	size_t got = g->rxoff < HOP_BS_HDR_LEN ? 0 : g->rxoff - HOP_BS_HDR_LEN;

	hop_bs_secs(bs->timeout_ms, secs, sizeof(secs));
	if (g->closed)
		snprintf(note, sizeof(note), "; rank %d closed its connection",
			 g->closed);
	ring_err(g, HOP_ERR_TIMEOUT, "rank %d: bootstrap allgather: the ring "
		 "stalled: rank %d did not pass the table on within %s s (%zu "
		 "of %zu bytes here%s)", bs->rank, left, secs, got, g->total,
		 note);
}

int hop_bs_ring_bcast(struct hop_bootstrap *bs, uint8_t *all, size_t total,
		      uint64_t deadline)
{
	struct ring g = { .all = all, .total = total };
	/* rank 0 judges the deadline; the others wait for its verdict */
	uint64_t until = bs->rank ? deadline + HOP_BS_GRACE_MS * 1000000ull
				  : deadline;
	int ep = bs->rank ? -1 : root_watch(bs), ret = 0;
	int watch = bs->rank ? bs->fd : ep;

	if (!bs->rank && ep < 0)
		return ep;
	hop_bs_hdr_pack(g.txh, HOP_BS_BLOCK, bs->seq, 0, (uint32_t)total);
	ring_send(bs, &g);
	while ((g.txoff < msg_len(&g) || g.rxoff < msg_len(&g)) && !g.code) {
		int sending = g.txoff < ring_avail(bs, &g);
		struct pollfd pfd[3] = {
			{ .fd = watch, .events = POLLIN },
			{ .fd = g.rxoff < msg_len(&g) ? bs->left : -1,
			  .events = POLLIN },
			{ .fd = sending ? bs->right : -1, .events = POLLOUT },
		};
		int n = poll(pfd, 3, hop_deadline_ms_left(until));

		if (n < 0 && errno != EINTR) {
			ring_err(&g, HOP_ERR_SYSTEM, "rank %d: bootstrap "
				 "allgather: poll: %s", bs->rank, strerror(errno));
			break;
		}
		if (n <= 0 && hop_deadline_passed(until)) {
			ring_timeout(bs, &g);
			break;
		}
		if (n <= 0)
			continue;
		if (pfd[0].revents && bs->rank) {
			ret = peer_heard(bs, until, &watch);
			if (ret)
				goto out;
		} else if (pfd[0].revents && (ret = root_heard(bs, &g, ep))) {
			goto out;
		}
		/* what arrived leaves in the same wake-up */
		if (pfd[1].revents && !g.code)
			ring_recv(bs, &g);
		ring_send(bs, &g);
	}
	if (g.code)
		ret = bs->rank ? peer_fail(bs, &g, until)
			       : hop_bs_root_abort(bs, g.code, "%s", g.why);
out:
	if (ep >= 0)
		close(ep);
	if (!ret && bs->failed)
		ret = bs->failed;
	return ret;
}
