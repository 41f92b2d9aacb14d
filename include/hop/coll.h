/*
 * hop/coll.h - collectives: Broadcast, Reduce, AllReduce, AllGather,
 * ReduceScatter and Barrier, each blocking and nonblocking.
 *
 * All ranks of a communicator call the same collectives in the same order
 * with matching count, dtype, op and root. Counts are in elements; any
 * count from 0 works, divisible by the number of ranks or not. Passing the
 * same pointer as send and receive buffer means in place. Results are
 * bitwise identical on every rank. HOP_ALGO forces an algorithm, e.g.
 * HOP_ALGO=allreduce:ring,broadcast:tree.
 *
 * The i-forms return a request completed by hop_test()/hop_wait() (see
 * hop/p2p.h); buffers must stay untouched until then. At most one
 * collective may be in flight per communicator at a time unless noted.
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
 * @sendbuf: input; == @recvbuf for in place.
 * @recvbuf: output, @count elements.
 * Return: 0, HOP_ERR_INVALID_ARG (NULL buffer with count > 0, bad dtype/op,
 * count * size overflow, partial overlap), HOP_ERR_MISMATCH,
 * HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED, HOP_ERR_COMM_FAILED.
 */
HOP_EXPORT int hop_allreduce(hop_comm_t *comm, const void *sendbuf,
			     void *recvbuf, size_t count, hop_dtype_t dtype,
			     hop_op_t op);

/**
 * hop_broadcast() - Copy @count elements of @root's @buf to every rank's
 * @buf. Errors as hop_allreduce(), plus an invalid @root.
 */
HOP_EXPORT int hop_broadcast(hop_comm_t *comm, void *buf, size_t count,
			     hop_dtype_t dtype, int root);

/**
 * hop_reduce() - Reduce @count elements of every rank with @op into
 * @root's @recvbuf (@recvbuf is ignored on other ranks and may be NULL).
 */
HOP_EXPORT int hop_reduce(hop_comm_t *comm, const void *sendbuf,
			  void *recvbuf, size_t count, hop_dtype_t dtype,
			  hop_op_t op, int root);

/**
 * hop_allgather() - Gather @count elements from every rank into @recvbuf
 * (N * @count elements, rank r's block at r * @count) on every rank. In
 * place when @sendbuf == @recvbuf + rank * @count * size.
 */
HOP_EXPORT int hop_allgather(hop_comm_t *comm, const void *sendbuf,
			     void *recvbuf, size_t count, hop_dtype_t dtype);

/**
 * hop_reducescatter() - Reduce N * @recvcount elements of every rank with
 * @op; rank r receives block r (@recvcount elements) in @recvbuf. In place
 * when @recvbuf == @sendbuf + rank * @recvcount * size.
 */
HOP_EXPORT int hop_reducescatter(hop_comm_t *comm, const void *sendbuf,
				 void *recvbuf, size_t recvcount,
				 hop_dtype_t dtype, hop_op_t op);

/** hop_barrier() - Return once every rank has entered the barrier. */
HOP_EXPORT int hop_barrier(hop_comm_t *comm);

/* Nonblocking forms: same arguments, plus @req receiving the request. */
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

#ifdef __cplusplus
}
#endif
#endif /* HOP_COLL_H */
