/*
 * shm_setup_kill.c - no /dev/shm segment outlives a rank killed during the
 * shm provider's set-up.
 *
 * A watcher thread sees rank 1's segment appear in /dev/shm (inotify) and
 * SIGKILLs rank 1 at once: its segment name is not unlinked yet (that
 * happens once every rank mapped it). Rank 0's open fails. Then a second
 * job opens the provider; afterwards no segment named for the killed pid
 * may be left. The kill must land inside set-up, so the run is retried
 * until a segment was really left behind (or fails after 5 tries).
 *
 * make check runs tests side by side, and other jobs' ranks create
 * rank-1 segments too (shm_safety's, for one): the watcher kills only a
 * rank of its own job. Each run starts a bystander first, a process of no
 * job of ours whose rank-1 name appears before the job's, and checks it
 * survived. The job connects every pair at open (HOP_CONNECT=eager): only
 * that set-up names its segments in /dev/shm.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include "../integration/prov_harness.h"

struct watch {
	int fd;                 /* inotify on /dev/shm */
	int stop;               /* pipe: the job is over */
	pid_t killed;           /* the rank killed, 0 if none */
};

/* 1 when @pid is a child of this process, i.e. a rank of our job (ph_run
 * forks them); WNOWAIT leaves it to ph_run to reap. */
static int our_rank(pid_t pid)
{
	siginfo_t si;

	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* Kill the creator of the first rank-1 segment of our job that appears. */
static void *watcher(void *arg)
{
	struct watch *w = arg;
	char buf[4096] __attribute__((aligned(8)));

	for (;;) {
		struct pollfd pf[2] = { { w->fd, POLLIN, 0 },
					{ w->stop, POLLIN, 0 } };
		ssize_t n;

		if (poll(pf, 2, 30000) <= 0 || pf[1].revents)
			return NULL;
		n = read(w->fd, buf, sizeof(buf));
		for (ssize_t off = 0; n > 0 && off < n;) {
			struct inotify_event *ev =
				(struct inotify_event *)(buf + off);
			int pid, rank;

			off += (ssize_t)sizeof(*ev) + ev->len;
			if (ev->len && sscanf(ev->name, "hop-%d-r%d-", &pid,
					      &rank) == 2 && rank == 1 &&
			    !w->killed && our_rank(pid)) {
				kill(pid, SIGKILL);
				w->killed = pid;
				return NULL;
			}
		}
	}
}

/* A process of no job of ours (a grandchild, reparented) with a rank-1
 * name in /dev/shm, as another job's rank has during its set-up. */
struct bystander {
	pid_t pid;
	int fd;                 /* our end of a socketpair to it */
};

static void bystander_name(pid_t pid, char *name, size_t len)
{
	snprintf(name, len, "/hop-%d-r1-bystander", (int)pid);
}

/* Create the name, tell @fd our pid, wait for the word (at most 120 s,
 * should the test die), remove the name and answer. */
static void bystander_main(int fd)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	pid_t me = getpid();
	char name[64], c = 'a';
	int sfd;

	bystander_name(me, name, sizeof(name));
	sfd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (sfd < 0 || write(fd, &me, sizeof(me)) != sizeof(me))
		_exit(1);
	close(sfd);
	(void)poll(&pf, 1, 120000);
	shm_unlink(name);
	if (send(fd, &c, 1, MSG_NOSIGNAL) != 1)
		_exit(1);
	_exit(0);
}

static int bystander_start(struct bystander *b)
{
	struct pollfd pf;
	pid_t child;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	if ((child = fork()) == 0) {
		close(sv[0]);
		if (fork() == 0)
			bystander_main(sv[1]);
		_exit(0);
	}
	close(sv[1]);
	if (child > 0)
		waitpid(child, NULL, 0);
	pf = (struct pollfd){ sv[0], POLLIN, 0 };
	if (child < 0 || poll(&pf, 1, 10000) != 1 ||
	    read(sv[0], &b->pid, sizeof(b->pid)) != sizeof(b->pid)) {
		close(sv[0]);
		return -1;
	}
	b->fd = sv[0];
	return 0;
}

/* 1 when the bystander lived to the end; its name is gone either way. */
static int bystander_stop(const struct bystander *b)
{
	struct pollfd pf = { b->fd, POLLIN, 0 };
	char c = 'x', name[64];
	int alive = send(b->fd, &c, 1, MSG_NOSIGNAL) == 1 &&
		    poll(&pf, 1, 10000) == 1 && read(b->fd, &c, 1) == 1;

	close(b->fd);
	if (!alive) {
		bystander_name(b->pid, name, sizeof(name));
		shm_unlink(name);
	}
	return alive;
}

/* Rank 1 is killed in its open; rank 0's open fails and must say why.
 * @arg: a flag shared with the parent, set when it did not (ph_run's
 * status also counts a kill that missed, which is only retried). */
static int job_killed(struct ph *ph, void *arg)
{
	volatile int *silent = arg;

	if (ph_open(ph) == 0) {
		fprintf(stderr, "[rank %d] open succeeded: the kill came "
			"late\n", ph->rank);
		return 0;
	}
	if (!ph_error(ph)[0]) {
		*silent = 1;
		PH_CHECK(ph, 0, "open failed without a message");
	}
	return 0;
}

static int job_normal(struct ph *ph, void *arg)
{
	(void)arg;
	PH_CHECK(ph, ph_open(ph) == 0, "open: %s", ph->comm->fail_msg);
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	return 0;
}

/* Names in /dev/shm of segments created by @pid. */
static int count_left(pid_t pid)
{
	char pre[32];
	struct dirent *de;
	DIR *d = opendir("/dev/shm");
	int n = 0;

	snprintf(pre, sizeof(pre), "hop-%d-", (int)pid);
	while (d && (de = readdir(d)))
		n += !strncmp(de->d_name, pre, strlen(pre));
	if (d)
		closedir(d);
	return n;
}

/* One killed job; the pid of the killed rank, 0 if the kill missed. */
static pid_t kill_in_setup(void)
{
	struct watch w = { .fd = inotify_init1(IN_CLOEXEC) };
	struct bystander by;
	int pp[2], *silent;
	pthread_t th;

	if (w.fd < 0 || pipe(pp) ||
	    inotify_add_watch(w.fd, "/dev/shm", IN_CREATE) < 0) {
		perror("inotify");
		exit(77);
	}
	silent = mmap(NULL, sizeof(*silent), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (silent == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	*silent = 0;
	/* its name is the first the watcher sees */
	if (bystander_start(&by)) {
		printf("FAIL: the bystander did not start\n");
		exit(1);
	}
	w.stop = pp[0];
	pthread_create(&th, NULL, watcher, &w);
	/* rank 0's open fails within the harness's 20 s HOP_TIMEOUT; a job
	 * the kill missed is only retried, so it need not run longer */
	ph_run("shm", 2, job_killed, silent, 1, 30);
	if (write(pp[1], "x", 1) != 1)
		perror("write");
	pthread_join(th, NULL);
	close(pp[0]);
	close(pp[1]);
	close(w.fd);
	if (*silent) {
		printf("FAIL: rank 0's open failed without a message\n");
		exit(1);
	}
	munmap(silent, sizeof(*silent));
	if (!bystander_stop(&by)) {
		printf("FAIL: pid %d, a process of another job with a rank-1 "
		       "segment, was killed\n", (int)by.pid);
		exit(1);
	}
	return w.killed;
}

int main(void)
{
	/* named segments are the eager set-up's: a lazy one is a memfd,
	 * which leaves nothing in /dev/shm at any moment */
	setenv("HOP_CONNECT", "eager", 1);
	for (int i = 0; i < 5; i++) {
		pid_t victim = kill_in_setup();
		int left = victim ? count_left(victim) : 0;

		printf("run %d: killed rank 1 (pid %d) during set-up; %d "
		       "segment(s) left\n", i, (int)victim, left);
		if (!left)
			continue;
		if (ph_run("shm", 2, job_normal, NULL, -1, 60)) {
			printf("FAIL: the next job failed\n");
			return 1;
		}
		left = count_left(victim);
		printf("%s: %d segment(s) of pid %d left after the next "
		       "job\n", left ? "FAIL" : "PASS", left, (int)victim);
		return left ? 1 : 0;
	}
	printf("FAIL: no kill landed inside set-up in 5 runs\n");
	return 1;
}
