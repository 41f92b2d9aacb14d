/*
 * ring.c - ring algorithms: AllReduce (reduce-scatter + allgather),
 * AllGather(v) and ReduceScatter(v), chunked and pipelined.
 *
 * The data is split into N blocks (count/N elements, the first count%N
 * one more) and every block into chunks. Each chunk travels the ring on
 * its own: chunk c of step s+1 only waits for chunk c of step s, so up to
 * `depth` chunks are in flight while earlier ones are reduced. Received
 * partial sums land in a scratch lane (one per in-flight chunk) and are
 * reduced into place. Block b is reduced in the order
 * d_b op d_b+1 op ... op d_b-1 (left fold around the ring) by the rank
 * that ends up owning it, and the allgather copies exactly those bytes,
 * so every rank ends with identical results.
 *
 * The ring runs through the ranks in host order (hop_sched_ring()), so
 * with the ranks of a host adjacent only one edge per host crosses hosts
 * whatever the placement; blocks of AllGather/ReduceScatter stay those
 * of the ranks (block of the rank at a ring position), AllReduce's are
 * ring positions, the same on every rank.
 *
 * Tags: phase-step * nchunks + chunk, unique per ring pair.
 */
#include "coll/sched.h"

/* This rank's place on the ring. */
struct ring {
	const int *ord;         /* rank at each ring position */
	int n, pos, next, prev;
};

static int ring_init(struct hop_sched *s, struct ring *g)
{
	g->n = s->args.nranks;
	if (!(g->ord = hop_sched_ring(s, &g->pos)))
		return s->err ? s->err : HOP_ERR_NO_MEMORY;
	g->next = g->ord[(g->pos + 1) % g->n];
	g->prev = g->ord[(g->pos + g->n - 1) % g->n];
	return 0;
}

/* The rank @d positions after this one (d < 0: before). */
static int ring_at(const struct ring *g, int d)
{
	return g->ord[hop_mod(g->pos + d, g->n)];
}

/* ---- AllReduce ---- */
static int ring_allreduce(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, D = a->depth, ret;
	size_t count = a->count, es = s->esize;
	int lastuse[HOP_SCHED_MAX_DEPTH];
	struct ring g;

	s->avg_buf = HOP_BUF_RECV;
	s->avg_count = count;
	if (!count)
		return 0;
	if (n == 1) {
		if (!a->inplace)
			hop_s_copy(s, HOP_BUF_RECV, 0, HOP_BUF_SEND, 0,
				   count * es, -1, -1, -1);
		return 0;
	}
	if ((ret = ring_init(s, &g)))
		return ret;
	/* blocks by ring position */
	int r = g.pos, next = g.next, prev = g.prev;
	size_t ce = hop_chunk_elems(s, hop_blk_count(count, n, 0), 2 * n);
	size_t nch = hop_nchunks(hop_blk_count(count, n, 0), ce);
	size_t lane_bytes = ce * es;
	if ((size_t)D > nch)
		D = (int)nch; /* no more lanes than chunks */
	size_t lane0 = hop_sched_scratch(s, lane_bytes * (size_t)D);
	/* per chunk: its last reduce, then its reduce-scatter sends */
	int *rs = hop_sched_tmp(s, nch * (size_t)n);
	if (!rs)
		return s->err;
	for (int l = 0; l < D; l++)
		lastuse[l] = -1;

	/* Every chunk's reduce-scatter is listed before any allgather step:
	 * a port takes the eligible step listed first, and an allgather send
	 * that overtook a later chunk's reduce-scatter send would delay that
	 * chunk, whose reduction then lands on the critical path. */
	for (size_t c = 0; c < nch; c++) {
		int L = (int)(c % (size_t)D);
		size_t lane = lane0 + (size_t)L * lane_bytes;
		int *rs_send = rs + c * (size_t)n + 1;
		int red = -1; /* reduce of this chunk at the previous step */
		size_t off, len;

		/* reduce-scatter: step st sends block r-st, receives r-st-1 */
		for (int st = 0; st < n - 1; st++) {
			int sb = hop_mod(r - st, n), rb = hop_mod(r - st - 1, n);
			uint32_t tag = (uint32_t)((size_t)st * nch + c);

			if (hop_blk_chunk(s, count, n, sb, ce, c, &off, &len))
				rs_send[st] = st == 0
					? hop_s_send(s, next, tag, HOP_BUF_SEND, off,
						     len, -1, -1, -1)
					: hop_s_send(s, next, tag, HOP_BUF_RECV, off,
						     len, red, -1, -1);
			red = -1;
			if (!hop_blk_chunk(s, count, n, rb, ce, c, &off, &len))
				continue;
			int rv = hop_s_recv(s, prev, tag, HOP_BUF_SCRATCH, lane,
					    len, lastuse[L], -1, -1);
			int cp = -1;
			if (!a->inplace)
				cp = hop_s_copy(s, HOP_BUF_RECV, off, HOP_BUF_SEND,
						off, len, -1, -1, -1);
			/* received partial (lower in the fold) op own */
			red = hop_s_reduce(s, HOP_STEP_REV, HOP_BUF_RECV, off,
					   HOP_BUF_SCRATCH, lane, len, rv, cp, -1);
			lastuse[L] = red;
		}
		rs[c * (size_t)n] = red;
	}
	for (size_t c = 0; c < nch; c++) {
		const int *rs_send = rs + c * (size_t)n + 1;
		int got = -1;
		size_t off, len;

		/* allgather: step st sends block r+1-st, receives r-st */
		for (int st = 0; st < n - 1; st++) {
			int sb = hop_mod(r + 1 - st, n), rb = hop_mod(r - st, n);
			uint32_t tag = (uint32_t)((size_t)(n - 1 + st) * nch + c);

			if (hop_blk_chunk(s, count, n, sb, ce, c, &off, &len))
				hop_s_send(s, next, tag, HOP_BUF_RECV, off, len,
					   st == 0 ? rs[c * (size_t)n] : got, -1,
					   -1);
			got = -1;
			if (hop_blk_chunk(s, count, n, rb, ce, c, &off, &len))
				got = hop_s_recv(s, prev, tag, HOP_BUF_RECV, off,
						 len, rs_send[st], -1, -1);
		}
	}
	return 0;
}

/* ---- AllGather(v): rank r's elements land at block r ----
 * Blocks may differ in size (allgatherv, hop_vblk_*); chunk c of every
 * block travels on its own, so a block without a chunk c (a smaller or
 * empty one) moves nothing in that lane. */

/* Chunk @c (of @ce elements) of block @b: byte offset within the block
 * and length; 0 when the block has no chunk @c. */
static int vchunk(const struct hop_sched *s, int b, size_t ce, size_t c,
		  size_t *co, size_t *len)
{
	size_t bn = hop_vblk_count(s, b), first = c * ce;

	if (first >= bn)
		return 0;
	*co = first * s->esize;
	*len = (bn - first < ce ? bn - first : ce) * s->esize;
	return 1;
}

static int ring_allgather(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, r = a->rank, ret;
	size_t es = s->esize, maxc = hop_vblk_max(s);
	struct ring g;

	if (!maxc)
		return 0;
	if ((ret = ring_init(s, &g)))
		return ret;
	size_t ce = hop_chunk_elems(s, maxc, n);
	size_t nch = hop_nchunks(maxc, ce);

	for (size_t c = 0; c < nch; c++) {
		size_t co, len;
		int got = -1;

		if (!a->inplace && vchunk(s, r, ce, c, &co, &len))
			hop_s_copy(s, HOP_BUF_RECV, hop_vblk_start(s, r) * es +
				   co, HOP_BUF_SEND, co, len, -1, -1, -1);
		for (int st = 0; st < n - 1; st++) {
			int sb = ring_at(&g, -st), rb = ring_at(&g, -st - 1);
			uint32_t tag = (uint32_t)((size_t)st * nch + c);

			if (!vchunk(s, sb, ce, c, &co, &len))
				;
			else if (st == 0)
				hop_s_send(s, g.next, tag, HOP_BUF_SEND, co, len,
					   -1, -1, -1);
			else
				hop_s_send(s, g.next, tag, HOP_BUF_RECV,
					   hop_vblk_start(s, sb) * es + co, len,
					   got, -1, -1);
			got = -1;
			if (vchunk(s, rb, ce, c, &co, &len))
				got = hop_s_recv(s, g.prev, tag, HOP_BUF_RECV,
						 hop_vblk_start(s, rb) * es + co,
						 len, -1, -1, -1);
		}
	}
	return 0;
}

/* ---- ReduceScatter: rank r gets block r (@count elements) ----
 * A chunk's partial is received into a slot, reduced there and sent on
 * at the next step, so every chunk holds a partial from its first step
 * to its last: each has its own two slots (scratch: two blocks), and the
 * steps are listed step by step over all chunks. A port takes the
 * eligible step listed first; chunk by chunk, a chunk's later steps
 * overtook the next chunk's first, and with `depth` lanes the chunks
 * crossed the ring in waves; either way the last chunks crossed alone,
 * each reduction on the critical path. */
#define RS_SLOTS 2

/* Step @st of chunk @c (@ce elements per chunk) in a lane of RS_SLOTS
 * slots at @lane; @red: the chunk's reduce at step st-1. A block without
 * a chunk @c moves nothing. Returns this step's reduce, -1 if none. */
static int rs_step(struct hop_sched *s, const struct ring *g, int st,
		   size_t c, size_t nch, size_t ce, size_t lane,
		   size_t slot_bytes, int *lastuse, int red)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, r = a->rank, next = g->next, prev = g->prev;
	size_t es = s->esize, co, len;
	int sb = ring_at(g, -st - 1), rb = ring_at(g, -st - 2);
	int p = st % RS_SLOTS, pp = (st + RS_SLOTS - 1) % RS_SLOTS;
	size_t slot = lane + (size_t)p * slot_bytes;
	uint32_t tag = (uint32_t)((size_t)st * nch + c);

	if (!vchunk(s, sb, ce, c, &co, &len))
		;
	else if (st == 0)
		hop_s_send(s, next, tag, HOP_BUF_SEND,
			   hop_vblk_start(s, sb) * es + co, len, -1, -1, -1);
	else
		lastuse[pp] = hop_s_send(s, next, tag, HOP_BUF_SCRATCH,
					 lane + (size_t)pp * slot_bytes, len,
					 red, -1, -1);
	if (!vchunk(s, rb, ce, c, &co, &len))
		return -1;
	int rv = hop_s_recv(s, prev, tag, HOP_BUF_SCRATCH, slot, len,
			    lastuse[p], -1, -1);
	if (st < n - 2) {
		/* partial (lower in the fold) op own */
		red = hop_s_reduce(s, 0, HOP_BUF_SCRATCH, slot, HOP_BUF_SEND,
				   hop_vblk_start(s, rb) * es + co, len, rv, -1,
				   -1);
	} else {
		int cp = -1;
		if (!a->inplace)
			cp = hop_s_copy(s, HOP_BUF_RECV, co, HOP_BUF_SEND,
					hop_vblk_start(s, r) * es + co, len, -1,
					-1, -1);
		red = hop_s_reduce(s, HOP_STEP_REV, HOP_BUF_RECV, co,
				   HOP_BUF_SCRATCH, slot, len, rv, cp, -1);
	}
	lastuse[p] = red;
	return red;
}

static int ring_reducescatter(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, r = a->rank, ret;
	size_t es = s->esize, maxc = hop_vblk_max(s);
	struct ring g;

	s->avg_buf = HOP_BUF_RECV;
	s->avg_count = hop_vblk_count(s, r);
	if (!maxc)
		return 0;
	if (n == 1) {
		if (!a->inplace && s->avg_count)
			hop_s_copy(s, HOP_BUF_RECV, 0, HOP_BUF_SEND,
				   hop_vblk_start(s, r) * es,
				   s->avg_count * es, -1, -1, -1);
		return 0;
	}
	if ((ret = ring_init(s, &g)))
		return ret;
	size_t ce = hop_chunk_elems(s, maxc, n);
	size_t nch = hop_nchunks(maxc, ce);
	size_t slot_bytes = ce * es;
	size_t lane0 = hop_sched_scratch(s, slot_bytes * RS_SLOTS * nch);
	/* per chunk: the last use of each slot, its reduce of the step */
	int *lu = hop_sched_tmp(s, nch * (RS_SLOTS + 1));
	if (!lu)
		return s->err;

	/* step st: send block r-st-1 (own data at st 0, else the partial
	 * reduced at st-1), receive the partial of r-st-2 */
	for (int st = 0; st < n - 1; st++)
		for (size_t c = 0; c < nch; c++) {
			int *l = lu + c * (RS_SLOTS + 1);

			l[RS_SLOTS] = rs_step(s, &g, st, c, nch, ce, lane0 +
					      c * RS_SLOTS * slot_bytes,
					      slot_bytes, l, l[RS_SLOTS]);
		}
	return 0;
}

int hop_build_ring(struct hop_sched *s)
{
	switch (s->args.kind) {
	case HOP_COLL_ALLREDUCE:
		return ring_allreduce(s);
	case HOP_COLL_ALLGATHER:
	case HOP_COLL_ALLGATHERV:
		return ring_allgather(s);
	case HOP_COLL_REDUCESCATTER:
	case HOP_COLL_REDUCESCATTERV:
		return ring_reducescatter(s);
	}
	return HOP_ERR_NOT_SUPPORTED;
}
