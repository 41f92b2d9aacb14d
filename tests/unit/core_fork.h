/*
 * core_fork.h - run test ranks as forked processes: each child runs a
 * function and _exit()s with its result; results and messages come back
 * through a shared mapping; the parent waits with a deadline and kills
 * stragglers (a hung rank fails the test instead of hanging it).
 */
#ifndef HOP_TESTS_CORE_FORK_H
#define HOP_TESTS_CORE_FORK_H

#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CF_MAX 64

struct cf_result {
	int ret;                /* hop code the rank saw */
	int done;               /* the function returned */
	char msg[512];          /* its message */
};

static struct cf_result *cf_res;

static inline void cf_setup(void)
{
	if (!cf_res) {
		cf_res = mmap(NULL, sizeof(*cf_res) * CF_MAX,
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			      -1, 0);
		if (cf_res == MAP_FAILED)
			abort();
	}
	memset(cf_res, 0, sizeof(*cf_res) * CF_MAX);
}

/* Ranks of a one-host test: loopback, warnings only, no listener
 * inherited from a launcher. */
static inline void cf_local_env(void)
{
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_DEBUG", "warn", 1);
	unsetenv("HOP_BOOTSTRAP_FD");
}

typedef int (*cf_fn)(int slot, void *arg);

/* Fork a child running fn(slot, arg); its stderr goes to @errpath if set. */
static inline pid_t cf_fork(cf_fn fn, int slot, void *arg, const char *errpath)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (errpath) {
			int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);

			dup2(fd, 2);
			close(fd);
		}
		int code = fn(slot, arg);

		cf_res[slot].done = 1;
		_exit(code);
	}
	return pid;
}

static inline uint64_t cf_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Wait for @n children up to @ms; kill the rest. Returns the number of
 * children that did not exit with status 0 (hung ones count).
 */
static inline int cf_wait(pid_t *pids, int n, int ms)
{
	uint64_t end = cf_now_ms() + (uint64_t)ms;
	int left = n, bad = 0;

	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			for (int i = 0; i < n; i++)
				if (pids[i] == p) {
					pids[i] = 0;
					left--;
					if (!WIFEXITED(st) || WEXITSTATUS(st))
						bad++;
				}
			continue;
		}
		if (cf_now_ms() > end) {
			for (int i = 0; i < n; i++)
				if (pids[i] > 0) {
					fprintf(stderr, "child %d hung: killed\n", i);
					kill(pids[i], SIGKILL);
					waitpid(pids[i], NULL, 0);
					pids[i] = 0;
					bad++;
				}
			break;
		}
		usleep(2000);
	}
	return bad;
}

/* Contents of a small file (static buffer). */
static inline const char *cf_slurp(const char *path)
{
	static char buf[16384];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

#endif /* HOP_TESTS_CORE_FORK_H */
