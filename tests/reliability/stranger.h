/*
 * stranger.h - a hostile local process for the tests: it watches the
 * listening sockets of given processes (the ranks of a job) and opens
 * silent connections to each new one, as a stranger on the same host
 * could. It never sends a byte and only ever connects to 127.0.0.1: a
 * listener on any other address is left alone.
 *
 * How it finds listeners: the socket inodes in /proc/PID/fd of the watched
 * processes, looked up in /proc/net/tcp (state LISTEN, local 127.0.0.1).
 * A socket not listening yet is looked at again for a while.
 */
#ifndef HOP_TESTS_STRANGER_H
#define HOP_TESTS_STRANGER_H

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define STRANGER_MAX_SOCKS 512
#define STRANGER_TRIES 200      /* looks at a socket not yet listening */

struct stranger_sock {
	unsigned long inode;
	int tries;              /* -1: done with it */
};

struct stranger {
	const pid_t *pids;
	int npids;
	int per_listener;       /* connections opened to each listener */
	int listeners;          /* listeners attacked so far */
	volatile int *seen;     /* if set: listeners, kept current */
	int conns;              /* connections open */
	int fds[STRANGER_MAX_SOCKS];
	struct stranger_sock socks[STRANGER_MAX_SOCKS];
	int nsocks;
};

static inline struct stranger_sock *stranger_find(struct stranger *s,
						  unsigned long inode)
{
	for (int i = 0; i < s->nsocks; i++)
		if (s->socks[i].inode == inode)
			return &s->socks[i];
	if (s->nsocks == STRANGER_MAX_SOCKS)
		return NULL;
	s->socks[s->nsocks] = (struct stranger_sock){ inode, 0 };
	return &s->socks[s->nsocks++];
}

/* Record the socket inodes of the watched processes; 1 if one is new. */
static inline int stranger_scan_fds(struct stranger *s)
{
	int fresh = 0;

	for (int i = 0; i < s->npids; i++) {
		char path[64], link[64];
		struct dirent *d;
		DIR *dir;

		snprintf(path, sizeof(path), "/proc/%d/fd", (int)s->pids[i]);
		if (!(dir = opendir(path)))
			continue;
		while ((d = readdir(dir))) {
			char fdpath[64 + sizeof(d->d_name)];
			unsigned long inode;
			struct stranger_sock *k;
			ssize_t n;

			snprintf(fdpath, sizeof(fdpath), "%s/%s", path,
				 d->d_name);
			n = readlink(fdpath, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (sscanf(link, "socket:[%lu]", &inode) != 1)
				continue;
			k = stranger_find(s, inode);
			if (k && k->tries >= 0)
				fresh = 1;
		}
		closedir(dir);
	}
	return fresh;
}

static inline void stranger_attack(struct stranger *s, unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	for (int i = 0; i < s->per_listener && s->conns < STRANGER_MAX_SOCKS;
	     i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return;
		/* in progress or done: either way it waits in the backlog */
		connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		s->fds[s->conns++] = fd;
	}
	s->listeners++;
}

/* Match pending inodes against /proc/net/tcp; attack new listeners. */
static inline void stranger_resolve(struct stranger *s)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned laddr, lport, st;
		unsigned long inode;
		struct stranger_sock *k = NULL;

		if (sscanf(line, " %*u: %8X:%4X %*X:%*X %2X %*X:%*X %*X:%*X "
			   "%*X %*u %*u %lu", &laddr, &lport, &st, &inode) != 4)
			continue;
		for (int i = 0; i < s->nsocks && !k; i++)
			if (s->socks[i].inode == inode && s->socks[i].tries >= 0)
				k = &s->socks[i];
		if (!k)
			continue;
		if (st == 0x0A && laddr == htonl(INADDR_LOOPBACK))
			stranger_attack(s, lport);
		if (st != 0x07) /* listening, connected...: settled */
			k->tries = -1;
	}
	fclose(f);
	for (int i = 0; i < s->nsocks; i++)
		if (s->socks[i].tries >= 0 &&
		    ++s->socks[i].tries > STRANGER_TRIES)
			s->socks[i].tries = -1;
}

/* Watch until *@stop; the connections stay open (silent) until then. */
static inline void stranger_run(struct stranger *s, volatile int *stop)
{
	while (!*stop) {
		int fresh = stranger_scan_fds(s);
		int pending = 0;

		for (int i = 0; i < s->nsocks; i++)
			pending |= s->socks[i].tries >= 0;
		if (fresh || pending)
			stranger_resolve(s);
		else
			usleep(100);
		if (s->seen)
			*s->seen = s->listeners;
	}
	for (int i = 0; i < s->conns; i++)
		close(s->fds[i]);
}

#endif /* HOP_TESTS_STRANGER_H */
