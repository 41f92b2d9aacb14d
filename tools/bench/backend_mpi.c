/*
 * backend_mpi.c - the MPI peer of hop-bench: the same benchmark core over
 * MPI_Allreduce, MPI_Bcast, MPI_Reduce, MPI_Allgather and
 * MPI_Reduce_scatter_block. Built with Open MPI's mpicc (hop-mpi-bench) and,
 * where installed, MPICH's (hop-mpich-bench).
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "bench.h"

static char label_buf[MPI_MAX_LIBRARY_VERSION_STRING + 32];
static char err_buf[MPI_MAX_ERROR_STRING + 64];

static const char *mpi_error(int rc)
{
	int len = 0;

	MPI_Error_string(rc, err_buf, &len);
	return err_buf;
}

static const char *mb_init(int *argc, char ***argv, int *rank, int *nranks)
{
	char ver[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;

	MPI_Init(argc, argv);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, nranks);
	MPI_Get_library_version(ver, &len);
	/* first line of the version string names the implementation */
	for (int i = 0; i < len; i++)
		if (ver[i] == '\n' || ver[i] == ',') {
			ver[i] = '\0';
			break;
		}
	snprintf(label_buf, sizeof(label_buf), "%s", ver);
	return NULL;
}

static void mb_fini(void)
{
	MPI_Finalize();
}

static const char *mb_label(void)
{
	return label_buf;
}

static MPI_Datatype mpi_type(enum bench_type t)
{
	switch (t) {
	case BT_INT8: return MPI_INT8_T;
	case BT_UINT8: return MPI_UINT8_T;
	case BT_INT32: return MPI_INT32_T;
	case BT_UINT32: return MPI_UINT32_T;
	case BT_INT64: return MPI_INT64_T;
	case BT_UINT64: return MPI_UINT64_T;
	case BT_FLOAT: return MPI_FLOAT;
	case BT_DOUBLE: return MPI_DOUBLE;
	default: return MPI_DATATYPE_NULL;
	}
}

static MPI_Op mpi_op(enum bench_op o)
{
	switch (o) {
	case BO_SUM: return MPI_SUM;
	case BO_PROD: return MPI_PROD;
	case BO_MIN: return MPI_MIN;
	case BO_MAX: return MPI_MAX;
	default: return MPI_OP_NULL;
	}
}

static const char *mb_supports(enum bench_coll c, enum bench_type t,
			       enum bench_op o, int inplace)
{
	if (inplace && (c == BENCH_REDUCESCATTER || c == BENCH_REDUCESCATTERV))
		return "MPI's in-place reduce-scatter keeps its result elsewhere than hop's";
	if (mpi_type(t) == MPI_DATATYPE_NULL)
		return "MPI has no half or bfloat16 type";
	if (mpi_op(o) == MPI_OP_NULL)
		return "MPI has no avg reduction";
	return NULL;
}

static const char *mb_set_algo(enum bench_coll c, const char *algo)
{
	(void)c;
	(void)algo;
	return "--algo is hop's; choose MPI's algorithms with its own parameters";
}

/* MPI_Gather, MPI_Scatter, MPI_Allgatherv and MPI_Reduce_scatter with
 * even blocks of @n; @s: @sbuf or MPI_IN_PLACE. Returns MPI's code. */
static int mb_run_rooted_v(enum bench_coll c, const void *s, const void *sbuf,
			   void *rbuf, int n, MPI_Datatype dt, MPI_Op op,
			   int root, int inplace)
{
	static int *cnt, *at, cap;
	int rank, size;

	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size > cap) {
		int *x = realloc(cnt, (size_t)size * sizeof(*x));
		if (x)
			cnt = x;
		int *y = realloc(at, (size_t)size * sizeof(*y));
		if (y)
			at = y;
		if (!x || !y)
			return MPI_ERR_NO_MEM;
		cap = size;
	}
	for (int b = 0; b < size; b++) {
		cnt[b] = n;
		at[b] = b * n;
	}
	/* MPI_IN_PLACE is only for the root: in place there means the
	 * root's block already sits in (gather) or stays in (scatter) the
	 * buffer of all blocks */
	if (inplace && rank != root && (c == BENCH_GATHER || c == BENCH_SCATTER))
		s = sbuf;
	switch (c) {
	case BENCH_GATHER:
		return MPI_Gather(s, n, dt, rbuf, n, dt, root, MPI_COMM_WORLD);
	case BENCH_SCATTER:
		if (inplace && rank == root)
			return MPI_Scatter(sbuf, n, dt, MPI_IN_PLACE, n, dt, root,
					   MPI_COMM_WORLD);
		return MPI_Scatter(sbuf, n, dt, rbuf, n, dt, root, MPI_COMM_WORLD);
	case BENCH_ALLGATHERV:
		return MPI_Allgatherv(s, n, dt, rbuf, cnt, at, dt, MPI_COMM_WORLD);
	default:
		return MPI_Reduce_scatter(sbuf, rbuf, cnt, dt, op, MPI_COMM_WORLD);
	}
}

static const char *mb_run(enum bench_coll c, const void *sbuf, void *rbuf,
			  size_t count, enum bench_type t, enum bench_op o,
			  int root, int inplace)
{
	MPI_Datatype dt = mpi_type(t);
	MPI_Op op = mpi_op(o);
	int n = (int)count, rc, rank;
	const void *s = inplace ? MPI_IN_PLACE : sbuf;

	if (count > 0x7fffffff)
		return "count exceeds MPI's int";
	switch (c) {
	case BENCH_ALLREDUCE: rc = MPI_Allreduce(s, rbuf, n, dt, op, MPI_COMM_WORLD); break;
	case BENCH_BROADCAST: rc = MPI_Bcast(rbuf, n, dt, root, MPI_COMM_WORLD); break;
	case BENCH_REDUCE:
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		if (inplace && rank != root)
			s = sbuf; /* MPI_IN_PLACE is only for the root */
		rc = MPI_Reduce(s, rbuf, n, dt, op, root, MPI_COMM_WORLD);
		break;
	case BENCH_ALLGATHER:
		/* in place: our block already sits in rbuf */
		rc = MPI_Allgather(s, n, dt, rbuf, n, dt, MPI_COMM_WORLD);
		break;
	case BENCH_ALLTOALL: /* @count per peer; in place: MPI_IN_PLACE */
		rc = MPI_Alltoall(s, n, dt, rbuf, n, dt, MPI_COMM_WORLD);
		break;
	case BENCH_REDUCESCATTER:
		rc = MPI_Reduce_scatter_block(sbuf, rbuf, n, dt, op, MPI_COMM_WORLD);
		break;
	default:
		rc = mb_run_rooted_v(c, s, sbuf, rbuf, n, dt, op, root, inplace);
		break;
	}
	return rc == MPI_SUCCESS ? NULL : mpi_error(rc);
}

static const char *mb_barrier(void)
{
	int rc = MPI_Barrier(MPI_COMM_WORLD);

	return rc == MPI_SUCCESS ? NULL : mpi_error(rc);
}

static double mb_max_double(double v)
{
	double out = v;

	MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return out;
}

static long mb_sum_long(long v)
{
	long out = v;

	MPI_Allreduce(&v, &out, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	return out;
}

static const struct bench_backend mpi_backend = {
	.name = "mpi-bench",
	.label = mb_label,
	.init = mb_init,
	.fini = mb_fini,
	.supports = mb_supports,
	.set_algo = mb_set_algo,
	.run = mb_run,
	.barrier = mb_barrier,
	.max_double = mb_max_double,
	.sum_long = mb_sum_long,
};

int main(int argc, char **argv)
{
	return bench_main(&mpi_backend, argc, argv);
}
