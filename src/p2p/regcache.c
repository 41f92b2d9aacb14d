/*
 * regcache.c - LRU registration cache (regcache.h).
 */
#include <stdlib.h>

#include <hop/common.h>

#include "p2p/regcache.h"

void hop_regcache_init(struct hop_regcache *rc, hop_rc_reg_fn reg,
		       hop_rc_dereg_fn dereg, void *ctx, size_t max)
{
	rc->reg = reg;
	rc->dereg = dereg;
	rc->ctx = ctx;
	rc->max = max;
	rc->count = 0;
	rc->head = rc->tail = NULL;
	rc->hits = rc->misses = rc->evictions = 0;
}

static void rc_unlink(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		rc->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		rc->tail = e->prev;
	e->prev = e->next = NULL;
}

static void rc_push_front(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	e->prev = NULL;
	e->next = rc->head;
	if (rc->head)
		rc->head->prev = e;
	else
		rc->tail = e;
	rc->head = e;
}

static void rc_drop(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	rc_unlink(rc, e);
	rc->count--;
	rc->dereg(rc->ctx, e->mr);
	free(e);
}

/* Deregister unreferenced entries, oldest first, while over @max. */
static void rc_evict(struct hop_regcache *rc, size_t max)
{
	struct hop_rc_entry *e = rc->tail, *prev;

	while (e && rc->count > max) {
		prev = e->prev;
		if (e->refs == 0) {
			rc_drop(rc, e);
			rc->evictions++;
		}
		e = prev;
	}
}

int hop_regcache_get(struct hop_regcache *rc, void *addr, size_t len,
		     unsigned access, struct hop_rc_entry **out)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	struct hop_rc_entry *e;
	int ret;

	if (end < a)
		return HOP_ERR_INVALID_ARG;
	for (e = rc->head; e; e = e->next) {
		if (!e->stale && e->start <= a && end <= e->end &&
		    (e->access & access) == access) {
			rc->hits++;
			e->refs++;
			if (e != rc->head) {
				rc_unlink(rc, e);
				rc_push_front(rc, e);
			}
			*out = e;
			return 0;
		}
	}
	rc->misses++;
	if (!(e = calloc(1, sizeof(*e))))
		return HOP_ERR_NO_MEMORY;
	e->start = a & ~(uintptr_t)(HOP_RC_PAGE - 1);
	e->end = (end + HOP_RC_PAGE - 1) & ~(uintptr_t)(HOP_RC_PAGE - 1);
	if (e->end < end)       /* rounding wrapped: register exactly */
		e->end = end;
	if (len == 0 && e->end == e->start)
		e->end = e->start + HOP_RC_PAGE;
	e->access = access;
	ret = rc->reg(rc->ctx, (void *)e->start, e->end - e->start, access,
		      &e->mr);
	if (ret) {
		free(e);
		return ret;
	}
	e->refs = 1;
	rc_push_front(rc, e);
	rc->count++;
	rc_evict(rc, rc->max);
	*out = e;
	return 0;
}

void hop_regcache_unref(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	(void)rc;
	if (e->refs > 0)
		e->refs--;
}

void hop_regcache_put(struct hop_regcache *rc, struct hop_rc_entry *e)
{
	hop_regcache_unref(rc, e);
	if (e->refs)
		return;
	if (e->stale)
		rc_drop(rc, e);
	else if (rc->count > rc->max)
		rc_evict(rc, rc->max);
}

void hop_regcache_invalidate(struct hop_regcache *rc, const void *addr,
			     size_t len)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	struct hop_rc_entry *e = rc->head, *next;

	if (end < a)
		end = UINTPTR_MAX;
	for (; e; e = next) {
		next = e->next;
		if (e->start >= end || e->end <= a || e->stale)
			continue;
		if (e->refs == 0)
			rc_drop(rc, e);
		else
			e->stale = 1;
	}
}

void hop_regcache_fini(struct hop_regcache *rc)
{
	while (rc->head)
		rc_drop(rc, rc->head);
}
