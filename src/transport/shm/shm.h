/*
 * shm.h - private header of the shm provider (ranks on one host).
 *
 * Each rank owns one POSIX shared-memory segment:
 *
 *   [struct shm_seg: identity, closed flag, doorbell]
 *   [MR table (emu.h), published so writers can check keys themselves]
 *   [nranks rings: ring s carries what rank s sends to the owner]
 *
 * With HOP_CONNECT=eager every rank maps every segment at open; with lazy
 * a rank maps a peer's segment when the first post between them needs it
 * (shm_lazy.c). A peer's MR table is mapped read-only (shm_mr.c). A ring is single-producer (rank s)
 * single-consumer (the owner); entries are variable-size, 64-byte aligned:
 * a 32-byte header and, for small writes and sends, the payload inline.
 * Large writes go straight into the target process with process_vm_writev
 * (CMA) after a check against the target's published MR table; when CMA is
 * not permitted (or HOP_SHM_CMA=0) they go through the ring in chunks.
 */
#ifndef HOP_TRANSPORT_SHM_H
#define HOP_TRANSPORT_SHM_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "transport/emu.h"
#include "transport/prov_common.h"

#define SHM_MAGIC 0x3130736d68706f68ull /* "hophms01" */
#define SHM_VERSION 3
#define SHM_LINE 64

/* ------------------------------------------------------------------ */
/* Rings (shm_ring.c): pure functions, unit-tested in one process.      */

enum shm_ent_op { SHM_OP_PAD = 0, SHM_OP_WRITE = 1, SHM_OP_SEND = 2 };
enum {
	SHM_F_IMM = 1u << 0,    /* deliver imm (last entry of a write) */
	SHM_F_DATA = 1u << 1,   /* payload is inline after the header */
	SHM_F_MORE = 1u << 2,   /* a chunk; more of this write follows */
};

struct shm_ent {
	uint32_t size;          /* bytes of the entry, multiple of SHM_LINE */
	uint8_t op;
	uint8_t flags;
	uint16_t rsvd;
	uint32_t imm;
	uint32_t len;           /* bytes this entry writes/sends */
	uint64_t raddr;
	uint64_t rkey;
	uint8_t data[];
};
#define SHM_ENT_HDR 32
_Static_assert(sizeof(struct shm_ent) == SHM_ENT_HDR, "shm_ent header");

struct shm_ring {
	alignas(SHM_LINE) _Atomic uint64_t tail; /* written by the producer */
	/* written by the producer: key it is copying through by CMA, or 0
	 * (the owner's deregistration waits for it, shm_mr.c) */
	_Atomic uint64_t cma_key;
	alignas(SHM_LINE) _Atomic uint64_t head; /* written by the consumer */
	alignas(SHM_LINE) uint8_t data[];
};
#define SHM_RING_HDR offsetof(struct shm_ring, data)

/* Producer's private view of a ring. */
struct shm_prod {
	struct shm_ring *r;
	uint64_t size;          /* data bytes, power of two */
	uint64_t tail;          /* next byte to write (published at commit) */
	uint64_t head_cache;    /* last head read */
};

/* Consumer's private view. */
struct shm_cons {
	struct shm_ring *r;
	uint64_t size;
	uint64_t head;          /* next byte to read (published at release) */
	uint64_t tail_cache;
};

static inline uint32_t shm_ent_size(size_t plen)
{
	return (uint32_t)((SHM_ENT_HDR + plen + SHM_LINE - 1) &
			  ~(size_t)(SHM_LINE - 1));
}

/* Largest payload one entry of a ring of @size bytes may carry. */
static inline size_t shm_ring_max_payload(uint64_t size)
{
	return (size_t)(size / 2) - SHM_ENT_HDR;
}

void shm_ring_init(struct shm_ring *r);
void shm_prod_init(struct shm_prod *p, struct shm_ring *r, uint64_t size);
void shm_cons_init(struct shm_cons *c, struct shm_ring *r, uint64_t size);

/*
 * shm_ring_reserve() - Room for an entry with @plen payload bytes at the
 * tail (a pad entry is placed first when it would not fit before the end).
 * Return: the entry (its size set; fill it, then shm_ring_commit()), or
 * NULL when the ring lacks room now. @plen <= shm_ring_max_payload().
 */
struct shm_ent *shm_ring_reserve(struct shm_prod *p, size_t plen);
/* Publish the reserved entry @e to the consumer (release). */
void shm_ring_commit(struct shm_prod *p, struct shm_ent *e);
/* Bytes the consumer has not released yet (refreshes head). */
uint64_t shm_ring_used(struct shm_prod *p);

/*
 * shm_ring_peek() - The next entry (pads skipped), validated against the
 * ring bounds. @hdr receives a private copy of its header.
 * Return: 1 entry in @*ent, 0 ring empty, HOP_ERR_PROTOCOL corrupt entry
 * (reason in @why).
 */
int shm_ring_peek(struct shm_cons *c, struct shm_ent *hdr,
		  const struct shm_ent **ent, char *why, size_t whylen);
/* Done with the entry @peek returned (private until release). */
static inline void shm_ring_consume(struct shm_cons *c, const struct shm_ent *h)
{
	c->head += h->size;
}
/* Publish the consumer's position (frees the space to the producer). */
void shm_ring_release(struct shm_cons *c);
/* Is there anything to read? (refreshes the tail) */
int shm_ring_pending(struct shm_cons *c);

/* ------------------------------------------------------------------ */
/* Segment                                                            */

struct shm_seg {
	uint64_t magic;
	uint32_t version;
	uint32_t nranks;
	int32_t rank;
	int32_t pid;
	uint32_t mr_slots;
	uint32_t rsvd;
	uint64_t cookie;        /* random: tells this segment from a later one */
	uint64_t ring_size;     /* data bytes per ring */
	uint64_t ring_stride;   /* bytes from one ring to the next */
	uint64_t mrtab_off;
	uint64_t rings_off;
	uint64_t seg_size;
	/* written by the owner, read by every peer on every post */
	alignas(SHM_LINE) _Atomic uint32_t closed;  /* owner closed: orderly */
	_Atomic uint32_t waiting; /* owner may sleep on bell */
	_Atomic uint32_t bell;  /* futex word, bumped to wake the owner */
	/* HOP_CONNECT=lazy (shm_lazy.c): bumped by a rank that set its bit in
	 * links[] (it maps this segment and writes its ring) */
	_Atomic uint32_t joins;
	/* two bitmaps of shm_map_words() words: links[0..w) ranks linked to
	 * the owner, links[w..2w) ranks that closed after linking */
	alignas(SHM_LINE) _Atomic uint64_t links[];
};

static inline size_t shm_map_words(int nranks)
{
	return ((size_t)nranks + 63) / 64;
}

#define SHM_NAME_LEN 64
/* What each rank tells the others at open. */
struct shm_info {
	char name[SHM_NAME_LEN];
	int32_t pid;
	uint32_t rsvd;
	uint64_t seg_size;
	uint64_t cookie;
};

/* ------------------------------------------------------------------ */
/* Provider                                                           */

/* The clock of the post path: the precise one costs as much as a post
 * (0.1 us in a VM), the coarse one a tenth of that. */
static inline uint64_t shm_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define SHM_POST_COPY 256       /* max_inline: unregistered sources */
#define SHM_SQ_DEPTH 256        /* posts queued per peer before AGAIN */
#define SHM_CQ_HIGH 4096        /* completions kept before rings wait */
#define SHM_LIVENESS_NS 100000000ull /* peer liveness period */
/* A post checks its target is alive when the last check is this old (on
 * the coarse clock: at least one tick, 1-4 ms): a write into the ring of a
 * dead peer would otherwise succeed. */
#define SHM_POST_LIVE_NS 1000000ull
/* How long a write that found its key retired waits for the peer's closed
 * flag before it reports the stale key (shm_post.c) */
#define SHM_CLOSE_GRACE_NS 200000000ull

enum shm_sq_kind { SHM_SQ_WRITE = 1, SHM_SQ_SEND };

/* A post that could not complete at once (ring full, CMA ordering). */
struct shm_sqe {
	uint8_t kind;
	uint8_t signaled;
	uint8_t imm_flag;
	uint8_t cma_done;       /* payload landed; the imm entry is pending */
	uint32_t imm;
	const uint8_t *src;
	size_t len;
	size_t off;             /* bytes already moved (chunks) */
	uint64_t raddr;
	uint64_t rkey;
	uint64_t wr_id;
	uint8_t data[SHM_POST_COPY];
};

struct shm_peer {
	int rank;
	pid_t pid;
	int pidfd;              /* -1: liveness by kill()/proc */
	int gone;               /* closed orderly (or failed) */
	int linked;             /* rings set up (always, with eager) */
	int cma;                /* process_vm_writev allowed to this peer */
	uint64_t live_next;     /* when a post checks liveness again (ns) */
	struct shm_seg *seg;    /* the peer's segment, mapped (NULL: not
				 * linked, or it had closed when we linked) */
	size_t map_len;         /* bytes mapped at @seg (peers only) */
	const struct hop_mrtab *mrtab; /* its published regions */
	/* what I send to it: ring[my rank] of its segment */
	struct shm_prod out;
	uint64_t data_end;      /* tail after my last entry carrying data */
	struct shm_sqe *sq;
	uint32_t sq_head, sq_count;
	/* what it sends to me: ring[its rank] of my segment */
	struct shm_cons in;
	uint64_t acc;           /* bytes of a chunked write so far */
};

struct hop_prov {
	const struct hop_prov_ctx *ctx;
	int rank, nranks;
	struct shm_seg *seg;    /* mine */
	struct shm_peer *peers;
	struct hop_mrtab_owner mrs; /* private: checks what we apply */
	struct hop_mrtab_owner pub; /* in our segment: checked by writers */
	struct hop_cqring cq;
	size_t inline_max;      /* writes up to this go inline in the ring */
	size_t chunk;           /* chunk of a write copied through the ring */
	uint32_t sq_busy;       /* peers with queued posts */
	uint32_t rr;
	uint32_t polls;
	uint64_t next_live;     /* next liveness check (ns) */
	int use_cma;
	struct hop_emu_mr *mrs_live;
	/* ranks whose rings are set up, self included: every rank with
	 * eager, those linked so far with lazy */
	int *act;
	int nact;
	struct shm_lazy *lazy;  /* HOP_CONNECT=lazy, else NULL */
	uint32_t joins_seen;    /* seg->joins when links[] was last read */
};

#define SHM_MR_MAGIC 0x73686d72u /* "shmr" */

/* shm_seg.c */
int shm_usable(const struct hop_prov_ctx *ctx, char *why, size_t whylen);
/* Open (and check) rank @r's segment described by @in; the fd or a
 * failure code. With lazy, a segment that is gone is HOP_ERR_PEER_FAILED. */
int shm_open_peer(struct hop_prov *prov, int r, const struct shm_info *in);
/* Map rank @r's segment from @fd and check it matches ours. */
int shm_map_peer(struct hop_prov *prov, int r, const struct shm_info *in,
		 int fd);
/* Set up the rings to and from rank @r (its segment mapped, if not us). */
int shm_peer_setup(struct hop_prov *prov, int r, pid_t pid);
int shm_open_prov(const struct hop_prov_ctx *ctx,
		  struct hop_prov **out);
void shm_close(struct hop_prov *prov);
static inline struct shm_ring *shm_seg_ring(struct shm_seg *s, int idx)
{
	return (struct shm_ring *)((uint8_t *)s + s->rings_off +
				   (uint64_t)idx * s->ring_stride);
}

/* shm_lazy.c: HOP_CONNECT=lazy */
int shm_lazy_want(const struct hop_prov_ctx *ctx);
/* Keep the segment's fd and every rank's description of its own. */
int shm_lazy_open(struct hop_prov *prov, int fd, const struct shm_info *all);
/* Tell linked peers we leave (before the segment goes). */
void shm_lazy_close(struct hop_prov *prov);
/* Link rank @peer now (first post to it, or it linked to us). */
int shm_lazy_link(struct hop_prov *prov, int peer);
/* Has any rank linked to us since the last call? Link it back. */
int shm_lazy_accept(struct hop_prov *prov);
static inline int shm_lazy_joined(const struct hop_prov *prov)
{
	return prov->lazy && atomic_load_explicit(&prov->seg->joins,
						  memory_order_acquire) !=
				     prov->joins_seen;
}
/* Did @p close its communicator (orderly) by now? */
int shm_peer_left(const struct hop_prov *prov, const struct shm_peer *p);

/* shm_mr.c */
/* Private table and the published one at @published (in the segment). */
int shm_mr_init(struct hop_prov *prov, void *published, uint32_t nslots);
void shm_mr_fini(struct hop_prov *prov);
/* Retire every published key (at close: peers' checks fail from now on)
 * and wait for CMA copies into them already under way. */
void shm_mr_retire_all(struct hop_prov *prov);
int shm_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out);
int shm_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *mr);

/* shm_post.c */
int shm_post_write(struct hop_prov *prov, int peer, struct hop_prov_mr *lmr,
		   const void *laddr, size_t len, uint64_t raddr,
		   uint64_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id);
int shm_post_send(struct hop_prov *prov, int peer, const void *buf,
		  size_t len, unsigned flags, uint64_t wr_id);
size_t shm_max_inline(const struct hop_prov *prov);
/* Push queued posts of @p into its ring; 0 or a failure code. */
int shm_tx_progress(struct hop_prov *prov, struct shm_peer *p);
/* Wake @seg's owner if it sleeps (after publishing to it); @seg may be NULL. */
void shm_ring_bell(struct shm_seg *seg);

/* shm_progress.c */
int shm_poll(struct hop_prov *prov, struct hop_cqe *cqe, int max);
void shm_wait(struct hop_prov *prov, int timeout_us);
int shm_check_peers(struct hop_prov *prov);
/* Is @p's process gone (exited or a zombie)? One system call or two. */
int shm_dead(const struct shm_peer *p);
/* 0 while @p lives or closed in order; fails the comm when it died. */
int shm_check_peer(struct hop_prov *prov, struct shm_peer *p);

#endif /* HOP_TRANSPORT_SHM_H */
