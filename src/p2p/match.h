/*
 * match.h - tag matching: per peer a posted-receive queue and an
 * unexpected-message queue, both FIFO so that messages of one (peer, tag)
 * match in the order they were sent, plus one queue per communicator of
 * receives from any source (struct hop_match_any).
 *
 * Wildcards: a receive from any source waits in the shared queue; a
 * receive of any tag ignores the low 32 bits of the internal tag (the
 * user tag) and still compares the upper 32 (context and whatever else
 * names the tag space), so it never takes collective or internal traffic
 * nor another communicator's. Order between the two posted queues: every
 * receive carries a posting number, and a message takes the oldest
 * matching receive of either queue. Order between peers' unexpected
 * messages: every entry carries an arrival number, and a receive from any
 * source takes the oldest matching one. Pure data structures: unit-tested
 * without a provider.
 */
#ifndef HOP_P2P_MATCH_H
#define HOP_P2P_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "p2p/p2p.h"

/* Receive-only request fields, used while the receive is posted (a
 * rendezvous send keeps its target in these slots; no request is both):
 * posting number, and the tag bits the receive ignores (0: exact tag). */
#define HOP_MATCH_SEQ(r) ((r)->priv[2])
#define HOP_MATCH_IGNORE(r) ((r)->priv[3])
/* The bits HOP_ANY_TAG ignores: the user's 32-bit tag. */
#define HOP_MATCH_ANY_TAG 0xffffffffull
/* Source of a receive from any peer (hop_p2p_req.peer until matched). */
#define HOP_MATCH_ANY_PEER (-1)

/* Doubly linked FIFO of requests through their next/prev fields. */
struct hop_rlist {
	struct hop_p2p_req *head, *tail;
};

void hop_rlist_push(struct hop_rlist *l, struct hop_p2p_req *r);
void hop_rlist_remove(struct hop_rlist *l, struct hop_p2p_req *r);
struct hop_p2p_req *hop_rlist_pop(struct hop_rlist *l);

enum hop_ux_kind {
	HOP_UX_EAGER = 1,       /* payload copied into data[] */
	HOP_UX_RTS,             /* rendezvous announced: sender's id in sid */
	HOP_UX_SELF,            /* large send to this rank: sreq holds data */
};

/* A message that arrived before its receive was posted. */
struct hop_ux {
	struct hop_ux *next;
	uint64_t seq;           /* arrival number (hop_match_any) */
	uint64_t tag;
	size_t len;
	uint32_t sig;
	uint32_t kind;
	uint32_t sid;
	uint32_t has_data;      /* data[] has the pool's data_size bytes */
	struct hop_p2p_req *sreq;
	unsigned char data[];   /* eager_size bytes, when has_data */
};

struct hop_uxq {
	struct hop_ux *head, *tail;
	size_t count;
};

/* What the peers of one communicator share. */
struct hop_match_any {
	struct hop_rlist posted;        /* receives from any source */
	uint64_t post_seq;              /* receives posted so far */
	uint64_t arrive_seq;            /* unexpected messages kept so far */
};

struct hop_match {
	struct hop_rlist posted;
	struct hop_uxq unexp;
	struct hop_match_any *any;      /* NULL: no receives from any source */
	int peer;                       /* whose messages these are */
};

/* Does a message of @tag match receive @r (its tag and ignored bits)? */
static inline int hop_match_tag(const struct hop_p2p_req *r, uint64_t tag)
{
	return ((r->tag ^ tag) & ~HOP_MATCH_IGNORE(r)) == 0;
}

/* Append a posted receive from this peer. */
void hop_match_post(struct hop_match *m, struct hop_p2p_req *r);
/* Append a posted receive from any source. */
void hop_match_post_any(struct hop_match_any *a, struct hop_p2p_req *r);
/*
 * The receive a message of @tag from m->peer takes: the oldest posted
 * match of this peer's queue and of the any-source queue, removed. Its
 * peer and tag become the message's (a wildcard learns what matched).
 * NULL if none.
 */
struct hop_p2p_req *hop_match_take_posted(struct hop_match *m, uint64_t tag);
/* Append an unexpected message (numbered in arrival order). */
void hop_match_add_unexp(struct hop_match *m, struct hop_ux *ux);
/* Oldest unexpected message with @tag, removed; NULL if none. */
struct hop_ux *hop_match_take_unexp(struct hop_match *m, uint64_t tag);
/* Oldest unexpected message that receive @r matches; not removed. */
struct hop_ux *hop_match_find_unexp(const struct hop_match *m,
				    const struct hop_p2p_req *r);
/* Remove @ux, an entry of @m's unexpected queue. */
void hop_match_remove_unexp(struct hop_match *m, struct hop_ux *ux);
/* Of @n peers' queues (@at(@arg, i) for i < @n), the index of the one
 * holding the oldest-arriving message that @r matches, that message in
 * *@ux; -1 (and NULL) when none. */
int hop_match_oldest_unexp(struct hop_match *(*at)(void *arg, int i),
			   void *arg, int n, const struct hop_p2p_req *r,
			   struct hop_ux **ux);
/* Oldest unexpected message of any tag, removed; NULL if none. */
struct hop_ux *hop_match_take_unexp_any(struct hop_match *m);

/*
 * Pool of unexpected entries: those of eager messages have @data_size
 * payload bytes, those of rendezvous requests and large sends to self
 * none. The bytes of entries handed out (held in queues) are bounded by
 * @max_held (HOP_UNEXPECTED_MAX), so a peer that sends faster than this
 * rank receives cannot exhaust its memory; put notes are charged to the
 * same budget (hop_ux_charge). Up to HOP_UX_KEEP returned entries of each
 * size are kept for reuse, so the steady state allocates nothing and a
 * burst's entries are given back.
 */
#define HOP_UX_KEEP 64

struct hop_ux_pool {
	struct hop_ux *free, *free_small;
	size_t nfree, nfree_small;
	size_t data_size;
	size_t allocated;       /* entries ever allocated (for tests/stats) */
	size_t held, max_held;  /* bytes handed out, and their bound */
};

void hop_ux_pool_init(struct hop_ux_pool *p, size_t data_size,
		      size_t max_held);
/* Bytes an entry is charged: with payload room or without. */
size_t hop_ux_entry_bytes(const struct hop_ux_pool *p, int with_data);
/* An entry (with payload room when @with_data) in @out: 0, or
 * HOP_ERR_NO_MEMORY when the budget is spent (hop_ux_full() then says so)
 * or malloc failed. */
int hop_ux_get(struct hop_ux_pool *p, int with_data, struct hop_ux **out);
void hop_ux_put(struct hop_ux_pool *p, struct hop_ux *ux);
/* Take / give back @bytes of the budget for something else held (a put
 * note): 0, or HOP_ERR_NO_MEMORY when it would pass max_held. */
int hop_ux_charge(struct hop_ux_pool *p, size_t bytes);
void hop_ux_uncharge(struct hop_ux_pool *p, size_t bytes);
/* 1 when @bytes more would pass max_held. */
static inline int hop_ux_full(const struct hop_ux_pool *p, size_t bytes)
{
	return bytes > p->max_held || p->held > p->max_held - bytes;
}
void hop_ux_pool_fini(struct hop_ux_pool *p);

/*
 * Table of small integer ids -> pointers (rendezvous ids carried in
 * immediates and control messages). Grows by doubling, never shrinks.
 */
struct hop_idtab {
	void **ptr;
	uint32_t *next;         /* free chain */
	uint32_t cap, free_head, used;
};

#define HOP_IDTAB_MAX (1u << 24)

void hop_idtab_init(struct hop_idtab *t);
/* 0, or HOP_ERR_NO_MEMORY. */
int hop_idtab_alloc(struct hop_idtab *t, void *ptr, uint32_t *id);
/* The pointer of a live id, NULL for an unknown or free id. */
static inline void *hop_idtab_get(const struct hop_idtab *t, uint32_t id)
{
	return id < t->cap ? t->ptr[id] : NULL;
}
void hop_idtab_free(struct hop_idtab *t, uint32_t id);
void hop_idtab_fini(struct hop_idtab *t);

#endif /* HOP_P2P_MATCH_H */
