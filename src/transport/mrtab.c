/*
 * mrtab.c - the memory-region table of the software providers (emu.h).
 *
 * Slots are updated by their owner only, under a sequence lock: readers
 * (the owner's receive path on tcp, every peer process on shm) take a
 * consistent snapshot or retry. Readers never write, so a table mapped
 * read-mostly into other processes stays valid even if they misbehave.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "transport/emu.h"

/* Give up on a slot that stays mid-update this long (its owner died). */
#define MRTAB_MAX_RETRIES (1u << 20)

int hop_mrtab_init(struct hop_mrtab_owner *own, void *mem, uint32_t nslots)
{
	struct hop_mrtab *tab = mem;

	if (!own || !mem || nslots == 0 || nslots > HOP_MRTAB_MAX_SLOTS)
		return HOP_ERR_INVALID_ARG;
	own->free = malloc((size_t)nslots * sizeof(*own->free));
	if (!own->free)
		return HOP_ERR_NO_MEMORY;
	memset(tab, 0, hop_mrtab_size(nslots));
	tab->nslots = nslots;
	/* pop order: slot 0 first, so keys are small and predictable */
	for (uint32_t i = 0; i < nslots; i++)
		own->free[i] = nslots - 1 - i;
	own->nfree = nslots;
	own->tab = tab;
	atomic_thread_fence(memory_order_release);
	tab->magic = HOP_MRTAB_MAGIC;
	return 0;
}

void hop_mrtab_fini(struct hop_mrtab_owner *own)
{
	if (!own)
		return;
	free(own->free);
	own->free = NULL;
	own->nfree = 0;
	own->tab = NULL;
}

static void slot_write(struct hop_mrtab_slot *s, uint64_t gen, uint64_t addr,
		       uint64_t len, uint64_t access)
{
	uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);

	atomic_store_explicit(&s->seq, seq + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&s->gen, gen, memory_order_relaxed);
	atomic_store_explicit(&s->addr, addr, memory_order_relaxed);
	atomic_store_explicit(&s->len, len, memory_order_relaxed);
	atomic_store_explicit(&s->access, access, memory_order_relaxed);
	atomic_store_explicit(&s->seq, seq + 2, memory_order_release);
}

int hop_mrtab_add(struct hop_mrtab_owner *own, const void *addr, size_t len,
		  unsigned access, uint64_t *key)
{
	struct hop_mrtab_slot *s;
	uint32_t idx;
	uint64_t gen;

	if (!own || !own->tab || !key || (!addr && len))
		return HOP_ERR_INVALID_ARG;
	if (own->nfree == 0)
		return HOP_ERR_NO_MEMORY;
	idx = own->free[--own->nfree];
	s = &own->tab->slot[idx];
	gen = (atomic_load_explicit(&s->gen, memory_order_relaxed) + 1) &
	      HOP_MRTAB_GEN_MASK;
	if (gen == 0)
		gen = 1; /* key 0 is never valid */
	slot_write(s, gen, (uint64_t)(uintptr_t)addr, len,
		   (uint64_t)(access & (HOP_PROV_REMOTE_WRITE |
					HOP_PROV_REMOTE_READ)) |
			   HOP_MRTAB_LIVE);
	*key = hop_mrtab_key(idx, (uint32_t)gen);
	return 0;
}

int hop_mrtab_remove(struct hop_mrtab_owner *own, uint64_t key)
{
	uint32_t idx = (uint32_t)key, gen = (uint32_t)(key >> 32);
	struct hop_mrtab_slot *s;

	if (!own || !own->tab || idx >= own->tab->nslots || gen == 0)
		return HOP_ERR_INVALID_HANDLE;
	s = &own->tab->slot[idx];
	if (atomic_load_explicit(&s->gen, memory_order_relaxed) != gen ||
	    !(atomic_load_explicit(&s->access, memory_order_relaxed) &
	      HOP_MRTAB_LIVE))
		return HOP_ERR_INVALID_HANDLE;
	/* keep the generation: the next add bumps it, so @key stays stale */
	slot_write(s, gen, 0, 0, 0);
	own->free[own->nfree++] = idx;
	return 0;
}

int hop_mrtab_check(const struct hop_mrtab *tab, uint64_t key, uint64_t raddr,
		    uint64_t len, unsigned need, char *why, size_t whylen)
{
	uint32_t idx = (uint32_t)key, kgen = (uint32_t)(key >> 32);
	struct hop_mrtab_slot *s;
	uint64_t s1, s2, gen, addr, rlen, access;
	uint32_t tries = 0;

	if (!tab || tab->magic != HOP_MRTAB_MAGIC || idx >= tab->nslots ||
	    kgen == 0) {
		snprintf(why, whylen, "key 0x%llx names no region",
			 (unsigned long long)key);
		return HOP_ERR_OUT_OF_BOUNDS;
	}
	/* the slot may be rewritten concurrently by its owner: seqlock read */
	s = (struct hop_mrtab_slot *)&tab->slot[idx];
	do {
		if (++tries > MRTAB_MAX_RETRIES) {
			snprintf(why, whylen, "key 0x%llx: slot stays busy",
				 (unsigned long long)key);
			return HOP_ERR_OUT_OF_BOUNDS;
		}
		s1 = atomic_load_explicit(&s->seq, memory_order_acquire);
		if (s1 & 1)
			continue;
		gen = atomic_load_explicit(&s->gen, memory_order_relaxed);
		addr = atomic_load_explicit(&s->addr, memory_order_relaxed);
		rlen = atomic_load_explicit(&s->len, memory_order_relaxed);
		access = atomic_load_explicit(&s->access, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&s->seq, memory_order_relaxed);
	} while ((s1 & 1) || s1 != s2);

	if (gen != kgen || !(access & HOP_MRTAB_LIVE)) {
		snprintf(why, whylen,
			 "key 0x%llx is stale (region deregistered)",
			 (unsigned long long)key);
		return HOP_ERR_OUT_OF_BOUNDS;
	}
	if ((access & need) != need) {
		snprintf(why, whylen,
			 "key 0x%llx: region lacks %s access",
			 (unsigned long long)key,
			 (need & HOP_PROV_REMOTE_WRITE) ? "remote-write"
							: "remote-read");
		return HOP_ERR_OUT_OF_BOUNDS;
	}
	if (raddr < addr || len > rlen || raddr - addr > rlen - len) {
		snprintf(why, whylen,
			 "[0x%llx, +%llu) is outside region [0x%llx, +%llu) "
			 "of key 0x%llx",
			 (unsigned long long)raddr, (unsigned long long)len,
			 (unsigned long long)addr, (unsigned long long)rlen,
			 (unsigned long long)key);
		return HOP_ERR_OUT_OF_BOUNDS;
	}
	return 0;
}
