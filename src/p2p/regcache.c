/*
 * regcache.c - registration cache (regcache.h): an interval treap of
 * cached regions, an LRU list of the unused ones, a list of dead ones
 * still in use.
 */
#include <stdlib.h>

#include <hop/common.h>

#include "p2p/regcache.h"

void hop_regcache_init(struct hop_regcache *rc, hop_rc_reg_fn reg,
		       hop_rc_dereg_fn dereg, void *ctx, size_t max)
{
	*rc = (struct hop_regcache){ .reg = reg, .dereg = dereg, .ctx = ctx,
				     .max = max, .max_bytes = SIZE_MAX,
				     .rand = 0x9e3779b9u };
}

void hop_regcache_budget(struct hop_regcache *rc, size_t max_bytes)
{
	rc->max_bytes = max_bytes;
}

/* ---- interval treap ------------------------------------------------ */

static uintptr_t max_end(const struct hop_rc_entry *n)
{
	return n ? n->max_end : 0;
}

static void fix(struct hop_rc_entry *n)
{
	uintptr_t m = n->end;

	for (int d = 0; d < 2; d++)
		if (max_end(n->child[d]) > m)
			m = max_end(n->child[d]);
	n->max_end = m;
}

/* Tree order: by start, equal starts by address of the entry. */
static int before(const struct hop_rc_entry *a, const struct hop_rc_entry *b)
{
	return a->start < b->start ||
	       (a->start == b->start && (uintptr_t)a < (uintptr_t)b);
}

/* Lift @n's child on side @d (0 left, 1 right) into @n's place. */
static struct hop_rc_entry *rotate(struct hop_rc_entry *n, int d)
{
	struct hop_rc_entry *c = n->child[d];

	n->child[d] = c->child[!d];
	c->child[!d] = n;
	fix(n);
	fix(c);
	return c;
}

static struct hop_rc_entry *tree_insert(struct hop_rc_entry *n,
					struct hop_rc_entry *e)
{
	int d;

	if (!n)
		return e;
	d = !before(e, n);
	n->child[d] = tree_insert(n->child[d], e);
	if (n->child[d]->prio > n->prio)
		n = rotate(n, d);
	fix(n);
	return n;
}

/* Join two treaps, every entry of @a before every entry of @b. */
static struct hop_rc_entry *tree_join(struct hop_rc_entry *a,
				      struct hop_rc_entry *b)
{
	if (!a || !b)
		return a ? a : b;
	if (a->prio > b->prio) {
		a->child[1] = tree_join(a->child[1], b);
		fix(a);
		return a;
	}
	b->child[0] = tree_join(a, b->child[0]);
	fix(b);
	return b;
}

static struct hop_rc_entry *tree_remove(struct hop_rc_entry *n,
					struct hop_rc_entry *e)
{
	int d;

	if (n == e)
		return tree_join(e->child[0], e->child[1]);
	d = !before(e, n);
	n->child[d] = tree_remove(n->child[d], e);
	fix(n);
	return n;
}

/*
 * The most recently used entry holding [a, end) with @access. A subtree
 * whose largest end is below @end holds none, nor does anything right of
 * an entry starting after @a: only the entries around the range are
 * visited.
 */
static void tree_cover(struct hop_rc_entry *n, uintptr_t a, uintptr_t end,
		       unsigned access, struct hop_rc_entry **best)
{
	for (; n && n->max_end >= end; n = n->child[1]) {
		tree_cover(n->child[0], a, end, access, best);
		if (n->start > a)
			return;
		if (n->end >= end && (n->access & access) == access &&
		    (!*best || n->used > (*best)->used))
			*best = n;
	}
}

/* Some entry overlapping [a, end), or NULL. If the left subtree reaches
 * past @a but holds no overlap, its entry reaching furthest starts at or
 * after @end, and so does everything right of it: the search never needs
 * both sides. */
static struct hop_rc_entry *tree_overlap(struct hop_rc_entry *n, uintptr_t a,
					 uintptr_t end)
{
	while (n) {
		if (n->start < end && n->end > a)
			return n;
		n = n->child[max_end(n->child[0]) <= a];
	}
	return NULL;
}

/* ---- lists --------------------------------------------------------- */

static void list_unlink(struct hop_rc_entry **head, struct hop_rc_entry **tail,
			struct hop_rc_entry *e)
{
	if (e->lru_prev)
		e->lru_prev->lru_next = e->lru_next;
	else
		*head = e->lru_next;
	if (e->lru_next)
		e->lru_next->lru_prev = e->lru_prev;
	else if (tail)
		*tail = e->lru_prev;
	e->lru_prev = e->lru_next = NULL;
}

static void list_push(struct hop_rc_entry **head, struct hop_rc_entry **tail,
		      struct hop_rc_entry *e)
{
	e->lru_prev = NULL;
	e->lru_next = *head;
	if (*head)
		(*head)->lru_prev = e;
	else if (tail)
		*tail = e;
	*head = e;
}

static void free_entry(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	rc->dereg(rc->ctx, e->mr);
	free(e);
}

/* Take @e out of the tree (and the LRU list when unused). */
static void detach(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	rc->root = tree_remove(rc->root, e);
	e->child[0] = e->child[1] = NULL;
	rc->count--;
	rc->bytes -= e->end - e->start;
	if (e->refs == 0)
		list_unlink(&rc->lru_head, &rc->lru_tail, e);
}

static void make_dead(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	e->stale = 1;
	list_push(&rc->dead, NULL, e);
}

/* Deregister dead entries nobody uses any more. */
static void reap(struct hop_regcache *rc)
{
	struct hop_rc_entry *e = rc->dead, *next;

	for (; e; e = next) {
		next = e->lru_next;
		if (e->refs == 0) {
			list_unlink(&rc->dead, NULL, e);
			free_entry(rc, e);
		}
	}
}

static int over_budget(const struct hop_regcache *rc)
{
	return rc->count > rc->max || rc->bytes > rc->max_bytes;
}

/* Deregister unused entries, least recently used first, while over the
 * budget, or @all of them. */
static void evict(struct hop_regcache *rc, int all)
{
	while (rc->lru_tail && (all || over_budget(rc))) {
		struct hop_rc_entry *e = rc->lru_tail;

		detach(rc, e);
		free_entry(rc, e);
		rc->evictions++;
	}
}

/* ---- API ----------------------------------------------------------- */

static uint32_t next_prio(struct hop_regcache *rc)
{
	uint32_t x = rc->rand;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return rc->rand = x;
}

/* Page-rounded bounds of [a, end); exact where rounding would wrap. */
static void round_range(struct hop_rc_entry *e, uintptr_t a, uintptr_t end)
{
	e->start = a & ~(uintptr_t)(HOP_RC_PAGE - 1);
	e->end = (end + HOP_RC_PAGE - 1) & ~(uintptr_t)(HOP_RC_PAGE - 1);
	if (e->end < end)
		e->end = end;
	if (e->end == e->start)
		e->end = e->start + HOP_RC_PAGE;
}

static int add_entry(struct hop_regcache *rc, uintptr_t a, uintptr_t end,
		     unsigned access, struct hop_rc_entry **out)
{
	struct hop_rc_entry *e = calloc(1, sizeof(*e));
	int ret;

	if (!e)
		return HOP_ERR_NO_MEMORY;
	round_range(e, a, end);
	e->access = access;
	ret = rc->reg(rc->ctx, (void *)e->start, e->end - e->start, access,
		      &e->mr);
	if (ret && rc->lru_tail) {
		/* out of pinnable memory, most likely (RLIMIT_MEMLOCK):
		 * what the cache holds unused goes first */
		evict(rc, 1);
		ret = rc->reg(rc->ctx, (void *)e->start, e->end - e->start,
			      access, &e->mr);
	}
	if (ret) {
		free(e);
		return ret;
	}
	e->refs = 1;
	e->used = ++rc->clock;
	if (rc->mon && rc->mon->watch(e->start, e->end)) {
		/* unmapping it would go unnoticed: used once */
		rc->unwatched++;
		make_dead(rc, e);
	} else {
		e->prio = next_prio(rc);
		e->max_end = e->end;
		rc->root = tree_insert(rc->root, e);
		rc->count++;
		rc->bytes += e->end - e->start;
		evict(rc, 0);
	}
	*out = e;
	return 0;
}

int hop_regcache_get(struct hop_regcache *rc, void *addr, size_t len,
		     unsigned access, struct hop_rc_entry **out)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	struct hop_rc_entry *e = NULL;

	if (end < a)
		return HOP_ERR_INVALID_ARG;
	if (rc->mon)
		rc->mon->sync(rc);
	reap(rc);
	tree_cover(rc->root, a, end, access, &e);
	if (!e) {
		rc->misses++;
		return add_entry(rc, a, end, access, out);
	}
	rc->hits++;
	if (e->refs++ == 0)
		list_unlink(&rc->lru_head, &rc->lru_tail, e);
	e->used = ++rc->clock;
	*out = e;
	return 0;
}

void hop_regcache_unref(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	if (e->refs <= 0 || --e->refs > 0 || e->stale)
		return;
	list_push(&rc->lru_head, &rc->lru_tail, e);
}

void hop_regcache_put(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	hop_regcache_unref(rc, e);
	if (e->refs)
		return;
	if (e->stale) {
		list_unlink(&rc->dead, NULL, e);
		free_entry(rc, e);
	} else {
		evict(rc, 0);
	}
}

void hop_regcache_invalidate(struct hop_regcache *rc, const void *addr,
			     size_t len)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	struct hop_rc_entry *e;

	if (end < a)
		end = UINTPTR_MAX;
	while ((e = tree_overlap(rc->root, a, end))) {
		detach(rc, e);
		rc->invalidations++;
		if (e->refs == 0)
			free_entry(rc, e);
		else
			make_dead(rc, e);
	}
}

void hop_regcache_fini(struct hop_regcache *rc)
{
	struct hop_rc_entry *e;

	while ((e = rc->root)) {
		rc->root = tree_remove(rc->root, e);
		free_entry(rc, e);
	}
	while ((e = rc->dead)) {
		rc->dead = e->lru_next;
		free_entry(rc, e);
	}
	rc->lru_head = rc->lru_tail = NULL;
	rc->count = rc->bytes = 0;
	if (rc->mon && rc->mon->release)
		rc->mon->release(rc);
	rc->mon = NULL;
}
