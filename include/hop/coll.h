/*
 * hop/coll.h - collectives: Broadcast, Reduce, AllReduce, AllGather,
 * ReduceScatter, Gather, Scatter, AllGatherv, ReduceScatterv, AllToAll,
 * AllToAllv and Barrier, each blocking and nonblocking.
 *
 * All ranks of a communicator call the same collectives in the same order
 * with matching count, dtype, op and root; ranks that disagree fail with
 * HOP_ERR_MISMATCH (the messages carry a signature of the call) rather
 * than hang. Counts are in elements; any count from 0 works, divisible by
 * the number of ranks or not. Buffers may have any alignment. In place:
 * see each call. Results are bitwise identical on every rank.
 *
 * Reductions: integers wrap (sum, prod); HOP_AVG is the sum divided by N
 * at the end, with truncating integer division for integer types; f16 and
 * bf16 are reduced through f32 and rounded to nearest-even; min/max
 * return NaN when the first operand in rank order is NaN.
 *
 * Algorithms: chosen per call by size and N; HOP_ALGO forces them, e.g.
 * HOP_ALGO=allreduce:ring,broadcast:tree (names in docs/collectives.md);
 * HOP_CHUNK_SIZE and HOP_PIPELINE_DEPTH tune pipelining; HOP_DEBUG=info
 * logs the choice.
 *
 * The i-forms return a request completed by hop_test()/hop_wait() (see
 * hop/p2p.h); buffers must stay untouched until then. Several collectives
 * may be in flight on one communicator, as long as every rank starts them
 * in the same order; waiting on any of them advances all of them.
 *
 * Errors of every call: HOP_ERR_INVALID_HANDLE (NULL or destroyed comm),
 * HOP_ERR_INVALID_ARG (the message names the argument, rank, count, dtype
 * and root), HOP_ERR_MISMATCH, HOP_ERR_TIMEOUT (HOP_TIMEOUT),
 * HOP_ERR_PEER_FAILED, HOP_ERR_COMM_FAILED, HOP_ERR_ABORTED,
 * HOP_ERR_NO_MEMORY.
 */
#ifndef HOP_COLL_H
#define HOP_COLL_H

#include <hop/p2p.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hop_allreduce() - Reduce @count elements of every rank with @op and leave
 * the result on every rank.
 * @comm:    communicator.
 * @sendbuf: this rank's @count elements; == @recvbuf for in place.
 * @recvbuf: receives the @count reduced elements; same bytes on all ranks.
 * @count:   elements, from 0; NULL buffers are allowed only when 0.
 * @dtype:   element type.
 * @op:      reduction operator.
 * Return: 0, HOP_ERR_INVALID_ARG (NULL buffer with count > 0, bad dtype or
 * op, count * size * nranks overflowing or over 2^56 B, partially
 * overlapping buffers, another thread inside a call on @comm), or an error
 * of the run (HOP_ERR_MISMATCH, HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED,
 * HOP_ERR_COMM_FAILED, HOP_ERR_ABORTED).
 */
HOP_EXPORT int hop_allreduce(hop_comm_t *comm, const void *sendbuf,
			     void *recvbuf, size_t count, hop_dtype_t dtype,
			     hop_op_t op);

/**
 * hop_broadcast() - Copy @count elements of @root's @buf to every rank's
 * @buf.
 * @buf:  data on @root, destination elsewhere.
 * @root: 0 .. N-1.
 * The root may return before the others have received. So that a loop
 * cannot run it ahead of them without limit, every HOP_ROOTED_SYNC calls
 * of Broadcast, Reduce, Gather and Scatter one waits until every rank has
 * started it (docs/flow-control.md); the same holds for a Reduce's,
 * Gather's or Scatter's ranks that only send.
 * Return: as hop_allreduce(), plus HOP_ERR_INVALID_ARG for a bad @root.
 */
HOP_EXPORT int hop_broadcast(hop_comm_t *comm, void *buf, size_t count,
			     hop_dtype_t dtype, int root);

/**
 * hop_reduce() - Reduce @count elements of every rank with @op into
 * @root's @recvbuf.
 * @sendbuf: this rank's @count elements; on @root, == @recvbuf for in
 *           place. Never written.
 * @recvbuf: result on @root; ignored on other ranks (may be NULL there).
 * @root:    0 .. N-1.
 * Return: as hop_broadcast().
 */
HOP_EXPORT int hop_reduce(hop_comm_t *comm, const void *sendbuf,
			  void *recvbuf, size_t count, hop_dtype_t dtype,
			  hop_op_t op, int root);

/**
 * hop_allgather() - Gather @count elements from every rank into every
 * rank's @recvbuf.
 * @sendbuf: this rank's @count elements; in place when it is
 *           @recvbuf + rank * @count * size (the data already there).
 * @recvbuf: N * @count elements; rank r's block at r * @count.
 * Return: as hop_allreduce() (without the op).
 */
HOP_EXPORT int hop_allgather(hop_comm_t *comm, const void *sendbuf,
			     void *recvbuf, size_t count, hop_dtype_t dtype);

/**
 * hop_reducescatter() - Reduce N * @recvcount elements of every rank with
 * @op; rank r receives block r.
 * @sendbuf:   N * @recvcount elements.
 * @recvbuf:   @recvcount elements: the reduced block r. In place when it
 *             is @sendbuf + rank * @recvcount * size (the rest of
 *             @sendbuf is then left untouched).
 * @recvcount: elements per rank.
 * Return: as hop_allreduce().
 */
HOP_EXPORT int hop_reducescatter(hop_comm_t *comm, const void *sendbuf,
				 void *recvbuf, size_t recvcount,
				 hop_dtype_t dtype, hop_op_t op);

/**
 * hop_gather() - Collect @count elements from every rank into @root's
 * @recvbuf, rank r's at block r (MPI_Gather).
 * @sendbuf: this rank's @count elements. On @root, in place when it is
 *           @recvbuf + root * @count * size (the data already there).
 * @recvbuf: on @root, N * @count elements; ignored on other ranks (may
 *           be NULL there).
 * @count:   elements per rank, equal on every rank; from 0.
 * @root:    0 .. N-1.
 * Return: 0, HOP_ERR_INVALID_ARG (bad @root or dtype, NULL buffer with
 * @count > 0, @count * size * N overflowing or over 2^56 B, @sendbuf
 * partially overlapping the root's @recvbuf, another thread inside a call
 * on @comm), or an error of the run (HOP_ERR_MISMATCH for ranks that
 * disagree on count, dtype or root, HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED,
 * HOP_ERR_COMM_FAILED, HOP_ERR_ABORTED, HOP_ERR_NO_MEMORY).
 */
HOP_EXPORT int hop_gather(hop_comm_t *comm, const void *sendbuf,
			  void *recvbuf, size_t count, hop_dtype_t dtype,
			  int root);

/**
 * hop_scatter() - Send block r of @root's @sendbuf (@count elements) to
 * rank r's @recvbuf (MPI_Scatter).
 * @sendbuf: on @root, N * @count elements; ignored on other ranks (may be
 *           NULL there). Never written.
 * @recvbuf: this rank's @count elements. On @root, in place when it is
 *           @sendbuf + root * @count * size (the block then stays).
 * @count:   elements per rank, equal on every rank; from 0.
 * @root:    0 .. N-1.
 * Return: as hop_gather().
 */
HOP_EXPORT int hop_scatter(hop_comm_t *comm, const void *sendbuf,
			   void *recvbuf, size_t count, hop_dtype_t dtype,
			   int root);

/**
 * hop_allgatherv() - Gather blocks of different sizes from every rank
 * into every rank's @recvbuf (MPI_Allgatherv).
 * @sendbuf:    this rank's @sendcount elements; in place when it is
 *              @recvbuf + @displs[rank] * size (the data already there).
 * @sendcount:  must equal @recvcounts[rank].
 * @recvbuf:    block r (@recvcounts[r] elements) lands at element
 *              @displs[r]; elements between blocks are left untouched.
 * @recvcounts: N counts, equal on every rank; any may be 0.
 * @displs:     N element displacements, this rank's layout (ranks may
 *              differ); non-empty blocks must not overlap.
 * Return: 0, HOP_ERR_INVALID_ARG (NULL @recvcounts or @displs, bad dtype,
 * @sendcount != @recvcounts[rank], a block or the sum of the counts past
 * 2^56 B, overlapping blocks, NULL buffer with elements to move, @sendbuf
 * partially overlapping @recvbuf), or an error of the run as
 * hop_gather() (HOP_ERR_MISMATCH also for @recvcounts that differ between
 * ranks).
 */
HOP_EXPORT int hop_allgatherv(hop_comm_t *comm, const void *sendbuf,
			      size_t sendcount, void *recvbuf,
			      const size_t *recvcounts, const size_t *displs,
			      hop_dtype_t dtype);

/**
 * hop_reducescatterv() - Reduce the blocks of every rank's @sendbuf with
 * @op; rank r receives block r, of @recvcounts[r] elements
 * (MPI_Reduce_scatter).
 * @sendbuf:    @recvcounts[0] + .. + @recvcounts[N-1] elements, block r
 *              after blocks 0 .. r-1.
 * @recvbuf:    @recvcounts[rank] elements: the reduced block. In place
 *              when it is @sendbuf + (@recvcounts[0] + .. +
 *              @recvcounts[rank-1]) * size (the rest of @sendbuf is then
 *              left untouched).
 * @recvcounts: N counts, equal on every rank; any may be 0.
 * Every element is reduced in the same order whatever N's blocks are, as
 * hop_reducescatter() does.
 * Return: 0, HOP_ERR_INVALID_ARG (NULL @recvcounts, bad dtype or op, a
 * block or the sum of the counts past 2^56 B, NULL buffer with elements
 * to move, partially overlapping buffers), or an error of the run as
 * hop_allgatherv().
 */
HOP_EXPORT int hop_reducescatterv(hop_comm_t *comm, const void *sendbuf,
				  void *recvbuf, const size_t *recvcounts,
				  hop_dtype_t dtype, hop_op_t op);

/* Nonblocking forms of the four above: as the other i-forms below; the
 * @recvcounts and @displs arrays are read before the call returns. */
HOP_EXPORT int hop_igather(hop_comm_t *comm, const void *sendbuf,
			   void *recvbuf, size_t count, hop_dtype_t dtype,
			   int root, hop_request_t **req);
HOP_EXPORT int hop_iscatter(hop_comm_t *comm, const void *sendbuf,
			    void *recvbuf, size_t count, hop_dtype_t dtype,
			    int root, hop_request_t **req);
HOP_EXPORT int hop_iallgatherv(hop_comm_t *comm, const void *sendbuf,
			       size_t sendcount, void *recvbuf,
			       const size_t *recvcounts, const size_t *displs,
			       hop_dtype_t dtype, hop_request_t **req);
HOP_EXPORT int hop_ireducescatterv(hop_comm_t *comm, const void *sendbuf,
				   void *recvbuf, const size_t *recvcounts,
				   hop_dtype_t dtype, hop_op_t op,
				   hop_request_t **req);

/**
 * hop_barrier() - Return once every rank has entered the barrier
 * (dissemination: ceil(log2 N) rounds of zero-byte messages).
 * Return: 0 or an error of the run.
 */
HOP_EXPORT int hop_barrier(hop_comm_t *comm);

/*
 * Nonblocking forms: the same arguments and checks, plus @req receiving
 * the request (NULL on failure; HOP_ERR_INVALID_ARG when @req is NULL).
 * The collective runs while the caller works; hop_test()/hop_wait()
 * complete it, free the request and return the collective's result.
 * hop_comm_destroy() cancels collectives still running.
 */
HOP_EXPORT int hop_iallreduce(hop_comm_t *comm, const void *sendbuf,
			      void *recvbuf, size_t count, hop_dtype_t dtype,
			      hop_op_t op, hop_request_t **req);
HOP_EXPORT int hop_ibroadcast(hop_comm_t *comm, void *buf, size_t count,
			      hop_dtype_t dtype, int root,
			      hop_request_t **req);
HOP_EXPORT int hop_ireduce(hop_comm_t *comm, const void *sendbuf,
			   void *recvbuf, size_t count, hop_dtype_t dtype,
			   hop_op_t op, int root, hop_request_t **req);
HOP_EXPORT int hop_iallgather(hop_comm_t *comm, const void *sendbuf,
			      void *recvbuf, size_t count, hop_dtype_t dtype,
			      hop_request_t **req);
HOP_EXPORT int hop_ireducescatter(hop_comm_t *comm, const void *sendbuf,
				  void *recvbuf, size_t recvcount,
				  hop_dtype_t dtype, hop_op_t op,
				  hop_request_t **req);
HOP_EXPORT int hop_ibarrier(hop_comm_t *comm, hop_request_t **req);

/**
 * enum hop_kind - the collectives hop_coll_plan() describes.
 */
typedef enum hop_kind {
	HOP_KIND_BROADCAST = 0,
	HOP_KIND_REDUCE,
	HOP_KIND_ALLREDUCE,
	HOP_KIND_ALLGATHER,
	HOP_KIND_REDUCESCATTER,
	HOP_KIND_BARRIER,
	HOP_KIND_ALLTOALL,
	HOP_KIND_ALLTOALLV,     /* priced at 0 B: the blocks differ per rank */
	HOP_KIND_GATHER,
	HOP_KIND_SCATTER,
	HOP_KIND_ALLGATHERV,    /* @count: the largest block */
	HOP_KIND_REDUCESCATTERV, /* @count: the largest block */
} hop_coll_kind_t;

/**
 * struct hop_coll_plan - how a collective runs on a communicator.
 * @algo:         algorithm name as HOP_ALGO spells it ("ring", "tree",
 *                ...), or "fbox", "fbox-wide" or "fbox-cma" for a
 *                blocking call among the ranks of one host that skips
 *                the schedule (docs/fastbox.md); a static string.
 * @chunk_bytes:  bytes per pipelined message.
 * @depth:        messages in flight per peer (HOP_PIPELINE_DEPTH).
 * @predicted_us: time the cost model predicts for it, in microseconds.
 * @forced:       1 when HOP_ALGO chose @algo rather than the model.
 * @sub_algo:     @algo "hier" (an intra-host phase, an inter-host phase):
 *                the algorithm of its intra-host phases ([0]) and of its
 *                inter-host phase ([1]); "auto" for a flat algorithm.
 */
typedef struct hop_coll_plan {
	const char *algo;
	size_t chunk_bytes;
	int depth;
	double predicted_us;
	int forced;
	const char *sub_algo[2];
} hop_coll_plan_t;

/**
 * hop_coll_plan() - The algorithm, chunk and predicted time a collective
 * of @kind with @count elements of @dtype would use on @comm now: the
 * same decision, by the same code, as the collective itself makes.
 * Local: nothing is sent.
 * @comm:  communicator.
 * @kind:  the collective.
 * @count: elements as the collective takes them (per rank for
 *         allgather, per block for reducescatter; ignored for barrier).
 * @dtype: element type (ignored for barrier).
 * @plan:  receives the plan.
 * Return: 0; HOP_ERR_INVALID_HANDLE (NULL or destroyed @comm),
 * HOP_ERR_INVALID_ARG (NULL @plan, unknown @kind or @dtype, @count times
 * size times ranks overflowing, another thread inside a call on @comm),
 * HOP_ERR_COMM_FAILED.
 */
HOP_EXPORT int hop_coll_plan(hop_comm_t *comm, hop_coll_kind_t kind,
			     size_t count, hop_dtype_t dtype,
			     hop_coll_plan_t *plan);

/* ---- AllToAll ---- */

/**
 * hop_alltoall() - Every rank sends a distinct block of @count elements
 * to every rank: rank r's block for rank p (at p * @count in its
 * @sendbuf) lands at r * @count in rank p's @recvbuf (MPI_Alltoall).
 * @comm:    communicator.
 * @sendbuf: N * @count elements; == @recvbuf for in place (the send data
 *           is read before any block is received over it; pairwise then
 *           uses a scratch copy of N * @count elements).
 * @recvbuf: N * @count elements; rank p's block at p * @count.
 * @count:   elements per peer, from 0; NULL buffers only when 0.
 * @dtype:   element type (only its size matters: data is not reduced).
 * Algorithms (HOP_ALGO=alltoall:pairwise|bruck): pairwise (N-1 exchanges)
 * or Bruck (ceil(log2 N) rounds, for small blocks), chosen by the model.
 * Return: 0, HOP_ERR_INVALID_ARG (NULL buffer with count > 0, bad dtype,
 * N * count * size overflowing or over 2^56 B, buffers that overlap
 * without being the same pointer, another thread inside a call on
 * @comm), HOP_ERR_INVALID_HANDLE, HOP_ERR_NO_MEMORY, or an error of the
 * run (HOP_ERR_MISMATCH, HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED,
 * HOP_ERR_COMM_FAILED, HOP_ERR_ABORTED).
 */
HOP_EXPORT int hop_alltoall(hop_comm_t *comm, const void *sendbuf,
			    void *recvbuf, size_t count, hop_dtype_t dtype);

/**
 * hop_alltoallv() - hop_alltoall() with a block size and place per peer
 * (MPI_Alltoallv): rank r's @sendcounts[p] elements at @sdispls[p] of its
 * @sendbuf land at @rdispls[r] of rank p's @recvbuf, where rank p expects
 * @recvcounts[r] elements. Counts and displacements are in elements.
 * @sendbuf:    the send blocks; == @recvbuf for in place (every send block
 *              is read first, through a scratch copy of the send extent).
 * @sendcounts: N counts, from 0; @sdispls: N displacements.
 * @recvbuf:    the receive blocks, which must not overlap each other.
 * @recvcounts: N counts, from 0; @rdispls: N displacements.
 * Every pair exchanges a message, zero-length ones too, so a count the
 * two sides disagree on is an error, never a hang or an overwrite.
 * Return: as hop_alltoall(), with HOP_ERR_INVALID_ARG also for a NULL
 * array or a block ending past 2^56 B (the message names the array and
 * peer), HOP_ERR_MISMATCH when @sendcounts[rank] != @recvcounts[rank],
 * and, from the run, HOP_ERR_TRUNCATED when a peer sends more or fewer
 * elements than this rank's @recvcounts for it (the message names the
 * peer and both sizes; the peer may succeed or fail likewise).
 */
HOP_EXPORT int hop_alltoallv(hop_comm_t *comm, const void *sendbuf,
			     const size_t *sendcounts, const size_t *sdispls,
			     void *recvbuf, const size_t *recvcounts,
			     const size_t *rdispls, hop_dtype_t dtype);

/* Nonblocking forms, as the ones above: @req completed by hop_test() /
 * hop_wait(). The four arrays of hop_ialltoallv() are read during the
 * call and may be reused once it returns; the buffers stay in use until
 * the request completes. */
HOP_EXPORT int hop_ialltoall(hop_comm_t *comm, const void *sendbuf,
			     void *recvbuf, size_t count, hop_dtype_t dtype,
			     hop_request_t **req);
HOP_EXPORT int hop_ialltoallv(hop_comm_t *comm, const void *sendbuf,
			      const size_t *sendcounts, const size_t *sdispls,
			      void *recvbuf, const size_t *recvcounts,
			      const size_t *rdispls, hop_dtype_t dtype,
			      hop_request_t **req);

#ifdef __cplusplus
}
#endif
#endif /* HOP_COLL_H */
