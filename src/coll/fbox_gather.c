/*
 * fbox_gather.c - the fast boxes' gathering kinds: a blocking AllGather,
 * AllToAll or ReduceScatter. Every rank writes its payload (its block, or
 * all N of its AllToAll or ReduceScatter blocks) to its slot, or above a
 * slot to its wide area, and then copies its share out of every peer's
 * (a ReduceScatter reduces it out of every rank's, in rank order 0..N-1
 * as an AllReduce in the slots does), as vader's fast boxes serve a small
 * exchange without a rendezvous or a schedule. An AllGather's or
 * AllToAll's own block goes straight from its send buffer (in place it
 * is already there), and an AllToAll's wide ring leaves it out: above
 * the slot that is a quarter of the copies of 2 ranks. Like an AllReduce,
 * every rank reads every peer's slot, so each call also proves that every
 * rank finished the call before it (the slots' floor).
 */
#include <string.h>

#include "coll/coll_int.h"
#include "coll/fbox_int.h"
#include "coll/reduce.h"

int hop_fbox_gather(struct hop_comm *comm, struct hop_fbox *fb,
		    const struct hop_coll_call *c, uint64_t seq, size_t bytes,
		    int wide)
{
	const int me = fb->rank, n = fb->nranks;
	const int rs = c->kind == HOP_COLL_REDUCESCATTER;
	const int nblocks = hop_fbox_n_blocks(c->kind);
	/* the block each rank receives from each rank */
	const size_t blk = nblocks ? bytes / (size_t)n : bytes;
	/* an AllToAll's own block, which no peer reads: it goes straight
	 * from the send buffer to the receive buffer, and a wide ring
	 * leaves it out (an AllGather's peers all read its one block) */
	const int a2a = c->kind == HOP_COLL_ALLTOALL;
	const size_t own_at = a2a ? (size_t)me * blk : 0;
	uint8_t *out = c->recvbuf;
	const uint8_t *src;
	int ret = 0;

	/* in place, the peers' blocks are read from the slots or rings, not
	 * from recvbuf as it is overwritten; the own block is already in
	 * place there (an AllToAll's sendbuf is recvbuf, an AllGather's
	 * sendbuf its block of recvbuf) */
	ret = wide ? hop_fbox_wide_publish_except(comm, fb, c, seq, c->sendbuf,
						  bytes, own_at, a2a ? blk : 0)
		   : hop_fbox_publish(comm, fb, c, seq, c->sendbuf, bytes);
	if (ret)
		return ret;
	if (!rs && blk) {
		const uint8_t *own = (const uint8_t *)c->sendbuf + own_at;

		if (out + (size_t)me * blk != own)
			hop_copy(out + (size_t)me * blk, own, blk);
	}
	for (int i = rs ? 0 : 1; i < n; i++) {
		/* the peers after this rank first; a ReduceScatter every
		 * rank's block in rank order */
		int q = rs ? i : me + i < n ? me + i : me + i - n;

		src = wide ? hop_fbox_wide_read(comm, fb, c, seq, q, bytes, &ret)
			   : hop_fbox_read_slot(comm, fb, c, seq, q, &ret);
		if (!src)
			return ret;
		if (!blk)
			continue;
		src += nblocks ? (size_t)me * blk : 0;
		if (!rs)
			hop_copy(out + (size_t)q * blk, src, blk);
		else if (!q)
			hop_copy(out, src, blk);
		else
			hop_reduce_local(out, src, c->count, c->dtype, c->op, 0);
	}
	if (rs && c->op == HOP_AVG && blk)
		hop_reduce_avg(out, c->count, c->dtype, n);
	/* every rank wrote @seq, so every rank finished @seq - 1 */
	fb->floor = seq;
	return 0;
}
