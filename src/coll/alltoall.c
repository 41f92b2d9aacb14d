/*
 * alltoall.c - AllToAll and AllToAllv schedules.
 *
 * Layout (MPI's): the block for (from) peer p is at p * count elements of
 * the send (receive) buffer; for alltoallv at sdispls[p] (rdispls[p])
 * with sendcounts[p] (recvcounts[p]) elements (sched.v).
 *
 * Pairwise: N-1 exchanges; at step i a rank sends to one peer and
 * receives from another (rank XOR i when N is a power of two, so pairs
 * swap at once; else rank + i and rank - i mod N). Every pair exchanges
 * a message, zero bytes included, so a count one side does not expect
 * fails the collective (a mismatched length) instead of leaving a receive
 * waiting. At most HOP_A2A_WINDOW exchanges are in flight: all N-1 at
 * once would have every rank's sends land on a few receivers first.
 * AllToAll's blocks go as pieces of the chunk size when it is smaller
 * (the model picks eager pieces for a block a few eager sizes long: they
 * skip the rendezvous's request and clear to send, which cost a context
 * switch each on an oversubscribed host). In place, the send data is
 * first copied to scratch.
 *
 * Bruck (alltoall only): rotate the blocks so block j is for rank + j;
 * in round k (1, 2, 4, ...) send the blocks whose index has bit k set to
 * rank + k, packed, and put the received ones at the same indices; then
 * block j came from rank - j. ceil(log2 N) messages of about N/2 blocks
 * instead of N-1 of one: fewer alphas, more bytes and copies.
 */
#include "coll/sched.h"

#include "model/model.h"

/* Block of peer @p in buffer side @side (0 send, 1 receive): byte
 * offset and length. */
static void a2a_block(const struct hop_sched *s, int side, int p,
		      size_t *off, size_t *len)
{
	const struct hop_coll_args *a = &s->args;

	if (a->kind == HOP_COLL_ALLTOALLV) {
		*len = s->v[2 * side][p] * s->esize;
		*off = s->v[2 * side + 1][p] * s->esize;
	} else {
		*len = a->count * s->esize;
		*off = (size_t)p * *len;
	}
}

/* End of the send data (bytes from the buffer's start). */
static size_t a2a_send_extent(const struct hop_sched *s)
{
	size_t end = 0, off, len;

	for (int p = 0; p < s->args.nranks; p++) {
		a2a_block(s, 0, p, &off, &len);
		if (len && off + len > end)
			end = off + len;
	}
	return end;
}

static int pair_peer(int r, int n, int i, int to)
{
	if ((n & (n - 1)) == 0)
		return r ^ i;
	return hop_mod(to ? r + i : r - i, n);
}

/* The exchange with @to and @from, after @dep: @piece bytes a message
 * (0: the whole block; alltoall's blocks are all equally long), every
 * pair at least one message. Returns the step that joins them. */
static int pair_exchange(struct hop_sched *s, int sbuf, int to, int from,
			 size_t piece, int dep)
{
	size_t off, len, roff, rlen, n = 1;
	int join = -1;

	a2a_block(s, 1, from, &roff, &rlen);
	a2a_block(s, 0, to, &off, &len);
	if (piece && len > piece)
		n = hop_nchunks(len, piece);
	for (size_t c = 0; c < n; c++) {
		size_t o = c * piece;
		size_t sl = n > 1 && len - o > piece ? piece : len - o;
		size_t rl = n > 1 && rlen - o > piece ? piece : rlen - o;
		int rv = hop_s_recv(s, from, (uint32_t)c, HOP_BUF_RECV,
				    roff + o, rl, dep, -1, -1);
		int sd = hop_s_send(s, to, (uint32_t)c, sbuf, off + o, sl, dep,
				    -1, -1);

		join = hop_s_nop(s, rv, sd, join);
	}
	return join;
}

int hop_build_alltoall_pairwise(struct hop_sched *s)
{
	int n = s->args.nranks, r = s->args.rank, sbuf = HOP_BUF_SEND;
	int first = -1, *join;
	size_t off, len, roff, rlen, piece = 0;

	if (s->args.inplace) {
		/* every block is read before any is received over it */
		size_t ext = a2a_send_extent(s);
		size_t so = hop_sched_scratch(s, ext);

		first = hop_s_copy(s, HOP_BUF_SCRATCH, so, HOP_BUF_RECV, 0, ext,
				   -1, -1, -1);
		sbuf = HOP_BUF_SCRATCH; /* so == 0: the only reservation */
	}
	a2a_block(s, 0, r, &off, &len);
	a2a_block(s, 1, r, &roff, &rlen);
	hop_s_copy(s, HOP_BUF_RECV, roff, sbuf, off, len, first, -1, -1);
	if (s->args.kind == HOP_COLL_ALLTOALL)
		piece = hop_chunk_elems(s, s->args.count, 1) * s->esize;
	if (!(join = hop_sched_tmp(s, (size_t)n)))
		return s->err;
	for (int i = 1; i < n; i++) {
		int dep = i > HOP_A2A_WINDOW ? join[i - HOP_A2A_WINDOW] : first;

		join[i] = pair_exchange(s, sbuf, pair_peer(r, n, i, 1),
					pair_peer(r, n, i, 0), piece, dep);
	}
	return s->err;
}

/* Copy runs of the blocks whose index j (1..N-1) has bit @k set between
 * the rotated blocks at @tmp and the packed ones at @pack, one step after
 * the other from @dep; @unpack: pack -> tmp. Returns the last step. */
static int bruck_pack(struct hop_sched *s, int k, size_t blk, size_t tmp,
		      size_t pack, int unpack, int dep, int dep2)
{
	int n = s->args.nranks;
	size_t c = 0;

	for (int j = k; j < n; j += 2 * k) {
		size_t nb = (size_t)(j + k <= n ? k : n - j);
		size_t t = tmp + (size_t)j * blk, p = pack + c * blk;

		dep = unpack ? hop_s_copy(s, HOP_BUF_SCRATCH, t, HOP_BUF_SCRATCH,
					  p, nb * blk, dep, dep2, -1)
			     : hop_s_copy(s, HOP_BUF_SCRATCH, p, HOP_BUF_SCRATCH,
					  t, nb * blk, dep, dep2, -1);
		dep2 = -1;
		c += nb;
	}
	return dep;
}

/* Blocks round @k moves: indices 1..N-1 with bit k set. */
static size_t bruck_blocks(int n, int k)
{
	size_t c = 0;

	for (int j = k; j < n; j += 2 * k)
		c += (size_t)(j + k <= n ? k : n - j);
	return c;
}

int hop_build_alltoall_bruck(struct hop_sched *s)
{
	int n = s->args.nranks, r = s->args.rank, round = 0, last;
	size_t blk = s->args.count * s->esize, most = 0;

	for (int k = 1; k < n; k *= 2)
		if (bruck_blocks(n, k) > most)
			most = bruck_blocks(n, k);
	size_t tmp = hop_sched_scratch(s, (size_t)n * blk);
	size_t ps = hop_sched_scratch(s, most * blk);
	size_t pr = hop_sched_scratch(s, most * blk);

	/* rotate: tmp block j = send block r + j. In place this reads the
	 * whole buffer before the final copies write it. */
	last = hop_s_copy(s, HOP_BUF_SCRATCH, tmp, HOP_BUF_SEND,
			  (size_t)r * blk, (size_t)(n - r) * blk, -1, -1, -1);
	if (r)
		last = hop_s_copy(s, HOP_BUF_SCRATCH,
				  tmp + (size_t)(n - r) * blk, HOP_BUF_SEND, 0,
				  (size_t)r * blk, last, -1, -1);
	for (int k = 1; k < n; k *= 2, round++) {
		size_t bytes = bruck_blocks(n, k) * blk;
		int packed = bruck_pack(s, k, blk, tmp, ps, 0, last, -1);
		int sd = hop_s_send(s, hop_mod(r + k, n), (uint32_t)round,
				    HOP_BUF_SCRATCH, ps, bytes, packed, -1, -1);
		int rv = hop_s_recv(s, hop_mod(r - k, n), (uint32_t)round,
				    HOP_BUF_SCRATCH, pr, bytes, last, -1, -1);
		/* unpacking overwrites blocks the packing read */
		int un = bruck_pack(s, k, blk, tmp, pr, 1, rv, packed);
		last = hop_s_nop(s, sd, un, -1);
	}
	for (int j = 0; j < n; j++)
		hop_s_copy(s, HOP_BUF_RECV, (size_t)hop_mod(r - j, n) * blk,
			   HOP_BUF_SCRATCH, tmp + (size_t)j * blk, blk, last, -1,
			   -1);
	return s->err;
}
