/*
 * fbox_reduce.c - the fast boxes' reductions: every rank's data of a call,
 * in its slot or its wide ring, reduced in rank order 0..N-1 (an
 * AllReduce on every rank, a Reduce at its root), so every rank's result
 * is the same bytes whichever form ran (docs/fastbox.md).
 */
#include "coll/coll_int.h"
#include "coll/fbox_int.h"
#include "coll/reduce.h"
#include "core/copy.h"

/* recvbuf = slot 0 op slot 1 op ... op slot N-1 (@own for this rank). */
int hop_fbox_reduce_all(struct hop_comm *comm, struct hop_fbox *fb,
			const struct hop_coll_call *c, uint64_t seq,
			const void *own, size_t bytes, int wide)
{
	const void *src;
	int ret = 0;

	for (int q = 0; q < fb->nranks; q++) {
		src = q == fb->rank ? own
				    : hop_fbox_read_data(comm, fb, c, seq, q,
							 bytes, wide, &ret);
		if (!src)
			return ret;
		if (!bytes) /* recvbuf may be NULL */
			continue;
		if (!q) {
			/* rank 0's own input already lies there in place */
			if (src != c->recvbuf)
				hop_copy(c->recvbuf, src, bytes);
		} else {
			hop_reduce_local(c->recvbuf, src, c->count, c->dtype,
					 c->op, 0);
		}
	}
	if (c->op == HOP_AVG && bytes)
		hop_reduce_avg(c->recvbuf, c->count, c->dtype, fb->nranks);
	/* every rank wrote @seq, so every rank finished @seq - 1 */
	fb->floor = seq;
	return 0;
}

/* A Reduce in the wide area: the root's own data is its send buffer,
 * copied to its ring only in place off rank 0 (rank 0's data lands in
 * the receive buffer first). */
int hop_fbox_wide_reduce(struct hop_comm *comm, struct hop_fbox *fb,
			 const struct hop_coll_call *c, uint64_t seq,
			 size_t bytes)
{
	const void *own = c->sendbuf;
	int ret, keep = c->sendbuf == c->recvbuf && fb->rank;

	if (fb->rank != c->root)
		return hop_fbox_wide_publish(comm, fb, c, seq, c->sendbuf,
					     bytes);
	if ((ret = hop_fbox_wide_publish(comm, fb, c, seq, c->sendbuf,
					 keep ? bytes : 0)))
		return ret;
	if (keep && !(own = hop_fbox_wide_read(comm, fb, c, seq, fb->rank,
					       bytes, &ret)))
		return ret;
	return hop_fbox_reduce_all(comm, fb, c, seq, own, bytes, 1);
}

/* An AllReduce in the wide area: every rank reduces every ring's data in
 * rank order; in place off rank 0, its own data is read from its ring, as
 * rank 0's lands in the receive buffer first. */
int hop_fbox_wide_allreduce(struct hop_comm *comm, struct hop_fbox *fb,
			    const struct hop_coll_call *c, uint64_t seq,
			    size_t bytes)
{
	const void *own = c->sendbuf;
	int ret;

	if ((ret = hop_fbox_wide_publish(comm, fb, c, seq, c->sendbuf,
					 bytes)))
		return ret;
	if (c->sendbuf == c->recvbuf && fb->rank &&
	    !(own = hop_fbox_wide_read(comm, fb, c, seq, fb->rank, bytes,
				       &ret)))
		return ret;
	return hop_fbox_reduce_all(comm, fb, c, seq, own, bytes, 1);
}
