/*
 * test_p2p_regcache.c - the registration cache with a fake provider:
 * contained ranges hit, page rounding widens reuse, access rights are
 * respected, LRU eviction keeps the cache bounded but never drops a region
 * in use, HOP_REG_CACHE=0 deregisters as soon as the user is done,
 * the byte budget bounds what stays registered, invalidation forgets
 * exactly the overlapping ranges (an entry in use is dropped by its last
 * user), a range the monitor cannot watch is used once, failures of the
 * provider come back unchanged, and fini releases everything. A random
 * run checks the interval tree against a plain list.
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
	int regs, deregs, live, fail, fail_once;
	struct hop_prov_mr *last;
};

static int fake_reg(void *ctx, void *addr, size_t len, unsigned access,
		    struct hop_prov_mr **out)
{
	struct fake *f = ctx;
	struct hop_prov_mr *mr;

	if (f->fail)
		return f->fail;
	if (f->fail_once) {
		f->fail_once = 0;
		return HOP_ERR_NO_MEMORY;
	}
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
	/* a registration refused (pinning limit) is retried once the unused
	 * regions are gone; one in use stays */
	assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64, 0, &e), 0);
	hop_regcache_put(&rc, e);
	assert_int_equal(hop_regcache_get(&rc, A(0x200000), 64, 0, &e), 0);
	f.fail_once = 1;
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), 64, 0, &e), 0);
	assert_int_equal(rc.evictions, 1);
	assert_int_equal(f.live, 2);
	/* nothing unused to give back: the error comes through */
	f.fail = HOP_ERR_NO_MEMORY;
	assert_int_equal(hop_regcache_get(&rc, A(0x400000), 64, 0, &e),
			 HOP_ERR_NO_MEMORY);
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
}

static void test_byte_budget(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *e[4], *x;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 100);
	hop_regcache_budget(&rc, 3 * PG);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(hop_regcache_get(&rc, A(0x100000 * (i + 1)),
						  64, 0, &e[i]), 0);
		hop_regcache_put(&rc, e[i]);
	}
	assert_int_equal(rc.bytes, 3 * PG);
	assert_int_equal(f.deregs, 0);
	/* two more pages: the two least recently used go */
	assert_int_equal(hop_regcache_get(&rc, A(0x500000), 2 * PG, 0, &e[3]),
			 0);
	assert_int_equal(f.deregs, 2);
	assert_int_equal(rc.bytes, 3 * PG);
	assert_int_equal(rc.evictions, 2);
	/* in use, a region over the whole budget stays until put */
	assert_int_equal(hop_regcache_get(&rc, A(0x900000), 8 * PG, 0, &x), 0);
	assert_int_equal(rc.count, 2);          /* e[2]'s page went too */
	assert_int_equal(rc.bytes, 10 * PG);
	hop_regcache_put(&rc, x);
	assert_int_equal(rc.bytes, 2 * PG);     /* e[3] stays, in use */
	hop_regcache_put(&rc, e[3]);
	assert_int_equal(rc.count, 1);
	assert_int_equal(f.live, 1);
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
}

static void test_overlaps(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *a, *b, *x;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 16);
	assert_int_equal(hop_regcache_get(&rc, A(0x10000), 4 * PG, 0, &a), 0);
	assert_int_equal(hop_regcache_get(&rc, A(0x12000), 6 * PG, 0, &b), 0);
	/* inside both: the more recently used */
	assert_int_equal(hop_regcache_get(&rc, A(0x13000), 0x800, 0, &x), 0);
	assert_ptr_equal(x, b);
	hop_regcache_put(&rc, x);
	assert_int_equal(hop_regcache_get(&rc, A(0x10000), 0x800, 0, &x), 0);
	assert_ptr_equal(x, a);
	hop_regcache_put(&rc, x);
	assert_int_equal(hop_regcache_get(&rc, A(0x13000), 0x800, 0, &x), 0);
	assert_ptr_equal(x, a);
	hop_regcache_put(&rc, x);
	/* across both, inside neither: a new region */
	assert_int_equal(hop_regcache_get(&rc, A(0x11000), 6 * PG, 0, &x), 0);
	assert_ptr_not_equal(x, a);
	assert_ptr_not_equal(x, b);
	assert_int_equal(f.regs, 3);
	hop_regcache_put(&rc, x);
	hop_regcache_put(&rc, a);
	hop_regcache_put(&rc, b);
	/* a byte inside b and the new one, past a: both, not a */
	hop_regcache_invalidate(&rc, A(0x16fff), 1);
	assert_int_equal(rc.invalidations, 2);
	assert_int_equal(rc.count, 1);
	assert_int_equal(hop_regcache_get(&rc, A(0x10000), 64, 0, &x), 0);
	assert_ptr_equal(x, a);
	hop_regcache_put(&rc, x);
	/* the byte just past a: nothing */
	hop_regcache_invalidate(&rc, A(0x14000), PG);
	assert_int_equal(rc.count, 1);
	/* everything */
	hop_regcache_invalidate(&rc, NULL, SIZE_MAX);
	assert_int_equal(rc.count, 0);
	assert_int_equal(f.live, 0);
	hop_regcache_fini(&rc);
}

/* Dead entries still referenced: unref keeps them until the next lookup,
 * fini frees them. */
static void test_dead_entries(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *a, *b, *x;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 16);
	assert_int_equal(hop_regcache_get(&rc, A(0x100000), 64, 0, &a), 0);
	assert_int_equal(hop_regcache_get(&rc, A(0x200000), 64, 0, &b), 0);
	hop_regcache_invalidate(&rc, A(0x100000), 2 * 0x100000);
	assert_int_equal(f.live, 2);
	assert_int_equal(rc.count, 0);
	hop_regcache_unref(&rc, a);
	assert_int_equal(f.live, 2);
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), 64, 0, &x), 0);
	assert_int_equal(f.live, 2);            /* a reaped, x added */
	hop_regcache_put(&rc, x);
	hop_regcache_fini(&rc);                 /* b still referenced */
	assert_int_equal(f.live, 0);
}

/* A fake monitor: refuses to watch one range, reports queued unmaps. */
static uintptr_t mon_refuse, mon_unmap_start, mon_unmap_end;
static int mon_syncs, mon_releases;

static int fmon_watch(uintptr_t start, uintptr_t end)
{
	return start <= mon_refuse && mon_refuse < end;
}

static void fmon_sync(struct hop_regcache *rc)
{
	mon_syncs++;
	if (mon_unmap_end) {
		hop_regcache_invalidate(rc, A(mon_unmap_start),
					mon_unmap_end - mon_unmap_start);
		mon_unmap_start = mon_unmap_end = 0;
	}
}

static void fmon_release(struct hop_regcache *rc)
{
	(void)rc;
	mon_releases++;
}

static const struct hop_rc_mon fmon = { fmon_watch, fmon_sync, fmon_release };

static void test_monitor(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *a, *x;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 16);
	rc.mon = &fmon;
	mon_refuse = 0x200000;
	/* unwatched: shared while in use, deregistered at the last put */
	assert_int_equal(hop_regcache_get(&rc, A(0x200000), 64, 0, &a), 0);
	assert_int_equal(rc.unwatched, 1);
	assert_int_equal(hop_regcache_get(&rc, A(0x200000), 64, 0, &x), 0);
	assert_ptr_not_equal(x, a);
	hop_regcache_put(&rc, x);
	hop_regcache_put(&rc, a);
	assert_int_equal(f.live, 0);
	/* watched: cached until the monitor reports the unmap */
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), 64, 0, &a), 0);
	hop_regcache_put(&rc, a);
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), 64, 0, &x), 0);
	assert_ptr_equal(x, a);
	hop_regcache_put(&rc, x);
	mon_unmap_start = 0x2ff000;
	mon_unmap_end = 0x301000;
	assert_int_equal(hop_regcache_get(&rc, A(0x300000), 64, 0, &x), 0);
	assert_int_equal(f.regs, 4);            /* a new registration */
	assert_int_equal(f.live, 1);
	assert_true(mon_syncs >= 5);
	hop_regcache_put(&rc, x);
	hop_regcache_fini(&rc);
	assert_int_equal(mon_releases, 1);
	assert_int_equal(f.live, 0);
}

/* ---- random operations against a plain list ---- */

static size_t tree_check(const struct hop_rc_entry *n, uintptr_t lo,
			 uintptr_t hi)
{
	uintptr_t m;

	if (!n)
		return 0;
	assert_true(n->start >= lo && n->start <= hi);
	m = n->end;
	if (n->child[0]) {
		assert_true(n->child[0]->prio <= n->prio);
		m = n->child[0]->max_end > m ? n->child[0]->max_end : m;
	}
	if (n->child[1]) {
		assert_true(n->child[1]->prio <= n->prio);
		m = n->child[1]->max_end > m ? n->child[1]->max_end : m;
	}
	assert_true(n->max_end == m);
	return 1 + tree_check(n->child[0], lo, n->start) +
	       tree_check(n->child[1], n->start, hi);
}

/* Brute force: does any entry of the tree overlap [a, end)? */
static int tree_overlaps(const struct hop_rc_entry *n, uintptr_t a,
			 uintptr_t end)
{
	return n && ((n->start < end && n->end > a) ||
		     tree_overlaps(n->child[0], a, end) ||
		     tree_overlaps(n->child[1], a, end));
}

#define NHELD 32

static void test_random(void **state)
{
	struct fake f = { 0 };
	struct hop_regcache rc;
	struct hop_rc_entry *held[NHELD] = { 0 }, *x;
	uint32_t r = 12345;
	(void)state;

	hop_regcache_init(&rc, fake_reg, fake_dereg, &f, 64);
	hop_regcache_budget(&rc, 400 * PG);
	for (int i = 0; i < 20000; i++) {
		uintptr_t a, len;
		int k, op;

		r = r * 1103515245u + 12345u;
		op = (int)(r >> 28);
		a = 0x1000000 + (uintptr_t)((r >> 8) % 256) * 0x800;
		len = 1 + (uintptr_t)((r >> 4) % 16) * 0x600;
		k = (int)((r >> 16) % NHELD);
		if (op < 2) {
			hop_regcache_invalidate(&rc, A(a), len);
			assert_false(tree_overlaps(rc.root, a, a + len));
		} else if (!held[k]) {
			unsigned acc = (op & 1) ? HOP_PROV_REMOTE_WRITE : 0;
			uint64_t hits = rc.hits;
			int covered = 0;

			/* a hit exactly when some live entry covers */
			for (int j = 0; j < NHELD; j++)
				covered |= held[j] && !held[j]->stale &&
					   held[j]->start <= a &&
					   a + len <= held[j]->end &&
					   (held[j]->access & acc) == acc;
			assert_int_equal(hop_regcache_get(&rc, A(a), len, acc,
							  &x), 0);
			assert_true(x->start <= a && a + len <= x->end);
			assert_true((x->access & acc) == acc);
			assert_false(x->stale);
			if (covered)
				assert_int_equal(rc.hits, hits + 1);
			held[k] = x;
		} else {
			hop_regcache_put(&rc, held[k]);
			held[k] = NULL;
		}
		assert_int_equal(tree_check(rc.root, 0, UINTPTR_MAX), rc.count);
		assert_true(rc.count <= 64 + NHELD);
	}
	for (int j = 0; j < NHELD; j++)
		if (held[j])
			hop_regcache_put(&rc, held[j]);
	assert_true(rc.count <= 64 && rc.bytes <= 400 * PG);
	assert_int_equal((size_t)f.live, rc.count);
	hop_regcache_fini(&rc);
	assert_int_equal(f.live, 0);
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
		cmocka_unit_test(test_byte_budget),
		cmocka_unit_test(test_overlaps),
		cmocka_unit_test(test_dead_entries),
		cmocka_unit_test(test_monitor),
		cmocka_unit_test(test_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
