/*
 * failures.c - what NCCL sees when things go wrong, which must be an error
 * result, never a hang: a peer that exits mid-traffic without closing
 * (--die-after), and peers that never come, where connect and accept must
 * fail once HOP_TIMEOUT has passed (--timeouts, run with a small one).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/*
 * Rank 0's verdict on its traffic once rank 1 has died: the run must have
 * stopped on a plugin call that reported the peer (or the network) failed,
 * not on wrong data, a deadline, or by finishing as if nothing happened.
 */
int peer_died(struct harness *h, int traffic_rc)
{
	if (traffic_rc == 0)
		FAIL("rank 1 died after %d receives, yet every transfer "
		     "completed", h->o.die_after);
	if (h_last_res != ncclRemoteError && h_last_res != ncclSystemError)
		FAIL("rank 1 died, and the run failed for another reason "
		     "(last plugin result %d)", (int)h_last_res);
	printf("nccl_net_test r0: rank 1 died mid-traffic: a plugin call "
	       "returned %s, as it must\n", h_last_res == ncclRemoteError ?
	       "ncclRemoteError" : "ncclSystemError");
	return 0;
}

/* Call connect (@handle) or accept (@l) until it stops saying "later". */
static int until_result(struct harness *h, void *l, void *handle,
			const char *what)
{
	uint64_t t0 = now_ns();
	void *comm = NULL;
	char warn[H_WARN_LEN];
	ncclResult_t r;

	h_quiet = 1;
	do {
		if (deadline_passed(h)) {
			h_quiet = 0;
			FAIL("%s with no peer neither failed nor connected "
			     "before the harness deadline", what);
		}
		usleep(2000);
		r = handle ? h->net->connect(0, handle, &comm, NULL)
			   : h->net->accept(l, &comm, NULL);
	} while (r == ncclSuccess && !comm);
	h_quiet = 0;
	if (r == ncclSuccess || comm)
		FAIL("%s with no peer returned a comm", what);
	/* (a connect may instead meet a stranger who took the freed port) */
	if (r != ncclSystemError && !(handle && r == ncclRemoteError))
		FAIL("%s with no peer returned %d, want ncclSystemError (%d)",
		     what, (int)r, (int)ncclSystemError);
	h_last_warn(warn);
	printf("nccl_net_test: %s with no peer failed after %.1f s: %s\n",
	       what, (double)(now_ns() - t0) / 1e9, warn);
	return 0;
}

int run_timeouts(struct harness *h)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE] = { 0 };
	void *l = NULL;

	/* a listener nobody connects to */
	CHECK_RES(h->net->listen(0, handle, &l));
	if (until_result(h, l, NULL, "accept"))
		return -1;
	CHECK_RES(h->net->closeListen(l));
	/* a handle whose listener is gone: closeListen waits it out first */
	CHECK_RES(h->net->listen(0, handle, &l));
	CHECK_RES(h->net->closeListen(l));
	return until_result(h, NULL, handle, "connect");
}

/*
 * Teardown must not wait for HOP_TIMEOUT (the script sets a long one):
 * closeListen of a listen nobody connected to returns at once, and a
 * connect NCCL abandons after its first call (to a listener that is gone)
 * holds neither the unload that follows nor the process's exit; the
 * script times the whole process.
 */
int run_teardown(struct harness *h)
{
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE] = { 0 };
	void *l = NULL, *s = NULL;
	uint64_t t0 = now_ns();
	double secs;

	CHECK_RES(h->net->listen(0, handle, &l));
	CHECK_RES(h->net->closeListen(l));
	secs = (double)(now_ns() - t0) / 1e9;
	if (secs > 5)
		FAIL("closeListen of a listen nobody connected to took %.1f s",
		     secs);
	printf("nccl_net_test: closeListen with no peer returned after "
	       "%.2f s\n", secs);
	CHECK_RES(h->net->connect(0, handle, &s, NULL));
	if (s)
		FAIL("connect to a closed listen returned a comm");
	printf("nccl_net_test: a connect left unfinished; unloading\n");
	return 0;
}
