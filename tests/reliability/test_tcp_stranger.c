/*
 * test_tcp_stranger.c - a stranger's silent connections must not fail a
 * tcp job. Each launch forks 4 ranks over tcp and a stranger process
 * (stranger.h) that opens 12 silent connections to 127.0.0.1 on every
 * listener the ranks open, as soon as it appears: more than rank 1..3's
 * pending-handshake slots. The ranks connect on first use, in their
 * allreduce, which each starts once the stranger has reached every
 * listener or 2 s have passed (else a fast host finishes the job before
 * the stranger finds it). Every rank must still connect, allreduce
 * correctly (checked bit for bit) and blame nobody.
 *
 * Usage: test_tcp_stranger [launches] (default 8, or HOP_STRANGER_RUNS).
 * Exit 0 when every launch succeeded and the stranger reached the ranks'
 * listeners in most of them (else the test proves nothing: exit 1 too).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rel.h"
#include "stranger.h"

#define NRANKS 4
#define PER_LISTENER 12
#define COUNT 4096

struct shared {
	volatile int stop;
	volatile int seen;      /* listeners the stranger has reached */
	int listeners;          /* the stranger's count, at its end */
	int conns;
};

static int allreduce_rank(hop_comm_t *c, int rank, int n,
			  struct rel_report *rep, void *arg)
{
	int64_t *in = malloc(COUNT * sizeof(*in));
	int64_t *out = malloc(COUNT * sizeof(*out));
	const struct shared *sh = arg;
	uint64_t t0 = rel_now_ms();
	int ret;

	if (!in || !out)
		return 1;
	while (sh->seen < NRANKS && rel_now_ms() - t0 < 2000)
		usleep(1000);
	for (int i = 0; i < COUNT; i++)
		in[i] = (int64_t)rank * 1000003 + i;
	ret = hop_allreduce(c, in, out, COUNT, HOP_INT64, HOP_SUM);
	for (int i = 0; !ret && i < COUNT; i++) {
		int64_t want = (int64_t)n * i +
			       1000003 * (int64_t)n * (n - 1) / 2;

		if (out[i] != want) {
			snprintf(rep->msg, sizeof(rep->msg), "element %d is "
				 "%lld, expected %lld", i, (long long)out[i],
				 (long long)want);
			ret = HOP_ERR_INTERNAL;
		}
	}
	if (ret && !rep->msg[0])
		snprintf(rep->msg, sizeof(rep->msg), "%s",
			 hop_comm_last_error(c));
	rep->ret = ret;
	rep->state = REL_REPORTED;
	free(in);
	free(out);
	return ret ? 1 : 0;
}

/* The stranger: its own process, watching the ranks. */
static pid_t fork_stranger(const pid_t *pids, struct shared *sh)
{
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) != 0)
		return pid;
	struct stranger *s = calloc(1, sizeof(*s));

	if (!s)
		_exit(1);
	s->pids = pids;
	s->npids = NRANKS;
	s->per_listener = PER_LISTENER;
	s->seen = &sh->seen;
	stranger_run(s, &sh->stop);
	sh->listeners = s->listeners;
	sh->conns = s->conns;
	_exit(0);
}

/* One launch; 0 when every rank succeeded. *@hit: listeners attacked. */
static int launch(int i, int *hit)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * NRANKS);
	struct shared *sh = rel_shared(sizeof(*sh));
	pid_t pids[NRANKS], spid;
	int st[NRANKS], hung, bad = 0, sst;

	if (rel_fork_ranks(NRANKS, allreduce_rank, sh, rep, pids, NULL))
		return 1;
	spid = fork_stranger(pids, sh);
	hung = rel_wait(pids, NRANKS, rel_now_ms() + 30000, st);
	sh->stop = 1;
	if (rel_wait(&spid, 1, rel_now_ms() + 5000, &sst))
		fprintf(stderr, "the stranger hung\n");
	*hit = sh->listeners;
	for (int r = 0; r < NRANKS; r++) {
		if (st[r] == 0 && rep[r].ret == 0)
			continue;
		bad = 1;
		printf("  launch %d: rank %d: exit %d, %s: %s\n", i, r, st[r],
		       hop_err_name(rep[r].ret), rep[r].msg);
	}
	printf("launch %d: %s; the stranger opened %d connections to %d "
	       "listeners%s\n", i, bad ? "FAILED" : "ok", sh->conns,
	       sh->listeners, hung ? "; ranks hung" : "");
	fflush(stdout);
	munmap(rep, sizeof(*rep) * NRANKS);
	munmap(sh, sizeof(*sh));
	return bad;
}

int main(int argc, char **argv)
{
	const char *env = getenv("HOP_STRANGER_RUNS");
	int runs = argc > 1 ? atoi(argv[1]) : env ? atoi(env) : 8;
	int failed = 0, reached = 0;

	setenv("HOP_TRANSPORT", "tcp", 1);
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_TIMEOUT", "5", 1);
	if (runs < 1)
		runs = 1;
	for (int i = 0; i < runs; i++) {
		int hit = 0;

		failed += launch(i, &hit) != 0;
		reached += hit > 0;
	}
	printf("%d of %d launches failed; the stranger reached the ranks' "
	       "listeners in %d\n", failed, runs, reached);
	if (reached * 2 < runs) {
		printf("the stranger was too slow to prove anything\n");
		return 1;
	}
	return failed ? 1 : 0;
}
