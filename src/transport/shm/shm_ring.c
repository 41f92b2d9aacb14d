/*
 * shm_ring.c - single-producer single-consumer rings of variable-size
 * entries in shared memory.
 *
 * Positions are free-running 64-bit byte counters; the offset in the ring
 * is the position modulo its (power of two) size. The producer fills an
 * entry, then publishes the tail with release; the consumer reads the tail
 * with acquire, copies what it needs, then publishes the head with release.
 * An entry never wraps: when it would not fit before the end, a pad entry
 * fills the rest and the entry starts at offset 0. Head and tail sit on
 * their own cache lines, and each side caches the other's counter so an
 * uncontended operation touches the shared line only when needed.
 */
#include <stdio.h>
#include <string.h>

#include <hop/common.h>

#include "transport/shm/shm.h"

void shm_ring_init(struct shm_ring *r)
{
	atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
	atomic_store_explicit(&r->cma_key, 0, memory_order_relaxed);
	atomic_store_explicit(&r->head, 0, memory_order_relaxed);
}

void shm_prod_init(struct shm_prod *p, struct shm_ring *r, uint64_t size)
{
	p->r = r;
	p->size = size;
	p->tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	p->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
}

void shm_cons_init(struct shm_cons *c, struct shm_ring *r, uint64_t size)
{
	c->r = r;
	c->size = size;
	c->head = atomic_load_explicit(&r->head, memory_order_relaxed);
	c->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
}

struct shm_ent *shm_ring_reserve(struct shm_prod *p, size_t plen)
{
	uint64_t need, off, contig, pad;
	struct shm_ent *e;

	if (plen > shm_ring_max_payload(p->size))
		return NULL;
	need = shm_ent_size(plen);
	off = p->tail & (p->size - 1);
	contig = p->size - off;
	pad = need > contig ? contig : 0;
	if (p->tail + pad + need - p->head_cache > p->size) {
		p->head_cache =
			atomic_load_explicit(&p->r->head, memory_order_acquire);
		if (p->tail + pad + need - p->head_cache > p->size)
			return NULL;
	}
	if (pad) {
		e = (struct shm_ent *)(p->r->data + off);
		e->size = (uint32_t)pad;
		e->op = SHM_OP_PAD;
		p->tail += pad;
	}
	e = (struct shm_ent *)(p->r->data + (p->tail & (p->size - 1)));
	e->size = (uint32_t)need;
	return e;
}

void shm_ring_commit(struct shm_prod *p, struct shm_ent *e)
{
	p->tail += e->size;
	atomic_store_explicit(&p->r->tail, p->tail, memory_order_release);
}

uint64_t shm_ring_used(struct shm_prod *p)
{
	p->head_cache = atomic_load_explicit(&p->r->head, memory_order_acquire);
	return p->tail - p->head_cache;
}

int shm_ring_pending(struct shm_cons *c)
{
	if (c->head != c->tail_cache)
		return 1;
	c->tail_cache = atomic_load_explicit(&c->r->tail, memory_order_acquire);
	return c->head != c->tail_cache;
}

int shm_ring_peek(struct shm_cons *c, struct shm_ent *hdr,
		  const struct shm_ent **ent, char *why, size_t whylen)
{
	for (;;) {
		uint64_t off, avail;
		const struct shm_ent *e;

		if (c->head == c->tail_cache) {
			c->tail_cache = atomic_load_explicit(
				&c->r->tail, memory_order_acquire);
			if (c->head == c->tail_cache)
				return 0;
		}
		avail = c->tail_cache - c->head;
		off = c->head & (c->size - 1);
		e = (const struct shm_ent *)(c->r->data + off);
		/* the producer may be hostile or broken: copy, then check */
		memcpy(hdr, e, sizeof(*hdr));
		if (avail > c->size || hdr->size < SHM_LINE ||
		    hdr->size % SHM_LINE || hdr->size > avail ||
		    hdr->size > c->size - off) {
			snprintf(why, whylen,
				 "ring entry of %u bytes at offset %llu "
				 "(%llu published)",
				 hdr->size, (unsigned long long)off,
				 (unsigned long long)avail);
			return HOP_ERR_PROTOCOL;
		}
		if (hdr->op == SHM_OP_PAD) {
			c->head += hdr->size;
			continue;
		}
		if ((hdr->flags & SHM_F_DATA) &&
		    hdr->len > hdr->size - SHM_ENT_HDR) {
			snprintf(why, whylen,
				 "ring entry claims %u payload bytes in %u",
				 hdr->len, hdr->size);
			return HOP_ERR_PROTOCOL;
		}
		*ent = e;
		return 1;
	}
}

void shm_ring_release(struct shm_cons *c)
{
	atomic_store_explicit(&c->r->head, c->head, memory_order_release);
}
