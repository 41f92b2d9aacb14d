/*
 * coll_matrix_cases.c - the cases of coll_matrix beyond the matrix:
 * argument errors, collectives in flight, no allocation in steady state,
 * a mismatch between ranks, a comm destroyed with collectives running.
 */
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_matrix.h"
#include "p2p/p2p_priv.h" /* p2p's unexpected-message pool counter */

/* Allocation counter: the program links with -Wl,--wrap=malloc,... so
 * every allocation by hop's code (linked in statically) is counted. */
long nallocs;
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n);
static int trace_allocs; /* COLL_MATRIX_TRACE=1: who allocates when warm */

static void counted(void)
{
	nallocs++;
	if (trace_allocs) {
		void *bt[16];
		trace_allocs = 0;
		backtrace_symbols_fd(bt, backtrace(bt, 16), 2);
		trace_allocs = 1;
	}
}

void *__wrap_malloc(size_t n) { counted(); return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { counted(); return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { counted(); return __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t a, size_t n) { counted(); return __real_aligned_alloc(a, n); }

/* several nonblocking collectives in flight, completed in reverse order */
void in_flight(void)
{
	size_t n = 1000;
	int32_t *a = xmalloc(n * 4), *ar = xmalloc(n * 4), *b = xmalloc(n * 4);
	int32_t *g = xmalloc(n * 4 * (size_t)nranks);
	hop_request_t *req[4];
	struct kase k = { HOP_COLL_ALLREDUCE, 0, HOP_INT32, HOP_SUM, n, 0, 0, 1 };
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		a[i] = (int32_t)(i + (size_t)rank);
		b[i] = rank == 0 ? (int32_t)(7 * i) : -1;
	}
	rc |= hop_iallreduce(comm, a, ar, n, HOP_INT32, HOP_SUM, &req[0]);
	rc |= hop_ibroadcast(comm, b, n, HOP_INT32, 0, &req[1]);
	rc |= hop_iallgather(comm, a, g, n, HOP_INT32, &req[2]);
	rc |= hop_ibarrier(comm, &req[3]);
	for (int i = 3; i >= 0 && !rc; i--)
		rc = hop_wait(&req[i], NULL);
	if (rc)
		fail(&k, "four collectives in flight: %s", hop_err_name(rc));
	for (size_t i = 0; !rc && i < n; i++) {
		int32_t sum = (int32_t)((size_t)nranks * i + (size_t)(nranks * (nranks - 1) / 2));
		if (ar[i] != sum || b[i] != (int32_t)(7 * i) ||
		    g[(size_t)(nranks - 1) * n + i] != (int32_t)(i + (size_t)nranks - 1)) {
			fail(&k, "in flight: wrong data at element %zu", i);
			break;
		}
	}
	gather_verdict(&k, !rc, 0);
	free(a);
	free(ar);
	free(b);
	free(g);
}

void expect_err(int rc, const char *call, int code, const char *needle)
{
	if (rc != code)
		fail(NULL, "%s returned %s, expected %s", call, hop_err_name(rc),
		     hop_err_name(code));
	else if (needle && !strstr(hop_comm_last_error(comm), needle))
		fail(NULL, "%s: message \"%s\" does not name %s", call,
		     hop_comm_last_error(comm), needle);
}

/* each bad argument gets its code and a message naming it; the comm
 * stays usable (no communication happens) */
void argument_errors(void)
{
	float buf[16] = { 0 }, out[16];
	hop_request_t *req;

	EXPECT_ERR(hop_allreduce(comm, NULL, out, 5, HOP_FLOAT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "count 5");
	EXPECT_ERR(hop_allreduce(comm, buf, NULL, 5, HOP_FLOAT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "recvbuf");
	EXPECT_ERR(hop_allreduce(comm, buf, out, 5, (hop_dtype_t)99, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "dtype");
	EXPECT_ERR(hop_allreduce(comm, buf, out, 5, HOP_FLOAT32, (hop_op_t)42),
		   HOP_ERR_INVALID_ARG, "op 42");
	EXPECT_ERR(hop_allreduce(comm, buf, out, SIZE_MAX / 2, HOP_FLOAT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "f32");
	EXPECT_ERR(hop_allreduce(comm, buf, buf + 1, 8, HOP_FLOAT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "overlap");
	EXPECT_ERR(hop_broadcast(comm, buf, 4, HOP_FLOAT32, nranks),
		   HOP_ERR_INVALID_ARG, "root");
	EXPECT_ERR(hop_reduce(comm, buf, out, 4, HOP_FLOAT32, HOP_MAX, -1),
		   HOP_ERR_INVALID_ARG, "root -1");
	EXPECT_ERR(hop_broadcast(comm, NULL, 4, HOP_INT8, 0), HOP_ERR_INVALID_ARG,
		   "buf");
	/* overlapping, and not at recvbuf + rank * count: on every rank */
	EXPECT_ERR(hop_allgather(comm, buf + 1, buf, 4, HOP_FLOAT32),
		   HOP_ERR_INVALID_ARG, "overlap");
	EXPECT_ERR(hop_iallreduce(comm, buf, out, 4, HOP_FLOAT32, HOP_SUM, NULL),
		   HOP_ERR_INVALID_ARG, "req");
	EXPECT_ERR(hop_allreduce(NULL, buf, out, 4, HOP_FLOAT32, HOP_SUM),
		   HOP_ERR_INVALID_HANDLE, NULL);
	EXPECT_ERR(hop_ibarrier(NULL, &req), HOP_ERR_INVALID_HANDLE, NULL);
	/* count 0 with NULL buffers is fine */
	EXPECT_ERR(hop_allreduce(comm, NULL, NULL, 0, HOP_FLOAT32, HOP_SUM),
		   HOP_SUCCESS, NULL);
	gather_verdict(NULL, !failures, 0);
}

/* Steady state: once warm, repeated collectives allocate nothing. */
void steady_state(void)
{
	static const struct {
		int kind, algo;
		size_t count;
	} cs[] = {
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 1u << 20 },
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_RD, 1000 },
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER, 100000 },
		{ HOP_COLL_BROADCAST, HOP_ALGO_CHAIN, 1u << 20 },
		{ HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK, 1000 },
		{ HOP_COLL_REDUCESCATTER, HOP_ALGO_HALVING, 1000 },
		{ HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION, 0 },
	};
	size_t maxc = 1u << 20;
	float *a = xmalloc(maxc * 4 * (size_t)nranks), *b = xmalloc(maxc * 4 * (size_t)nranks);
	struct kase k = { 0, 0, HOP_FLOAT32, HOP_SUM, 0, 0, 0, 0 };

	memset(a, 0, maxc * 4 * (size_t)nranks);
	for (size_t i = 0; i < sizeof(cs) / sizeof(*cs); i++) {
		long before = 0, ux_before = 0;
		int rc = 0;
		k.kind = cs[i].kind;
		k.algo = cs[i].algo;
		k.count = cs[i].count;
		comm->coll->tune.forced[k.kind] = k.algo;
		for (int it = 0; it < 23 && !rc; it++) {
			hop_request_t *req = NULL;
			if (it == 3) {
				before = nallocs; /* warm: pools and schedules built */
				ux_before = (long)comm->p2p->uxpool.allocated;
				trace_allocs = getenv("COLL_MATRIX_TRACE") != NULL;
			}
			switch (k.kind) {
			case HOP_COLL_ALLREDUCE:
				rc = it % 2 ? hop_allreduce(comm, a, b, k.count, HOP_FLOAT32, HOP_SUM)
					    : hop_iallreduce(comm, a, b, k.count, HOP_FLOAT32,
							     HOP_SUM, &req);
				break;
			case HOP_COLL_BROADCAST:
				rc = hop_broadcast(comm, a, k.count, HOP_FLOAT32, 0);
				break;
			case HOP_COLL_ALLGATHER:
				rc = hop_allgather(comm, a, b, k.count, HOP_FLOAT32);
				break;
			case HOP_COLL_REDUCESCATTER:
				rc = hop_reducescatter(comm, a, b, k.count, HOP_FLOAT32, HOP_SUM);
				break;
			default:
				rc = hop_ibarrier(comm, &req);
			}
			if (!rc && req)
				rc = hop_wait(&req, NULL);
		}
		trace_allocs = 0;
		/* p2p's pool of unexpected messages grows to its high-water
		 * mark (timing dependent, bounded): not counted */
		long extra = nallocs - before -
			     ((long)comm->p2p->uxpool.allocated - ux_before);
		if (rc)
			fail(&k, "steady state: %s", hop_err_name(rc));
		else if (extra)
			fail(&k, "steady state: %ld allocations in 20 repeated calls",
			     extra);
		comm->coll->tune.forced[k.kind] = HOP_ALGO_AUTO;
		gather_verdict(&k, !rc && !extra, 0);
	}
	free(a);
	free(b);
}

/* hop_comm_destroy() with collectives still running: cancelled, no
 * crash, nothing leaked (run under valgrind/ASan by the script) */
int destroy_in_flight(void)
{
	size_t n = 1u << 20;
	float *a = xmalloc(n * 4), *b = xmalloc(n * 4), *c = xmalloc(n * 4);
	hop_request_t *r1 = NULL, *r2 = NULL;

	memset(a, 0, n * 4);
	memset(c, 0, n * 4);
	comm->coll->tune.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_RING;
	int rc = hop_iallreduce(comm, a, b, n, HOP_FLOAT32, HOP_SUM, &r1);
	if (!rc)
		rc = hop_ibroadcast(comm, c, n, HOP_FLOAT32, 0, &r2);
	/* a peer may already be gone: then starting fails, which is fine */
	printf("coll_matrix destroy: rank %d started: %s\n", rank, hop_err_name(rc));
	hop_comm_destroy(comm); /* cancels both; the requests go with it */
	free(a);
	free(b);
	free(c);
	return 0;
}

/* rank 0 disagrees on the count: the signature check must catch it */
int mismatch_case(void)
{
	size_t n = 1000 + (rank == 0);
	float *a = xmalloc(1001 * 4), *b = xmalloc(1001 * 4);

	for (size_t i = 0; i < 1001; i++)
		a[i] = 1;
	int rc = hop_allreduce(comm, a, b, n, HOP_FLOAT32, HOP_SUM);
	printf("coll_matrix mismatch: rank %d got %s: %s\n", rank, hop_err_name(rc),
	       hop_comm_last_error(comm));
	free(a);
	free(b);
	return rc ? 0 : 1;
}

