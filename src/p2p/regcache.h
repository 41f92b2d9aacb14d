/*
 * regcache.h - registration cache: buffers hop registers on the user's
 * behalf (rendezvous receive buffers, rendezvous and put sources) are
 * registered once, page-rounded, and reused by any later request whose
 * range lies inside a cached region with the needed access.
 *
 * Entries are kept in LRU order (most recent first). In-use entries hold a
 * reference and are never evicted; unreferenced entries beyond @max are
 * deregistered, least recently used first. @max = 0 (HOP_REG_CACHE=0)
 * disables caching: a region is deregistered as soon as its last user is
 * done.
 *
 * Caveat (classic for registration caches): if the application frees a
 * buffer and a later allocation reuses its address while the region is
 * still cached, the cache hands out the old registration. On tcp and shm
 * a key maps to addresses, so this is harmless; on verbs the old
 * registration may pin pages that no longer back that address. Use
 * hop_mem_deregister() on such a range (it evicts overlapping entries) or
 * set HOP_REG_CACHE=0.
 *
 * The provider is reached through two callbacks, so the cache is unit
 * tested without one.
 */
#ifndef HOP_P2P_REGCACHE_H
#define HOP_P2P_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

struct hop_prov_mr;

struct hop_rc_entry {
	struct hop_rc_entry *prev, *next;
	uintptr_t start, end;   /* registered [start, end), page rounded */
	unsigned access;
	int refs;
	int stale;              /* invalidated while in use */
	struct hop_prov_mr *mr;
};

typedef int (*hop_rc_reg_fn)(void *ctx, void *addr, size_t len,
			     unsigned access, struct hop_prov_mr **out);
typedef void (*hop_rc_dereg_fn)(void *ctx, struct hop_prov_mr *mr);

struct hop_regcache {
	hop_rc_reg_fn reg;
	hop_rc_dereg_fn dereg;
	void *ctx;
	size_t max;             /* unreferenced entries kept */
	size_t count;           /* entries, referenced or not */
	struct hop_rc_entry *head, *tail;
	uint64_t hits, misses, evictions;
};

#define HOP_RC_PAGE 4096u

void hop_regcache_init(struct hop_regcache *rc, hop_rc_reg_fn reg,
		       hop_rc_dereg_fn dereg, void *ctx, size_t max);

/*
 * hop_regcache_get() - A referenced entry covering [addr, addr + len) with
 * at least @access, registering on a miss. Return 0 or the reg callback's
 * error.
 */
int hop_regcache_get(struct hop_regcache *rc, void *addr, size_t len,
		     unsigned access, struct hop_rc_entry **out);

/* Drop a reference taken by hop_regcache_get(). */
void hop_regcache_put(struct hop_regcache *rc, struct hop_rc_entry *e);

/* Drop a reference without evicting (keeps a just-used region alive until
 * the next registration, for hop_p2p_reg_cached()). */
void hop_regcache_unref(struct hop_regcache *rc, struct hop_rc_entry *e);

/* Forget every entry overlapping [addr, addr + len): unreferenced ones are
 * deregistered now, referenced ones when their last user is done. */
void hop_regcache_invalidate(struct hop_regcache *rc, const void *addr,
			     size_t len);

/* Deregister everything (references are ignored: the comm is going away). */
void hop_regcache_fini(struct hop_regcache *rc);

#endif /* HOP_P2P_REGCACHE_H */
