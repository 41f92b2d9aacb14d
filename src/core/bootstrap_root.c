/*
 * bootstrap_root.c - rank 0's side of the rendezvous: take or make the
 * listener (the one hop_get_unique_id() left in this process, the one
 * hop-run passed as HOP_BOOTSTRAP_FD, or a fresh bind of the id's address),
 * admit the ranks that present the id's secret, answer the others with a
 * REJECT giving the reason, and on timeout tell everyone which ranks never
 * arrived. epoll keeps admitting 64K ranks linear.
 *
 * Anyone who can reach the port can connect, so connections that have not
 * said HELLO are held in at most HOP_BS_MAX_PENDING slots, fewer when the
 * descriptor limit is lower: the slots never take the descriptors the
 * ranks and the steps after the rendezvous need. When accept() runs out of
 * descriptors anyway (they are shared with the whole process), the oldest
 * silent connection is closed to make room, then a reserve descriptor is
 * given up, and the count of what was dropped is reported.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bs_int.h"
#include "core_int.h"
#include "wire.h"

/* HOP_BOOTSTRAP_FD is handed to one rank 0 per process, once. */
static atomic_int bs_fd_taken;

enum { EV_LISTEN = 0, EV_PENDING = 1, EV_PEER = 2 };
#define EV(kind, idx) (((uint64_t)(kind) << 32) | (uint32_t)(idx))

struct pending {
	int fd;
	struct sockaddr_in addr;
	size_t got;
	uint8_t buf[HOP_BS_HDR_LEN + HOP_BS_HELLO_LEN];
	uint64_t since;                 /* accepted at (ns) */
};

/* Connections accepted but not yet identified by their HELLO. */
struct admit {
	int lfd, ep;
	int armed;                      /* listener in the epoll set */
	uint64_t pause_until;           /* out of fds: accept again then */
	int max_pending;                /* slots in use, <= HOP_BS_MAX_PENDING */
	int reserve;                    /* a spare descriptor, or -1 */
	unsigned long fd_limit;         /* RLIMIT_NOFILE soft limit */
	int dropped;                    /* silent connections closed */
	int emfile;                     /* accept() out of descriptors */
	struct pending pend[HOP_BS_MAX_PENDING];
	int free[HOP_BS_MAX_PENDING];   /* stack of free slots */
	int nfree;
};

/* The listener inherited from hop-run, when it is the id's. */
static int inherited_listener(const struct hop_id_info *info)
{
	const char *v = getenv("HOP_BOOTSTRAP_FD");
	struct sockaddr_in sa;
	socklen_t slen = sizeof(sa);
	char err[200], have[32], want[32];
	int acc = 0;
	socklen_t alen = sizeof(acc);
	struct stat st;
	long fd;

	if (!v || atomic_load(&bs_fd_taken))
		return -1;
	if (hop_parse_int("HOP_BOOTSTRAP_FD", v, 0, INT_MAX, &fd, err,
			  sizeof(err))) {
		HOP_WARN("%s: ignored", err);
		return -1;
	}
	if (fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt((int)fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &alen) < 0 ||
	    !acc || getsockname((int)fd, (struct sockaddr *)&sa, &slen) < 0 ||
	    sa.sin_family != AF_INET) {
		HOP_WARN("HOP_BOOTSTRAP_FD=%ld is not a listening IPv4 socket: "
			 "ignored", fd);
		return -1;
	}
	hop_sockaddr_str(&sa, have, sizeof(have));
	hop_sockaddr_str(&info->addr, want, sizeof(want));
	if (sa.sin_port != info->addr.sin_port ||
	    (sa.sin_addr.s_addr != INADDR_ANY &&
	     sa.sin_addr.s_addr != info->addr.sin_addr.s_addr)) {
		HOP_INFO("HOP_BOOTSTRAP_FD=%ld listens on %s, not on the id's "
			 "%s: ignored", fd, have, want);
		return -1;
	}
	if (atomic_exchange(&bs_fd_taken, 1))
		return -1;
	hop_fd_nonblock_cloexec((int)fd);
	HOP_INFO("rendezvous: using the listener on %s inherited from the "
		 "launcher", have);
	return (int)fd;
}

static int get_listener(struct hop_bootstrap *bs, const struct hop_id_info *info)
{
	char where[32];
	int fd, one = 1;

	if ((fd = hop_id_take_listener(info->secret)) >= 0 ||
	    (fd = inherited_listener(info)) >= 0)
		return fd;
	/* HOP_ADDR mode: the id names an address of this host */
	hop_sockaddr_str(&info->addr, where, sizeof(where));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank 0: socket: %s",
				   strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&info->addr,
		 sizeof(info->addr)) < 0 || listen(fd, SOMAXCONN) < 0) {
		int e = errno;

		close(fd);
		return hop_bs_fail(bs, HOP_ERR_BOOTSTRAP, "rank 0 cannot listen "
				   "on %s, the address of the unique id: %s",
				   where, strerror(e));
	}
	return fd;
}

/* Descriptors open in this process (64 when /proc is not there). */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 64;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/*
 * Rank 0 holds a socket per rank, up to HOP_BS_MAX_PENDING connections not
 * identified yet, and keeps HOP_BS_FD_RESERVE for what follows: raise the
 * soft limit as far as that needs and the hard limit allows, then fit the
 * pending slots into what is left (at least 8).
 */
static int fd_budget(struct hop_bootstrap *bs, struct admit *a)
{
	rlim_t base = (rlim_t)open_fds() + (rlim_t)bs->nranks +
		      HOP_BS_FD_RESERVE;
	rlim_t need = base + HOP_BS_MAX_PENDING;
	struct rlimit rl;

	a->max_pending = HOP_BS_MAX_PENDING;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 0;
	if (rl.rlim_cur < need) {
		rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	a->fd_limit = (unsigned long)rl.rlim_cur;
	if (rl.rlim_cur < base + 8)
		return hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank 0 needs about %lu "
				   "file descriptors for %d ranks; the hard "
				   "limit is %lu (ulimit -n)",
				   (unsigned long)(base + 8), bs->nranks,
				   (unsigned long)rl.rlim_max);
	if (rl.rlim_cur < need) {
		a->max_pending = (int)(rl.rlim_cur - base);
		HOP_INFO("rendezvous: the file descriptor limit %lu leaves %d "
			 "slots for connections that have not said HELLO",
			 a->fd_limit, a->max_pending);
	}
	return 0;
}

/* Refuse a connection with a reason the peer reports, and say so here. */
static void reject(struct pending *pc, int code, uint32_t claimed,
		   uint32_t pid, const char *reason)
{
	uint8_t payload[4 + HOP_BS_REASON_MAX];
	char who[32];

	hop_sockaddr_str(&pc->addr, who, sizeof(who));
	HOP_WARN_LIMITED("rendezvous: rejected a connection from %s (pid "
			 "%u) claiming rank %u: %s", who, pid, claimed,
			 reason);
	hop_bs_send(pc->fd, HOP_BS_REJECT, 0, 0, payload,
		    hop_bs_reason_pack(payload, code, reason),
		    hop_deadline_after(500), 0, NULL);
}

/*
 * A pending connection sent bytes: read its HELLO; once complete, admit
 * it as its rank (1, the slot moves to peers[]) or reject it (0). -1: still
 * incomplete. The connection's fd is closed unless admitted.
 */
static int hello_read(struct hop_bootstrap *bs, struct pending *pc, int ep)
{
	struct hop_bs_hdr h;
	char msg[200], who[32];
	const uint8_t *pl = pc->buf + HOP_BS_HDR_LEN;
	size_t want = pc->got < HOP_BS_HDR_LEN ? HOP_BS_HDR_LEN : sizeof(pc->buf);
	ssize_t n = recv(pc->fd, pc->buf + pc->got, want - pc->got, 0);
	uint32_t version, nranks, pid, port;
	struct hop_bs_peer *p;

	hop_sockaddr_str(&pc->addr, who, sizeof(who));
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return -1;
	if (n <= 0) {
		HOP_INFO("rendezvous: %s closed before saying hello", who);
		return 0;
	}
	pc->got += (size_t)n;
	if (pc->got == HOP_BS_HDR_LEN) {
		int bad = hop_bs_hdr_parse(pc->buf, HOP_BS_HDR_LEN,
					   HOP_BS_HELLO_LEN, &h, msg, sizeof(msg));

		if (!bad && (h.type != HOP_BS_HELLO || h.len != HOP_BS_HELLO_LEN))
			snprintf(msg, sizeof(msg), "%u-byte %s instead of a "
				 "HELLO", h.len, hop_bs_type_name(h.type));
		if (bad || h.type != HOP_BS_HELLO || h.len != HOP_BS_HELLO_LEN) {
			HOP_WARN_LIMITED("rendezvous: dropped a "
					 "connection from %s: %s", who, msg);
			return 0;
		}
	}
	if (pc->got < sizeof(pc->buf))
		return -1;
	hop_bs_hdr_parse(pc->buf, HOP_BS_HDR_LEN, HOP_BS_HELLO_LEN, &h, NULL, 0);
	version = hop_get_be32(pl);
	nranks = hop_get_be32(pl + 4);
	pid = hop_get_be32(pl + 8);
	port = hop_get_be32(pl + 12);
	if (!hop_ct_equal(pl + 16, bs->secret, HOP_SECRET_BYTES)) {
		reject(pc, HOP_ERR_AUTH, h.rank, pid, "wrong secret");
		return 0;
	}
	if (version != HOP_BS_VERSION) {
		snprintf(msg, sizeof(msg), "bootstrap protocol version %u, rank "
			 "0 speaks %u", version, HOP_BS_VERSION);
		reject(pc, HOP_ERR_BOOTSTRAP, h.rank, pid, msg);
		return 0;
	}
	if (nranks != (uint32_t)bs->nranks) {
		snprintf(msg, sizeof(msg), "nranks differs: this rank was given "
			 "%u ranks but rank 0 has %d", nranks, bs->nranks);
		reject(pc, HOP_ERR_BOOTSTRAP, h.rank, pid, msg);
		return 0;
	}
	if (h.rank == 0 || h.rank >= (uint32_t)bs->nranks) {
		snprintf(msg, sizeof(msg), "rank %u is out of range 1..%d",
			 h.rank, bs->nranks - 1);
		reject(pc, HOP_ERR_BOOTSTRAP, h.rank, pid, msg);
		return 0;
	}
	p = &bs->peers[h.rank];
	if (p->fd >= 0) {
		char prev[32];

		hop_sockaddr_str(&p->addr, prev, sizeof(prev));
		snprintf(msg, sizeof(msg), "duplicate rank: rank %u already "
			 "joined from %s (pid %u)", h.rank, prev, p->pid);
		reject(pc, HOP_ERR_BOOTSTRAP, h.rank, pid, msg);
		return 0;
	}
	if (port == 0 || port > 65535) {
		snprintf(msg, sizeof(msg), "ring listener port %u is invalid",
			 port);
		reject(pc, HOP_ERR_BOOTSTRAP, h.rank, pid, msg);
		return 0;
	}
	p->fd = pc->fd;
	p->addr = pc->addr;
	p->pid = pid;
	p->ring_port = (uint16_t)port;
	p->tx_broken = 0;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP,
				  .data.u64 = EV(EV_PEER, h.rank) };
	epoll_ctl(ep, EPOLL_CTL_DEL, pc->fd, NULL);
	epoll_ctl(ep, EPOLL_CTL_ADD, pc->fd, &ev);
	pc->fd = -1;
	HOP_TRACE("rendezvous: rank %u joined from %s (pid %u)", h.rank, who, pid);
	return 1;
}

static void pending_close(struct admit *a, int slot)
{
	close(a->pend[slot].fd);
	a->pend[slot].fd = -1;
	a->free[a->nfree++] = slot;
	if (a->reserve < 0) /* take the spare back first */
		a->reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

static void arm_listener(struct admit *a, int on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0,
				  .data.u64 = EV(EV_LISTEN, 0) };

	if (a->armed != on && epoll_ctl(a->ep, EPOLL_CTL_MOD, a->lfd, &ev) == 0)
		a->armed = on;
}

/* Close the oldest connection that has been silent for @ms; 0 when every
 * one is more recent (ranks whose HELLO is on its way). */
static int evict_silent(struct admit *a, unsigned ms)
{
	uint64_t now = hop_now_ns();
	int oldest = -1;
	char who[32];

	for (int i = 0; i < a->max_pending; i++)
		if (a->pend[i].fd >= 0 &&
		    (oldest < 0 || a->pend[i].since < a->pend[oldest].since))
			oldest = i;
	if (oldest < 0 || now - a->pend[oldest].since < ms * 1000000ull)
		return 0;
	hop_sockaddr_str(&a->pend[oldest].addr, who, sizeof(who));
	HOP_INFO("rendezvous: the connection from %s never said HELLO in %llu "
		 "ms; closing it", who, (unsigned long long)
		 ((now - a->pend[oldest].since) / 1000000));
	a->dropped++;
	pending_close(a, oldest);
	return 1;
}

/*
 * accept() is out of descriptors before the slots are full (the limit is
 * the whole process's): close the oldest connection silent for
 * HOP_BS_EMFILE_GRACE_MS, else give up the reserve descriptor, else wait
 * 100 ms. Returns 1 when accept() may be tried again at once.
 */
static int out_of_fds(struct admit *a, int err)
{
	if (a->emfile++ == 0)
		HOP_WARN("rendezvous: accept: %s (descriptor limit %lu); "
			 "closing connections that have not said HELLO to "
			 "make room", strerror(err), a->fd_limit);
	if (evict_silent(a, HOP_BS_EMFILE_GRACE_MS))
		return 1;
	if (a->reserve >= 0) {
		close(a->reserve);
		a->reserve = -1;
		return 1;
	}
	a->pause_until = hop_now_ns() + 100000000ull;
	arm_listener(a, 0);
	return 0;
}

/*
 * Accept what the kernel has queued while there are free slots. When all
 * slots hold connections whose HELLO is not read yet, leave the rest in the
 * kernel's backlog (the listener is disarmed until a slot frees): ranks
 * connecting by the thousand must not push each other out.
 */
static void accept_new(struct admit *a)
{
	if (hop_now_ns() < a->pause_until)
		return;
	for (;;) {
		struct sockaddr_in sa;
		socklen_t slen = sizeof(sa);
		int fd, slot;

		if (a->nfree == 0 && !evict_silent(a, HOP_BS_SILENT_MS)) {
			arm_listener(a, 0);
			return;
		}
		fd = accept4(a->lfd, (struct sockaddr *)&sa, &slen,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				if (out_of_fds(a, errno))
					continue;
			} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
				HOP_WARN("rendezvous: accept: %s", strerror(errno));
			}
			return;
		}
		slot = a->free[--a->nfree];
		hop_bs_nodelay(fd);
		a->pend[slot] = (struct pending){ .fd = fd, .addr = sa,
						  .since = hop_now_ns() };
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.u64 = EV(EV_PENDING, slot) };
		epoll_ctl(a->ep, EPOLL_CTL_ADD, fd, &ev);
	}
}

/* What the admission had to drop, for messages ("" when nothing). */
static void admit_note(const struct admit *a, char *buf, size_t len)
{
	buf[0] = '\0';
	if (a->dropped || a->emfile)
		snprintf(buf, len, "; %d connection(s) that never said HELLO "
			 "were closed%s", a->dropped, a->emfile ?
			 ", accept() ran out of file descriptors" : "");
}

static int root_timeout(struct hop_bootstrap *bs, const struct admit *a)
{
	uint8_t *missing = calloc((size_t)bs->nranks, 1);
	char list[256], secs[32], where[32], note[160];
	int n = 0;

	if (!missing)
		return hop_bs_root_abort(bs, HOP_ERR_TIMEOUT, "not every rank "
					 "arrived in time");
	for (int r = 1; r < bs->nranks; r++)
		missing[r] = bs->peers[r].fd < 0;
	hop_bs_rank_list(missing, bs->nranks, list, sizeof(list), &n);
	free(missing);
	hop_bs_secs(bs->timeout_ms, secs, sizeof(secs));
	hop_sockaddr_str(&bs->root_addr, where, sizeof(where));
	admit_note(a, note, sizeof(note));
	return hop_bs_root_abort(bs, HOP_ERR_TIMEOUT, "%s %s never arrived "
				 "within %s s (rendezvous %s, %d of %d ranks "
				 "present%s)", n == 1 ? "rank" : "ranks", list,
				 secs, where, bs->nranks - n, bs->nranks, note);
}

/* Where rank @r's ring listener is (rank 0's is bs->lfd). */
static void ring_addr(const struct hop_bootstrap *bs, int r,
		      struct sockaddr_in *out)
{
	socklen_t slen = sizeof(*out);

	if (r == 0) {
		getsockname(bs->lfd, (struct sockaddr *)out, &slen);
		return;
	}
	*out = bs->peers[r].addr;
	out->sin_port = htons(bs->peers[r].ring_port);
}

/* Everyone is here: release each rank with its ring successor's address. */
static int send_ready(struct hop_bootstrap *bs, uint64_t deadline)
{
	int ret;

	if ((ret = hop_bs_ring_listen(bs)))
		return hop_bs_root_abort(bs, ret, "%s", bs->err);
	ring_addr(bs, 1, &bs->right_addr);
	for (int r = 1; r < bs->nranks; r++) {
		struct hop_bs_peer *p = &bs->peers[r];
		uint8_t ready[HOP_BS_READY_LEN] = { 0 };
		struct sockaddr_in next;
		int e;

		ring_addr(bs, (r + 1) % bs->nranks, &next);
		memcpy(ready, &next.sin_addr.s_addr, 4);
		memcpy(ready + 4, &next.sin_port, 2);
		e = hop_bs_send_counted(bs, p->fd, HOP_BS_READY, 0, ready,
					sizeof(ready), deadline, 0);
		if (e) {
			char who[32];

			p->tx_broken = 1;
			hop_sockaddr_str(&p->addr, who, sizeof(who));
			return hop_bs_root_abort(bs, e == -ETIMEDOUT ?
						 HOP_ERR_TIMEOUT : HOP_ERR_BOOTSTRAP,
						 "rank %d (%s) was lost at the end "
						 "of the rendezvous: %s", r, who,
						 strerror(-e));
		}
	}
	return 0;
}

int hop_bs_root_open(struct hop_bootstrap *bs, const struct hop_id_info *info,
		     uint64_t deadline)
{
	struct epoll_event evs[64];
	struct admit *a = NULL;
	int lfd, arrived = 1, ret = 0;
	struct sockaddr_in sa;
	socklen_t slen = sizeof(sa);

	if ((lfd = get_listener(bs, info)) < 0)
		return lfd;
	bs->local_addr = info->addr.sin_addr;
	if (getsockname(lfd, (struct sockaddr *)&sa, &slen) == 0 &&
	    sa.sin_addr.s_addr != INADDR_ANY)
		bs->local_addr = sa.sin_addr;
	if (bs->nranks == 1)
		goto out;
	if (!(a = calloc(1, sizeof(*a)))) {
		ret = hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank 0: rendezvous set "
				  "up: out of memory");
		goto out;
	}
	for (int i = 0; i < HOP_BS_MAX_PENDING; i++)
		a->pend[i].fd = -1;
	a->lfd = lfd;
	a->reserve = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if ((a->ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		ret = hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank 0: rendezvous set "
				  "up: %s", strerror(errno));
		goto out;
	}
	if ((ret = fd_budget(bs, a)))
		goto out;
	for (int i = 0; i < a->max_pending; i++)
		a->free[i] = a->max_pending - 1 - i;
	a->nfree = a->max_pending;
	struct epoll_event lev = { .events = EPOLLIN, .data.u64 = EV(EV_LISTEN, 0) };
	epoll_ctl(a->ep, EPOLL_CTL_ADD, lfd, &lev);
	a->armed = 1;

	while (arrived < bs->nranks) {
		int ms = hop_deadline_ms_left(deadline), n;

		if (!a->armed) /* look again for free or stale slots soon */
			ms = ms < 100 ? ms : 100;
		n = epoll_wait(a->ep, evs, 64, ms);
		if (n < 0 && errno != EINTR) {
			ret = hop_bs_root_abort(bs, HOP_ERR_SYSTEM, "rank 0: "
						"epoll_wait: %s", strerror(errno));
			goto out;
		}
		if (n <= 0 && hop_deadline_passed(deadline)) {
			ret = root_timeout(bs, a);
			goto out;
		}
		for (int i = 0; i < n; i++) {
			uint32_t kind = (uint32_t)(evs[i].data.u64 >> 32);
			uint32_t idx = (uint32_t)evs[i].data.u64;

			if (kind == EV_LISTEN) {
				accept_new(a);
			} else if (kind == EV_PENDING && a->pend[idx].fd >= 0) {
				int r = hello_read(bs, &a->pend[idx], a->ep);

				if (r == 0)
					pending_close(a, (int)idx);
				else if (r == 1) /* the fd moved to peers[] */
					a->free[a->nfree++] = (int)idx;
				arrived += r > 0;
			} else if (kind == EV_PEER && bs->peers[idx].fd >= 0) {
				/* nothing is due before READY: it left */
				struct hop_bs_peer *p = &bs->peers[idx];
				char who[32];

				hop_sockaddr_str(&p->addr, who, sizeof(who));
				HOP_WARN("rendezvous: rank %u (%s, pid %u) "
					 "disconnected before every rank "
					 "arrived; waiting for it again", idx,
					 who, p->pid);
				close(p->fd);
				p->fd = -1;
				arrived--;
			}
		}
		if (!a->armed) /* accept into freed or stale slots directly */
			accept_new(a);
		if (!a->armed && a->nfree > 0 && hop_now_ns() >= a->pause_until)
			arm_listener(a, 1);
	}
	if ((ret = send_ready(bs, deadline)))
		goto out;
out:
	if (a) {
		char note[160];

		admit_note(a, note, sizeof(note));
		if (note[0] && !ret)
			HOP_WARN("rendezvous: every rank arrived%s (another "
				 "process connected to the port; descriptor "
				 "limit %lu)", note, a->fd_limit);
		for (int i = 0; i < HOP_BS_MAX_PENDING; i++)
			if (a->pend[i].fd >= 0)
				close(a->pend[i].fd);
		if (a->reserve >= 0)
			close(a->reserve);
		if (a->ep >= 0)
			close(a->ep);
		free(a);
	}
	close(lfd);
	return ret;
}
