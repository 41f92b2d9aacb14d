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
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>
#include <dirent.h>

#include "../integration/prov_harness.h"

struct watch {
	int fd;                 /* inotify on /dev/shm */
	int stop;               /* pipe: the job is over */
	pid_t killed;           /* the rank killed, 0 if none */
};

/* Kill the creator of the first rank-1 segment that appears. */
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
			    !w->killed) {
				kill(pid, SIGKILL);
				w->killed = pid;
				return NULL;
			}
		}
	}
}

static int job_killed(struct ph *ph, void *arg)
{
	(void)arg;
	if (ph_open(ph) == 0)
		fprintf(stderr, "[rank %d] open succeeded: the kill came "
			"late\n", ph->rank);
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
	int pp[2];
	pthread_t th;

	if (w.fd < 0 || pipe(pp) ||
	    inotify_add_watch(w.fd, "/dev/shm", IN_CREATE) < 0) {
		perror("inotify");
		exit(77);
	}
	w.stop = pp[0];
	pthread_create(&th, NULL, watcher, &w);
	/* rank 0's open fails within the harness's 20 s HOP_TIMEOUT; a job
	 * the kill missed is only retried, so it need not run longer */
	ph_run("shm", 2, job_killed, NULL, 1, 30);
	if (write(pp[1], "x", 1) != 1)
		perror("write");
	pthread_join(th, NULL);
	close(pp[0]);
	close(pp[1]);
	close(w.fd);
	return w.killed;
}

int main(void)
{
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
