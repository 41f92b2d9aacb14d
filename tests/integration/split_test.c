/*
 * split_test.c - derived communicators over hop-run (split.sh):
 *   split_test         split semantics (colors, reversed and equal keys,
 *                      HOP_UNDEFINED), data of blocking and nonblocking
 *                      collectives on the parent, children, a dup and a
 *                      child of a child in flight together, user p2p with
 *                      the same tags on each (no cross-talk), an abort of
 *                      a child, destroying parents first, errors;
 *   split_test peer-abort   rank 0 aborts a dup the others wait in: they
 *                      time out (HOP_TIMEOUT) alone, the parent works on;
 *                      then the root's abort fails a dup of it;
 *   split_test plan    prints "PLAN <line>" for each hop_coll_plan(), the
 *                      line HOP_DEBUG=info logs for the collective run
 *                      after it (the script compares them);
 *   split_test host    hop_comm_split_host() groups the ranks of a host.
 * Every rank prints "split_test: rank R passed" on success.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hop/hop.h>

#define TEST_NAME "split_test"
static hop_comm_t *comm;
static int rank, nranks;
#include "rank_check.h"

#define BIG 100000      /* int32s: above the eager size (rendezvous) */

/* Rank @r's element @i of a buffer: any rank can compute any other's. */
static int32_t val(int r, size_t i, int salt)
{
	return (int32_t)(r * 7919 + (int)i * 31 + salt * 100003);
}

/* Expected child rank: members of @color ordered by (key, parent rank). */
static int want_rank(const int *color, const int *key, int r)
{
	int n = 0;

	for (int q = 0; q < nranks; q++)
		if (color[q] == color[r] &&
		    (key[q] < key[r] || (key[q] == key[r] && q < r)))
			n++;
	return n;
}

/* The parent rank of child rank @cr of @color, or -1. */
static int member(const int *color, const int *key, int c, int cr)
{
	for (int q = 0; q < nranks; q++)
		if (color[q] == c && want_rank(color, key, q) == cr)
			return q;
	return -1;
}

static hop_comm_t *split_checked(hop_comm_t *parent, const int *color,
				 const int *key)
{
	hop_comm_t *c = NULL;
	int size = 0;

	OK(hop_comm_split(parent, color[rank], key[rank], &c));
	if (color[rank] == HOP_UNDEFINED) {
		if (c)
			FAIL("HOP_UNDEFINED gave a communicator");
		return NULL;
	}
	for (int q = 0; q < nranks; q++)
		size += color[q] == color[rank];
	if (!c || hop_comm_size(c) != size ||
	    hop_comm_rank(c) != want_rank(color, key, rank))
		FAIL("color %d key %d: rank %d of %d, expected %d of %d",
		     color[rank], key[rank], hop_comm_rank(c), hop_comm_size(c),
		     want_rank(color, key, rank), size);
	return c;
}

/* Allreduce of @n int32 on @c (members: parent ranks of @color) checked
 * against the sum over the members, started nonblocking when @req. */
struct ar {
	int32_t *send, *recv;
	size_t n;
	int salt;
	const int *color;
};

static void ar_start(hop_comm_t *c, struct ar *a, const int *color, size_t n,
		     int salt, hop_request_t **req)
{
	a->send = malloc(n * 4);
	a->recv = malloc(n * 4);
	a->n = n;
	a->salt = salt;
	a->color = color;
	for (size_t i = 0; i < n; i++)
		a->send[i] = val(rank, i, salt);
	if (req)
		OK(hop_iallreduce(c, a->send, a->recv, n, HOP_INT32, HOP_SUM,
				  req));
	else
		OK(hop_allreduce(c, a->send, a->recv, n, HOP_INT32, HOP_SUM));
}

static void ar_check(struct ar *a)
{
	for (size_t i = 0; i < a->n; i++) {
		uint32_t want = 0;

		for (int q = 0; q < nranks; q++)
			if (!a->color || a->color[q] == a->color[rank])
				want += (uint32_t)val(q, i, a->salt);
		if ((uint32_t)a->recv[i] != want)
			FAIL("allreduce salt %d element %zu: %d, expected %d",
			     a->salt, i, a->recv[i], (int32_t)want);
	}
	free(a->send);
	free(a->recv);
}

static int parity[64], reversed[64], half[64], zero[64], ident[64];

static void semantics(void)
{
	int undef[64], byrank[64];
	hop_comm_t *c;

	for (int q = 0; q < nranks; q++) {
		parity[q] = q % 2;
		reversed[q] = -q;
		half[q] = q < nranks / 2;
		zero[q] = 0;
		ident[q] = q;
		undef[q] = q == nranks - 1 ? HOP_UNDEFINED : 3;
		byrank[q] = (q * 3) % nranks;
	}
	c = split_checked(comm, parity, reversed);
	OK(hop_comm_destroy(c));
	c = split_checked(comm, undef, zero);     /* equal keys */
	OK(hop_comm_destroy(c));
	c = split_checked(comm, zero, byrank);
	OK(hop_comm_destroy(c));
}

/* Blocking and nonblocking collectives on the parent, two generations of
 * children and a dup, all in flight together, waited in reverse order. */
static void interleaved(void)
{
	hop_comm_t *kid, *grand, *dup;
	hop_request_t *req[4];
	struct ar a[4], b;
	int gcolor[64], gkey[64];
	int32_t bc[1000];

	kid = split_checked(comm, parity, reversed);
	OK(hop_comm_dup(comm, &dup));
	/* the grandchild: the kid's ranks split again by kid rank parity */
	for (int q = 0; q < nranks; q++) {
		gcolor[q] = parity[q] * 2 + want_rank(parity, reversed, q) % 2;
		gkey[q] = q;
	}
	OK(hop_comm_split(kid, want_rank(parity, reversed, rank) % 2, rank,
			  &grand));
	if (hop_comm_size(grand) < 1 ||
	    hop_comm_rank(grand) != want_rank(gcolor, gkey, rank))
		FAIL("grandchild rank %d, expected %d", hop_comm_rank(grand),
		     want_rank(gcolor, gkey, rank));
	for (int round = 0; round < 2; round++) {
		ar_start(comm, &b, NULL, 1000, 10 + round, NULL);
		ar_check(&b);
		ar_start(kid, &b, parity, 3, 20 + round, NULL);
		ar_check(&b);
		ar_start(comm, &a[0], NULL, BIG, 30 + round, &req[0]);
		ar_start(kid, &a[1], parity, BIG, 40 + round, &req[1]);
		ar_start(grand, &a[2], gcolor, 1001, 50 + round, &req[2]);
		ar_start(dup, &a[3], NULL, 7, 60 + round, &req[3]);
		/* a blocking one on the kid while all four run */
		int kr = hop_comm_size(kid) - 1;

		for (int i = 0; i < 1000; i++)
			bc[i] = hop_comm_rank(kid) == kr ? val(rank, (size_t)i, 70)
							 : -1;
		OK(hop_broadcast(kid, bc, 1000, HOP_INT32, kr));
		for (int i = 0; i < 1000; i++)
			if (bc[i] != val(member(parity, reversed, parity[rank],
						kr), (size_t)i, 70))
				FAIL("broadcast on the kid: element %d", i);
		for (int i = 3; i >= 0; i--) {
			OK(hop_wait(&req[i], NULL));
			ar_check(&a[i]);
		}
	}
	OK(hop_comm_destroy(grand));
	OK(hop_comm_destroy(dup));
	OK(hop_comm_destroy(kid));
}

/* Rank pairs (0,2), (1,3)...: the same tag on the parent, a child and a
 * dup, messages sent in the opposite order to the receives' posting. */
static void p2p_apart(void)
{
	hop_comm_t *kid, *dup, *on[3];
	hop_request_t *rq[3];
	hop_status_t st;
	static int32_t buf[3][BIG];
	size_t len[3] = { 4 * BIG, 400, 4 * BIG };
	int peer, kpeer, peers[3];

	kid = split_checked(comm, parity, ident);
	OK(hop_comm_dup(comm, &dup));
	if (nranks < 4 || rank >= (nranks / 4) * 4)
		goto out;
	peer = rank % 4 < 2 ? rank + 2 : rank - 2;
	kpeer = want_rank(parity, ident, peer);
	on[0] = comm, on[1] = kid, on[2] = dup;
	peers[0] = peer, peers[1] = kpeer, peers[2] = peer;
	if (rank % 4 < 2) {
		for (int i = 0; i < 3; i++)
			OK(hop_irecv(on[i], buf[i], len[i], peers[i], 5, &rq[i]));
		for (int i = 0; i < 3; i++) {
			OK(hop_wait(&rq[i], &st));
			if (st.source != peers[i] || st.bytes != len[i] ||
			    st.tag != 5)
				FAIL("p2p %d: source %d bytes %zu, expected %d "
				     "%zu", i, st.source, st.bytes, peers[i],
				     len[i]);
			for (size_t j = 0; j < len[i] / 4; j++)
				if (buf[i][j] != val(peer, j, 80 + i))
					FAIL("p2p on comm %d: element %zu is "
					     "%d: another comm's data", i, j,
					     buf[i][j]);
		}
	} else {
		for (int i = 2; i >= 0; i--) {
			for (size_t j = 0; j < len[i] / 4; j++)
				buf[i][j] = val(rank, j, 80 + i);
			OK(hop_send(on[i], buf[i], len[i], peers[i], 5));
		}
	}
out:
	OK(hop_barrier(comm));
	OK(hop_comm_destroy(dup));
	OK(hop_comm_destroy(kid));
}

/* Rank 0 aborts its half's child: its calls fail, the parent, the other
 * half and a dup go on. */
static void abort_local(void)
{
	hop_comm_t *kid, *dup;
	struct ar b;
	int32_t x = 1;

	kid = split_checked(comm, half, ident);
	OK(hop_comm_dup(comm, &dup));
	if (rank == 0) {
		OK(hop_comm_abort(kid));
		CHECK_RC(hop_allreduce(kid, &x, &x, 1, HOP_INT32, HOP_SUM),
			 HOP_ERR_COMM_FAILED);
		if (!strstr(hop_comm_last_error(kid), "hop_comm_abort"))
			FAIL("aborted kid's error: %s", hop_comm_last_error(kid));
	} else if (!half[rank]) {
		ar_start(kid, &b, half, 5000, 90, NULL);
		ar_check(&b);
	}
	ar_start(comm, &b, NULL, BIG, 91, NULL);
	ar_check(&b);
	ar_start(dup, &b, NULL, 100, 92, NULL);
	ar_check(&b);
	OK(hop_comm_destroy(kid));
	OK(hop_comm_destroy(dup));
}

static void errors(void)
{
	hop_comm_t *c = (hop_comm_t *)1, *dups[64];
	int n = 0, ret;
	uint32_t imm;

	CHECK_RC(hop_comm_split(NULL, 0, 0, &c), HOP_ERR_INVALID_HANDLE);
	if (c)
		FAIL("newcomm not cleared on failure");
	CHECK_RC(hop_comm_split(comm, 0, 0, NULL), HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), "newcomm"))
		FAIL("NULL newcomm: %s", hop_comm_last_error(comm));
	CHECK_RC(hop_comm_split(comm, -5, 0, &c), HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), "color -5"))
		FAIL("color -5: %s", hop_comm_last_error(comm));
	CHECK_RC(hop_comm_dup(NULL, &c), HOP_ERR_INVALID_HANDLE);
	/* ids run out: every rank fails alike, naming the limit */
	while ((ret = hop_comm_dup(comm, &dups[n])) == 0 && n < 63)
		n++;
	if (ret != HOP_ERR_NO_MEMORY || n < 50 ||
	    !strstr(hop_comm_last_error(comm), "communicator id"))
		FAIL("dup #%d: %s (%s)", n, hop_err_name(ret),
		     hop_comm_last_error(comm));
	CHECK_RC(hop_wait_imm(dups[0], -1, &imm, NULL, NULL),
		 HOP_ERR_NOT_SUPPORTED);
	/* the plan of a relay the communicator cannot run is refused too */
	{
		hop_relay_plan_t plan;

		CHECK_RC(hop_relay_plan(dups[0], 64, 0,
					hop_comm_size(comm) - 1, NULL, 0, NULL,
					&plan), HOP_ERR_NOT_SUPPORTED);
		if (!strstr(hop_comm_last_error(dups[0]), "hop_relay_plan"))
			FAIL("relay plan on a dup: %s",
			     hop_comm_last_error(dups[0]));
	}
	while (n--)
		OK(hop_comm_destroy(dups[n]));
	OK(hop_comm_dup(comm, &c));
	OK(hop_comm_destroy(c));
	CHECK_RC(hop_comm_destroy(c), HOP_ERR_INVALID_HANDLE);
}

/* Parents destroyed before their children: the children go on. */
static void parents_first(void)
{
	hop_comm_t *dup, *kid, *world = comm;
	struct ar b;
	int32_t x = 1;

	OK(hop_comm_dup(comm, &dup));
	kid = split_checked(dup, parity, reversed);
	OK(hop_comm_destroy(dup));
	CHECK_RC(hop_allreduce(dup, &x, &x, 1, HOP_INT32, HOP_SUM),
		 HOP_ERR_INVALID_HANDLE);
	ar_start(kid, &b, parity, BIG, 100, NULL);
	ar_check(&b);
	OK(hop_comm_destroy(world));
	comm = kid;
	if (hop_comm_rank(world) != -1)
		FAIL("a destroyed parent still answers");
	ar_start(kid, &b, parity, 999, 101, NULL);
	ar_check(&b);
	OK(hop_comm_destroy(kid));
	comm = NULL;
}

/* HOP_TIMEOUT short: rank 0 aborts the dup the others collect on. */
static void peer_abort(void)
{
	hop_comm_t *dup;
	struct ar b;
	int32_t x = 1;

	hop_request_t *req;
	int done = 0;
	time_t give_up;

	OK(hop_comm_dup(comm, &dup));
	if (rank == 0)
		OK(hop_comm_abort(dup));
	else
		CHECK_RC(hop_allreduce(dup, &x, &x, 1, HOP_INT32, HOP_SUM),
			 HOP_ERR_TIMEOUT);
	/* rank 0 is there long before the others time out: it tests, which
	 * has no deadline, rather than wait */
	ar_start(comm, &b, NULL, BIG, 110, &req);
	give_up = time(NULL) + 30;
	while (!done && time(NULL) < give_up)
		OK(hop_test(&req, &done, NULL));
	if (!done)
		FAIL("the parent's allreduce did not complete in 30 s");
	ar_check(&b);
	OK(hop_comm_destroy(dup));
	/* the root's abort fails the endpoints: every derived one fails */
	OK(hop_comm_dup(comm, &dup));
	OK(hop_comm_abort(comm));
	CHECK_RC(hop_allreduce(dup, &x, &x, 1, HOP_INT32, HOP_SUM),
		 HOP_ERR_COMM_FAILED);
	if (!strstr(hop_comm_last_error(dup), "endpoints this one shares") ||
	    !strstr(hop_comm_last_error(dup), "hop_comm_abort"))
		FAIL("dup of an aborted root: %s", hop_comm_last_error(dup));
	OK(hop_comm_destroy(dup));
}

struct plan_case {
	hop_comm_t *c;
	hop_coll_kind_t kind;
	size_t count;
};

static const char *const fn_of[] = { "hop_broadcast", "hop_reduce",
	"hop_allreduce", "hop_allgather", "hop_reducescatter", "hop_barrier",
	"hop_alltoall", "hop_alltoallv", "hop_gather", "hop_scatter",
	"hop_allgatherv", "hop_reducescatterv" };
static const char *const kind_of[] = { "broadcast", "reduce", "allreduce",
	"allgather", "reducescatter", "barrier", "alltoall", "alltoallv",
	"gather", "scatter", "allgatherv", "reducescatterv" };

/* The v-forms with every block @cnt long: the plan prices the largest. */
static void run_v(hop_comm_t *c, hop_coll_kind_t kind, size_t cnt,
		  int32_t *s, int32_t *r)
{
	int n = hop_comm_size(c);
	size_t *counts = calloc((size_t)n, sizeof(size_t));
	size_t *displs = calloc((size_t)n, sizeof(size_t));

	for (int i = 0; i < n; i++) {
		counts[i] = cnt;
		displs[i] = (size_t)i * cnt;
	}
	if (kind == HOP_KIND_ALLTOALLV)
		OK(hop_alltoallv(c, s, counts, displs, r, counts, displs,
				 HOP_INT32));
	else if (kind == HOP_KIND_ALLGATHERV)
		OK(hop_allgatherv(c, s, cnt, r, counts, displs, HOP_INT32));
	else
		OK(hop_reducescatterv(c, s, r, counts, HOP_INT32, HOP_SUM));
	free(counts);
	free(displs);
}

/* In a thread of its own: the log line of the run is printed once per
 * thread and change of choice, so every run prints it. */
static void *plan_one(void *arg)
{
	struct plan_case *pc = arg;
	hop_coll_plan_t pl;
	int n = hop_comm_size(pc->c);
	size_t cnt = pc->kind == HOP_KIND_BARRIER ? 0 : pc->count;
	size_t all = cnt * (size_t)n;
	int32_t *s = calloc(all ? all : 1, 4), *r = calloc(all ? all : 1, 4);

	OK(hop_coll_plan(pc->c, pc->kind, pc->count, HOP_INT32, &pl));
	printf("PLAN %s: %s algorithm %s (%zu B, %d ranks, chunk %zu B, "
	       "depth %d)%s\n", fn_of[pc->kind], kind_of[pc->kind], pl.algo,
	       pc->kind == HOP_KIND_ALLTOALLV ? 0 : cnt * 4, n,
	       pl.chunk_bytes, pl.depth,
	       pl.forced ? " forced by HOP_ALGO" : "");
	fflush(stdout);
	switch (pc->kind) {
	case HOP_KIND_BROADCAST:
		OK(hop_broadcast(pc->c, r, cnt, HOP_INT32, 0));
		break;
	case HOP_KIND_REDUCE:
		OK(hop_reduce(pc->c, s, r, cnt, HOP_INT32, HOP_SUM, 0));
		break;
	case HOP_KIND_ALLREDUCE:
		OK(hop_allreduce(pc->c, s, r, cnt, HOP_INT32, HOP_SUM));
		break;
	case HOP_KIND_ALLGATHER:
		OK(hop_allgather(pc->c, s, r, cnt, HOP_INT32));
		break;
	case HOP_KIND_REDUCESCATTER:
		OK(hop_reducescatter(pc->c, s, r, cnt, HOP_INT32, HOP_SUM));
		break;
	case HOP_KIND_BARRIER:
		OK(hop_barrier(pc->c));
		break;
	case HOP_KIND_ALLTOALL:
		OK(hop_alltoall(pc->c, s, r, cnt, HOP_INT32));
		break;
	case HOP_KIND_GATHER:
		OK(hop_gather(pc->c, s, r, cnt, HOP_INT32, 0));
		break;
	case HOP_KIND_SCATTER:
		OK(hop_scatter(pc->c, s, r, cnt, HOP_INT32, 0));
		break;
	case HOP_KIND_ALLTOALLV:
	case HOP_KIND_ALLGATHERV:
	case HOP_KIND_REDUCESCATTERV:
		run_v(pc->c, pc->kind, cnt, s, r);
		break;
	}
	free(s);
	free(r);
	return NULL;
}

static void plans(void)
{
	static const size_t counts[] = { 2, 16384, 1 << 18 };
	hop_comm_t *kid = split_checked(comm, half, ident), *on[2] = { comm,
								      kid };
	hop_coll_plan_t pl;

	CHECK_RC(hop_coll_plan(comm, (hop_coll_kind_t)99, 1, HOP_INT32, &pl),
		 HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_coll_plan(comm, HOP_KIND_ALLREDUCE, 1, HOP_INT32, NULL),
		 HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_coll_plan(NULL, HOP_KIND_ALLREDUCE, 1, HOP_INT32, &pl),
		 HOP_ERR_INVALID_HANDLE);
	for (int c = 0; c < 2; c++)
		for (int k = 0; k <= HOP_KIND_REDUCESCATTERV; k++)
			for (int i = 0; i < 3; i++) {
				struct plan_case pc = { on[c], k, counts[i] };
				pthread_t t;

				if (k == HOP_KIND_BARRIER && i)
					continue;
				pthread_create(&t, NULL, plan_one, &pc);
				pthread_join(t, NULL);
			}
	OK(hop_comm_destroy(kid));
}

/* Each rank's host name, gathered on @c. */
static char *names(hop_comm_t *c)
{
	char me[64] = { 0 };
	char *all = calloc((size_t)hop_comm_size(c), sizeof(me));

	gethostname(me, sizeof(me) - 1);
	OK(hop_allgather(c, me, all, sizeof(me), HOP_UINT8));
	return all;
}

static void host(void)
{
	hop_comm_t *h;
	char *w = names(comm), *in_h, *me = w + 64 * rank;
	int same = 0;

	OK(hop_comm_split_host(comm, &h));
	in_h = names(h);
	for (int q = 0; q < nranks; q++)
		same += !strcmp(w + 64 * q, me);
	if (hop_comm_size(h) != same)
		FAIL("split_host: %d ranks, %d on host %s", hop_comm_size(h),
		     same, me);
	for (int q = 0; q < same; q++)
		if (strcmp(in_h + 64 * q, me))
			FAIL("split_host: rank %d is on %s, not %s", q,
			     in_h + 64 * q, me);
	printf("split_test: rank %d: %d ranks on host %s\n", rank, same, me);
	free(w);
	free(in_h);
	OK(hop_comm_destroy(h));
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";

	OK(hop_comm_init_env(&comm));
	rank = hop_comm_rank(comm);
	nranks = hop_comm_size(comm);
	if (nranks > 64)
		FAIL("at most 64 ranks");
	semantics();
	if (!strcmp(mode, "all")) {
		interleaved();
		p2p_apart();
		abort_local();
		errors();
		parents_first();
	} else if (!strcmp(mode, "peer-abort")) {
		peer_abort();
	} else if (!strcmp(mode, "plan")) {
		plans();
	} else if (!strcmp(mode, "host")) {
		host();
	} else {
		FAIL("unknown mode %s", mode);
	}
	if (comm)
		OK(hop_comm_destroy(comm));
	printf("split_test: rank %d passed\n", rank);
	return 0;
}
