/*
 * rel.h - helpers of the reliability tests: forked ranks joined through a
 * unique id made in the parent, per-rank reports in a shared mapping, a
 * waiter that kills (and counts) ranks that outlive their deadline, and
 * small utilities (time, resident memory, message checks).
 *
 * A rank that hangs never hangs the test: rel_wait() kills it at the
 * deadline and reports it as hung.
 */
#ifndef HOP_TESTS_REL_H
#define HOP_TESTS_REL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hop/hop.h>

#include "core/bootstrap.h"
#include "core/core_int.h"

#define REL_MAX_RANKS 16
#define REL_MSG 512

/* What a rank reports (in shared memory). */
struct rel_report {
	volatile int state;     /* REL_* below */
	int ret;                /* the hop code the rank ended with */
	int iter;               /* iterations done (loops) */
	uint64_t t_err_ms;      /* when it saw its error (rel_now_ms) */
	int aux[8];             /* test-specific values */
	char msg[REL_MSG];      /* the message of that error */
};
enum { REL_NONE = 0, REL_STARTED, REL_JOINED, REL_REPORTED };

static inline uint64_t rel_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static inline void *rel_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		abort();
	}
	memset(p, 0, len);
	return p;
}

/* Resident set size of this process in KiB (/proc/self/statm). */
static inline long rel_rss_kib(void)
{
	long pages = -1, rss = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = -1;
		fclose(f);
	}
	return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Does @msg name rank @r as a whole word ("rank 3", "rank 3:")? */
static inline int rel_names_rank(const char *msg, int r)
{
	char pat[32];
	const char *p = msg;
	size_t n;

	n = (size_t)snprintf(pat, sizeof(pat), "rank %d", r);
	while ((p = strstr(p, pat))) {
		char c = p[n];

		if (!(c >= '0' && c <= '9'))
			return 1;
		p += n;
	}
	return 0;
}

/* The listener hop_get_unique_id() left in this process: close it (ranks
 * other than 0, and the parent once rank 0 is forked). */
static inline void rel_drop_listener(const hop_unique_id_t *id)
{
	struct hop_id_info info;
	int fd;

	if (hop_id_decode(id, &info) == 0 &&
	    (fd = hop_id_take_listener(info.secret)) >= 0)
		close(fd);
}

/* The environment every reliability test starts from: loopback, quiet,
 * 20 s deadlines, no listener inherited from a launcher. */
static inline void rel_test_env(void)
{
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_DEBUG", "none", 1);
	setenv("HOP_TIMEOUT", "20", 1);
	unsetenv("HOP_BOOTSTRAP_FD");
}

typedef int (*rel_rank_fn)(hop_comm_t *comm, int rank, int nranks,
			   struct rel_report *rep, void *arg);

/*
 * Fork one process per rank of @nranks; each joins the communicator of @id
 * (made here), runs @fn (its return value is the exit status) and
 * destroys the communicator. A failed join is reported (state JOINED not
 * reached, ret and msg set) with exit status 3. Ranks' stderr goes to
 * @errpath (appended) when not NULL.
 */
static inline int rel_fork_ranks(int nranks, rel_rank_fn fn, void *arg,
				 struct rel_report *rep, pid_t *pids,
				 const char *errpath)
{
	hop_unique_id_t id;
	int ret;

	memset(rep, 0, sizeof(*rep) * (size_t)nranks);
	memset(pids, 0, sizeof(*pids) * (size_t)nranks);
	if ((ret = hop_get_unique_id(&id))) {
		fprintf(stderr, "hop_get_unique_id: %s\n", hop_err_name(ret));
		return ret;
	}
	fflush(NULL);
	for (int r = 0; r < nranks; r++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			abort();
		}
		if (pid == 0) {
			hop_comm_t *comm = NULL;
			int code;

			if (errpath) {
				int fd = open(errpath, O_WRONLY | O_CREAT |
					      O_APPEND, 0600);

				if (fd >= 0) {
					dup2(fd, 2);
					close(fd);
				}
			}
			if (r)
				rel_drop_listener(&id);
			rep[r].state = REL_STARTED;
			ret = hop_comm_init_rank(&comm, nranks, id, r);
			if (ret) {
				rep[r].ret = ret;
				rep[r].t_err_ms = rel_now_ms();
				snprintf(rep[r].msg, sizeof(rep[r].msg), "%s",
					 hop_last_init_error());
				rep[r].state = REL_REPORTED;
				_exit(3);
			}
			rep[r].state = REL_JOINED;
			code = fn(comm, r, nranks, &rep[r], arg);
			hop_comm_destroy(comm);
			_exit(code);
		}
		pids[r] = pid;
	}
	rel_drop_listener(&id);
	return 0;
}

/*
 * Reap @pid, killed, within @ms. A process inside an uninterruptible
 * kernel call dies only when the call returns: one whose RDMA link was cut
 * can sit for minutes in the kernel's connection teardown (the RDMA CM
 * waits for its DREQ to time out). The test must not wait for the kernel;
 * an unreaped child is left to init when we exit.
 */
#define REL_REAP_MS 10000
static inline void rel_reap(pid_t pid, uint64_t ms)
{
	uint64_t deadline = rel_now_ms() + ms;

	while (waitpid(pid, NULL, WNOHANG) == 0 && rel_now_ms() < deadline)
		usleep(1000);
}

/*
 * Wait for the @n processes of @pids until @deadline_ms (rel_now_ms
 * clock); kill the rest with SIGKILL. @status receives each exit status
 * (-1 when it was killed here, 128 + signal when killed by a signal).
 * Return: the number killed here (hung).
 */
static inline int rel_wait(pid_t *pids, int n, uint64_t deadline_ms,
			   int *status)
{
	int left = 0, hung = 0;

	for (int i = 0; i < n; i++) {
		status[i] = -1;
		left += pids[i] > 0;
	}
	while (left > 0) {
		int progressed = 0;

		for (int i = 0; i < n; i++) {
			int st;

			if (pids[i] <= 0 || waitpid(pids[i], &st, WNOHANG) <= 0)
				continue;
			pids[i] = 0;
			left--;
			progressed = 1;
			status[i] = WIFEXITED(st) ? WEXITSTATUS(st)
						  : 128 + WTERMSIG(st);
		}
		if (progressed)
			continue;
		if (rel_now_ms() > deadline_ms) {
			for (int i = 0; i < n; i++)
				if (pids[i] > 0) {
					kill(pids[i], SIGKILL);
					rel_reap(pids[i], REL_REAP_MS);
					pids[i] = 0;
					hung++;
				}
			break;
		}
		usleep(1000);
	}
	return hung;
}

#endif /* HOP_TESTS_REL_H */
