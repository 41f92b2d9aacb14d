/*
 * test_relay_env.c - what hop_relay() takes from the environment: with
 * HOP_TOPO unset a NULL path is the direct one (docs/config.md: "unset:
 * flat"); HOP_TOPO and HOP_PROFILE are read once per communicator, so
 * files changed after the first relay do not change (or break) later
 * plans. Forked ranks, data checked byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "rel.h"

enum { LEN = 100003 };

static uint8_t pat(size_t i)
{
	return (uint8_t)(i * 13 + 7);
}

/* A routed relay of LEN bytes from @src to @dst; aux[0] the data check
 * at the destination (1 elsewhere). */
static int relay_routed(hop_comm_t *c, int rank, int src, int dst,
			struct rel_report *rep)
{
	uint8_t *buf = malloc(LEN);
	int ret;

	for (size_t i = 0; i < LEN; i++)
		buf[i] = rank == src ? pat(i) : 0;
	ret = hop_relay(c, rank == src || rank == dst ? buf : NULL, LEN, src,
			dst, NULL, 0, NULL);
	rep->aux[0] = 1;
	if (rank == dst)
		for (size_t i = 0; i < LEN; i++)
			if (buf[i] != pat(i))
				rep->aux[0] = 0;
	free(buf);
	return ret;
}

static int report(hop_comm_t *c, struct rel_report *rep, int ret,
		  const char *what)
{
	rep->ret = ret;
	if (ret)
		snprintf(rep->msg, sizeof(rep->msg), "%s: %s", what,
			 hop_comm_last_error(c));
	rep->state = REL_REPORTED;
	return 0;
}

/* ------------------------------------------------------------------ */
/* HOP_TOPO unset: flat                                                */

static int flat_rank(hop_comm_t *c, int rank, int n, struct rel_report *rep,
		     void *arg)
{
	hop_relay_plan_t pl;
	int ret;

	(void)n;
	(void)arg;
	if ((ret = hop_relay_plan(c, LEN, 0, 1, NULL, 0, NULL, &pl)))
		return report(c, rep, ret, "plan");
	rep->aux[1] = pl.npath == 2 && pl.path[0] == 0 && pl.path[1] == 1 &&
		      pl.position == rank;
	return report(c, rep, relay_routed(c, rank, 0, 1, rep), "relay");
}

static void t_flat_without_topo(void **s)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * 2);
	pid_t pids[2];
	int st[2];

	(void)s;
	unsetenv("HOP_TOPO");
	assert_int_equal(rel_fork_ranks(2, flat_rank, NULL, rep, pids, NULL),
			 0);
	assert_int_equal(rel_wait(pids, 2, rel_now_ms() + 30000, st), 0);
	for (int r = 0; r < 2; r++) {
		if (rep[r].ret)
			fail_msg("rank %d: %s (%s)", r, rep[r].msg,
				 hop_err_name(rep[r].ret));
		assert_int_equal(rep[r].aux[1], 1);     /* path {0, 1} */
	}
	assert_int_equal(rep[1].aux[0], 1);             /* data */
	munmap(rep, sizeof(*rep) * 2);
}

/* ------------------------------------------------------------------ */
/* HOP_TOPO and HOP_PROFILE read once                                  */

/* chain 0-1-2, and a far slower shortcut 0-2 */
static const char chain[] = "hop-topo 1\nranks 3\nlink 0 1 2 1.0\n"
			    "link 1 2 2 1.0\nlink 0 2 500 0.01\n";
static const char profile[] =
	"hop-link-profile 1\nprovider tcp\nnranks 2\n"
	"pair 0 1 tcp 10 2 9 1.2\nend\n";

struct files {
	char topo[64], prof[64];
};

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	fclose(f);
}

static int same_plan(const hop_relay_plan_t *a, const hop_relay_plan_t *b)
{
	return a->npath == b->npath &&
	       !memcmp(a->path, b->path, sizeof(int) * (size_t)a->npath) &&
	       a->chunks == b->chunks && a->predicted == b->predicted &&
	       !strcmp(a->model, b->model);
}

/* Every rank plans 0 -> 2 (routed over the chain); rank 0 then breaks
 * both files; every rank plans again (the same plan) and relays. aux[1]:
 * the first plan is the chain, aux[2]: the second equals it. */
static int once_rank(hop_comm_t *c, int rank, int n, struct rel_report *rep,
		     void *arg)
{
	const struct files *f = arg;
	hop_relay_plan_t p1, p2;
	int ret;

	(void)n;
	if ((ret = hop_relay_plan(c, LEN, 0, 2, NULL, 0, NULL, &p1)))
		return report(c, rep, ret, "first plan");
	rep->aux[1] = p1.npath == 3 && p1.path[1] == 1 &&
		      strstr(p1.model, f->topo) != NULL;
	snprintf(rep->msg, sizeof(rep->msg), "first plan: %d ranks, model %s",
		 p1.npath, p1.model);
	if ((ret = hop_barrier(c)))
		return report(c, rep, ret, "barrier");
	if (rank == 0) {
		write_file(f->topo, "hop-topo 1\nranks 3\nlink 0 2 oops\n");
		unlink(f->prof);
	}
	if ((ret = hop_barrier(c)))
		return report(c, rep, ret, "barrier");
	if ((ret = hop_relay_plan(c, LEN, 0, 2, NULL, 0, NULL, &p2)))
		return report(c, rep, ret, "plan after the files changed");
	rep->aux[2] = same_plan(&p1, &p2);
	return report(c, rep, relay_routed(c, rank, 0, 2, rep), "relay");
}

static void t_env_read_once(void **s)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * 3);
	struct files f;
	pid_t pids[3];
	int st[3];

	(void)s;
	snprintf(f.topo, sizeof(f.topo), "/tmp/hop-relay-env-%d.topo",
		 (int)getpid());
	snprintf(f.prof, sizeof(f.prof), "/tmp/hop-relay-env-%d.prof",
		 (int)getpid());
	write_file(f.topo, chain);
	write_file(f.prof, profile);
	setenv("HOP_TOPO", f.topo, 1);
	setenv("HOP_PROFILE", f.prof, 1);
	setenv("HOP_TRANSPORT", "tcp", 1);
	assert_int_equal(rel_fork_ranks(3, once_rank, &f, rep, pids, NULL), 0);
	int hung = rel_wait(pids, 3, rel_now_ms() + 30000, st);

	unsetenv("HOP_TOPO");
	unsetenv("HOP_PROFILE");
	unsetenv("HOP_TRANSPORT");
	unlink(f.topo);
	unlink(f.prof);
	assert_int_equal(hung, 0);
	for (int r = 0; r < 3; r++) {
		print_message("  rank %d: %s: %s\n", r, hop_err_name(rep[r].ret),
			      rep[r].msg);
		assert_int_equal(rep[r].ret, 0);
		assert_int_equal(rep[r].aux[1], 1);     /* routed over HOP_TOPO */
		assert_int_equal(rep[r].aux[2], 1);     /* unchanged plan */
	}
	assert_int_equal(rep[2].aux[0], 1);             /* data */
	munmap(rep, sizeof(*rep) * 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_flat_without_topo),
		cmocka_unit_test(t_env_read_once),
	};

	rel_test_env();
	return cmocka_run_group_tests_name("relay environment", tests, NULL,
					   NULL) ? 1 : 0;
}
