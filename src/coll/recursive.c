/*
 * recursive.c - recursive doubling AllReduce, Rabenseifner AllReduce
 * (recursive-halving reduce-scatter + recursive-doubling allgather) and
 * recursive-halving ReduceScatter.
 *
 * Non-powers of two: the standard fold. With p the largest power of two
 * <= N and rem = N - p, each even rank r < 2 rem hands its data to r + 1
 * and sits out; the p remaining ranks ("new ranks": r/2 for the odd
 * ranks below 2 rem, r - rem above) run the power-of-two algorithm; the
 * odd ranks hand the result back. New ranks preserve rank order.
 *
 * The AllReduces run over the ranks in host order (hop_sched_ring()):
 * positions, not ranks, are folded and paired, so on a communicator whose
 * hosts hold consecutive positions the short distances stay inside a host
 * whatever the placement, and only the steps of distance >= the ranks per
 * host cross between hosts. The ReduceScatter keeps rank order: its
 * blocks end at the ranks that own them.
 *
 * Bitwise identical results: partners always reduce lower op higher (by
 * new rank), so both hold the same bytes after every doubling step; in
 * the halving algorithms each block is reduced by one rank only and then
 * copied.
 */
#include "coll/sched.h"

struct fold {
	int p, rem, nr;         /* nr: new rank, -1 when folded out */
	int pos;                /* this rank's position */
	const int *ord;         /* rank at each position; NULL: rank order */
};

/* The fold of position @pos among @n (@ord: see struct fold). */
static struct fold fold_at(int pos, int n, const int *ord)
{
	struct fold f;

	f.p = hop_pof2_floor(n);
	f.rem = n - f.p;
	f.pos = pos;
	f.ord = ord;
	if (pos < 2 * f.rem)
		f.nr = pos % 2 ? pos / 2 : -1;
	else
		f.nr = pos - f.rem;
	return f;
}

/* The fold of this rank at its position in host order (the identity on
 * one host). Return: 0, or HOP_ERR_NO_MEMORY. */
static int fold_of(struct hop_sched *s, struct fold *f)
{
	const struct hop_coll_args *a = &s->args;
	const int *ord = NULL;
	int pos = a->rank;

	/* without hosts the order is the identity: no O(N) table per rank,
	 * which the simulator of many ranks would pay N times */
	if (a->hosts && !(ord = hop_sched_ring(s, &pos)))
		return HOP_ERR_NO_MEMORY;
	*f = fold_at(pos, a->nranks, ord);
	return 0;
}

/* The rank at position @pos. */
static int fold_rank(const struct fold *f, int pos)
{
	return f->ord ? f->ord[pos] : pos;
}

/* The rank of new rank @nr. */
static int fold_real(const struct fold *f, int nr)
{
	return fold_rank(f, nr < f->rem ? 2 * nr + 1 : nr + f->rem);
}

/* The rank at position @d from this rank's (the fold's pair: +1, -1). */
static int fold_near(const struct fold *f, int d)
{
	return fold_rank(f, f->pos + d);
}

/* Byte offset of superblock i: p equal blocks of @count elements
 * (Rabenseifner), or the blocks of new rank i (ReduceScatter: blocks 2i
 * and 2i+1 for i < rem, else block i + rem, each @blk bytes). */
struct superblocks {
	int by_rank;
	size_t count, es, blk;
	int p, rem;
};

static size_t sb_off(const struct superblocks *b, int i)
{
	if (b->by_rank)
		return (size_t)(i < b->rem ? 2 * i : i + b->rem) * b->blk;
	return hop_blk_start(b->count, b->p, i) * b->es;
}

static int log2i(int p)
{
	int l = 0;

	while ((1 << l) < p)
		l++;
	return l;
}

/* ---- AllReduce, recursive doubling, chunked ---- */
static int rd_allreduce(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int D = a->depth, lg, lastuse[HOP_SCHED_MAX_DEPTH];
	size_t count = a->count, es = s->esize;
	struct fold f;

	if (fold_of(s, &f))
		return HOP_ERR_NO_MEMORY;
	lg = log2i(f.p);

	s->avg_buf = HOP_BUF_RECV;
	s->avg_count = count;
	if (!count)
		return 0;
	size_t ce = hop_chunk_elems(s, count, lg + 2);
	size_t nch = hop_nchunks(count, ce);
	if ((size_t)D > nch)
		D = (int)nch;
	size_t lane0 = f.nr >= 0 ? hop_sched_scratch(s, (size_t)D * ce * es) : 0;
	for (int l = 0; l < D; l++)
		lastuse[l] = -1;

	for (size_t c = 0; c < nch; c++) {
		size_t off = c * ce * es;
		size_t len = (count - c * ce < ce ? count - c * ce : ce) * es;
		int L = (int)(c % (size_t)D);
		size_t slot = lane0 + (size_t)L * ce * es;
		uint32_t t_unfold = (uint32_t)((size_t)(lg + 1) * nch + c);

		if (f.nr < 0) { /* folded out: hand over, get the result */
			int sd = hop_s_send(s, fold_near(&f, 1), (uint32_t)c,
					    HOP_BUF_SEND, off, len, -1, -1, -1);
			hop_s_recv(s, fold_near(&f, 1), t_unfold, HOP_BUF_RECV,
				   off, len, sd, -1, -1);
			continue;
		}
		int prev = -1;
		if (!a->inplace)
			prev = hop_s_copy(s, HOP_BUF_RECV, off, HOP_BUF_SEND, off,
					  len, -1, -1, -1);
		if (f.pos < 2 * f.rem) { /* odd: the even neighbour's data */
			int rv = hop_s_recv(s, fold_near(&f, -1), (uint32_t)c,
					    HOP_BUF_SCRATCH, slot, len,
					    lastuse[L], -1, -1);
			prev = hop_s_reduce(s, HOP_STEP_REV, HOP_BUF_RECV, off,
					    HOP_BUF_SCRATCH, slot, len, rv, prev,
					    -1);
			lastuse[L] = prev;
		}
		for (int k = 0; k < lg; k++) {
			int pnr = f.nr ^ (1 << k), peer = fold_real(&f, pnr);
			uint32_t tag = (uint32_t)((size_t)(k + 1) * nch + c);
			int sd = hop_s_send(s, peer, tag, HOP_BUF_RECV, off, len,
					    prev, -1, -1);
			int rv = hop_s_recv(s, peer, tag, HOP_BUF_SCRATCH, slot,
					    len, lastuse[L], -1, -1);
			/* lower new rank's data first; wait for our send
			 * before overwriting what it reads */
			prev = hop_s_reduce(s, f.nr < pnr ? 0 : HOP_STEP_REV,
					    HOP_BUF_RECV, off, HOP_BUF_SCRATCH,
					    slot, len, rv, sd, -1);
			lastuse[L] = prev;
		}
		if (f.pos < 2 * f.rem)
			hop_s_send(s, fold_near(&f, -1), t_unfold, HOP_BUF_RECV,
				   off, len,
				   prev, -1, -1);
	}
	return 0;
}

/*
 * Recursive halving over p new ranks. Superblock i of the data (byte
 * range sb[i]..sb[i+1]) ends at new rank i. @cur/@cur_dep: where this
 * rank's data is (SEND, or W after the fold). W is the work buffer,
 * T a staging area. Returns the last reduce; rs_send[k] gets the send of
 * step k (the range a later allgather step receives back).
 */
static int halving(struct hop_sched *s, const struct fold *f,
		   const struct superblocks *sb, int W, size_t woff, size_t toff, int cur,
		   int cur_dep, int tag0, int *rs_send)
{
	int lo = 0, hi = f->p, prev = cur_dep, k = 0;

	for (int dist = f->p / 2; dist >= 1; dist /= 2, k++) {
		int pnr = f->nr ^ dist, peer = fold_real(f, pnr);
		int mid = lo + (hi - lo) / 2, low = f->nr < pnr;
		int klo = low ? lo : mid, khi = low ? mid : hi;
		int slo = low ? mid : lo, shi = low ? hi : mid;
		size_t kof = sb_off(sb, klo), klen = sb_off(sb, khi) - kof;
		size_t sof = sb_off(sb, slo), slen = sb_off(sb, shi) - sof;
		uint32_t tag = (uint32_t)(tag0 + k);

		rs_send[k] = -1;
		if (slen)
			rs_send[k] = hop_s_send(s, peer, tag, cur,
						(cur == W ? woff : 0) + sof,
						slen, cur == W ? prev : -1, -1,
						-1);
		if (klen) {
			int rv, red;
			if (cur != W) {
				/* first step from the send buffer: receive
				 * into W, reduce with our own data */
				rv = hop_s_recv(s, peer, tag, W, woff + kof,
						klen, -1, -1, -1);
				red = hop_s_reduce(s, low ? HOP_STEP_REV : 0, W,
						   woff + kof, cur, kof, klen,
						   rv, -1, -1);
			} else {
				rv = hop_s_recv(s, peer, tag, HOP_BUF_SCRATCH,
						toff, klen, prev, -1, -1);
				red = hop_s_reduce(s, low ? 0 : HOP_STEP_REV, W,
						   woff + kof, HOP_BUF_SCRATCH,
						   toff, klen, rv, prev, -1);
			}
			prev = red;
		}
		cur = W;
		lo = klo;
		hi = khi;
	}
	return prev;
}

/* ---- AllReduce, Rabenseifner ---- */
static int rab_allreduce(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int lg, rs_send[32];
	size_t count = a->count, es = s->esize, bytes = count * es;
	struct fold f;

	if (fold_of(s, &f))
		return HOP_ERR_NO_MEMORY;
	lg = log2i(f.p);
	struct superblocks sb = { 0, count, es, 0, f.p, f.rem };

	s->avg_buf = HOP_BUF_RECV;
	s->avg_count = count;
	if (!count)
		return 0;
	uint32_t t_unfold = (uint32_t)(2 * lg + 2);
	if (f.nr < 0) {
		int sd = hop_s_send(s, fold_near(&f, 1), 0, HOP_BUF_SEND, 0,
				    bytes, -1, -1, -1);
		hop_s_recv(s, fold_near(&f, 1), t_unfold, HOP_BUF_RECV, 0, bytes,
			   sd, -1, -1);
		return 0;
	}
	size_t toff = hop_sched_scratch(s, bytes);
	int prev = -1;
	if (!a->inplace)
		prev = hop_s_copy(s, HOP_BUF_RECV, 0, HOP_BUF_SEND, 0, bytes, -1,
				  -1, -1);
	if (f.pos < 2 * f.rem) {
		int rv = hop_s_recv(s, fold_near(&f, -1), 0, HOP_BUF_SCRATCH,
				    toff, bytes, -1, -1, -1);
		prev = hop_s_reduce(s, HOP_STEP_REV, HOP_BUF_RECV, 0,
				    HOP_BUF_SCRATCH, toff, bytes, rv, prev, -1);
	}
	prev = halving(s, &f, &sb, HOP_BUF_RECV, 0, toff, HOP_BUF_RECV, prev,
		       1, rs_send);
	/* allgather by recursive doubling: windows of dist superblocks */
	int have = prev, k = lg - 1;
	for (int dist = 1; dist < f.p; dist *= 2, k--) {
		int pnr = f.nr ^ dist, peer = fold_real(&f, pnr);
		int mlo = f.nr & ~(dist - 1), plo = pnr & ~(dist - 1);
		size_t mof = sb_off(&sb, mlo), mlen = sb_off(&sb, mlo + dist) - mof;
		size_t pof = sb_off(&sb, plo), plen = sb_off(&sb, plo + dist) - pof;
		uint32_t tag = (uint32_t)(lg + 1 + k);

		if (mlen)
			hop_s_send(s, peer, tag, HOP_BUF_RECV, mof, mlen, have,
				   -1, -1);
		if (plen) {
			/* the halving step k sent exactly this range */
			int rv = hop_s_recv(s, peer, tag, HOP_BUF_RECV, pof,
					    plen, rs_send[k], -1, -1);
			have = hop_s_nop(s, have, rv, -1);
		}
	}
	if (f.pos < 2 * f.rem)
		hop_s_send(s, fold_near(&f, -1), t_unfold, HOP_BUF_RECV, 0,
			   bytes, have, -1, -1);
	return 0;
}

/* ---- ReduceScatter, recursive halving ---- */
static int halving_reducescatter(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int r = a->rank, n = a->nranks;
	struct fold f = fold_at(r, n, NULL);
	int lg = log2i(f.p), rs_send[32];
	size_t es = s->esize, blk = a->count * es, all = blk * (size_t)n;
	struct superblocks sb = { 1, 0, es, blk, f.p, f.rem };

	s->avg_buf = HOP_BUF_RECV;
	s->avg_count = a->count;
	if (!a->count)
		return 0;
	if (n == 1) {
		if (!a->inplace)
			hop_s_copy(s, HOP_BUF_RECV, 0, HOP_BUF_SEND, 0, blk, -1,
				   -1, -1);
		return 0;
	}
	uint32_t t_unfold = (uint32_t)(lg + 1);
	if (f.nr < 0) {
		int sd = hop_s_send(s, r + 1, 0, HOP_BUF_SEND, 0, all, -1, -1,
				    -1);
		hop_s_recv(s, r + 1, t_unfold, HOP_BUF_RECV, 0, blk, sd, -1,
			   -1);
		return 0;
	}
	size_t woff = hop_sched_scratch(s, all);
	size_t toff = hop_sched_scratch(s, all);
	int cur = HOP_BUF_SEND, prev = -1;
	if (r < 2 * f.rem) {
		int rv = hop_s_recv(s, r - 1, 0, HOP_BUF_SCRATCH, woff, all, -1,
				    -1, -1);
		prev = hop_s_reduce(s, 0, HOP_BUF_SCRATCH, woff, HOP_BUF_SEND,
				    0, all, rv, -1, -1);
		cur = HOP_BUF_SCRATCH;
	}
	prev = halving(s, &f, &sb, HOP_BUF_SCRATCH, woff, toff, cur, prev, 1,
		       rs_send);
	size_t mine = woff + (size_t)r * blk;
	if (r < 2 * f.rem)
		hop_s_send(s, r - 1, t_unfold, HOP_BUF_SCRATCH,
			   woff + (size_t)(r - 1) * blk, blk, prev, -1, -1);
	hop_s_copy(s, HOP_BUF_RECV, 0, HOP_BUF_SCRATCH, mine, blk, prev, -1,
		   -1);
	return 0;
}

int hop_build_recursive(struct hop_sched *s)
{
	if (s->args.kind == HOP_COLL_REDUCESCATTER)
		return halving_reducescatter(s);
	if (s->args.algo == HOP_ALGO_RD)
		return rd_allreduce(s);
	return rab_allreduce(s);
}
