/*
 * p2p_internal.c - the channel layer as collectives use it (internal
 * hop_p2p_* API) and its failure paths, one case per run (p2p.sh runs each
 * through hop-run with 2 ranks):
 *
 *   cb              completion callbacks (run from progress, once, never
 *                   inside isend/irecv), sends to self of every size,
 *                   contexts keep equal low tags apart, hop_p2p_wait_until
 *   mismatch-eager  signatures differ (eager): HOP_ERR_MISMATCH on both
 *   mismatch-rndv   the same above the eager size    ranks, both named
 *   timeout         a receive nobody sends: HOP_ERR_TIMEOUT naming it,
 *                   then HOP_ERR_COMM_FAILED
 *   abort           hop_comm_abort() from another thread ends a wait
 *   peer-exit       the peer exits: HOP_ERR_PEER_FAILED naming it
 *   direct          hop_recv's path without a request (eager_direct.c)
 *                   leaves a memory-polled message alone while a receive
 *                   posted before it, or an unexpected message, from the
 *                   same peer must come first (HOP_EAGER_POLL=1)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hop/hop.h>

#include "core/core.h"
#include "p2p/p2p_priv.h"

static hop_comm_t *comm;
static int rank;

#define TEST_NAME "p2p_internal"
#include "rank_check.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int in_post;
static int calls[8];

static void on_done(struct hop_p2p_req *r, void *arg)
{
	int i = (int)(intptr_t)arg;

	if (in_post)
		FAIL("callback %d ran inside isend/irecv", i);
	if (!r->done)
		FAIL("callback %d saw done == 0", i);
	calls[i]++;
}

static int all_called(void *arg)
{
	int n = *(int *)arg;

	for (int i = 0; i < n; i++)
		if (calls[i] != 1)
			return 0;
	return 1;
}

static void case_cb(void)
{
	struct comm_self {
		struct hop_p2p_req s, r;
	} self[2];
	static uint8_t big_s[100000], big_r[100000];
	uint8_t a[16] = "user", b[16] = "coll", ra[16], rb[16];
	struct hop_p2p_req rq[4];
	int peer = 1 - rank, n = 4;

	/* sends to self, small (copied at once) and large (held) */
	for (size_t i = 0; i < sizeof(big_s); i++)
		big_s[i] = (uint8_t)(i * 7);
	self[0].s.cb = self[0].r.cb = NULL;
	self[1].s.cb = self[1].r.cb = NULL;
	OK(hop_p2p_isend(comm, &self[0].s, rank, HOP_TAG(HOP_CTX_COLL, 3, 1),
			 a, 5, 9));
	if (!self[0].s.done)
		FAIL("small send to self not complete at once");
	OK(hop_p2p_isend(comm, &self[1].s, rank, HOP_TAG(HOP_CTX_COLL, 3, 2),
			 big_s, sizeof(big_s), 9));
	if (self[1].s.done)
		FAIL("large send to self complete before its receive");
	OK(hop_p2p_irecv(comm, &self[1].r, rank, HOP_TAG(HOP_CTX_COLL, 3, 2),
			 big_r, sizeof(big_r), 9));
	OK(hop_p2p_irecv(comm, &self[0].r, rank, HOP_TAG(HOP_CTX_COLL, 3, 1),
			 ra, sizeof(ra), 9));
	if (!self[0].r.done || !self[1].r.done || !self[1].s.done ||
	    self[0].r.bytes != 5 || memcmp(ra, "user", 5) ||
	    memcmp(big_r, big_s, sizeof(big_s)))
		FAIL("self messages wrong");

	/* same low tag 5 in two contexts: each matches its own context,
	 * although the coll receive is posted first and the user message
	 * is sent first */
	for (int i = 0; i < 4; i++) {
		rq[i].cb = on_done;
		rq[i].cb_arg = (void *)(intptr_t)i;
	}
	in_post = 1;
	OK(hop_p2p_irecv(comm, &rq[0], peer, HOP_TAG(HOP_CTX_COLL, 0, 5), rb,
			 sizeof(rb), 0));
	OK(hop_p2p_irecv(comm, &rq[1], peer, HOP_TAG(HOP_CTX_USER, 0, 5), ra,
			 sizeof(ra), 0));
	OK(hop_p2p_isend(comm, &rq[2], peer, HOP_TAG(HOP_CTX_USER, 0, 5), a,
			 5, 0));
	OK(hop_p2p_isend(comm, &rq[3], peer, HOP_TAG(HOP_CTX_COLL, 0, 5), b,
			 5, 0));
	in_post = 0;
	if (rq[2].done || rq[3].done)
		FAIL("requests with a callback reported done before it ran");
	OK(hop_p2p_wait_until(comm, all_called, &n, "four callbacks"));
	if (memcmp(ra, "user", 5) || memcmp(rb, "coll", 5))
		FAIL("contexts mixed up: user got '%.4s', coll got '%.4s'", ra,
		     rb);
	for (int i = 0; i < 4; i++)
		if (rq[i].status || calls[i] != 1)
			FAIL("request %d: status %d, %d callbacks", i,
			     rq[i].status, calls[i]);
}

/* Rank 0 sends with signature 0x1111, rank 1 receives with 0x2222. */
static void case_mismatch(size_t len)
{
	static uint8_t buf[200000];
	struct hop_p2p_req r = { .cb = NULL };
	uint64_t tag = HOP_TAG(HOP_CTX_COLL, 7, 3);
	const char *msg;
	int ret;

	if (rank == 0) {
		OK(hop_p2p_isend(comm, &r, 1, tag, buf, len, 0x1111));
		ret = hop_p2p_wait(comm, &r);
		if (len > 8192) {
			if (ret != HOP_ERR_MISMATCH)
				FAIL("rendezvous send: %s", hop_err_name(ret));
		} else {
			/* eager: the send completed; the NAK fails the comm */
			if (ret)
				FAIL("eager send: %s", hop_err_name(ret));
			struct hop_p2p_req x = { .cb = NULL };
			OK(hop_p2p_irecv(comm, &x, 1, HOP_TAG(HOP_CTX_COLL, 0,
							     99), buf, 1, 0));
			ret = hop_p2p_wait(comm, &x);
			if (ret != HOP_ERR_MISMATCH)
				FAIL("after the NAK: %s", hop_err_name(ret));
		}
	} else {
		OK(hop_p2p_irecv(comm, &r, 0, tag, buf, sizeof(buf), 0x2222));
		ret = hop_p2p_wait(comm, &r);
		if (ret != HOP_ERR_MISMATCH)
			FAIL("receive: %s", hop_err_name(ret));
	}
	CHECK_RC(hop_send(comm, buf, 1, 1 - rank, 1), HOP_ERR_COMM_FAILED);
	msg = hop_comm_last_error(comm);
	if (!strstr(msg, "0x00001111") || !strstr(msg, "0x00002222") ||
	    !strstr(msg, "rank 0") || !strstr(msg, "rank 1"))
		FAIL("mismatch message does not name both ranks and "
		     "signatures: %s", msg);
}

static void case_timeout(void)
{
	static uint8_t buf[1 << 20];
	double t0 = now_s();
	int ret;

	if (rank == 1) {        /* outlive rank 0's deadline, send nothing */
		sleep(3);
		return;
	}
	ret = hop_recv(comm, buf, sizeof(buf), 1, 7, NULL);
	if (ret != HOP_ERR_TIMEOUT)
		FAIL("hop_recv returned %s, expected HOP_ERR_TIMEOUT",
		     hop_err_name(ret));
	if (now_s() - t0 > 2.5)
		FAIL("timeout took %.1f s with HOP_TIMEOUT=1", now_s() - t0);
	if (!strstr(hop_comm_last_error(comm),
		    "recv from rank 1 tag 7 (1048576 B) not completed within"))
		FAIL("timeout message does not name the receive: %s",
		     hop_comm_last_error(comm));
	CHECK_RC(hop_send(comm, buf, 1, 1, 1), HOP_ERR_COMM_FAILED);
}

static void *aborter(void *arg)
{
	(void)arg;
	usleep(200000);
	hop_comm_abort(comm);
	return NULL;
}

static void case_abort(void)
{
	uint8_t buf[8];
	pthread_t th;
	double t0;
	int ret;

	if (rank == 1) {
		sleep(2);
		return;
	}
	if (pthread_create(&th, NULL, aborter, NULL))
		FAIL("pthread_create");
	t0 = now_s();
	ret = hop_recv(comm, buf, sizeof(buf), 1, 7, NULL);
	pthread_join(th, NULL);
	if (ret != HOP_ERR_ABORTED)
		FAIL("hop_recv returned %s, expected HOP_ERR_ABORTED",
		     hop_err_name(ret));
	if (now_s() - t0 > 1.0)
		FAIL("abort took %.2f s to end the wait", now_s() - t0);
	CHECK_RC(hop_send(comm, buf, 1, 1, 1), HOP_ERR_COMM_FAILED);
}

static void case_peer_exit(void)
{
	uint8_t buf[8];
	int ret;

	if (rank == 1) {
		printf("p2p_internal peer-exit: rank 1 passed\n");
		fflush(stdout);
		usleep(100000);
		_exit(0);       /* no destroy: like a crash */
	}
	ret = hop_recv(comm, buf, sizeof(buf), 1, 7, NULL);
	if (ret != HOP_ERR_PEER_FAILED)
		FAIL("hop_recv returned %s, expected HOP_ERR_PEER_FAILED",
		     hop_err_name(ret));
	if (!strstr(hop_comm_last_error(comm), "rank 1"))
		FAIL("message does not name rank 1: %s",
		     hop_comm_last_error(comm));
}

/* Rank 0 sends @n messages of 4 bytes (the ints @first...) on @tag,
 * memory-polled, once rank 1 says go on @go_tag. */
static void direct_send_after_go(int go_tag, int tag, int first, int n)
{
	struct hop_p2p *p = comm->p2p;
	uint64_t ll = p->ll_sent;

	OK(hop_recv(comm, NULL, 0, 1, go_tag, NULL));
	for (int i = 0; i < n; i++) {
		int v = first + i;

		OK(hop_send(comm, &v, sizeof(v), 1, tag));
	}
	if (p->ll_sent != ll + (uint64_t)n)
		FAIL("%d of %d messages on tag %d went memory-polled", (int)(p->ll_sent - ll), n, tag);
}

/* Rank 1: say go, then run the provider until the next @n messages from
 * rank 0 (those already there included) are in their slots, unread (the
 * slot peek leaves rank 0 alone). */
static void direct_land(int go_tag, int n)
{
	struct hop_p2p *p = comm->p2p;
	uint32_t seq = p->peers[0].recv_seq;
	double t0 = now_s();

	OK(hop_send(comm, NULL, 0, 0, go_tag));
	for (int k = 0; k < n;) {
		const volatile uint64_t *w = (const volatile uint64_t *)
			p2p_ring_slot(p, 0, seq + (uint32_t)k);

		if ((uint32_t)(*w >> 32) == hop_ll_flag(seq + (uint32_t)k)) {
			k++;
			continue;
		}
		p->ll_direct_peer = 0;
		if (hop_p2p_progress(comm) < 0)
			FAIL("progress: %s", hop_comm_last_error(comm));
		p->ll_direct_peer = -1;
		if (now_s() - t0 > 10)
			FAIL("message %d of %d never landed", k + 1, n);
	}
	if (p->peers[0].recv_seq != seq)
		FAIL("setup: the messages were taken before the check");
}

/* Rank 1: the direct path must decline @tag now and take nothing. */
static void direct_declines(int tag, const char *why)
{
	struct hop_p2p *p = comm->p2p;
	uint32_t seq = p->peers[0].recv_seq;
	size_t got = 0;
	int v, ret;

	/* else it would decline for another reason. A peer is hot while
	 * this rank sent to it within 25 ms, which the wait for the messages
	 * can outlast on a loaded machine: the send is noted anew here. */
	p2p_ll_note_send(p, 0);
	if (comm->cfg.spin_count <= 0 || comm->cfg.yield_us > 0 ||
	    !p->peers[0].in_hot)
		FAIL("setup: this rank does not spin (HOP_SPIN %d, HOP_YIELD_US "
		     "%d) or rank 0 is not a memory-polled peer",
		     comm->cfg.spin_count, comm->cfg.yield_us);
	ret = p2p_direct_recv(comm, 0, HOP_TAG(HOP_CTX_USER, 0, (uint32_t)tag),
			      &v, sizeof(v), &got);
	if (ret != 0 || p->peers[0].recv_seq != seq)
		FAIL("the direct path returned %d and took %u messages with %s",
		     ret, p->peers[0].recv_seq - seq, why);
}

static void expect_int(int tag, int want)
{
	hop_status_t st;
	int v = -1;

	OK(hop_recv(comm, &v, sizeof(v), 0, tag, &st));
	if (st.bytes != sizeof(v) || v != want)
		FAIL("tag %d: got %d (%zu B), expected %d", tag, v, st.bytes, want);
}

static void case_direct(void)
{
	hop_request_t *req;
	hop_status_t st;
	int v = -1;

	for (int i = 0; i < 3; i++) {  /* both ends talk memory-polled */
		if (rank == 0) {
			OK(hop_send(comm, NULL, 0, 1, 1));
			OK(hop_recv(comm, NULL, 0, 1, 1, NULL));
		} else {
			OK(hop_recv(comm, NULL, 0, 0, 1, NULL));
			OK(hop_send(comm, NULL, 0, 0, 1));
		}
	}
	if (rank == 0) {
		direct_send_after_go(21, 13, 1, 2);
		direct_send_after_go(22, 14, 3, 1);
		direct_send_after_go(23, 15, 4, 1);
		direct_send_after_go(24, 14, 5, 1);
		direct_send_after_go(26, 16, 6, 2);
		OK(hop_recv(comm, NULL, 0, 1, 25, NULL));
		return;
	}
	/* a receive posted first takes the first message */
	OK(hop_irecv(comm, &v, sizeof(v), 0, 13, &req));
	direct_land(21, 2);
	direct_declines(13, "a receive posted before it");
	expect_int(13, 2);
	OK(hop_wait(&req, &st));
	if (v != 1)
		FAIL("the receive posted first got %d, expected 1", v);
	/* an unexpected message on the tag comes before the one in the slot */
	direct_land(22, 1);
	direct_land(23, 2);
	expect_int(15, 4);      /* leaves 3 (tag 14) unexpected */
	direct_land(24, 1);
	direct_declines(14, "an unexpected message before it");
	expect_int(14, 3);
	expect_int(14, 5);
	/* a receive from any source posted first takes the first message */
	OK(hop_irecv(comm, &v, sizeof(v), HOP_ANY_SOURCE, 16, &req));
	direct_land(26, 2);
	expect_int(16, 7);
	OK(hop_wait(&req, &st));
	if (v != 6 || st.source != 0)
		FAIL("the wildcard posted first got %d from rank %d, expected "
		     "6 from rank 0", v, st.source);
	OK(hop_send(comm, NULL, 0, 0, 25));
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	int ret;

	if ((ret = hop_comm_init_env(&comm))) {
		fprintf(stderr, "p2p_internal: init: %s: %s\n",
			hop_err_name(ret), hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	if (hop_comm_size(comm) != 2)
		FAIL("needs 2 ranks");
	if (!strcmp(c, "cb"))
		case_cb();
	else if (!strcmp(c, "mismatch-eager"))
		case_mismatch(100);
	else if (!strcmp(c, "mismatch-rndv"))
		case_mismatch(150000);
	else if (!strcmp(c, "timeout"))
		case_timeout();
	else if (!strcmp(c, "abort"))
		case_abort();
	else if (!strcmp(c, "peer-exit"))
		case_peer_exit();
	else if (!strcmp(c, "direct"))
		case_direct();
	else
		FAIL("unknown case '%s'", c);
	printf("p2p_internal %s: rank %d passed\n", c, rank);
	hop_comm_destroy(comm);
	return 0;
}
