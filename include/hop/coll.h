/*
 * hop/coll.h - collectives: Broadcast, Reduce, AllReduce, AllGather,
 * ReduceScatter and Barrier, each blocking and nonblocking.
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
} hop_coll_kind_t;

/**
 * struct hop_coll_plan - how a collective runs on a communicator.
 * @algo:         algorithm name as HOP_ALGO spells it ("ring", "tree",
 *                ...); a static string.
 * @chunk_bytes:  bytes per pipelined message.
 * @depth:        messages in flight per peer (HOP_PIPELINE_DEPTH).
 * @predicted_us: time the cost model predicts for it, in microseconds.
 * @forced:       1 when HOP_ALGO chose @algo rather than the model.
 */
typedef struct hop_coll_plan {
	const char *algo;
	size_t chunk_bytes;
	int depth;
	double predicted_us;
	int forced;
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

#ifdef __cplusplus
}
#endif
#endif /* HOP_COLL_H */
