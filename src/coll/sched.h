/*
 * sched.h - collectives as schedules (DESIGN.md, decision 2).
 *
 * A schedule is one rank's list of steps of one collective: SEND a byte
 * range to a peer, RECV a byte range from a peer, REDUCE (dst op= src),
 * COPY, or NOP (a join). Each step waits for up to three earlier steps.
 * Buffers are named by id (the caller's send buffer, receive buffer, or
 * the op's scratch) plus a byte offset, so a schedule does not depend on
 * where the data lives: it can be kept and rerun for the next call with
 * the same arguments, and the same schedule runs on the p2p executor
 * (coll_op.c) or on the simulators of the tests and hop-model (src/sim).
 *
 * Executors share the dataflow driver here: a step starts when all its
 * dependencies completed; REDUCE/COPY/NOP run inline, SEND/RECV go to the
 * backend, which reports completion with hop_sched_complete() (safe from
 * a p2p completion callback: it only queues). A schedule holds no time:
 * a simulator keeps its own per-step clock and learns of inline steps
 * through the hook of hop_sched_advance_hook().
 */
#ifndef HOP_COLL_SCHED_H
#define HOP_COLL_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include <hop/common.h>

#include "coll/kinds.h"

enum hop_step_kind {
	HOP_STEP_NOP = 0,
	HOP_STEP_SEND,
	HOP_STEP_RECV,
	HOP_STEP_REDUCE,
	HOP_STEP_COPY,
};

enum hop_buf_id {
	HOP_BUF_NONE = 0,
	HOP_BUF_SEND,
	HOP_BUF_RECV,
	HOP_BUF_SCRATCH,
	HOP_BUF_COUNT
};

/* REDUCE flag: dst = src op dst (src is the lower-ranked operand). */
#define HOP_STEP_REV 0x1

#define HOP_SCHED_MAXDEPS 3
#define HOP_SCHED_MAX_DEPTH 1024   /* pipeline lanes (HOP_PIPELINE_DEPTH range) */
#define HOP_SCHED_MAX_CHUNKS (1u << 20) /* per region; keeps tags in 32 bits */
#define HOP_SCRATCH_ALIGN 64

struct hop_step {
	uint8_t kind;           /* enum hop_step_kind */
	uint8_t flags;          /* HOP_STEP_REV */
	uint8_t dbuf;           /* RECV/REDUCE/COPY destination buffer id */
	uint8_t sbuf;           /* SEND/REDUCE/COPY source buffer id */
	int32_t peer;           /* SEND/RECV */
	uint32_t tag;           /* SEND/RECV: low 32 bits of the p2p tag */
	int32_t deps[HOP_SCHED_MAXDEPS]; /* earlier step indices, -1 = none */
	size_t len;             /* bytes */
};

/* Where a step's bytes are: kept apart from struct hop_step, which the
 * driver reads for every step, and not kept at all for a timing-only
 * schedule (the simulator's largest runs hold 100 million steps). */
struct hop_step_offs {
	size_t doff, soff;      /* byte offsets into dbuf / sbuf */
};

/* What a schedule is built from; equal args give an equal schedule. */
struct hop_coll_args {
	int kind;               /* enum hop_coll_kind */
	int algo;               /* enum hop_coll_algo, never AUTO here */
	int rank, nranks, root;
	size_t count;           /* elements; per rank for allgather/reducescatter */
	hop_dtype_t dtype;
	hop_op_t op;
	int inplace;
	size_t chunk_bytes;     /* pipelining chunk, > 0 */
	int depth;              /* lanes in flight, 1..HOP_SCHED_MAX_DEPTH */
	int timing_only;        /* keep no offsets: the schedule runs without
				 * buffers (a simulation that moves no data) */
	/* v-variants (allgatherv, reducescatterv): block b has counts[b]
	 * elements at element displs[b] of the buffer that holds all
	 * blocks; read only while the schedule is built, NULL = every block
	 * @count elements at b * @count. @vsig: hash of what every rank
	 * must agree on (the counts), part of the collective's signature. */
	const size_t *counts, *displs;
	uint64_t vsig;
	/* HOP_ALGO_HIER (hier.c): the algorithm of its intra-host phases
	 * ([0], HOP_LINK_INTRA) and of its inter-host phases ([1],
	 * HOP_LINK_INTER); HOP_ALGO_AUTO, or one the phase's collective has
	 * not, = that phase's default (docs/hierarchical.md) */
	int sub_algo[2];
	/* Placement: @hosts[r] = the host of rank r, hosts numbered 0, 1, ..
	 * in the order of their lowest rank (hop_hosts_sig()); NULL = all on
	 * one host. Read only while the schedule is built, like @counts;
	 * @hsig = hop_hosts_sig(), the schedule cache's key for it. Rings
	 * order their ranks by host; HOP_ALGO_HIER builds on it. */
	const int *hosts;
	uint64_t hsig;
	/* end with a barrier (tags from HOP_SYNC_TAG): the flow control of
	 * rooted collectives (hop_coll_launch()) */
	int sync;
	/* HOP_ALGO_HIER: 1 for the leaders' form of an AllReduce where the
	 * placement also has the rails (hop_model_hier_has_forms()) */
	int leaders;
};

/* Tags of the closing barrier, above every builder's (tags < 2^31). */
#define HOP_SYNC_TAG 0x80000000u

struct hop_sched {
	/* built */
	struct hop_coll_args args;
	int built;              /* args valid: rebuild only when they change */
	/* alltoallv: per-peer element counts and displacements (send
	 * counts, send displs, receive counts, receive displs), the
	 * caller's arrays, set before hop_sched_build() and read only by it */
	const size_t *v[4];
	size_t esize;           /* element size */
	hop_op_t rop;           /* reduction op (HOP_AVG reduces with HOP_SUM) */
	struct hop_step *steps;
	struct hop_step_offs *offs; /* per step; NULL when timing_only */
	int nsteps, cap, offs_cap;
	int *succ_start;        /* CSR successors: succ[succ_start[i]..[i+1]) */
	int *succ;
	int succ_cap, start_cap;
	size_t scratch_bytes;
	int avg_buf;            /* after the last step: divide by nranks */
	size_t avg_off, avg_count;
	int err;                /* HOP_ERR_NO_MEMORY during build */
	int *tmp;               /* builders' scratch index array */
	int tmp_cap;
	int *ord;               /* hop_sched_ord() */
	int ord_cap;
	int tag_bits;           /* tags below 2^tag_bits; 0 = 31 (a phase
				 * of a hierarchical schedule has fewer) */
	/* run state */
	uint8_t *pending;       /* unfinished dependencies per step */
	/* FIFO queues of ready and of completed steps, linked through
	 * qnext (a step is in at most one at a time); -1 when empty */
	int *qnext;
	int rhead, rtail, chead, ctail;
	int ndone;
	int finished;           /* all steps done and epilogue applied */
	int run_cap;
	void *base[HOP_BUF_COUNT];
};

/* Backend of an executor: start a SEND or RECV step. Returns 0 (it will
 * call hop_sched_complete() later, possibly from inside this call) or a
 * negative hop code. */
typedef int (*hop_sched_start_fn)(void *ctx, struct hop_sched *s, int idx);

/* Optional hook of an executor: inline step @idx (REDUCE, COPY, NOP) has
 * just run, before its completion is queued (a simulator's clock). */
typedef void (*hop_sched_inline_fn)(void *ctx, struct hop_sched *s, int idx);

void hop_sched_init(struct hop_sched *s);
void hop_sched_free(struct hop_sched *s);

/* Build @s for @a unless it already holds that schedule. 0 or error. */
int hop_sched_build(struct hop_sched *s, const struct hop_coll_args *a);

/* Reset the run state; buffers in @base (indexed by enum hop_buf_id). */
void hop_sched_start(struct hop_sched *s, void *const base[HOP_BUF_COUNT]);
/* Start every ready step and process completions until nothing is left
 * to do right now. Returns 0 or the first error of a backend start. */
int hop_sched_advance(struct hop_sched *s, hop_sched_start_fn start, void *ctx);
/* hop_sched_advance() that calls @ran (may be NULL) after each inline step. */
int hop_sched_advance_hook(struct hop_sched *s, hop_sched_start_fn start,
			   hop_sched_inline_fn ran, void *ctx);
/* Mark SEND/RECV step @idx complete (queues it; advance processes it). */
void hop_sched_complete(struct hop_sched *s, int idx);

static inline void *hop_sched_ptr(const struct hop_sched *s, int buf,
				  size_t off)
{
	return s->base[buf] ? (char *)s->base[buf] + off : NULL;
}

/* Step @i's destination and source bytes; NULL without a buffer (a
 * data-less run) or offsets (a timing-only schedule). */
static inline void *hop_step_dst(const struct hop_sched *s, int i)
{
	return s->offs ? hop_sched_ptr(s, s->steps[i].dbuf, s->offs[i].doff)
		       : NULL;
}

static inline void *hop_step_src(const struct hop_sched *s, int i)
{
	return s->offs ? hop_sched_ptr(s, s->steps[i].sbuf, s->offs[i].soff)
		       : NULL;
}

/* ---- builder helpers (algorithms use these) ---- */
int hop_sched_add(struct hop_sched *s, int kind, int flags, int dbuf,
		  size_t doff, int sbuf, size_t soff, size_t len, int peer,
		  uint32_t tag, int d0, int d1, int d2);
/* Builder temp array of @n ints set to -1 (kept across builds); NULL
 * and s->err set when out of memory. */
int *hop_sched_tmp(struct hop_sched *s, size_t n);
/* Reserve scratch bytes; returns the offset (aligned). */
size_t hop_sched_scratch(struct hop_sched *s, size_t bytes);

#define hop_s_send(s, peer, tag, sbuf, soff, len, d0, d1, d2)                \
	hop_sched_add(s, HOP_STEP_SEND, 0, HOP_BUF_NONE, 0, sbuf, soff, len,  \
		      peer, tag, d0, d1, d2)
#define hop_s_recv(s, peer, tag, dbuf, doff, len, d0, d1, d2)                \
	hop_sched_add(s, HOP_STEP_RECV, 0, dbuf, doff, HOP_BUF_NONE, 0, len,  \
		      peer, tag, d0, d1, d2)
#define hop_s_reduce(s, fl, dbuf, doff, sbuf, soff, len, d0, d1, d2)         \
	hop_sched_add(s, HOP_STEP_REDUCE, fl, dbuf, doff, sbuf, soff, len,    \
		      -1, 0, d0, d1, d2)
#define hop_s_copy(s, dbuf, doff, sbuf, soff, len, d0, d1, d2)               \
	hop_sched_add(s, HOP_STEP_COPY, 0, dbuf, doff, sbuf, soff, len, -1,   \
		      0, d0, d1, d2)
#define hop_s_nop(s, d0, d1, d2)                                             \
	hop_sched_add(s, HOP_STEP_NOP, 0, HOP_BUF_NONE, 0, HOP_BUF_NONE, 0,   \
		      0, -1, 0, d0, d1, d2)

/* ---- partitioning ---- */
/* Block @b of @count elements split over @n: count/n, the first count%n
 * blocks one more (the remainder is spread, never dropped). */
static inline size_t hop_blk_count(size_t count, int n, int b)
{
	return count / (size_t)n + ((size_t)b < count % (size_t)n ? 1 : 0);
}

static inline size_t hop_blk_start(size_t count, int n, int b)
{
	size_t q = count / (size_t)n, r = count % (size_t)n;

	return (size_t)b * q + ((size_t)b < r ? (size_t)b : r);
}

/* Elements per chunk for a region of @elems: the configured chunk, grown
 * so the region has at most HOP_SCHED_MAX_CHUNKS chunks and @phases *
 * chunks stays below 2^31 (tags are phase * nchunks + chunk); >= 1. */
size_t hop_chunk_elems(const struct hop_sched *s, size_t elems, int phases);

/* Chunk @c of block @b (of @count split over @n) with @ce elements per
 * chunk: byte offset and length; 0 when the block has no chunk @c. */
static inline int hop_blk_chunk(const struct hop_sched *s, size_t count,
				int n, int b, size_t ce, size_t c,
				size_t *off, size_t *len)
{
	size_t bs = hop_blk_start(count, n, b), bn = hop_blk_count(count, n, b);
	size_t co = c * ce;

	if (co >= bn)
		return 0;
	*off = (bs + co) * s->esize;
	*len = (bn - co < ce ? bn - co : ce) * s->esize;
	return 1;
}

/* Block @b of a v-variant (uniform blocks of @count without counts):
 * elements and first element. */
static inline size_t hop_vblk_count(const struct hop_sched *s, int b)
{
	return s->args.counts ? s->args.counts[b] : s->args.count;
}

static inline size_t hop_vblk_start(const struct hop_sched *s, int b)
{
	return s->args.counts ? s->args.displs[b] : (size_t)b * s->args.count;
}

/* The largest block's elements. */
size_t hop_vblk_max(const struct hop_sched *s);

static inline size_t hop_nchunks(size_t elems, size_t ce)
{
	return (elems + ce - 1) / ce;
}

static inline int hop_mod(int a, int n)
{
	a %= n;
	return a < 0 ? a + n : a;
}

/* Largest power of two <= n (n >= 1). */
static inline int hop_pof2_floor(int n)
{
	int p = 1;

	while (p * 2 <= n)
		p *= 2;
	return p;
}

/* ---- algorithm builders (one file per family) ---- */
int hop_build_bcast(struct hop_sched *s);        /* bcast.c */
int hop_build_reduce(struct hop_sched *s);       /* reduce_rooted.c */
int hop_build_allreduce_tree(struct hop_sched *s); /* tree.c */
int hop_build_ring(struct hop_sched *s);         /* ring.c */
int hop_build_recursive(struct hop_sched *s);    /* recursive.c */
int hop_build_allgather_bruck(struct hop_sched *s); /* bruck.c */
int hop_build_barrier(struct hop_sched *s);      /* bruck.c */
/* A dissemination barrier's steps, tags from @tag0, waiting on nothing. */
void hop_sched_add_barrier(struct hop_sched *s, uint32_t tag0); /* bruck.c */
int hop_build_alltoall_pairwise(struct hop_sched *s); /* alltoall.c */
int hop_build_alltoall_bruck(struct hop_sched *s);    /* alltoall.c */
int hop_build_gather_scatter(struct hop_sched *s); /* gather_scatter.c */
int hop_build_hier(struct hop_sched *s);         /* hier.c */

/* The flat builder of s->args.algo (hier.c builds its phases with it). */
int hop_sched_dispatch(struct hop_sched *s);

/* Hash of a placement (@hosts of @n ranks; 0 for NULL): args.hsig. */
uint64_t hop_hosts_sig(const int *hosts, int n);

/* Renumber the host ids @hosts[0 .. n-1] (any ids >= 0) in place, 0, 1,
 * .. in the order of their lowest rank, as args.hosts wants them.
 * Return: the number of hosts, or HOP_ERR_NO_MEMORY. */
int hop_hosts_renumber(int *hosts, int n);

/* A ring ordered by host: [p] = the rank at ring position p (the ranks
 * of host 0 in rank order, then host 1's, ...), so only H of its edges
 * cross hosts however the ranks are placed; *@pos = this rank's
 * position. Rank order without a placement. NULL (s->err set) when out
 * of memory. Kept in the schedule until the next call. */
const int *hop_sched_ring(struct hop_sched *s, int *pos);
/* Builder array of @n ints kept apart from hop_sched_tmp()'s (the ring
 * order above); NULL and s->err set when out of memory. */
int *hop_sched_ord(struct hop_sched *s, size_t n);

#endif /* HOP_COLL_SCHED_H */
