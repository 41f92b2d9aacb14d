/*
 * bench.h - one benchmark core (sizes, warm-up, timing, checking, output)
 * shared by hop-bench and its MPI peers, so that both measure exactly the
 * same way and print the same columns. A backend supplies the collective.
 */
#ifndef HOP_BENCH_H
#define HOP_BENCH_H

#include <stddef.h>

enum bench_coll {
	BENCH_ALLREDUCE,
	BENCH_BROADCAST,
	BENCH_REDUCE,
	BENCH_ALLGATHER,
	BENCH_REDUCESCATTER,
	BENCH_ALLTOALL,
	/* the rooted and v forms, with even blocks */
	BENCH_GATHER,
	BENCH_SCATTER,
	BENCH_ALLGATHERV,
	BENCH_REDUCESCATTERV,
	BENCH_COLL_COUNT
};

/* element types and ops, in hop's enum order (hop_dtype_t / hop_op_t) */
enum bench_type {
	BT_INT8, BT_UINT8, BT_INT32, BT_UINT32, BT_INT64, BT_UINT64,
	BT_HALF, BT_BFLOAT16, BT_FLOAT, BT_DOUBLE, BT_COUNT
};
enum bench_op { BO_SUM, BO_PROD, BO_MIN, BO_MAX, BO_AVG, BO_COUNT };

struct bench_backend {
	const char *name;
	/* What runs underneath, e.g. "hop 0.1.0 on shm"; after init. */
	const char *(*label)(void);
	/* Start the runtime; fills rank and size. 0 or an error message. */
	const char *(*init)(int *argc, char ***argv, int *rank, int *nranks);
	void (*fini)(void);
	/* Which (type, op) the backend can run; NULL when supported, else why. */
	const char *(*supports)(enum bench_coll c, enum bench_type t,
				enum bench_op o, int inplace);
	/* Force an algorithm (hop's --algo); NULL when accepted, else why. */
	const char *(*set_algo)(enum bench_coll c, const char *algo);
	/* What the library would run for this call (algorithm, phases,
	 * chunk, predicted time) into @buf; NULL when written, else why
	 * not. NULL for a backend that cannot say. */
	const char *(*plan)(enum bench_coll c, size_t count, enum bench_type t,
			    char *buf, size_t len);
	/* One collective call; 0 or an error message. */
	const char *(*run)(enum bench_coll c, const void *sbuf, void *rbuf,
			   size_t count, enum bench_type t, enum bench_op o,
			   int root, int inplace);
	const char *(*barrier)(void);
	/* max over ranks of @v (for timing) and sum over ranks (for #wrong) */
	double (*max_double)(double v);
	long (*sum_long)(long v);
};

int bench_main(const struct bench_backend *be, int argc, char **argv);

#endif /* HOP_BENCH_H */
