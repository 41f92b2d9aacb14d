/*
 * test_mismatch.c - ranks that call different collectives, counts, dtypes,
 * ops or roots must get HOP_ERR_MISMATCH naming the ranks and both
 * signatures: never a hang, never a wrong result.
 *
 * Each case forks the ranks of a fresh communicator; all but one ("the
 * odd rank") make the same call, the odd rank changes one thing. With 2
 * ranks both must get HOP_ERR_MISMATCH. With 4 ranks the ranks that
 * exchange data with the odd rank must get HOP_ERR_MISMATCH; ranks that
 * never talk to it may only learn it from their own deadline, so they must
 * fail too (MISMATCH, TIMEOUT or PEER_FAILED) within HOP_TIMEOUT, and at
 * least one rank must report the mismatch itself. Afterwards every rank's
 * next call returns HOP_ERR_COMM_FAILED at once, carrying the cause.
 * Both transports (tcp, shm).
 *
 * Different collectives are detected even when their schedules never
 * share a tag (allreduce vs allgather, vs barrier): a message of
 * collective #s that no receive takes is compared with the receiver's own
 * collective #s. A rank whose part of a rooted collective only sends (a
 * broadcast root, a reduce leaf) cannot learn of a disagreement before it
 * returns without an extra message on every correct call; in the cases
 * marked late_ok it may return success, and its next call must then fail
 * with HOP_ERR_MISMATCH naming the ranks and signatures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rel.h"

#define TIMEOUT_S 2

enum kind { K_ALLREDUCE, K_BROADCAST, K_REDUCE, K_ALLGATHER, K_REDSCAT,
	    K_BARRIER };

struct call {
	enum kind kind;
	size_t count;
	hop_dtype_t dtype;
	hop_op_t op;
	int root;
};

struct mm_case {
	const char *name;
	struct call all, odd;   /* every rank / the odd rank */
	int odd_rank;
	int late_ok;            /* send-only ranks learn it one call later */
};

static const struct mm_case cases[] = {
	{ "allreduce vs broadcast",
	  { K_ALLREDUCE, 1000, HOP_FLOAT32, HOP_SUM, 0 },
	  { K_BROADCAST, 1000, HOP_FLOAT32, HOP_SUM, 0 }, 1, 0 },
	{ "allreduce vs allgather",
	  { K_ALLREDUCE, 256, HOP_INT32, HOP_SUM, 0 },
	  { K_ALLGATHER, 256, HOP_INT32, HOP_SUM, 0 }, 0, 0 },
	{ "allreduce vs barrier",
	  { K_ALLREDUCE, 64, HOP_INT32, HOP_SUM, 0 },
	  { K_BARRIER, 0, HOP_INT32, HOP_SUM, 0 }, 1, 0 },
	{ "count 1000 vs 1001 (eager)",
	  { K_ALLREDUCE, 1000, HOP_FLOAT32, HOP_SUM, 0 },
	  { K_ALLREDUCE, 1001, HOP_FLOAT32, HOP_SUM, 0 }, 1, 0 },
	{ "count 1M vs 1M-1 (rendezvous)",
	  { K_ALLREDUCE, 1 << 20, HOP_FLOAT32, HOP_SUM, 0 },
	  { K_ALLREDUCE, (1 << 20) - 1, HOP_FLOAT32, HOP_SUM, 0 }, 1, 0 },
	{ "dtype f32 vs i32 (same size)",
	  { K_ALLREDUCE, 1000, HOP_FLOAT32, HOP_SUM, 0 },
	  { K_ALLREDUCE, 1000, HOP_INT32, HOP_SUM, 0 }, 1, 0 },
	{ "op sum vs max",
	  { K_ALLREDUCE, 1000, HOP_FLOAT64, HOP_SUM, 0 },
	  { K_ALLREDUCE, 1000, HOP_FLOAT64, HOP_MAX, 0 }, 1, 0 },
	{ "broadcast root 0 vs 1",
	  { K_BROADCAST, 5000, HOP_UINT8, HOP_SUM, 0 },
	  { K_BROADCAST, 5000, HOP_UINT8, HOP_SUM, 1 }, 1, 1 },
	{ "reduce root 0 vs 1",
	  { K_REDUCE, 300, HOP_INT64, HOP_SUM, 0 },
	  { K_REDUCE, 300, HOP_INT64, HOP_SUM, 1 }, 1, 1 },
	{ "reducescatter op sum vs min",
	  { K_REDSCAT, 100, HOP_FLOAT32, HOP_SUM, 0 },
	  { K_REDSCAT, 100, HOP_FLOAT32, HOP_MIN, 0 }, 0, 0 },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static int do_call(hop_comm_t *c, const struct call *k, void *a, void *b)
{
	switch (k->kind) {
	case K_ALLREDUCE:
		return hop_allreduce(c, a, b, k->count, k->dtype, k->op);
	case K_BROADCAST:
		return hop_broadcast(c, a, k->count, k->dtype, k->root);
	case K_REDUCE:
		return hop_reduce(c, a, b, k->count, k->dtype, k->op, k->root);
	case K_ALLGATHER:
		return hop_allgather(c, a, b, k->count, k->dtype);
	case K_REDSCAT:
		return hop_reducescatter(c, a, b, k->count, k->dtype, k->op);
	case K_BARRIER:
		return hop_barrier(c);
	}
	return HOP_ERR_INTERNAL;
}

struct run_arg {
	const struct mm_case *mc;
	volatile int *release;  /* set once every rank reported */
};

/* aux[0]: code of the call after the failure, aux[1]: its duration (ms),
 * aux[2]: its message carries the first cause, aux[3]: the mismatched
 * call returned success and ret is the next call's */
static int mm_rank(hop_comm_t *c, int rank, int n, struct rel_report *rep,
		   void *arg)
{
	const struct mm_case *mc = ((struct run_arg *)arg)->mc;
	const struct call *k = rank == mc->odd_rank ? &mc->odd : &mc->all;
	size_t bytes = (size_t)(8u << 20) * (size_t)n;
	void *a = calloc(1, bytes), *b = calloc(1, bytes);
	uint64_t t0;
	int ret;

	if (!a || !b)
		abort();
	/* a correct collective first: the comm works before the mismatch */
	ret = hop_barrier(c);
	if (!ret)
		ret = do_call(c, k, a, b);
	rep->aux[3] = 0;
	if (!ret && mc->late_ok) {
		rep->aux[3] = 1;
		ret = hop_allreduce(c, a, b, 4, HOP_INT32, HOP_SUM);
	}
	rep->ret = ret;
	rep->t_err_ms = rel_now_ms();
	snprintf(rep->msg, sizeof(rep->msg), "%s", hop_comm_last_error(c));
	/* the failed state: the next call fails at once with the cause */
	t0 = rel_now_ms();
	rep->aux[0] = hop_allreduce(c, a, b, 4, HOP_INT32, HOP_SUM);
	rep->aux[1] = (int)(rel_now_ms() - t0);
	rep->aux[2] = strstr(hop_comm_last_error(c), "communicator has failed") &&
		      strlen(hop_comm_last_error(c)) > 40;
	rep->state = REL_REPORTED;
	/* stay until every rank has reported: our own exit must not be what
	 * the others report */
	t0 = rel_now_ms();
	while (!*((struct run_arg *)arg)->release &&
	       rel_now_ms() < t0 + TIMEOUT_S * 1000 + 5000)
		usleep(1000);
	free(a);
	free(b);
	(void)n;
	return 0;
}

static void run_case(const struct mm_case *mc, int nranks, const char *tr)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * REL_MAX_RANKS);
	volatile int *release = rel_shared(sizeof(int));
	struct run_arg ra = { mc, release };
	pid_t pids[REL_MAX_RANKS];
	int st[REL_MAX_RANKS], hung, mism = 0, bad = 0;
	uint64_t deadline;

	setenv("HOP_TRANSPORT", tr, 1);
	assert_int_equal(rel_fork_ranks(nranks, mm_rank, &ra, rep, pids, NULL), 0);
	deadline = rel_now_ms() + TIMEOUT_S * 1000 + 3000;
	for (int r = 0; r < nranks; r++)
		while (rep[r].state != REL_REPORTED && rel_now_ms() < deadline)
			usleep(1000);
	*release = 1;
	hung = rel_wait(pids, nranks, rel_now_ms() + 5000, st);
	for (int r = 0; r < nranks; r++) {
		const char *verdict = "ok";
		int code = rep[r].ret;

		if (rep[r].state != REL_REPORTED) {
			verdict = "HUNG";
			bad++;
		} else if (code == 0) {
			verdict = "NOT DETECTED (returned success)";
			bad++;
		} else if (code == HOP_ERR_MISMATCH) {
			mism++;
			/* p2p names the signatures; the fast boxes (one
			 * host, shm) name both ranks' calls */
			if ((!strstr(rep[r].msg, "signature") &&
			     !strstr(rep[r].msg, "mismatched collectives")) ||
			    !(rel_names_rank(rep[r].msg, mc->odd_rank) ||
			      r == mc->odd_rank)) {
				verdict = "message lacks the ranks/signatures";
				bad++;
			}
		} else if (nranks == 2 || (code != HOP_ERR_TIMEOUT &&
					   code != HOP_ERR_PEER_FAILED)) {
			verdict = "wrong code";
			bad++;
		}
		if (rep[r].state == REL_REPORTED && code &&
		    (rep[r].aux[0] != HOP_ERR_COMM_FAILED || rep[r].aux[1] > 100 ||
		     !rep[r].aux[2])) {
			verdict = "later call not COMM_FAILED at once with the cause";
			bad++;
		}
		print_message("  %s %s rank %d%s: %s%s: %s -> %s\n", tr,
			      mc->name, r, r == mc->odd_rank ? " (odd)" : "",
			      rep[r].aux[3] ? "success, then " : "",
			      hop_err_name(code), rep[r].msg, verdict);
	}
	munmap(rep, sizeof(*rep) * REL_MAX_RANKS);
	munmap((void *)release, sizeof(int));
	unsetenv("HOP_TRANSPORT");
	if (hung || bad || !mism)
		fail_msg("%s, %d ranks on %s: %d hung, %d bad, %d reported the "
			 "mismatch", mc->name, nranks, tr, hung, bad, mism);
}

struct tcase {
	const struct mm_case *mc;
	int nranks;
	const char *tr;
};

static void t_case(void **state)
{
	const struct tcase *t = *state;

	run_case(t->mc, t->nranks, t->tr);
}

int main(void)
{
	static struct tcase tc[NCASES * 4];
	static char names[NCASES * 4][96];
	struct CMUnitTest tests[NCASES * 4];
	static const char *const trs[] = { "shm", "tcp" };
	size_t nt = 0;

	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_DEBUG", "none", 1);
	setenv("HOP_TIMEOUT", "2", 1);
	unsetenv("HOP_BOOTSTRAP_FD");
	unsetenv("HOP_ALGO");
	for (size_t i = 0; i < NCASES; i++)
		for (int t = 0; t < 2; t++)
			for (int n = 2; n <= 4; n += 2) {
				tc[nt] = (struct tcase){ &cases[i], n, trs[t] };
				snprintf(names[nt], sizeof(names[nt]),
					 "%s, %d ranks, %s", cases[i].name, n,
					 trs[t]);
				tests[nt] = (struct CMUnitTest){
					.name = names[nt], .test_func = t_case,
					.initial_state = &tc[nt] };
				nt++;
			}
	return _cmocka_run_group_tests("mismatch", tests, nt, NULL, NULL);
}
