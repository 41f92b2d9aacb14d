/*
 * coll_runahead.c - loops of rooted collectives whose receivers are slow:
 * the ranks that only send must not run ahead without limit (coll_api.c,
 * HOP_ROOTED_SYNC), so the receivers' unexpected messages stay within
 * HOP_UNEXPECTED_MAX (ux_flood.sh sets its minimum, 4M).
 *
 *   bounded   CALLS calls of 4 KiB each of Reduce (sum to root 0),
 *             Broadcast (from the last rank), Gather (to root 0),
 *             Scatter (from the last rank) and ireduce + wait; the
 *             receiving ranks nap NAP_US before each call. CALLS x 4 KiB is
 *             twice HOP_UNEXPECTED_MAX. Every result is checked bit
 *             for bit against values computed here from rank and call.
 *   unbounded the Reduce loop alone, run with HOP_ROOTED_SYNC=0, the root
 *             napping NAP_UNBOUNDED_US before each call: a
 *             receiver (root 0, or an inner rank of the tree) must fail
 *             with HOP_ERR_NO_MEMORY naming HOP_UNEXPECTED_MAX (what the
 *             bounded loop would meet without the barriers; ux_flood.sh
 *             checks that one did), and every other rank with that
 *             rank's close (HOP_ERR_PEER_FAILED, or HOP_ERR_COMM_FAILED
 *             for a failure that reached it through another rank), never
 *             at HOP_TIMEOUT.
 *
 * Usage (under hop-run, 2-8 ranks, the schedule path: HOP_FBOX=0 on shm):
 *   coll_runahead bounded|unbounded
 * Prints "coll_runahead: rank R passed" on success.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/hop.h>

#define TEST_NAME "coll_runahead"
static hop_comm_t *comm;
static int rank, size;
#include "rank_check.h"

#define COUNT 1024 /* int32: 4 KiB, an eager message */
#define CALLS 2048
#define NAP_US 20
/* the unbounded root naps longer: the sender must get HOP_UNEXPECTED_MAX
 * ahead within CALLS even when the tests beside it slow it down (at 20 us
 * a loaded machine once let the root keep up) */
#define NAP_UNBOUNDED_US 200

static void nap_us(long us)
{
	struct timespec ts = { 0, us * 1000 };

	nanosleep(&ts, NULL);
}

static void nap(void)
{
	nap_us(NAP_US);
}

static int32_t val(int r, int call, int i)
{
	return (int32_t)((uint32_t)r * 2654435761u ^ (uint32_t)call * 40503u ^
			 (uint32_t)i * 97u);
}

static void fill(int32_t *b, int r, int call)
{
	for (int i = 0; i < COUNT; i++)
		b[i] = val(r, call, i);
}

static void check(const int32_t *b, int r, int call, const char *what)
{
	for (int i = 0; i < COUNT; i++)
		if (b[i] != val(r, call, i))
			FAIL("%s call %d: element %d is %d, want %d (rank %d's)",
			     what, call, i, b[i], val(r, call, i), r);
}

static void check_sum(const int32_t *b, int call, const char *what)
{
	for (int i = 0; i < COUNT; i++) {
		uint32_t want = 0;

		for (int r = 0; r < size; r++)
			want += (uint32_t)val(r, call, i);
		if ((uint32_t)b[i] != want)
			FAIL("%s call %d: element %d is %d, want %d", what, call,
			     i, b[i], (int32_t)want);
	}
}

static void loop_reduce(int icall, int32_t *in, int32_t *out)
{
	const char *what = icall ? "ireduce" : "reduce";

	for (int c = 0; c < CALLS; c++) {
		fill(in, rank, c);
		if (rank == 0)
			nap();
		if (icall) {
			hop_request_t *req;

			OK(hop_ireduce(comm, in, out, COUNT, HOP_INT32, HOP_SUM,
				       0, &req));
			OK(hop_wait(&req, NULL));
		} else {
			OK(hop_reduce(comm, in, out, COUNT, HOP_INT32, HOP_SUM,
				      0));
		}
		if (rank == 0)
			check_sum(out, c, what);
	}
}

static void loop_broadcast(int32_t *buf)
{
	int root = size - 1;

	for (int c = 0; c < CALLS; c++) {
		if (rank == root)
			fill(buf, root, c);
		else
			nap();
		OK(hop_broadcast(comm, buf, COUNT, HOP_INT32, root));
		check(buf, root, c, "broadcast");
	}
}

static void loop_gather(int32_t *in, int32_t *all)
{
	for (int c = 0; c < CALLS; c++) {
		fill(in, rank, c);
		if (rank == 0)
			nap();
		OK(hop_gather(comm, in, all, COUNT, HOP_INT32, 0));
		for (int r = 0; rank == 0 && r < size; r++)
			check(all + (size_t)r * COUNT, r, c, "gather");
	}
}

static void loop_scatter(int32_t *all, int32_t *out)
{
	int root = size - 1;

	for (int c = 0; c < CALLS; c++) {
		if (rank == root)
			for (int r = 0; r < size; r++)
				fill(all + (size_t)r * COUNT, r, c);
		else
			nap();
		OK(hop_scatter(comm, all, out, COUNT, HOP_INT32, root));
		check(out, rank, c, "scatter");
	}
}

static void run_unbounded(int32_t *in, int32_t *out)
{
	int ret = 0;

	for (int c = 0; c < CALLS && !ret; c++) {
		fill(in, rank, c);
		if (rank == 0)
			nap_us(NAP_UNBOUNDED_US);
		ret = hop_reduce(comm, in, out, COUNT, HOP_INT32, HOP_SUM, 0);
	}
	/* A receiver overflows (the root, or first an inner rank of a tree:
	 * ux_flood.sh checks that one did); the others learn it from its
	 * close, the senders through the credits it no longer returns, not
	 * from their own deadline. */
	if (ret == HOP_ERR_NO_MEMORY &&
	    !strstr(hop_comm_last_error(comm), "HOP_UNEXPECTED_MAX"))
		FAIL("reduce loop without barriers: HOP_ERR_NO_MEMORY not "
		     "naming HOP_UNEXPECTED_MAX");
	if (ret != HOP_ERR_NO_MEMORY && ret != HOP_ERR_PEER_FAILED &&
	    ret != HOP_ERR_COMM_FAILED)
		FAIL("reduce loop without barriers: %s, want "
		     "HOP_ERR_NO_MEMORY, HOP_ERR_PEER_FAILED or "
		     "HOP_ERR_COMM_FAILED", hop_err_name(ret));
}

int main(int argc, char **argv)
{
	int32_t *in, *out, *all;
	int bounded;

	if (argc != 2 ||
	    (strcmp(argv[1], "bounded") && strcmp(argv[1], "unbounded"))) {
		fprintf(stderr, "usage: coll_runahead bounded|unbounded\n");
		return 2;
	}
	bounded = !strcmp(argv[1], "bounded");
	rank = -1;
	if (hop_comm_init_env(&comm) != HOP_SUCCESS) {
		fprintf(stderr, "coll_runahead: init failed: %s\n",
			hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	size = hop_comm_size(comm);
	in = calloc(COUNT, sizeof(*in));
	out = calloc(COUNT, sizeof(*out));
	all = calloc((size_t)size * COUNT, sizeof(*all));
	if (!in || !out || !all)
		FAIL("out of memory");
	if (bounded) {
		loop_reduce(0, in, out);
		loop_broadcast(out);
		loop_gather(in, all);
		loop_scatter(all, out);
		loop_reduce(1, in, out);
		OK(hop_barrier(comm));
	} else {
		run_unbounded(in, out);
	}
	printf("coll_runahead: rank %d passed\n", rank);
	free(in);
	free(out);
	free(all);
	hop_comm_destroy(comm);
	return 0;
}
