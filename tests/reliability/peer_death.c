/*
 * peer_death.c - a rank killed (SIGKILL) at a random moment of a loop of
 * collectives and point-to-point exchanges: every survivor must return an
 * error naming the dead rank within the deadline (HOP_TIMEOUT), and no
 * rank may hang.
 *
 * Local mode (default): for each run, fork N ranks on this host (HOP_TRANSPORT
 * from -t), let them loop, SIGKILL a random rank after a random delay,
 * then collect every survivor's code, message and detection time. The
 * driver enforces an outer deadline (HOP_TIMEOUT + grace) and counts the
 * ranks that did not report by then as hangs. Prints per run problems and
 * one summary line:
 *   peer_death tcp: runs 100, survivors 300, named the dead rank 300,
 *   wrong messages 0, hangs 0, late 0, detection median 3 ms, max 41 ms
 * Exit status 0 only when every survivor named the dead rank in time.
 *
 * Env mode (--env, one process per rank started by a launcher such as
 * scripts/softroce-cluster): this process forks its rank (joined with
 * hop_comm_init_env()); the rank given by --victim is killed by its own
 * driver after --delay ms of looping, or with --link CMD the driver runs
 * CMD (e.g. "ip link set eth0 down") instead. Every other rank prints
 *   PD rank R victim V: HOP_ERR_PEER_FAILED after 812 ms, names rank V: yes (msg)
 * and exits 0 only when it named V before its outer deadline.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rel.h"

#define MAX_ELEMS (128 * 1024)  /* floats per rank buffer: 512 KiB */

struct pd_opts {
	int nranks, runs, timeout_s, max_delay_ms, verbose;
	uint64_t seed;
	const char *transport;
	volatile int *release;  /* local mode: the driver lets ranks go */
	int linger_ms;          /* env mode: stay alive this long after */
	int iters;              /* stop after this many (no victim) */
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* One step of the loop, the same on every rank (chosen from seed + iter). */
static int one_step(hop_comm_t *c, int rank, int n, uint64_t r, float *a,
		    float *b)
{
	size_t count = 1 + (size_t)(mix(r) % 4 == 0 ? mix(r + 1) % MAX_ELEMS
						   : mix(r + 1) % 512);
	int root = (int)(mix(r + 2) % (uint64_t)n), ret;
	hop_request_t *rq[2];

	for (size_t i = 0; i < count; i += 97)
		a[i] = (float)(rank + 1);
	switch (mix(r + 3) % 6) {
	case 0:
		ret = hop_allreduce(c, a, b, count, HOP_FLOAT32, HOP_SUM);
		if (!ret && b[0] != (float)(n * (n + 1) / 2))
			return -9999;
		return ret;
	case 1:
		return hop_broadcast(c, a, count, HOP_FLOAT32, root);
	case 2:
		count = 1 + count / (size_t)n;
		return hop_allgather(c, a, b, count, HOP_FLOAT32);
	case 3:
		count = 1 + count / (size_t)n;
		return hop_reducescatter(c, a, b, count, HOP_FLOAT32, HOP_MAX);
	case 4:
		return hop_barrier(c);
	default: /* a ring exchange, point to point */
		if ((ret = hop_irecv(c, b, count * 4, (rank + n - 1) % n, 5,
				     &rq[0])))
			return ret;
		if ((ret = hop_isend(c, a, count * 4, (rank + 1) % n, 5,
				     &rq[1]))) {
			hop_wait(&rq[0], NULL);
			return ret;
		}
		ret = hop_wait(&rq[1], NULL);
		int r2 = hop_wait(&rq[0], NULL);

		return ret ? ret : r2;
	}
}

static int rank_loop(hop_comm_t *c, int rank, int n, struct rel_report *rep,
		     void *arg)
{
	const struct pd_opts *o = arg;
	float *a = calloc(MAX_ELEMS, sizeof(float));
	float *b = calloc((size_t)MAX_ELEMS * (size_t)n, sizeof(float));
	int ret = 0;
	uint64_t end;

	if (!a || !b)
		abort();
	for (int it = 0; !o->iters || it < o->iters; it++) {
		if ((ret = one_step(c, rank, n, o->seed * 1000003u + (uint64_t)it,
				    a, b)))
			break;
		rep->iter = it + 1;
	}
	rep->ret = ret;
	rep->t_err_ms = rel_now_ms();
	snprintf(rep->msg, sizeof(rep->msg), "%s", hop_comm_last_error(c));
	rep->state = REL_REPORTED;
	/* stay connected so that our own exit is not what peers report */
	end = rel_now_ms() + (uint64_t)(o->release ? 60000 : o->linger_ms);
	while (rel_now_ms() < end && !(o->release && *o->release))
		usleep(2000);
	free(a);
	free(b);
	return ret == -9999 ? 2 : 0;
}

/* ------------------------------------------------------------------ */

struct pd_stats {
	int runs, survivors, named, wrong, hangs, late, unclean, setup;
	int ndet;
	uint64_t det[4096];
};

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

static void one_run(const struct pd_opts *o, int run, struct rel_report *rep,
		    struct pd_stats *st)
{
	struct pd_opts ro = *o;
	pid_t pids[REL_MAX_RANKS];
	int status[REL_MAX_RANKS], n = o->nranks, victim;
	uint64_t rnd = mix(o->seed + (uint64_t)run * 7919), t_kill, deadline;

	ro.seed = rnd;
	*o->release = 0;
	if (rel_fork_ranks(n, rank_loop, &ro, rep, pids, NULL)) {
		st->setup++;
		return;
	}
	/* all joined (or failed to) */
	deadline = rel_now_ms() + 30000;
	for (int r = 0; r < n; r++)
		while (rep[r].state < REL_JOINED && rel_now_ms() < deadline)
			usleep(1000);
	for (int r = 0; r < n; r++)
		if (rep[r].state != REL_JOINED) {
			printf("run %d: rank %d did not join: %s\n", run, r,
			       rep[r].msg);
			st->setup++;
			*o->release = 1;
			rel_wait(pids, n, rel_now_ms() + 10000, status);
			return;
		}
	usleep((useconds_t)(mix(rnd + 1) % (uint64_t)(o->max_delay_ms + 1)) *
	       1000);
	victim = (int)(mix(rnd + 2) % (uint64_t)n);
	kill(pids[victim], SIGKILL);
	t_kill = rel_now_ms();
	st->runs++;
	deadline = t_kill + (uint64_t)o->timeout_s * 1000 + 3000;
	for (int r = 0; r < n; r++)
		while (r != victim && rep[r].state != REL_REPORTED &&
		       rel_now_ms() < deadline)
			usleep(1000);
	for (int r = 0; r < n; r++) {
		uint64_t det;

		if (r == victim)
			continue;
		st->survivors++;
		if (rep[r].state != REL_REPORTED) {
			st->hangs++;
			printf("run %d: rank %d HUNG (victim rank %d, %d "
			       "iterations done)\n", run, r, victim, rep[r].iter);
			continue;
		}
		det = rep[r].t_err_ms > t_kill ? rep[r].t_err_ms - t_kill : 0;
		if (rep[r].ret == 0 || rep[r].ret == -9999) {
			st->wrong++;
			printf("run %d: rank %d: %s after the kill of rank %d\n",
			       run, r, rep[r].ret ? "WRONG RESULT" : "no error",
			       victim);
			continue;
		}
		if (rel_names_rank(rep[r].msg, victim)) {
			st->named++;
		} else {
			st->wrong++;
			printf("run %d: rank %d does not name rank %d: %s: %s\n",
			       run, r, victim, hop_err_name(rep[r].ret),
			       rep[r].msg);
		}
		if (det > (uint64_t)o->timeout_s * 1000 + 1000) {
			st->late++;
			printf("run %d: rank %d noticed after %llu ms\n", run, r,
			       (unsigned long long)det);
		}
		if (st->ndet < (int)(sizeof(st->det) / sizeof(st->det[0])))
			st->det[st->ndet++] = det;
		if (o->verbose)
			printf("run %d: rank %d (victim %d, after %d iters): %s "
			       "in %llu ms: %s\n", run, r, victim, rep[r].iter,
			       hop_err_name(rep[r].ret),
			       (unsigned long long)det, rep[r].msg);
	}
	*o->release = 1;
	st->hangs += rel_wait(pids, n, rel_now_ms() + 10000, status);
	for (int r = 0; r < n; r++)
		if (r != victim && status[r] != 0 && status[r] != -1) {
			st->unclean++;
			printf("run %d: rank %d exited with status %d\n", run, r,
			       status[r]);
		}
}

static int local_mode(struct pd_opts *o)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * REL_MAX_RANKS);
	struct pd_stats *st = calloc(1, sizeof(*st));
	uint64_t t0 = rel_now_ms();
	int ok;

	o->release = rel_shared(sizeof(int));
	for (int run = 0; run < o->runs; run++)
		one_run(o, run, rep, st);
	qsort(st->det, (size_t)st->ndet, sizeof(st->det[0]), cmp_u64);
	printf("peer_death %s: %d ranks, runs %d, survivors %d, named the dead "
	       "rank %d, wrong messages %d, hangs %d, late %d, unclean exits "
	       "%d, setup failures %d; detection median %llu ms, max %llu ms "
	       "(HOP_TIMEOUT %d s; %.1f s)\n", o->transport, o->nranks,
	       st->runs, st->survivors, st->named, st->wrong, st->hangs,
	       st->late, st->unclean, st->setup,
	       (unsigned long long)(st->ndet ? st->det[st->ndet / 2] : 0),
	       (unsigned long long)(st->ndet ? st->det[st->ndet - 1] : 0),
	       o->timeout_s, (rel_now_ms() - t0) / 1000.0);
	ok = st->runs == o->runs && st->named == st->survivors && !st->wrong &&
	     !st->hangs && !st->late && !st->unclean && !st->setup;
	free(st);
	return ok ? 0 : 1;
}

/* ------------------------------------------------------------------ */

static int env_rank(hop_comm_t **c, struct rel_report *rep)
{
	int ret = hop_comm_init_env(c);

	if (ret) {
		rep->ret = ret;
		snprintf(rep->msg, sizeof(rep->msg), "%s", hop_last_init_error());
		rep->state = REL_REPORTED;
	} else {
		rep->state = REL_JOINED;
	}
	return ret;
}

static int env_mode(struct pd_opts *o, int victim, int delay_ms,
		    const char *link_cmd)
{
	struct rel_report *rep = rel_shared(sizeof(*rep));
	const char *rs = getenv("HOP_RANK");
	int rank = rs ? atoi(rs) : -1, st = -1;
	uint64_t t_join, deadline;
	pid_t pid;

	if (rank < 0) {
		fprintf(stderr, "peer_death --env: HOP_RANK is not set\n");
		return 2;
	}
	fflush(NULL);
	if ((pid = fork()) == 0) {
		hop_comm_t *c = NULL;

		if (env_rank(&c, rep))
			_exit(3);
		int code = rank_loop(c, rank, hop_comm_size(c), rep, o);

		hop_comm_destroy(c);
		_exit(code);
	}
	deadline = rel_now_ms() + 120000;
	while (rep->state < REL_JOINED && rel_now_ms() < deadline)
		usleep(1000);
	t_join = rel_now_ms();
	if (rep->state != REL_JOINED) {
		printf("PD rank %d: did not join: %s\n", rank, rep->msg);
		kill(pid, SIGKILL);
		rel_wait(&pid, 1, rel_now_ms() + 5000, &st);
		return 1;
	}
	if (rank == victim) {
		usleep((useconds_t)delay_ms * 1000);
		if (link_cmd) {
			int rc = system(link_cmd);

			printf("PD rank %d (victim): ran '%s' (exit %d) after %d "
			       "ms\n", rank, link_cmd, rc, delay_ms);
			/* our own rank is cut off: it must fail too */
			deadline = rel_now_ms() + (uint64_t)o->timeout_s * 1000 + 5000;
			while (rep->state != REL_REPORTED && rel_now_ms() < deadline)
				usleep(1000);
			printf("PD rank %d (victim, cut off): %s: %s\n", rank,
			       rep->state == REL_REPORTED ? hop_err_name(rep->ret)
							  : "HUNG",
			       rep->msg);
			kill(pid, SIGKILL);
			rel_wait(&pid, 1, rel_now_ms() + 5000, &st);
			return 0;
		}
		kill(pid, SIGKILL);
		printf("PD rank %d (victim): killed after %d ms, %d iterations\n",
		       rank, delay_ms, rep->iter);
		rel_wait(&pid, 1, rel_now_ms() + 5000, &st);
		return 0;
	}
	deadline = t_join + (uint64_t)delay_ms + (uint64_t)o->timeout_s * 1000 +
		   3000;
	while (rep->state != REL_REPORTED && rel_now_ms() < deadline)
		usleep(1000);
	if (rep->state != REL_REPORTED) {
		printf("PD rank %d victim %d: HUNG (%d iterations)\n", rank,
		       victim, rep->iter);
		kill(pid, SIGKILL);
		rel_wait(&pid, 1, rel_now_ms() + 5000, &st);
		return 1;
	}
	int named = rep->ret && rel_names_rank(rep->msg, victim);
	long det = (long)(rep->t_err_ms - t_join) - delay_ms;

	printf("PD rank %d victim %d: %s after %ld ms, names rank %d: %s (%s)\n",
	       rank, victim, hop_err_name(rep->ret), det, victim,
	       named ? "yes" : "NO", rep->msg);
	rel_wait(&pid, 1, rel_now_ms() + (uint64_t)o->linger_ms + 10000, &st);
	return named ? 0 : 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: peer_death [-n RANKS] [-r RUNS] [-t tcp|shm] [--timeout S]\n"
		"                  [--delay MS] [--seed X] [-v]\n"
		"       peer_death --env --victim V --seed X [--delay MS] "
		"[--link CMD] [--timeout S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "timeout", 1, NULL, 'T' }, { "delay", 1, NULL, 'd' },
		{ "seed", 1, NULL, 's' },    { "env", 0, NULL, 'e' },
		{ "victim", 1, NULL, 'V' },  { "link", 1, NULL, 'L' },
		{ "iters", 1, NULL, 'i' },   { NULL, 0, NULL, 0 },
	};
	struct pd_opts o = { .nranks = 4, .runs = 10, .timeout_s = 5,
			     .max_delay_ms = 300, .transport = "shm",
			     .linger_ms = 3000 };
	int env = 0, victim = -1, delay = -1, c;
	const char *link_cmd = NULL;
	char tbuf[32];

	while ((c = getopt_long(argc, argv, "n:r:t:v", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o.nranks = atoi(optarg); break;
		case 'r': o.runs = atoi(optarg); break;
		case 't': o.transport = optarg; break;
		case 'v': o.verbose = 1; break;
		case 'T': o.timeout_s = atoi(optarg); break;
		case 'd': delay = atoi(optarg); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'e': env = 1; break;
		case 'V': victim = atoi(optarg); break;
		case 'L': link_cmd = optarg; break;
		case 'i': o.iters = atoi(optarg); break;
		default: usage();
		}
	}
	if (o.nranks < 2 || o.nranks > REL_MAX_RANKS || o.runs < 1 ||
	    o.timeout_s < 1)
		usage();
	snprintf(tbuf, sizeof(tbuf), "%d", o.timeout_s);
	setenv("HOP_TIMEOUT", tbuf, 1);
	if (!getenv("HOP_DEBUG"))
		setenv("HOP_DEBUG", "none", 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (env) {
		if (victim < 0 || o.seed == 0)
			usage(); /* every rank must draw the same steps */
		o.seed = mix(o.seed);
		return env_mode(&o, victim, delay < 0 ? 500 : delay, link_cmd);
	}
	if (delay >= 0)
		o.max_delay_ms = delay;
	if (!o.seed)
		o.seed = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 20;
	setenv("HOP_TRANSPORT", o.transport, 1);
	if (!getenv("HOP_SOCKET_IFNAME"))
		setenv("HOP_SOCKET_IFNAME", "lo", 1);
	printf("peer_death %s: %d ranks, %d runs, seed 0x%llx\n", o.transport,
	       o.nranks, o.runs, (unsigned long long)o.seed);
	return local_mode(&o);
}
