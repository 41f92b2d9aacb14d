/*
 * fbox_gather.c - the fast boxes' gathering kinds: a blocking AllGather
 * or AllToAll. Every rank writes its payload (its block, or all N of its
 * AllToAll blocks) to its slot, or above a slot to its wide area, and
 * then copies its share out of every rank's, as vader's fast boxes serve
 * a small exchange without a rendezvous or a schedule. Like an
 * AllReduce, every rank reads every slot, so each call also proves that
 * every rank finished the call before it (the slots' floor).
 */
#include <string.h>

#include "coll/coll_int.h"
#include "coll/fbox_int.h"

volatile size_t hop_fbox_copy_piece = HOP_FBOX_COPY_PIECE;

int hop_fbox_gather(struct hop_comm *comm, struct hop_fbox *fb,
		    const struct hop_coll_call *c, uint64_t seq, size_t bytes,
		    int wide)
{
	const int me = fb->rank, n = fb->nranks;
	const int a2a = c->kind == HOP_COLL_ALLTOALL;
	/* the block each rank receives from each rank */
	const size_t blk = a2a ? bytes / (size_t)n : bytes;
	uint8_t *out = c->recvbuf;
	const uint8_t *src;
	int ret = 0;

	/* in place, the send data is read from the own slot, not from
	 * recvbuf as it is overwritten */
	ret = wide ? hop_fbox_wide_publish(comm, fb, c, seq, c->sendbuf, bytes)
		   : hop_fbox_publish(comm, fb, c, seq, c->sendbuf, bytes);
	if (ret)
		return ret;
	for (int i = 0; i < n; i++) {
		int q = me + i < n ? me + i : me + i - n; /* own block first */

		src = wide ? hop_fbox_wide_read(comm, fb, c, seq, q, bytes, &ret)
			   : hop_fbox_read_slot(comm, fb, c, seq, q, &ret);
		if (!src)
			return ret;
		if (blk)
			hop_fbox_copy(out + (size_t)q * blk,
			       src + (a2a ? (size_t)me * blk : 0), blk);
	}
	/* every rank wrote @seq, so every rank finished @seq - 1 */
	fb->floor = seq;
	return 0;
}
