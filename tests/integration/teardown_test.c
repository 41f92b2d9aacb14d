/*
 * teardown_test.c - the usual end of a program: some collectives, a last
 * hop_barrier(), hop_comm_destroy(). Run by teardown.sh through hop-run.
 *
 * A rank leaves the last barrier as soon as its own messages arrived and
 * may close its communicator while a slower rank is still in the barrier
 * and owes it eager credits for the barrier's message. That credit return
 * must not fail the slower rank's barrier: hop skips messages only a live
 * peer needs once the provider reports the peer closed (peer_closed).
 * With HOP_EAGER_SLOTS=2 every received message makes a credit return due,
 * so each run crosses that window on every rank.
 *
 * usage: teardown_test [ROUNDS]   (collective rounds before the last
 * barrier; default 1). Exit 0 and "teardown_test: rank R passed" when
 * every call succeeded.
 */
#include <stdio.h>
#include <stdlib.h>

#include <hop/hop.h>

static void check(hop_comm_t *comm, int rank, const char *what, int ret)
{
	if (ret) {
		fprintf(stderr, "teardown_test rank %d: %s: %s: %s\n", rank, what,
			hop_err_name(ret), comm ? hop_comm_last_error(comm)
						: hop_last_init_error());
		exit(1);
	}
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	hop_comm_t *comm = NULL;
	int rank = -1, size;
	double v;

	check(comm, rank, "hop_comm_init_env", hop_comm_init_env(&comm));
	rank = hop_comm_rank(comm);
	size = hop_comm_size(comm);
	for (int i = 0; i < rounds; i++) {
		v = rank + 1;
		check(comm, rank, "hop_allreduce",
		      hop_allreduce(comm, &v, &v, 1, HOP_FLOAT64, HOP_SUM));
		if (v != size * (size + 1) / 2.0) {
			fprintf(stderr, "teardown_test rank %d: allreduce gave %g, "
				"expected %g\n", rank, v, size * (size + 1) / 2.0);
			return 1;
		}
		check(comm, rank, "hop_barrier", hop_barrier(comm));
	}
	check(comm, rank, "last hop_barrier", hop_barrier(comm));
	check(comm, rank, "hop_comm_destroy", hop_comm_destroy(comm));
	printf("teardown_test: rank %d passed\n", rank);
	return 0;
}
