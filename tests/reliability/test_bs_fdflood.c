/*
 * test_bs_fdflood.c - a flood of silent connections to rank 0's bootstrap
 * port, larger than rank 0's file descriptor limit, must not keep the real
 * ranks out. A flooder process (127.0.0.1 only) queues NFLOOD silent
 * connections in the listener's backlog before any rank starts; then rank
 * 0 (RLIMIT_NOFILE soft = hard = FD_LIMIT, below NFLOOD) and ranks 1..2
 * join, whose connections wait behind the flood. Every rank must join and
 * pass a barrier, and rank 0's log must say that connections which never
 * said HELLO were closed.
 *
 * A second case also takes every free descriptor of rank 0 from a thread
 * once the flood is accepted, and starts rank 2 only after rank 1 has
 * joined: rank 1 freed a slot but no descriptor, so accept() fails with
 * EMFILE while the slots are not full, and rank 0 must make room by
 * closing a silent connection, and say so.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "rel.h"

#define NRANKS 3
#define NFLOOD 600
#define FD_LIMIT 256
#define LOGPATH_LEN 64

#define LATE_MS 6000            /* second case: rank 2 starts then */

struct flood {
	volatile int ready, stop;
};

struct hog {
	volatile int release;
};

static int flood_one(const struct sockaddr_in *to)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0 && connect(fd, (const struct sockaddr *)to, sizeof(*to))) {
		perror("flooder");
		close(fd);
		fd = -1;
	}
	return fd;
}

static void flooder(const struct sockaddr_in *to, struct flood *fl)
{
	struct rlimit rl;
	int fds[NFLOOD], n = 0;

	if (to->sin_addr.s_addr != htonl(INADDR_LOOPBACK))
		_exit(2); /* never anywhere but this host */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max > NFLOOD + 64) {
		rl.rlim_cur = NFLOOD + 64;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	while (n < NFLOOD && (fds[n] = flood_one(to)) >= 0)
		n++;
	fl->ready = n;
	while (!fl->stop)
		usleep(1000);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	_exit(0);
}

/* From 500 ms on, hold every free descriptor until released. */
static void *hog_fds(void *arg)
{
	struct hog *h = arg;
	int fds[FD_LIMIT], n = 0;

	usleep(500 * 1000);
	while (n < FD_LIMIT && (fds[n] = open("/dev/null", O_RDONLY)) >= 0)
		n++;
	while (!h->release)
		usleep(1000);
	while (n > 0)
		close(fds[--n]);
	return NULL;
}

static void rank_main(hop_unique_id_t id, int r, struct rel_report *rep,
		      const char *log, int hog)
{
	struct hog h = { 0 };
	hop_comm_t *c = NULL;
	pthread_t t;
	int ret, fd;

	if (r)
		rel_drop_listener(&id);
	if (r == 0) {
		struct rlimit rl = { FD_LIMIT, FD_LIMIT };

		if (setrlimit(RLIMIT_NOFILE, &rl))
			perror("setrlimit");
		if ((fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0) {
			dup2(fd, 2);
			close(fd);
		}
		if (hog && pthread_create(&t, NULL, hog_fds, &h))
			hog = 0;
	}
	if (r == 2 && hog)
		usleep(LATE_MS * 1000);
	ret = hop_comm_init_rank(&c, NRANKS, id, r);
	if (r == 0 && hog) {
		h.release = 1;
		pthread_join(t, NULL);
	}
	rep->t_err_ms = rel_now_ms();
	snprintf(rep->msg, sizeof(rep->msg), "%s",
		 ret ? hop_last_init_error() : "");
	if (!ret) {
		ret = hop_barrier(c);
		if (ret)
			snprintf(rep->msg, sizeof(rep->msg), "%s",
				 hop_comm_last_error(c));
		hop_comm_destroy(c);
	}
	rep->ret = ret;
	rep->state = REL_REPORTED;
	_exit(0);
}

static int has_line(const char *path, const char *sub)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, sub) != NULL;
	fclose(f);
	return found;
}

static void print_tail(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	for (int n = 0; f && n < 20 && fgets(line, sizeof(line), f); n++)
		fputs(line, stdout);
	if (f)
		fclose(f);
}

static int flood_case(const char *name, int hog, const char *say)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * NRANKS);
	struct flood *fl = rel_shared(sizeof(*fl));
	char log[LOGPATH_LEN];
	hop_unique_id_t id;
	struct hop_id_info info;
	pid_t pids[NRANKS], fpid;
	int st[NRANKS], fst, bad = 0;
	uint64_t t0;

	snprintf(log, sizeof(log), "/tmp/hop-fdflood-%d.log", (int)getpid());
	if (hop_get_unique_id(&id) || hop_id_decode(&id, &info))
		return 1;
	fflush(NULL);
	if ((fpid = fork()) == 0) {
		rel_drop_listener(&id);
		flooder(&info.addr, fl);
	}
	for (uint64_t end = rel_now_ms() + 20000;
	     !fl->ready && rel_now_ms() < end;)
		usleep(1000);
	if (fl->ready < NFLOOD) {
		printf("%s: the flooder queued only %d connections\n", name,
		       fl->ready);
		bad = 1;
	}
	t0 = rel_now_ms();
	for (int r = 0; r < NRANKS; r++) {
		fflush(NULL);
		if ((pids[r] = fork()) == 0)
			rank_main(id, r, &rep[r], log, hog);
	}

	rel_drop_listener(&id);
	if (rel_wait(pids, NRANKS, rel_now_ms() + 45000, st))
		printf("%s: ranks hung\n", name);
	fl->stop = 1;
	rel_wait(&fpid, 1, rel_now_ms() + 10000, &fst);
	for (int r = 0; r < NRANKS; r++) {
		printf("%s: rank %d: %s after %llu ms%s%s\n", name, r,
		       hop_err_name(rep[r].ret),
		       (unsigned long long)(rep[r].t_err_ms - t0),
		       rep[r].msg[0] ? ": " : "", rep[r].msg);
		bad |= st[r] != 0 || rep[r].state != REL_REPORTED ||
		       rep[r].ret != 0;
	}
	if (!has_line(log, say)) {
		printf("%s: rank 0's log lacks '%s':\n", name, say);
		fflush(stdout);
		print_tail(log);
		bad = 1;
	}
	unlink(log);
	munmap(rep, sizeof(*rep) * NRANKS);
	munmap(fl, sizeof(*fl));
	printf("%s: %s\n", name, bad ? "FAILED" : "ok");
	fflush(stdout);
	return bad;
}

int main(void)
{
	int bad = 0;

	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_TIMEOUT", "15", 1);
	setenv("HOP_TRANSPORT", "tcp", 1);
	bad |= flood_case("flood above the fd limit", 0, "never said HELLO");
	bad |= flood_case("accept out of descriptors", 1,
			  "ran out of file descriptors");
	return bad;
}
