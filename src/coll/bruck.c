/*
 * bruck.c - AllGather by Bruck's algorithm (any N, ceil(log2 N) rounds)
 * and the dissemination Barrier.
 *
 * Bruck without the final rotation: in round k (d = 2^k) rank r sends the
 * blocks of ranks r .. r+cnt-1 (mod N, cnt = min(d, N-d)) to r-d and
 * receives those of ranks r+d .. r+d+cnt-1 from r+d, straight into their
 * final places in the receive buffer. A run that wraps past rank N-1 goes
 * as two messages (both sides split at the same rank).
 */
#include "coll/sched.h"

int hop_build_allgather_bruck(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, r = a->rank;
	size_t blk = a->count * s->esize;

	if (!a->count)
		return 0;
	int have = -1; /* joins everything received so far */
	if (!a->inplace)
		have = hop_s_copy(s, HOP_BUF_RECV, (size_t)r * blk, HOP_BUF_SEND,
				  0, blk, -1, -1, -1);
	for (int k = 0, d = 1; d < n; k++, d *= 2) {
		int cnt = d < n - d ? d : n - d;
		int to = hop_mod(r - d, n), from = (r + d) % n;
		int rv[2] = { -1, -1 };

		for (int side = 0; side < 2; side++) {
			/* side 0 sends ranks r.., side 1 receives ranks r+d.. */
			int first = side ? (r + d) % n : r;
			int len1 = first + cnt <= n ? cnt : n - first;
			int pieces[2][2] = { { first, len1 }, { 0, cnt - len1 } };
			for (int pc = 0; pc < 2; pc++) {
				if (!pieces[pc][1])
					continue;
				size_t off = (size_t)pieces[pc][0] * blk;
				size_t len = (size_t)pieces[pc][1] * blk;
				uint32_t tag = (uint32_t)(2 * k + pc);
				if (side == 0)
					hop_s_send(s, to, tag, HOP_BUF_RECV, off,
						   len, have, -1, -1);
				else
					rv[pc] = hop_s_recv(s, from, tag,
							    HOP_BUF_RECV, off,
							    len, -1, -1, -1);
			}
		}
		have = hop_s_nop(s, have, rv[0], rv[1]);
	}
	return 0;
}

/*
 * Dissemination: in round k rank r tells r+2^k that it has heard from
 * everyone it heard from so far. A round's send must wait for *every*
 * earlier receive, not only the last one: the last receive covers the
 * ranks r-2^(k-1) .. r-2^k+1, the earlier ones the ranks closer to r,
 * and a send that skips them lets the receiver leave before those ranks
 * entered (at N >= 6, where the rounds' ranges do not nest).
 */
void hop_sched_add_barrier(struct hop_sched *s, uint32_t tag0)
{
	int n = s->args.nranks, r = s->args.rank, heard = -1;

	for (int k = 0, d = 1; d < n; k++, d *= 2) {
		hop_s_send(s, (r + d) % n, tag0 + (uint32_t)k, HOP_BUF_NONE, 0,
			   0, heard, -1, -1);
		int got = hop_s_recv(s, hop_mod(r - d, n), tag0 + (uint32_t)k,
				     HOP_BUF_NONE, 0, 0, -1, -1, -1);
		heard = heard < 0 ? got : hop_s_nop(s, heard, got, -1);
	}
}

int hop_build_barrier(struct hop_sched *s)
{
	hop_sched_add_barrier(s, 0);
	return 0;
}
