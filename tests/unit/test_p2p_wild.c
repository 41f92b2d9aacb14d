/*
 * test_p2p_wild.c - wildcard matching (match.c): receives from any source
 * and of any tag. A message takes the earliest-posted receive that matches
 * it, whether that one waits in its peer's queue or in the any-source
 * queue; a wildcard learns the message's peer and tag; HOP_ANY_TAG never
 * reaches another context (collective, internal) or tag space; a receive
 * from any source takes the oldest-arriving matching unexpected message
 * of all peers, and per peer the FIFO order holds (non-overtaking).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "p2p/match.h"

#define NPEERS 3
#define UTAG(t) HOP_TAG(HOP_CTX_USER, 0, (t))

struct world {
	struct hop_match_any any;
	struct hop_match mq[NPEERS];
	struct hop_ux ux[16];
	int nux;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	for (int q = 0; q < NPEERS; q++) {
		w->mq[q].any = &w->any;
		w->mq[q].peer = q;
	}
}

/* A receive of @tag (HOP_MATCH_ANY_TAG in @ignore for any tag). */
static void recv_init(struct hop_p2p_req *r, int peer, uint64_t tag,
		      uint64_t ignore)
{
	memset(r, 0, sizeof(*r));
	r->peer = peer;
	r->tag = tag;
	HOP_MATCH_IGNORE(r) = ignore;
}

static void post(struct world *w, struct hop_p2p_req *r)
{
	if (r->peer == HOP_MATCH_ANY_PEER)
		hop_match_post_any(&w->any, r);
	else
		hop_match_post(&w->mq[r->peer], r);
}

/* An unexpected message from @q with @tag; returns the entry. */
static struct hop_ux *arrive(struct world *w, int q, uint64_t tag)
{
	struct hop_ux *ux = &w->ux[w->nux++];

	memset(ux, 0, sizeof(*ux));
	ux->tag = tag;
	hop_match_add_unexp(&w->mq[q], ux);
	return ux;
}

static struct hop_match *at(void *arg, int i)
{
	return &((struct world *)arg)->mq[i];
}

static void test_posted_order_across_queues(void **state)
{
	struct world w;
	struct hop_p2p_req r[4];
	(void)state;

	world_init(&w);
	recv_init(&r[0], 1, UTAG(5), 0);                        /* specific */
	recv_init(&r[1], HOP_MATCH_ANY_PEER, UTAG(5), 0);       /* any src */
	recv_init(&r[2], 1, UTAG(5), 0);                        /* specific */
	recv_init(&r[3], HOP_MATCH_ANY_PEER, 0, HOP_MATCH_ANY_TAG);
	for (int i = 0; i < 4; i++)
		post(&w, &r[i]);
	/* rank 1, tag 5: the specific receive posted first */
	assert_ptr_equal(hop_match_take_posted(&w.mq[1], UTAG(5)), &r[0]);
	/* then the wildcard posted before the second specific one */
	assert_ptr_equal(hop_match_take_posted(&w.mq[1], UTAG(5)), &r[1]);
	assert_int_equal(r[1].peer, 1);
	/* rank 2, tag 5: only the any-any receive (rank 1's is not its) */
	assert_ptr_equal(hop_match_take_posted(&w.mq[2], UTAG(5)), &r[3]);
	assert_int_equal(r[3].peer, 2);
	assert_true(r[3].tag == UTAG(5));
	assert_true(HOP_MATCH_IGNORE(&r[3]) == 0);      /* now exact */
	assert_ptr_equal(hop_match_take_posted(&w.mq[1], UTAG(5)), &r[2]);
	assert_null(hop_match_take_posted(&w.mq[1], UTAG(5)));
	assert_null(w.any.posted.head);
}

static void test_any_tag_stays_in_its_space(void **state)
{
	struct world w;
	struct hop_p2p_req r;
	(void)state;

	world_init(&w);
	recv_init(&r, HOP_MATCH_ANY_PEER, UTAG(0), HOP_MATCH_ANY_TAG);
	post(&w, &r);
	/* collective and internal traffic, and another tag space (upper 32
	 * bits), whatever their low 32 bits */
	assert_null(hop_match_take_posted(&w.mq[0], HOP_TAG(HOP_CTX_COLL, 0, 7)));
	assert_null(hop_match_take_posted(&w.mq[0],
					  HOP_TAG(HOP_CTX_INTERNAL, 0, 0)));
	assert_null(hop_match_take_posted(&w.mq[0], HOP_TAG(HOP_CTX_USER, 3, 7)));
	assert_ptr_equal(hop_match_take_posted(&w.mq[0], UTAG(0xffffffffu)),
			 &r);
	assert_true(r.tag == UTAG(0xffffffffu));
}

static void test_specific_tag_of_any_source(void **state)
{
	struct world w;
	struct hop_p2p_req r;
	(void)state;

	world_init(&w);
	recv_init(&r, HOP_MATCH_ANY_PEER, UTAG(9), 0);
	post(&w, &r);
	assert_null(hop_match_take_posted(&w.mq[2], UTAG(8)));
	assert_null(hop_match_take_posted(&w.mq[2], HOP_TAG(HOP_CTX_COLL, 0, 9)));
	assert_ptr_equal(hop_match_take_posted(&w.mq[2], UTAG(9)), &r);
	assert_int_equal(r.peer, 2);
}

static void test_unexpected_oldest_arrival(void **state)
{
	struct world w;
	struct hop_p2p_req any, any9;
	struct hop_ux *a, *b, *c, *d, *ux;
	(void)state;

	world_init(&w);
	a = arrive(&w, 2, UTAG(4));
	b = arrive(&w, 0, HOP_TAG(HOP_CTX_COLL, 1, 4));    /* never a user's */
	c = arrive(&w, 1, UTAG(9));
	d = arrive(&w, 2, UTAG(9));
	recv_init(&any, HOP_MATCH_ANY_PEER, UTAG(0), HOP_MATCH_ANY_TAG);
	recv_init(&any9, HOP_MATCH_ANY_PEER, UTAG(9), 0);
	/* any tag: rank 2's tag 4 arrived first */
	assert_int_equal(hop_match_oldest_unexp(at, &w, NPEERS, &any, &ux), 2);
	assert_ptr_equal(ux, a);
	hop_match_remove_unexp(&w.mq[2], ux);
	/* tag 9 from any source: rank 1's came before rank 2's */
	assert_int_equal(hop_match_oldest_unexp(at, &w, NPEERS, &any9, &ux), 1);
	assert_ptr_equal(ux, c);
	hop_match_remove_unexp(&w.mq[1], ux);
	assert_int_equal(hop_match_oldest_unexp(at, &w, NPEERS, &any9, &ux), 2);
	assert_ptr_equal(ux, d);
	hop_match_remove_unexp(&w.mq[2], ux);
	/* what is left is collective traffic: no user receive takes it */
	assert_int_equal(hop_match_oldest_unexp(at, &w, NPEERS, &any, &ux), -1);
	assert_null(ux);
	assert_ptr_equal(w.mq[0].unexp.head, b);
	assert_int_equal(w.mq[0].unexp.count, 1);
	assert_null(w.mq[2].unexp.head);
	assert_null(w.mq[2].unexp.tail);
}

static void test_unexpected_fifo_per_peer_any_tag(void **state)
{
	struct world w;
	struct hop_p2p_req r;
	struct hop_ux *u[4];
	(void)state;

	world_init(&w);
	u[0] = arrive(&w, 1, UTAG(3));
	u[1] = arrive(&w, 1, UTAG(1));
	u[2] = arrive(&w, 1, UTAG(3));
	u[3] = arrive(&w, 1, UTAG(2));
	recv_init(&r, 1, UTAG(0), HOP_MATCH_ANY_TAG);
	for (int i = 0; i < 4; i++) {
		struct hop_ux *ux = hop_match_find_unexp(&w.mq[1], &r);

		assert_ptr_equal(ux, u[i]);
		hop_match_remove_unexp(&w.mq[1], ux);
	}
	assert_null(hop_match_find_unexp(&w.mq[1], &r));
	assert_int_equal(w.mq[1].unexp.count, 0);
	/* removing the middle and the tail keeps the list whole */
	u[0] = arrive(&w, 0, UTAG(1));
	u[1] = arrive(&w, 0, UTAG(2));
	u[2] = arrive(&w, 0, UTAG(3));
	hop_match_remove_unexp(&w.mq[0], u[1]);
	hop_match_remove_unexp(&w.mq[0], u[2]);
	assert_ptr_equal(w.mq[0].unexp.head, u[0]);
	assert_ptr_equal(w.mq[0].unexp.tail, u[0]);
	assert_null(u[0]->next);
	hop_match_remove_unexp(&w.mq[0], u[2]);         /* absent: harmless */
	assert_int_equal(w.mq[0].unexp.count, 1);
}

/* Without a shared any-source state (a lone queue), exact matching as
 * before: unset ignore bits mean the whole tag. */
static void test_lone_queue_exact(void **state)
{
	struct hop_match m;
	struct hop_p2p_req r;
	(void)state;

	memset(&m, 0, sizeof(m));
	recv_init(&r, 0, UTAG(6), 0);
	hop_match_post(&m, &r);
	assert_null(hop_match_take_posted(&m, UTAG(7)));
	assert_ptr_equal(hop_match_take_posted(&m, UTAG(6)), &r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_posted_order_across_queues),
		cmocka_unit_test(test_any_tag_stays_in_its_space),
		cmocka_unit_test(test_specific_tag_of_any_source),
		cmocka_unit_test(test_unexpected_oldest_arrival),
		cmocka_unit_test(test_unexpected_fifo_per_peer_any_tag),
		cmocka_unit_test(test_lone_queue_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
