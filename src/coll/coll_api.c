/*
 * coll_api.c - public collective entry points (stubs until the schedule
 * executor lands; they let the other layers link).
 */
#include <stdlib.h>

#include "core/core.h"
#include "coll/coll.h"

int hop_coll_init(struct hop_comm *comm)
{
	(void)comm;
	return 0;
}

void hop_coll_fini(struct hop_comm *comm)
{
	(void)comm;
}

int hop_coll_test(struct hop_comm *comm, struct hop_coll_op *op, int *done)
{
	(void)comm;
	(void)op;
	*done = 1;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_coll_wait(struct hop_comm *comm, struct hop_coll_op *op)
{
	(void)comm;
	(void)op;
	return HOP_ERR_NOT_SUPPORTED;
}

void hop_coll_release(struct hop_comm *comm, struct hop_coll_op *op)
{
	(void)comm;
	(void)op;
}

int hop_allreduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		  size_t count, hop_dtype_t dtype, hop_op_t op)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)count; (void)dtype;
	(void)op;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_broadcast(hop_comm_t *comm, void *buf, size_t count,
		  hop_dtype_t dtype, int root)
{
	(void)comm; (void)buf; (void)count; (void)dtype; (void)root;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_reduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
	       size_t count, hop_dtype_t dtype, hop_op_t op, int root)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)count; (void)dtype;
	(void)op; (void)root;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_allgather(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		  size_t count, hop_dtype_t dtype)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)count; (void)dtype;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_reducescatter(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		      size_t recvcount, hop_dtype_t dtype, hop_op_t op)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)recvcount;
	(void)dtype; (void)op;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_barrier(hop_comm_t *comm)
{
	(void)comm;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_iallreduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		   size_t count, hop_dtype_t dtype, hop_op_t op,
		   hop_request_t **req)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)count; (void)dtype;
	(void)op; (void)req;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_ibroadcast(hop_comm_t *comm, void *buf, size_t count,
		   hop_dtype_t dtype, int root, hop_request_t **req)
{
	(void)comm; (void)buf; (void)count; (void)dtype; (void)root;
	(void)req;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_ireduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		size_t count, hop_dtype_t dtype, hop_op_t op, int root,
		hop_request_t **req)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)count; (void)dtype;
	(void)op; (void)root; (void)req;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_iallgather(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		   size_t count, hop_dtype_t dtype, hop_request_t **req)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)count; (void)dtype;
	(void)req;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_ireducescatter(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		       size_t recvcount, hop_dtype_t dtype, hop_op_t op,
		       hop_request_t **req)
{
	(void)comm; (void)sendbuf; (void)recvbuf; (void)recvcount;
	(void)dtype; (void)op; (void)req;
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_ibarrier(hop_comm_t *comm, hop_request_t **req)
{
	(void)comm;
	(void)req;
	return HOP_ERR_NOT_SUPPORTED;
}
