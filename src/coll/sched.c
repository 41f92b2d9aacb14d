/*
 * sched.c - schedule storage, building dispatch and the dataflow driver
 * shared by the p2p executor and the simulators (src/sim).
 *
 * Every array grows geometrically and is kept: rebuilding or rerunning a
 * schedule of the same or smaller size allocates nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/reduce.h"
#include "coll/sched.h"
#include "core/copy.h"

void hop_sched_init(struct hop_sched *s)
{
	memset(s, 0, sizeof(*s));
}

void hop_sched_free(struct hop_sched *s)
{
	free(s->steps);
	free(s->offs);
	free(s->succ_start);
	free(s->succ);
	free(s->pending);
	free(s->qnext);
	free(s->tmp);
	free(s->ord);
	hop_sched_init(s);
}

static int grow(void **p, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return 0;
	int ncap = *cap ? *cap : 64;
	while (ncap < need) {
		if (ncap > (1 << 29))
			return HOP_ERR_NO_MEMORY;
		ncap *= 2;
	}
	void *n = realloc(*p, (size_t)ncap * elem);
	if (!n)
		return HOP_ERR_NO_MEMORY;
	*p = n;
	*cap = ncap;
	return 0;
}

int hop_sched_add(struct hop_sched *s, int kind, int flags, int dbuf,
		  size_t doff, int sbuf, size_t soff, size_t len, int peer,
		  uint32_t tag, int d0, int d1, int d2)
{
	if (s->err)
		return -1;
	if (grow((void **)&s->steps, &s->cap, s->nsteps + 1,
		 sizeof(*s->steps)) ||
	    (!s->args.timing_only &&
	     grow((void **)&s->offs, &s->offs_cap, s->nsteps + 1,
		  sizeof(*s->offs)))) {
		s->err = HOP_ERR_NO_MEMORY;
		return -1;
	}
	struct hop_step *st = &s->steps[s->nsteps];
	st->kind = (uint8_t)kind;
	st->flags = (uint8_t)flags;
	st->dbuf = (uint8_t)dbuf;
	st->sbuf = (uint8_t)sbuf;
	st->peer = peer;
	st->tag = tag;
	st->deps[0] = d0;
	st->deps[1] = d1;
	st->deps[2] = d2;
	st->len = len;
	if (!s->args.timing_only)
		s->offs[s->nsteps] = (struct hop_step_offs){ doff, soff };
	return s->nsteps++;
}

size_t hop_sched_scratch(struct hop_sched *s, size_t bytes)
{
	size_t off = s->scratch_bytes;

	s->scratch_bytes += (bytes + HOP_SCRATCH_ALIGN - 1) &
			    ~(size_t)(HOP_SCRATCH_ALIGN - 1);
	return off;
}

size_t hop_chunk_elems(const struct hop_sched *s, size_t elems, int phases)
{
	size_t ce = s->args.chunk_bytes / s->esize;
	size_t maxch = HOP_SCHED_MAX_CHUNKS;
	uint64_t tags = 1ull << (s->tag_bits ? s->tag_bits : 31);

	if (phases < 1)
		phases = 1;
	if (maxch > tags / (size_t)phases)
		maxch = tags / (size_t)phases;
	if (maxch < 1)
		maxch = 1;
	if (ce == 0)
		ce = 1;
	if (ce > elems)
		ce = elems ? elems : 1; /* no lane larger than the data */
	if (hop_nchunks(elems, ce) > maxch)
		ce = (elems + maxch - 1) / maxch;
	return ce;
}

int *hop_sched_tmp(struct hop_sched *s, size_t n)
{
	if (n > (1u << 30) || grow((void **)&s->tmp, &s->tmp_cap,
				   n ? (int)n : 1, sizeof(int))) {
		s->err = HOP_ERR_NO_MEMORY;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		s->tmp[i] = -1;
	return s->tmp;
}

int *hop_sched_ord(struct hop_sched *s, size_t n)
{
	if (n > (1u << 30) || grow((void **)&s->ord, &s->ord_cap,
				   n ? (int)n : 1, sizeof(int))) {
		s->err = HOP_ERR_NO_MEMORY;
		return NULL;
	}
	return s->ord;
}

/* Successor lists in CSR form, and the run-state arrays. */
static int sched_prepare(struct hop_sched *s)
{
	int n = s->nsteps, nedges = 0;

	for (int i = 0; i < n; i++)
		for (int k = 0; k < HOP_SCHED_MAXDEPS; k++) {
			int d = s->steps[i].deps[k];
			if (d >= i)
				return HOP_ERR_INTERNAL; /* deps point backwards */
			if (d >= 0)
				nedges++;
		}
	if (grow((void **)&s->succ_start, &s->start_cap, n + 1, sizeof(int)) ||
	    grow((void **)&s->succ, &s->succ_cap, nedges ? nedges : 1,
		 sizeof(int)))
		return HOP_ERR_NO_MEMORY;
	int cap = s->run_cap;
	if (grow((void **)&s->pending, &cap, n ? n : 1, sizeof(*s->pending)))
		return HOP_ERR_NO_MEMORY;
	cap = s->run_cap;
	if (grow((void **)&s->qnext, &cap, n ? n : 1, sizeof(int)))
		return HOP_ERR_NO_MEMORY;
	s->run_cap = cap;

	/* count successors per step, prefix-sum, fill (qnext as cursor) */
	memset(s->succ_start, 0, (size_t)(n + 1) * sizeof(int));
	for (int i = 0; i < n; i++)
		for (int k = 0; k < HOP_SCHED_MAXDEPS; k++)
			if (s->steps[i].deps[k] >= 0)
				s->succ_start[s->steps[i].deps[k] + 1]++;
	for (int i = 0; i < n; i++)
		s->succ_start[i + 1] += s->succ_start[i];
	for (int i = 0; i < n; i++)
		s->qnext[i] = s->succ_start[i];
	for (int i = 0; i < n; i++)
		for (int k = 0; k < HOP_SCHED_MAXDEPS; k++) {
			int d = s->steps[i].deps[k];
			if (d >= 0)
				s->succ[s->qnext[d]++] = i;
		}
	return 0;
}

size_t hop_vblk_max(const struct hop_sched *s)
{
	size_t m = 0;

	for (int b = 0; b < s->args.nranks; b++)
		if (hop_vblk_count(s, b) > m)
			m = hop_vblk_count(s, b);
	return m;
}

static int is_vkind(int kind)
{
	return kind == HOP_COLL_ALLGATHERV || kind == HOP_COLL_REDUCESCATTERV ||
	       kind == HOP_COLL_ALLTOALLV;
}

/* A v-variant's blocks are not in the args (only read while building; an
 * alltoallv's in the caller's arrays): its schedule is rebuilt for every
 * call, a build is O(N). */
static int args_equal(const struct hop_coll_args *a,
		      const struct hop_coll_args *b)
{
	return !is_vkind(a->kind) && a->kind == b->kind && a->algo == b->algo &&
	       a->rank == b->rank && a->nranks == b->nranks &&
	       a->root == b->root && a->count == b->count &&
	       a->dtype == b->dtype && a->op == b->op &&
	       a->inplace == b->inplace && a->chunk_bytes == b->chunk_bytes &&
	       a->depth == b->depth && a->timing_only == b->timing_only &&
	       a->hsig == b->hsig && a->sub_algo[0] == b->sub_algo[0] &&
	       a->sub_algo[1] == b->sub_algo[1] && a->leaders == b->leaders &&
	       a->sync == b->sync;
}

int hop_sched_dispatch(struct hop_sched *s)
{
	if (s->args.algo == HOP_ALGO_HIER)
		return hop_build_hier(s);
	switch (s->args.kind) {
	case HOP_COLL_BROADCAST:
		return hop_build_bcast(s);
	case HOP_COLL_REDUCE:
		return hop_build_reduce(s);
	case HOP_COLL_ALLREDUCE:
		switch (s->args.algo) {
		case HOP_ALGO_RING:
			return hop_build_ring(s);
		case HOP_ALGO_TREE:
		case HOP_ALGO_DBTREE:
			return hop_build_allreduce_tree(s);
		case HOP_ALGO_RD:
		case HOP_ALGO_RABENSEIFNER:
			return hop_build_recursive(s);
		}
		break;
	case HOP_COLL_ALLGATHER:
		if (s->args.algo == HOP_ALGO_RING)
			return hop_build_ring(s);
		if (s->args.algo == HOP_ALGO_BRUCK)
			return hop_build_allgather_bruck(s);
		break;
	case HOP_COLL_REDUCESCATTER:
		if (s->args.algo == HOP_ALGO_RING)
			return hop_build_ring(s);
		if (s->args.algo == HOP_ALGO_HALVING)
			return hop_build_recursive(s);
		break;
	case HOP_COLL_BARRIER:
		return hop_build_barrier(s);
	case HOP_COLL_ALLTOALL:
		if (s->args.algo == HOP_ALGO_BRUCK)
			return hop_build_alltoall_bruck(s);
		/* fall through */
	case HOP_COLL_ALLTOALLV:
		if (s->args.algo == HOP_ALGO_PAIRWISE)
			return hop_build_alltoall_pairwise(s);
		break;
	case HOP_COLL_GATHER:
	case HOP_COLL_SCATTER:
		return hop_build_gather_scatter(s);
	case HOP_COLL_ALLGATHERV:
	case HOP_COLL_REDUCESCATTERV:
		if (s->args.algo == HOP_ALGO_RING)
			return hop_build_ring(s);
		break;
	}
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_sched_build(struct hop_sched *s, const struct hop_coll_args *a)
{
	if (s->built && args_equal(&s->args, a))
		return 0;
	s->built = 0;
	s->args = *a;
	if (s->args.depth < 1)
		s->args.depth = 1;
	if (s->args.depth > HOP_SCHED_MAX_DEPTH)
		s->args.depth = HOP_SCHED_MAX_DEPTH;
	s->esize = a->kind == HOP_COLL_BARRIER ? 1 : hop_dtype_size(a->dtype);
	s->rop = a->op == HOP_AVG ? HOP_SUM : a->op;
	s->nsteps = 0;
	s->scratch_bytes = 0;
	if (a->timing_only) { /* no stale offsets */
		free(s->offs);
		s->offs = NULL;
		s->offs_cap = 0;
	}
	s->avg_buf = HOP_BUF_NONE;
	s->avg_off = s->avg_count = 0;
	s->err = 0;
	if (a->nranks < 1 || a->rank < 0 || a->rank >= a->nranks ||
	    s->esize == 0 || a->chunk_bytes == 0)
		return HOP_ERR_INTERNAL;
	int ret = hop_sched_dispatch(s);
	/* Its steps wait on nothing of the collective's: entering the call
	 * is what the other ranks must see (flow control, not ordering). */
	if (!ret && a->sync)
		hop_sched_add_barrier(s, HOP_SYNC_TAG);
	/* the caller's, not kept */
	s->args.counts = s->args.displs = NULL;
	s->args.hosts = NULL;
	if (!ret)
		ret = s->err;
	if (!ret)
		ret = sched_prepare(s);
	if (ret)
		return ret;
	s->args.depth = a->depth; /* compare against what the caller passed */
	s->built = 1;
	return 0;
}

static void queue_push(int *head, int *tail, int *next, int i)
{
	next[i] = -1;
	if (*tail < 0)
		*head = i;
	else
		next[*tail] = i;
	*tail = i;
}

static int queue_pop(int *head, int *tail, const int *next)
{
	int i = *head;

	*head = next[i];
	if (*head < 0)
		*tail = -1;
	return i;
}

void hop_sched_start(struct hop_sched *s, void *const base[HOP_BUF_COUNT])
{
	for (int b = 0; b < HOP_BUF_COUNT; b++)
		s->base[b] = base[b];
	s->rhead = s->rtail = s->chead = s->ctail = -1;
	s->ndone = 0;
	s->finished = 0;
	for (int i = 0; i < s->nsteps; i++) {
		int p = 0;
		for (int k = 0; k < HOP_SCHED_MAXDEPS; k++)
			p += s->steps[i].deps[k] >= 0;
		s->pending[i] = (uint8_t)p;
		if (!p)
			queue_push(&s->rhead, &s->rtail, s->qnext, i);
	}
}

void hop_sched_complete(struct hop_sched *s, int idx)
{
	queue_push(&s->chead, &s->ctail, s->qnext, idx);
	s->ndone++;
}

static void run_inline(struct hop_sched *s, int i)
{
	const struct hop_step *st = &s->steps[i];
	void *dst = hop_step_dst(s, i);
	const void *src = hop_step_src(s, i);

	if (!dst || !src || dst == src || !st->len)
		return; /* data-less simulation, in place, or empty */
	if (st->kind == HOP_STEP_COPY)
		hop_move(dst, src, st->len);
	else
		hop_reduce_local(dst, src, st->len / s->esize, s->args.dtype,
				 s->rop, st->flags & HOP_STEP_REV);
}

int hop_sched_advance(struct hop_sched *s, hop_sched_start_fn start,
		      void *ctx)
{
	return hop_sched_advance_hook(s, start, NULL, ctx);
}

int hop_sched_advance_hook(struct hop_sched *s, hop_sched_start_fn start,
			   hop_sched_inline_fn ran, void *ctx)
{
	for (;;) {
		if (s->chead >= 0) {
			int i = queue_pop(&s->chead, &s->ctail, s->qnext);
			for (int e = s->succ_start[i]; e < s->succ_start[i + 1];
			     e++) {
				int j = s->succ[e];
				if (--s->pending[j] == 0)
					queue_push(&s->rhead, &s->rtail,
						   s->qnext, j);
			}
			continue;
		}
		if (s->rhead >= 0) {
			int i = queue_pop(&s->rhead, &s->rtail, s->qnext);
			const struct hop_step *st = &s->steps[i];
			if (st->kind == HOP_STEP_SEND ||
			    st->kind == HOP_STEP_RECV) {
				int ret = start(ctx, s, i);
				if (ret)
					return ret;
			} else {
				if (st->kind != HOP_STEP_NOP)
					run_inline(s, i);
				if (ran)
					ran(ctx, s, i);
				hop_sched_complete(s, i);
			}
			continue;
		}
		break;
	}
	if (!s->finished && s->ndone == s->nsteps) {
		void *p = hop_sched_ptr(s, s->avg_buf, s->avg_off);
		if (p && s->avg_count && s->args.op == HOP_AVG)
			hop_reduce_avg(p, s->avg_count, s->args.dtype,
				       s->args.nranks);
		s->finished = 1;
	}
	return 0;
}
