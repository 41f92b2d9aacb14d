/*
 * regcache.h - registration cache: buffers hop registers on the user's
 * behalf (rendezvous receive buffers, rendezvous and put sources) are
 * registered once, page-rounded, and reused by any later request whose
 * range lies inside a cached region with the needed access.
 *
 * Entries live in an interval tree (a treap keyed by start address, each
 * node holding the largest end of its subtree), so a covering entry is
 * found, and the entries overlapping an unmapped range are removed, in
 * O(log n) per entry involved. An entry in use holds references and is
 * never deregistered under its users: invalidating it takes it out of the
 * tree (no new user finds it) and its last put deregisters it. Unused
 * entries sit on an LRU list; the least recently used ones are
 * deregistered while the cache holds more than @max entries or more than
 * @max_bytes registered bytes. @max = 0 (HOP_REG_CACHE=0) disables
 * caching: a region is deregistered as soon as its last user is done.
 *
 * A cached registration of memory the application unmaps (free() of a
 * large block, munmap, heap trim) must not outlive the mapping: on verbs it
 * pins the old pages and a new mapping at the same address would not be
 * what the HCA reads and writes. An optional monitor (@mon, memmon.h)
 * watches each cached range and reports unmappings, which sync() applies
 * through hop_regcache_invalidate() before every lookup; a range it cannot
 * watch is used once and deregistered at its last put. Without a monitor
 * the cache trusts the application never to unmap cached memory.
 *
 * The provider is reached through two callbacks, so the cache is unit
 * tested without one.
 */
#ifndef HOP_P2P_REGCACHE_H
#define HOP_P2P_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

struct hop_prov_mr;
struct hop_regcache;

struct hop_rc_entry {
	struct hop_rc_entry *child[2];  /* tree: left, right */
	/* the LRU list (unused entries in the tree) or the dead list */
	struct hop_rc_entry *lru_prev, *lru_next;
	uintptr_t start, end;   /* registered [start, end), page rounded */
	uintptr_t max_end;      /* largest end in this subtree */
	uint32_t prio;          /* treap heap order */
	unsigned access;
	int refs;
	int stale;              /* on the dead list: dropped when unused */
	uint64_t used;          /* last use, for the most recent cover */
	struct hop_prov_mr *mr;
};

typedef int (*hop_rc_reg_fn)(void *ctx, void *addr, size_t len,
			     unsigned access, struct hop_prov_mr **out);
typedef void (*hop_rc_dereg_fn)(void *ctx, struct hop_prov_mr *mr);

/* Unmapping monitor; see memmon.h for the process-wide one. */
struct hop_rc_mon {
	/* Report later unmappings of [start, end); nonzero: cannot. */
	int (*watch)(uintptr_t start, uintptr_t end);
	/* Invalidate in @rc what was unmapped since its last sync. */
	void (*sync)(struct hop_regcache *rc);
	/* The cache is done with the monitor. */
	void (*release)(struct hop_regcache *rc);
};

struct hop_regcache {
	hop_rc_reg_fn reg;
	hop_rc_dereg_fn dereg;
	void *ctx;
	const struct hop_rc_mon *mon;   /* NULL: nothing watched */
	uint64_t mon_seq;               /* monitor events applied */
	size_t max;             /* entries kept, referenced or not */
	size_t max_bytes;       /* registered bytes kept */
	size_t count, bytes;    /* entries in the tree and their bytes */
	struct hop_rc_entry *root;
	struct hop_rc_entry *lru_head, *lru_tail; /* most recent first */
	struct hop_rc_entry *dead;      /* stale entries still referenced */
	uint32_t rand;
	uint64_t clock;
	uint64_t hits, misses, evictions, invalidations, unwatched;
};

#define HOP_RC_PAGE 4096u

/* @max_bytes SIZE_MAX: no byte budget. */
void hop_regcache_init(struct hop_regcache *rc, hop_rc_reg_fn reg,
		       hop_rc_dereg_fn dereg, void *ctx, size_t max);
void hop_regcache_budget(struct hop_regcache *rc, size_t max_bytes);

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
