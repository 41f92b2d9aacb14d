/*
 * test_p2p_match.c - tag matching of the channel layer: posted and
 * unexpected queues are FIFO per tag (the order guarantee of hop_send),
 * unrelated tags do not disturb each other, removal from the middle keeps
 * the lists whole; the unexpected pool recycles entries (no malloc in the
 * steady state); the id table allocates, finds, frees and grows.
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

static void check_list(const struct hop_rlist *l, struct hop_p2p_req **want,
		       int n)
{
	struct hop_p2p_req *r = l->head, *prev = NULL;

	for (int i = 0; i < n; i++) {
		assert_ptr_equal(r, want[i]);
		assert_ptr_equal(r->prev, prev);
		prev = r;
		r = r->next;
	}
	assert_null(r);
	assert_ptr_equal(l->tail, n ? want[n - 1] : NULL);
}

static void test_rlist(void **state)
{
	struct hop_p2p_req r[4];
	struct hop_rlist l = { NULL, NULL };
	(void)state;

	memset(r, 0, sizeof(r));
	assert_null(hop_rlist_pop(&l));
	for (int i = 0; i < 4; i++)
		hop_rlist_push(&l, &r[i]);
	check_list(&l, (struct hop_p2p_req *[]){ &r[0], &r[1], &r[2], &r[3] },
		   4);
	hop_rlist_remove(&l, &r[2]);    /* middle */
	check_list(&l, (struct hop_p2p_req *[]){ &r[0], &r[1], &r[3] }, 3);
	hop_rlist_remove(&l, &r[3]);    /* tail */
	check_list(&l, (struct hop_p2p_req *[]){ &r[0], &r[1] }, 2);
	assert_ptr_equal(hop_rlist_pop(&l), &r[0]);     /* head */
	check_list(&l, (struct hop_p2p_req *[]){ &r[1] }, 1);
	assert_ptr_equal(hop_rlist_pop(&l), &r[1]);
	check_list(&l, NULL, 0);
	assert_null(r[1].next);
	assert_null(r[1].prev);
}

static void test_posted_fifo_per_tag(void **state)
{
	struct hop_match m;
	struct hop_p2p_req r[6];
	uint64_t tags[6] = { 7, 3, 7, 9, 3, 7 };
	(void)state;

	memset(&m, 0, sizeof(m));
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 6; i++) {
		r[i].tag = tags[i];
		hop_match_post(&m, &r[i]);
	}
	assert_null(hop_match_take_posted(&m, 42));
	/* messages of tag 7 take the tag-7 receives in posting order */
	assert_ptr_equal(hop_match_take_posted(&m, 7), &r[0]);
	assert_ptr_equal(hop_match_take_posted(&m, 3), &r[1]);
	assert_ptr_equal(hop_match_take_posted(&m, 7), &r[2]);
	assert_ptr_equal(hop_match_take_posted(&m, 7), &r[5]);
	assert_null(hop_match_take_posted(&m, 7));
	assert_ptr_equal(hop_match_take_posted(&m, 9), &r[3]);
	assert_ptr_equal(hop_match_take_posted(&m, 3), &r[4]);
	assert_null(m.posted.head);
	assert_null(m.posted.tail);
}

static void test_unexpected_fifo_per_tag(void **state)
{
	struct hop_ux_pool pool;
	struct hop_match m;
	struct hop_ux *ux[5];
	uint64_t tags[5] = { 1, 2, 1, 1ull << 60, 2 };
	(void)state;

	memset(&m, 0, sizeof(m));
	hop_ux_pool_init(&pool, 16, 1 << 20);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(hop_ux_get(&pool, 1, &ux[i]), 0);
		ux[i]->tag = tags[i];
		ux[i]->len = (size_t)i;
		hop_match_add_unexp(&m, ux[i]);
	}
	assert_int_equal(m.unexp.count, 5);
	assert_null(hop_match_take_unexp(&m, 3));
	assert_ptr_equal(hop_match_take_unexp(&m, 2), ux[1]);
	assert_ptr_equal(hop_match_take_unexp(&m, 1), ux[0]);
	assert_ptr_equal(hop_match_take_unexp(&m, 2), ux[4]);   /* tail */
	assert_ptr_equal(m.unexp.tail, ux[3]);
	assert_ptr_equal(hop_match_take_unexp(&m, 1ull << 60), ux[3]);
	assert_ptr_equal(m.unexp.tail, ux[2]);
	/* a new arrival after removing the tail lands after ux[2] */
	hop_match_add_unexp(&m, ux[4]);
	assert_ptr_equal(hop_match_take_unexp_any(&m), ux[2]);
	assert_ptr_equal(hop_match_take_unexp_any(&m), ux[4]);
	assert_null(hop_match_take_unexp_any(&m));
	assert_null(m.unexp.head);
	assert_null(m.unexp.tail);
	assert_int_equal(m.unexp.count, 0);
	for (int i = 0; i < 5; i++)
		hop_ux_put(&pool, ux[i]);
	hop_ux_pool_fini(&pool);
}

static void test_ux_pool_recycles(void **state)
{
	struct hop_ux_pool pool;
	struct hop_ux *a, *b;
	(void)state;

	hop_ux_pool_init(&pool, 8192, 1 << 20);
	for (int round = 0; round < 1000; round++) {
		assert_int_equal(hop_ux_get(&pool, 1, &a), 0);
		assert_int_equal(hop_ux_get(&pool, 1, &b), 0);
		memset(a->data, 0xab, 8192);    /* payload room is there */
		memset(b->data, 0xcd, 8192);
		hop_ux_put(&pool, a);
		hop_ux_put(&pool, b);
	}
	assert_int_equal(pool.allocated, 2);
	assert_int_equal(pool.nfree, 2);
	hop_ux_pool_fini(&pool);
	assert_int_equal(pool.nfree, 0);
}

/* The bytes held are bounded; entries without payload (rendezvous
 * requests) cost no eager buffer; a burst's entries are given back. */
static void test_ux_pool_bounded(void **state)
{
	enum { DATA = 8192, MAX = 64 * 8192 };
	struct hop_ux_pool pool;
	struct hop_ux *ux[4096];
	size_t n = 0, small;
	(void)state;

	hop_ux_pool_init(&pool, DATA, MAX);
	while (n < 4096 && !hop_ux_get(&pool, 1, &ux[n]))
		n++;
	/* as many as fit, then the budget says no, without allocating */
	assert_int_equal(n, MAX / hop_ux_entry_bytes(&pool, 1));
	assert_true(hop_ux_full(&pool, hop_ux_entry_bytes(&pool, 1)));
	assert_null(ux[n]);
	assert_int_equal(pool.allocated, n);
	while (n)
		hop_ux_put(&pool, ux[--n]);
	assert_int_equal(pool.held, 0);
	assert_true(pool.nfree <= HOP_UX_KEEP);
	/* a rendezvous request is charged its header only */
	small = hop_ux_entry_bytes(&pool, 0);
	assert_true(small < 128);
	while (n < 4096 && !hop_ux_get(&pool, 0, &ux[n]))
		n++;
	assert_int_equal(n, 4096);
	assert_int_equal(pool.held, 4096 * small);
	assert_int_equal(ux[0]->has_data, 0);
	while (n)
		hop_ux_put(&pool, ux[--n]);
	assert_true(pool.nfree_small <= HOP_UX_KEEP);
	/* put notes share the budget */
	assert_int_equal(hop_ux_charge(&pool, MAX), 0);
	assert_int_equal(hop_ux_charge(&pool, 1), HOP_ERR_NO_MEMORY);
	assert_int_equal(hop_ux_get(&pool, 0, &ux[0]), HOP_ERR_NO_MEMORY);
	hop_ux_uncharge(&pool, MAX);
	assert_int_equal(pool.held, 0);
	hop_ux_pool_fini(&pool);
}

static void test_idtab(void **state)
{
	struct hop_idtab t;
	int objs[300];
	uint32_t id[300];
	(void)state;

	hop_idtab_init(&t);
	assert_null(hop_idtab_get(&t, 0));
	for (int i = 0; i < 300; i++) {
		assert_int_equal(hop_idtab_alloc(&t, &objs[i], &id[i]), 0);
		assert_int_equal(id[i], i);     /* lowest free id first */
	}
	assert_int_equal(t.used, 300);
	assert_true(t.cap >= 300);
	for (int i = 0; i < 300; i++)
		assert_ptr_equal(hop_idtab_get(&t, id[i]), &objs[i]);
	assert_null(hop_idtab_get(&t, t.cap));
	assert_null(hop_idtab_get(&t, UINT32_MAX));
	hop_idtab_free(&t, 17);
	hop_idtab_free(&t, 17);         /* twice: harmless */
	hop_idtab_free(&t, 99999);      /* unknown: harmless */
	assert_null(hop_idtab_get(&t, 17));
	assert_int_equal(t.used, 299);
	/* the freed id is reused before the table grows */
	uint32_t cap = t.cap, again;
	assert_int_equal(hop_idtab_alloc(&t, &objs[0], &again), 0);
	assert_int_equal(again, 17);
	assert_int_equal(t.cap, cap);
	hop_idtab_fini(&t);
	assert_int_equal(t.cap, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rlist),
		cmocka_unit_test(test_posted_fifo_per_tag),
		cmocka_unit_test(test_unexpected_fifo_per_tag),
		cmocka_unit_test(test_ux_pool_recycles),
		cmocka_unit_test(test_ux_pool_bounded),
		cmocka_unit_test(test_idtab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
