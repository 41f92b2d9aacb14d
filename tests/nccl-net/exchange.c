/*
 * exchange.c - the harness's out-of-band link between its two processes,
 * standing in for NCCL's bootstrap: handles go over it, and the processes
 * use it to agree before closing. A socketpair to a forked child on one
 * host, or TCP to rank 0's host:port (the SoftRoCE VMs' HOP_ADDR).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int deadline_passed(const struct harness *h)
{
	return now_ns() > h->deadline;
}

static int ms_left(const struct harness *h)
{
	uint64_t t = now_ns();

	return t >= h->deadline ? 0 : (int)((h->deadline - t) / 1000000 + 1);
}

/* Move @len bytes one way; @out: send, else receive. */
static int xfer(struct harness *h, void *buf, size_t len, int out)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = h->fd,
				      .events = out ? POLLOUT : POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, ms_left(h)) <= 0)
			FAIL("%s the peer: %s", out ? "sending to" : "receiving "
			     "from", deadline_passed(h) ? "deadline passed"
			     : strerror(errno));
		n = out ? send(h->fd, p, len, MSG_NOSIGNAL) : recv(h->fd, p, len, 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			FAIL("%s the peer: %s", out ? "sending to" : "receiving "
			     "from", n ? strerror(errno) : "it closed the link");
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int xsend(struct harness *h, const void *buf, size_t len)
{
	return xfer(h, (void *)(uintptr_t)buf, len, 1);
}

int xrecv(struct harness *h, void *buf, size_t len)
{
	return xfer(h, buf, len, 0);
}

int link_fork(struct harness *h, int *child_pid)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		FAIL("socketpair: %s", strerror(errno));
	fflush(NULL);
	if ((pid = fork()) < 0)
		FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		close(sv[0]);
		h->fd = sv[1];
		h->o.rank = h_rank = 1;
		*child_pid = 0;
		return 0;
	}
	close(sv[1]);
	h->fd = sv[0];
	h->o.rank = h_rank = 0;
	*child_pid = pid;
	return 0;
}

static int resolve(const char *addr, struct sockaddr_in *sa)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	struct addrinfo hints = { .ai_family = AF_INET }, *res;
	size_t hl;

	if (!colon || (hl = (size_t)(colon - addr)) >= sizeof(host) || !hl)
		FAIL("--addr '%s' is not host:port", addr);
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (getaddrinfo(host, NULL, &hints, &res))
		FAIL("--addr: cannot resolve '%s'", host);
	*sa = *(struct sockaddr_in *)(void *)res->ai_addr;
	freeaddrinfo(res);
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	return 0;
}

/* rank 0: accept the one peer on @sa's port */
static int tcp_serve(struct harness *h, struct sockaddr_in *sa)
{
	int one = 1, lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };

	sa->sin_addr.s_addr = htonl(INADDR_ANY);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one,
				  sizeof(one)) < 0 ||
	    bind(lfd, (struct sockaddr *)sa, sizeof(*sa)) < 0 ||
	    listen(lfd, 1) < 0) {
		FAIL("listening on port %u: %s", ntohs(sa->sin_port),
		     strerror(errno));
	}
	if (poll(&pfd, 1, ms_left(h)) <= 0) {
		close(lfd);
		FAIL("rank 1 did not connect to port %u in time",
		     ntohs(sa->sin_port));
	}
	h->fd = accept(lfd, NULL, NULL);
	close(lfd);
	if (h->fd < 0)
		FAIL("accept: %s", strerror(errno));
	return 0;
}

/* rank 1: connect, retrying while rank 0 is not listening yet */
static int tcp_join(struct harness *h, const struct sockaddr_in *sa)
{
	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			FAIL("socket: %s", strerror(errno));
		if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0) {
			h->fd = fd;
			return 0;
		}
		close(fd);
		if (deadline_passed(h))
			FAIL("could not reach rank 0: %s", strerror(errno));
		usleep(50000);
	}
}

int link_tcp(struct harness *h, const char *addr)
{
	struct sockaddr_in sa;

	if (resolve(addr, &sa))
		return -1;
	return h->o.rank == 0 ? tcp_serve(h, &sa) : tcp_join(h, &sa);
}
