/*
 * backend_hop.c - hop-bench: the benchmark core over hop's collectives.
 * Launch under hop-run, mpirun or the SoftRoCE harness (hop_comm_init_env).
 */
#include <stdio.h>
#include <stdlib.h>

#include <hop/hop.h>

#include "bench.h"

static hop_comm_t *comm;
static char label_buf[96];
static char err_buf[640];

static const char *hop_error(int rc)
{
	snprintf(err_buf, sizeof(err_buf), "%s: %s", hop_err_name(rc),
		 comm ? hop_comm_last_error(comm) : hop_last_init_error());
	return err_buf;
}

/* the bench's own bookkeeping failed: its numbers would be wrong, stop */
static void die(const char *what, int rc)
{
	fprintf(stderr, "hop-bench: rank %d: %s failed: %s\n",
		hop_comm_rank(comm), what, hop_error(rc));
	hop_comm_destroy(comm);
	exit(1);
}

static const char *hb_init(int *argc, char ***argv, int *rank, int *nranks)
{
	(void)argc;
	(void)argv;
	int rc = hop_comm_init_env(&comm);

	if (rc)
		return hop_error(rc);
	*rank = hop_comm_rank(comm);
	*nranks = hop_comm_size(comm);
	snprintf(label_buf, sizeof(label_buf), "hop %s on %s", hop_version(),
		 hop_comm_transport(comm));
	return NULL;
}

static void hb_fini(void)
{
	hop_comm_destroy(comm);
	comm = NULL;
}

static const char *hb_label(void)
{
	return label_buf;
}

static const char *hb_supports(enum bench_coll c, enum bench_type t,
			       enum bench_op o, int inplace)
{
	(void)c;
	(void)t;
	(void)o;
	(void)inplace;
	return NULL; /* every dtype x op */
}

static const char *hb_set_algo(enum bench_coll c, const char *algo)
{
	static const char *const names[BENCH_COLL_COUNT] = {
		"allreduce", "broadcast", "reduce", "allgather", "reducescatter",
		"alltoall", "gather", "scatter", "allgatherv", "reducescatterv"
	};
	static char spec[128];

	snprintf(spec, sizeof(spec), "%s:%s", names[c], algo);
	/* read by hop_comm_init_env(), which validates it */
	return setenv("HOP_ALGO", spec, 1) ? "setenv failed" : NULL;
}

/* The v-variants' even layout: every block @count elements, in order. */
static const size_t *even_blocks(size_t count, const size_t **displs)
{
	static size_t *cnt, *at;
	static int cap;
	int n = hop_comm_size(comm);

	if (n > cap) {
		size_t *c = realloc(cnt, (size_t)n * sizeof(*c));
		if (c)
			cnt = c;
		size_t *a = realloc(at, (size_t)n * sizeof(*a));
		if (a)
			at = a;
		if (!c || !a)
			return NULL;
		cap = n;
	}
	for (int b = 0; b < n; b++) {
		cnt[b] = count;
		at[b] = (size_t)b * count;
	}
	*displs = at;
	return cnt;
}

static const char *hb_run(enum bench_coll c, const void *sbuf, void *rbuf,
			  size_t count, enum bench_type t, enum bench_op o,
			  int root, int inplace)
{
	(void)inplace; /* hop recognises in place from the pointers */
	hop_dtype_t dt = (hop_dtype_t)t; /* same order by design (bench.h) */
	hop_op_t op = (hop_op_t)o;
	const size_t *cnt, *displs;
	int rc;

	switch (c) {
	case BENCH_ALLREDUCE: rc = hop_allreduce(comm, sbuf, rbuf, count, dt, op); break;
	case BENCH_BROADCAST: rc = hop_broadcast(comm, rbuf, count, dt, root); break;
	case BENCH_REDUCE: rc = hop_reduce(comm, sbuf, rbuf, count, dt, op, root); break;
	case BENCH_ALLGATHER: rc = hop_allgather(comm, sbuf, rbuf, count, dt); break;
	case BENCH_ALLTOALL: rc = hop_alltoall(comm, sbuf, rbuf, count, dt); break;
	case BENCH_REDUCESCATTER: rc = hop_reducescatter(comm, sbuf, rbuf, count, dt, op); break;
	case BENCH_GATHER: rc = hop_gather(comm, sbuf, rbuf, count, dt, root); break;
	case BENCH_SCATTER: rc = hop_scatter(comm, sbuf, rbuf, count, dt, root); break;
	default:
		if (!(cnt = even_blocks(count, &displs)))
			return "out of memory for the block counts";
		rc = c == BENCH_ALLGATHERV
			? hop_allgatherv(comm, sbuf, count, rbuf, cnt, displs, dt)
			: hop_reducescatterv(comm, sbuf, rbuf, cnt, dt, op);
		break;
	}
	return rc ? hop_error(rc) : NULL;
}

static const char *hb_plan(enum bench_coll c, size_t count, enum bench_type t,
			   char *buf, size_t len)
{
	static const hop_coll_kind_t kinds[BENCH_COLL_COUNT] = {
		HOP_KIND_ALLREDUCE, HOP_KIND_BROADCAST, HOP_KIND_REDUCE,
		HOP_KIND_ALLGATHER, HOP_KIND_REDUCESCATTER, HOP_KIND_ALLTOALL,
		HOP_KIND_GATHER, HOP_KIND_SCATTER, HOP_KIND_ALLGATHERV,
		HOP_KIND_REDUCESCATTERV
	};
	hop_coll_plan_t p;
	int rc = hop_coll_plan(comm, kinds[c], count, (hop_dtype_t)t, &p);

	if (rc)
		return hop_error(rc);
	snprintf(buf, len, "algo %s intra %s inter %s chunk %zu depth %d "
		 "predicted_us %.3f forced %d", p.algo, p.sub_algo[0],
		 p.sub_algo[1], p.chunk_bytes, p.depth, p.predicted_us,
		 p.forced);
	return NULL;
}

static const char *hb_barrier(void)
{
	int rc = hop_barrier(comm);

	return rc ? hop_error(rc) : NULL;
}

static double hb_max_double(double v)
{
	double out = v;

	int rc = hop_allreduce(comm, &v, &out, 1, HOP_FLOAT64, HOP_MAX);

	if (rc)
		die("timing reduction", rc);
	return out;
}

static long hb_sum_long(long v)
{
	int64_t in = v, out = v;

	int rc = hop_allreduce(comm, &in, &out, 1, HOP_INT64, HOP_SUM);

	if (rc)
		die("#wrong reduction", rc);
	return (long)out;
}

static const struct bench_backend hop_backend = {
	.name = "hop-bench",
	.label = hb_label,
	.init = hb_init,
	.fini = hb_fini,
	.supports = hb_supports,
	.set_algo = hb_set_algo,
	.plan = hb_plan,
	.run = hb_run,
	.barrier = hb_barrier,
	.max_double = hb_max_double,
	.sum_long = hb_sum_long,
};

int main(int argc, char **argv)
{
	return bench_main(&hop_backend, argc, argv);
}
