/*
 * coll_fbox_fail.c - the fast boxes' failures, modes of coll_fbox
 * (coll_fbox.sh runs them):
 *
 *   coll_fbox mismatch  ranks disagree on a count: HOP_ERR_MISMATCH
 *             naming the ranks, on every rank, within the deadline.
 *   coll_fbox mismatch-across  the same with the others' count above
 *             1 KiB (they schedule it): caught by p2p's signature check.
 *   coll_fbox a2a-mismatch, a2a-mismatch-across  the same two with an
 *             AllToAll (its N blocks fill the slot).
 *   coll_fbox root-mismatch [late]  a 16-byte Broadcast where rank 1
 *             takes itself for the root and the others take rank 0: every
 *             rank fails (one whose neighbours shared its view on its next
 *             call), some with HOP_ERR_MISMATCH, none waits its deadline;
 *             late: rank 1 comes 100 ms late, so the reader that checks
 *             its header does so at its next call.
 *   coll_fbox late  the last rank is HOP_TIMEOUT + 1 s late: the
 *             others fail with HOP_ERR_TIMEOUT naming it; its next call
 *             fails at once (they published their failure).
 *   coll_fbox kill      the last rank dies; the others' AllReduce fails
 *             within the deadline (the script bounds the time).
 *   coll_fbox kill-cause  3 ranks: rank 2 dies, rank 1 meets the death
 *             in a receive from it, rank 0 in a Broadcast from rank 1,
 *             which fails without writing its slot: rank 0 must name
 *             rank 2, the dead rank, not rank 1, well inside the deadline.
 */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/hop.h>

#define TEST_NAME "coll_fbox"
static hop_comm_t *comm;
static int rank, nranks;
#include "rank_check.h"
#include "coll_fbox.h"
#include "../reliability/rel.h"

/* Rank 0 passes a count the others do not: every rank fails. With
 * @across, the others' count is above the fast boxes' 1 KiB, so they
 * take the scheduled path under the same sequence number. */
static int mismatch(int across, int a2a)
{
	static float in[512 * 4], out[512 * 4];
	size_t count = rank == 0 ? 2 : across ? 500 : 3;
	int rc;

	OK(hop_allreduce(comm, in, out, 1, HOP_FLOAT32, HOP_SUM));
	rc = a2a ? hop_alltoall(comm, in, out, count, HOP_FLOAT32)
		 : hop_allreduce(comm, in, out, count, HOP_FLOAT32, HOP_SUM);
	if (rc != HOP_ERR_MISMATCH && rc != HOP_ERR_COMM_FAILED)
		FAIL("mismatched counts returned %s", hop_err_name(rc));
	if (!strstr(hop_comm_last_error(comm), "rank 0") ||
	    (!across && !strstr(hop_comm_last_error(comm), "count 2")))
		FAIL("the message does not name rank 0 and its count 2");
	printf("coll_fbox: rank %d mismatch detected: %s\n", rank,
	       hop_err_name(rc));
	hop_comm_destroy(comm);
	return 0;
}

/* Ranks disagree on a small Broadcast's root: rank 1 publishes as a
 * root, rank 0 too. Every rank must fail without waiting its deadline;
 * a rank whose neighbours shared its view may pass the Broadcast and
 * fail on the next call, which waits on the ranks that failed. */
static int root_mismatch(int late)
{
	static uint8_t buf[16];
	int root = rank == 1 ? 1 : 0, rc;
	struct timespec t0, t1;

	OK(hop_allreduce(comm, buf, buf, 1, HOP_INT32, HOP_SUM));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (late && rank == 1)
		nap_us(100000);
	rc = hop_broadcast(comm, buf, sizeof(buf), HOP_UINT8, root);
	if (rc == HOP_SUCCESS)
		rc = hop_allreduce(comm, buf, buf, 1, HOP_INT32, HOP_SUM);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc != HOP_ERR_MISMATCH && rc != HOP_ERR_COMM_FAILED)
		FAIL("Broadcast with roots 0 and 1 returned %s",
		     hop_err_name(rc));
	if (t1.tv_sec - t0.tv_sec > 2)
		FAIL("the root mismatch took %lld s to show",
		     (long long)(t1.tv_sec - t0.tv_sec));
	printf("coll_fbox: rank %d root mismatch: %s (%s)\n", rank,
	       hop_err_name(rc), hop_comm_last_error(comm));
	hop_comm_destroy(comm);
	return 0;
}

/* The last rank comes a second after HOP_TIMEOUT: the others time out
 * naming it; its next call finds they failed, well before its own
 * deadline. */
static int late(void)
{
	int in = rank, out = 0, rc;
	struct timespec t0, t1;

	OK(hop_allreduce(comm, &in, &out, 1, HOP_INT32, HOP_SUM));
	if (rank == nranks - 1)
		nap_us((long)(atof(getenv("HOP_TIMEOUT") ? getenv("HOP_TIMEOUT")
					  : "60") * 1e6) + 1000000);
	rc = hop_allreduce(comm, &in, &out, 1, HOP_INT32, HOP_SUM);
	if (rank != nranks - 1 && (rc != HOP_ERR_TIMEOUT ||
				   !strstr(hop_comm_last_error(comm),
					   "waiting on rank")))
		FAIL("a late rank gave %s, not a timeout naming it",
		     hop_err_name(rc));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = hop_allreduce(comm, &in, &out, 1, HOP_INT32, HOP_SUM);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc == HOP_SUCCESS || t1.tv_sec - t0.tv_sec > 1)
		FAIL("AllReduce after the others failed: %s after %lld s",
		     hop_err_name(rc), (long long)(t1.tv_sec - t0.tv_sec));
	printf("coll_fbox: rank %d late peer: %s\n", rank, hop_err_name(rc));
	hop_comm_destroy(comm);
	return 0;
}

/* The last rank dies between two AllReduces. */
static int kill_last(void)
{
	int in = rank, out = 0, rc;

	OK(hop_allreduce(comm, &in, &out, 1, HOP_INT32, HOP_SUM));
	if (rank == nranks - 1)
		abort();
	rc = hop_allreduce(comm, &in, &out, 1, HOP_INT32, HOP_SUM);
	if (rc == HOP_SUCCESS)
		FAIL("AllReduce with a dead rank succeeded");
	printf("coll_fbox: rank %d survived a dead peer: %s\n", rank,
	       hop_err_name(rc));
	hop_comm_destroy(comm);
	return 0;
}

/* Rank 2 dies; rank 1 fails in a receive from it, and rank 0, waiting on
 * rank 1's slot, learns only that rank 1 failed: it must still name 2. */
static int kill_cause(void)
{
	int in = rank, out = 0, v = 0, rc;

	if (nranks != 3)
		FAIL("kill-cause runs on 3 ranks, not %d", nranks);
	OK(hop_allreduce(comm, &in, &out, 1, HOP_INT32, HOP_SUM));
	if (rank == 2)
		abort();
	if (rank == 1)
		rc = hop_recv(comm, &v, sizeof(v), 2, 7, NULL);
	else
		rc = hop_broadcast(comm, &v, 1, HOP_INT32, 1);
	/* COMM_FAILED: this rank's provider found the death first, in a
	 * progress pass of the AllReduce; the message names it all the same */
	if (rc != HOP_ERR_PEER_FAILED && rc != HOP_ERR_COMM_FAILED)
		FAIL("expected HOP_ERR_PEER_FAILED or HOP_ERR_COMM_FAILED, "
		     "got %s", hop_err_name(rc));
	if (!rel_names_rank(hop_comm_last_error(comm), 2))
		FAIL("the failure does not name the dead rank 2");
	printf("coll_fbox: rank %d named the dead rank 2: %s\n", rank,
	       hop_comm_last_error(comm));
	hop_comm_destroy(comm);
	return 0;
}

int coll_fbox_failure(hop_comm_t *c, const char *mode, const char *arg)
{
	comm = c;
	rank = hop_comm_rank(c);
	nranks = hop_comm_size(c);
	if (!strcmp(mode, "mismatch") || !strcmp(mode, "a2a-mismatch"))
		return mismatch(0, mode[0] == 'a');
	if (!strcmp(mode, "mismatch-across") ||
	    !strcmp(mode, "a2a-mismatch-across"))
		return mismatch(1, mode[0] == 'a');
	if (!strcmp(mode, "kill"))
		return kill_last();
	if (!strcmp(mode, "kill-cause"))
		return kill_cause();
	if (!strcmp(mode, "late"))
		return late();
	if (!strcmp(mode, "root-mismatch"))
		return root_mismatch(!strcmp(arg, "late"));
	return -1;
}
