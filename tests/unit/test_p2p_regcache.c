/*
 * test_p2p_regcache.c - the registration cache with a fake provider:
 * contained ranges hit, page rounding widens reuse, access rights are
 * respected, LRU eviction keeps the cache bounded but never drops a region
 * in use, HOP_REG_CACHE=0 deregisters as soon as the user is done,
 * invalidation (hop_mem_deregister) forgets overlapping ranges, failures
 * of the provider come back unchanged, and fini releases everything.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "p2p/regcache.h"
#include "transport/provider.h"

struct fake {
	int regs, deregs, live, fail;
	struct hop_prov_mr *last;
};

static int fake_reg(void *ctx, void *addr, size_t len, unsigned access,
		    struct hop_prov_mr **out)
{
	struct fake *f = ctx;
	struct hop_prov_mr *mr;

	if (f->fail)
		return f->fail;
	mr = calloc(1, sizeof(*mr));
	assert_non_null(mr);
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	mr->key = (uint64_t)++f->regs;
	f->live++;
	f->last = mr;
	*out = mr;
	return 0;
}

static void fake_dereg(void *ctx, struct hop_prov_mr *mr)
{
	struct fake *f = ctx;

	f->deregs++;
	f->live--;
	free(mr);
}

/* Fake addresses: the cache never touches the memory. */
#define PG HOP_RC_PAGE
static void *A(uintptr_t a) { return (void *)a; }

static void test_hit_contained(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *e1, *e2, *e3;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 8);
	assert_int_equal(hop_regcache_get(&rc, A(0x10010), 100,
					  HOP_PROV_REMOTE_WRITE, &e1), 0);
	assert_int_equal(f.regs, 1);
	/* page rounded */
	assert_int_equal(e1->start, 0x10000);
	assert_int_equal(e1->end, 0x11000);
	assert_ptr_equal(f.last->addr, A(0x10000));
	assert_int_equal(f.last->len, PG);
	/* inside the same page: hit, same region */
	assert_int_equal(hop_regcache_get(&rc, A(0x10800), 0x800,
					  HOP_PROV_REMOTE_WRITE, &e2), 0);
	assert_ptr_equal(e2, e1);
	assert_int_equal(e1->refs, 2);
	assert_int_equal(f.regs, 1);
	assert_int_equal(rc.hits, 1);
	/* one byte past the page: miss */
	assert_int_equal(hop_regcache_get(&rc, A(0x10800), 0x801,
					  HOP_PROV_REMOTE_WRITE, &e3), 0);
	assert_ptr_not_equal(e3, e1);
	assert_int_equal(f.regs, 2);
	assert_int_equal(e3->start, 0x10000);
	assert_int_equal(e3->end, 0x12000);
	assert_int_equal(rc.misses, 2);
	hop_regcache_put(&rc, e1);
	hop_regcache_put(&rc, e2);
	hop_regcache_put(&rc, e3);
	assert_int_equal(f.deregs, 0);  /* cached */
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
}

static void test_access(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *w, *l, *w2;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 8);
	assert_int_equal(hop_regcache_get(&rc, A(0x40000), PG, 0, &l), 0);
	/* a local-only region cannot take remote writes: new registration */
	assert_int_equal(hop_regcache_get(&rc, A(0x40000), PG,
					  HOP_PROV_REMOTE_WRITE, &w), 0);
	assert_ptr_not_equal(w, l);
	assert_int_equal(w->access, HOP_PROV_REMOTE_WRITE);
	/* a remote-write region serves a local request (most recent first) */
	assert_int_equal(hop_regcache_get(&rc, A(0x40000), 8, 0, &w2), 0);
	assert_ptr_equal(w2, w);
	assert_int_equal(f.regs, 2);
	hop_regcache_put(&rc, l);
	hop_regcache_put(&rc, w);
	hop_regcache_put(&rc, w2);
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
}

static void test_lru_eviction(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *e[5], *x;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hop_regcache_get(&rc, A(0x100000 * (i + 1)),
						  64, 0, &e[i]), 0);
		hop_regcache_put(&rc, e[i]);
	}
	assert_int_equal(rc.count, 3);
	/* touch region 0 so region 1 becomes least recently used */
	assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64, 0, &x), 0);
	assert_ptr_equal(x, e[0]);
	hop_regcache_put(&rc, x);
	assert_int_equal(hop_regcache_get(&rc, A(0x400000), 64, 0, &e[3]), 0);
	hop_regcache_put(&rc, e[3]);
	assert_int_equal(rc.count, 3);
	assert_int_equal(rc.evictions, 1);
	assert_int_equal(f.deregs, 1);
	/* region 1 is gone (miss), regions 0 and 2 stay (hits) */
	uint64_t misses = rc.misses;
	assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64, 0, &x), 0);
	hop_regcache_put(&rc, x);
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), 64, 0, &x), 0);
	hop_regcache_put(&rc, x);
	assert_int_equal(rc.misses, misses);
	assert_int_equal(hop_regcache_get(&rc, A(0x200000), 64, 0, &x), 0);
	assert_int_equal(rc.misses, misses + 1);
	hop_regcache_put(&rc, x);
	assert_int_equal(rc.count, 3);
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
}

static void test_in_use_not_evicted(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *e[4];
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 2);
	for (int i = 0; i < 4; i++)     /* all held: the cache may exceed max */
		assert_int_equal(hop_regcache_get(&rc, A(0x100000 * (i + 1)),
						  64, 0, &e[i]), 0);
	assert_int_equal(rc.count, 4);
	assert_int_equal(f.deregs, 0);
	hop_regcache_put(&rc, e[2]);    /* over max: released at once */
	assert_int_equal(f.deregs, 1);
	assert_int_equal(rc.count, 3);
	hop_regcache_put(&rc, e[0]);
	assert_int_equal(rc.count, 2);
	hop_regcache_put(&rc, e[1]);    /* now within max: kept */
	hop_regcache_put(&rc, e[3]);
	assert_int_equal(rc.count, 2);
	assert_int_equal(f.live, 2);
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
}

static void test_disabled(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *e, *e2;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 0);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64,
						  HOP_PROV_REMOTE_WRITE, &e),
				 0);
		/* two users of one buffer share the registration */
		assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64,
						  HOP_PROV_REMOTE_WRITE, &e2),
				 0);
		assert_ptr_equal(e, e2);
		hop_regcache_put(&rc, e2);
		assert_int_equal(f.live, 1);
		hop_regcache_put(&rc, e);
		assert_int_equal(f.live, 0);
	}
	assert_int_equal(f.regs, 5);
	/* unref without eviction (hop_p2p_reg_cached): lives until the next
	 * registration */
	assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64, 0, &e), 0);
	hop_regcache_unref(&rc, e);
	assert_int_equal(f.live, 1);
	assert_int_equal(hop_regcache_get(&rc, A(0x900000), 64, 0, &e2), 0);
	assert_int_equal(f.live, 1);
	hop_regcache_put(&rc, e2);
	assert_int_equal(f.live, 0);
	hop_regcache_fini(&rc);
}

static void test_invalidate(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *a, *b, *c, *x;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 16);
	assert_int_equal(hop_regcache_get(&rc, A(0x100000), 3 * PG, 0, &a), 0);
	assert_int_equal(hop_regcache_get(&rc, A(0x200000), PG, 0, &b), 0);
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), PG, 0, &c), 0);
	hop_regcache_put(&rc, a);
	hop_regcache_put(&rc, c);
	/* b stays in use */
	hop_regcache_invalidate(&rc, A(0x101000), 1);   /* overlaps a */
	assert_int_equal(f.deregs, 1);
	hop_regcache_invalidate(&rc, A(0x1ff000), 2 * PG); /* overlaps b */
	assert_int_equal(f.deregs, 1);  /* b in use: later */
	assert_int_equal(b->stale, 1);
	/* a stale entry is never handed out again */
	assert_int_equal(hop_regcache_get(&rc, A(0x200000), 64, 0, &x), 0);
	assert_ptr_not_equal(x, b);
	hop_regcache_put(&rc, x);
	hop_regcache_put(&rc, b);
	assert_int_equal(f.deregs, 2);
	/* c untouched by the invalidations */
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), 64, 0, &x), 0);
	assert_ptr_equal(x, c);
	hop_regcache_put(&rc, x);
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
}

static void test_reg_failure(void **state)
{
	struct fake f = { .fail = HOP_ERR_TRANSPORT };
	struct hop_regcache rc;
	struct hop_rc_entry *e = NULL;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 4);
	assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64, 0, &e),
			 HOP_ERR_TRANSPORT);
	assert_null(e);
	assert_int_equal(rc.count, 0);
	/* address range wrapping around */
	f.fail = 0;
	assert_int_equal(hop_regcache_get(&rc, A(UINTPTR_MAX - 10), 64, 0, &e),
			 HOP_ERR_INVALID_ARG);
	hop_regcache_fini(&rc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hit_contained),
		cmocka_unit_test(test_access),
		cmocka_unit_test(test_lru_eviction),
		cmocka_unit_test(test_in_use_not_evicted),
		cmocka_unit_test(test_disabled),
		cmocka_unit_test(test_invalidate),
		cmocka_unit_test(test_reg_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
