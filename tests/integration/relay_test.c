/*
 * relay_test.c - hop_relay() end to end, run by relay.sh through hop-run
 * with 4 ranks on tcp and shm. The destination (and every relay given a
 * buffer) checks the message byte for byte against a pattern that depends
 * on the case; each rank exits non-zero on the first problem, naming it.
 *
 *   (default)   explicit 1-, 2- and 3-hop paths in both directions, both
 *               modes, sizes 0, 1, odd, 1 MiB + odd, 3 MiB; model k,
 *               explicit k, k larger than the size; relays with and without
 *               a buffer; ranks off the path return at once; argument
 *               errors (each names what is wrong; the comm stays usable)
 *   --topo      path NULL: routed over the HOP_TOPO chain 0-1-2-3 (whose
 *               slow shortcut 0-3 must not be taken) written by relay.sh;
 *               the plan's path and k are checked against a brute force
 *               over the same alpha/beta
 *   --mismatch  3 ranks; the relay asks for a different chunk count: every
 *               rank must fail with HOP_ERR_MISMATCH or a failed comm
 *
 * HOP_PIPELINE_CHUNKS, when set, must be the k of every model-default case.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/hop.h>

static hop_comm_t *comm;
static int rank, size;

#define TEST_NAME "relay_test"
#include "rank_check.h"

static uint8_t pat(int idx, size_t n, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u;

	return (uint8_t)((x >> 24) ^ (uint32_t)(idx * 37) ^ (uint32_t)(n % 253) ^
			 (uint32_t)(i >> 12));
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		FAIL("out of memory (%zu B)", n);
	return p;
}

static int on_path(const int *path, int npath)
{
	for (int i = 0; i < npath; i++)
		if (path[i] == rank)
			return i;
	return -1;
}

/*
 * One transfer: @idx names the case (pattern and tag). Relays at odd
 * positions pass a buffer (and check their copy), the others pass NULL.
 */
static void xfer(int idx, size_t len, const int *path, int npath, int mode,
		 long chunks)
{
	hop_relay_opts_t o = { .mode = mode, .chunks = chunks, .tag = idx };
	int src = path[0], dst = path[npath - 1], pos = on_path(path, npath);
	int has_buf = pos == 0 || pos == npath - 1 || (pos > 0 && pos % 2);
	uint8_t *buf = has_buf ? xmalloc(len) : NULL;

	if (pos == 0)
		for (size_t i = 0; i < len; i++)
			buf[i] = pat(idx, len, i);
	else if (buf)
		memset(buf, 0xa5, len ? len : 1);
	if (pos < 0) {
		/* off the path: returns at once, whatever buf is */
		OK(hop_relay(comm, NULL, len, src, dst, path, npath, &o));
		return;
	}
	OK(hop_relay(comm, buf, len, src, dst, path, npath, &o));
	if (pos > 0 && buf)
		for (size_t i = 0; i < len; i++)
			if (buf[i] != pat(idx, len, i))
				FAIL("case %d (%zu B, %d ranks, %s, k %ld) at "
				     "position %d: byte %zu is 0x%02x, expected "
				     "0x%02x", idx, len, npath, mode ? "saf"
				     : "pipe", chunks, pos, i, buf[i],
				     pat(idx, len, i));
	free(buf);
}

/* Like xfer() with path NULL (routed over HOP_TOPO; @pl says where). */
static void routed(int idx, size_t len, int src, int dst, int mode,
		   const hop_relay_plan_t *pl)
{
	hop_relay_opts_t o = { .mode = mode, .tag = idx };
	int pos = pl->position;
	uint8_t *buf = pos == 0 || pos == pl->npath - 1 ? xmalloc(len) : NULL;

	if (pos == 0)
		for (size_t i = 0; i < len; i++)
			buf[i] = pat(idx, len, i);
	else if (buf)
		memset(buf, 0xa5, len ? len : 1);
	OK(hop_relay(comm, buf, len, src, dst, NULL, 0, &o));
	if (pos == pl->npath - 1)
		for (size_t i = 0; i < len; i++)
			if (buf[i] != pat(idx, len, i))
				FAIL("routed case %d (%zu B, %d -> %d): byte %zu"
				     " is 0x%02x, expected 0x%02x", idx, len,
				     src, dst, i, buf[i], pat(idx, len, i));
	free(buf);
}

/* Without HOP_TOPO and HOP_PROFILE the plan uses the built-in link of
 * this communicator's provider, and says so. */
static void check_model_source(void)
{
	static const int p3[] = { 0, 1, 2, 3 };
	hop_relay_plan_t pl;
	char want[64];

	if (getenv("HOP_TOPO") || getenv("HOP_PROFILE"))
		return;
	OK(hop_relay_plan(comm, 1 << 20, 0, 3, p3, 4, NULL, &pl));
	snprintf(want, sizeof(want), "built-in %s", hop_comm_transport(comm));
	if (strcmp(pl.model, want))
		FAIL("plan's model is '%s', expected '%s'", pl.model, want);
	if (pl.npath != 4 || pl.position != on_path(p3, 4) || pl.chunks < 1 ||
	    !(pl.predicted > 0))
		FAIL("plan: npath %d position %d chunks %ld predicted %g",
		     pl.npath, pl.position, pl.chunks, pl.predicted);
}

/* The plan's k for a model-default case must honour HOP_PIPELINE_CHUNKS. */
static void check_env_k(size_t len, const int *path, int npath)
{
	const char *e = getenv("HOP_PIPELINE_CHUNKS");
	hop_relay_plan_t pl;
	long want;

	if (!e || !*e || !len)
		return;
	want = strtol(e, NULL, 10);
	if (want > (long)len)
		want = (long)len;
	OK(hop_relay_plan(comm, len, path[0], path[npath - 1], path, npath,
			  NULL, &pl));
	if (pl.chunks != want)
		FAIL("HOP_PIPELINE_CHUNKS=%s: plan has k %ld for %zu B, "
		     "expected %ld", e, pl.chunks, len, want);
}

static void test_paths(void)
{
	static const int p3[] = { 0, 1, 2, 3 }, r3[] = { 3, 1, 2, 0 };
	static const int p2[] = { 2, 0, 1 }, p1[] = { 1, 3 };
	static const struct {
		const int *path;
		int npath;
	} paths[] = { { p3, 4 }, { r3, 4 }, { p2, 3 }, { p1, 2 } };
	static const size_t sizes[] = { 0, 1, 4097, (1u << 20) + 13,
					3u << 20 };
	static const long ks[] = { 0, 7 };
	int idx = 0;

	check_model_source();
	for (size_t p = 0; p < 4; p++) {
		for (size_t s = 0; s < 5; s++) {
			for (int mode = 0; mode < 2; mode++)
				for (size_t k = 0; k < 2; k++)
					xfer(idx++, sizes[s], paths[p].path,
					     paths[p].npath, mode, ks[k]);
			check_env_k(sizes[s], paths[p].path, paths[p].npath);
		}
	}
	/* more chunks than bytes: clamped to one byte per chunk */
	xfer(idx++, 5, p3, 4, HOP_RELAY_PIPELINED, 1000);
	/* many small chunks (eager) through two relays */
	xfer(idx++, 100003, p3, 4, HOP_RELAY_PIPELINED, 64);
	if (rank == 0)
		printf("relay_test: %d transfers checked\n", idx);
}

static void bad(size_t len, int src, int dst, const int *path, int npath,
		const hop_relay_opts_t *o, const char *needle)
{
	char buf[16] = { 0 };

	CHECK_RC(hop_relay(comm, buf, len, src, dst, path, npath, o),
		 HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), needle))
		FAIL("error message '%s' does not mention '%s'",
		     hop_comm_last_error(comm), needle);
}

/* HOP_TOPO unset is flat (docs/config.md): path NULL is the direct one. */
static void check_flat(void)
{
	hop_relay_plan_t pl;

	OK(hop_relay_plan(comm, 4097, 0, 3, NULL, 0, NULL, &pl));
	if (pl.npath != 2 || pl.path[0] != 0 || pl.path[1] != 3)
		FAIL("path NULL without HOP_TOPO: %d ranks (%d -> %d), "
		     "expected the direct path 0 -> 3", pl.npath, pl.path[0],
		     pl.path[pl.npath - 1]);
	routed(901, 4097, 0, 3, HOP_RELAY_PIPELINED, &pl);
}

static void test_errors(void)
{
	static const int rep[] = { 0, 1, 0, 3 }, out[] = { 0, 9, 3 };
	static const int p3[] = { 0, 1, 2, 3 };
	hop_relay_opts_t mode = { .mode = 7 }, neg = { .chunks = -1 };
	hop_relay_opts_t tag = { .tag = -5 };
	hop_relay_plan_t pl;

	bad(8, 0, 3, rep, 4, NULL, "rank 0 is on the path twice");
	bad(8, 0, 3, out, 3, NULL, "path[1] = 9 out of range");
	bad(8, 1, 3, p3, 4, NULL, "path[0] = 0 is not the source rank 1");
	bad(8, 0, 2, p3, 4, NULL, "path[3] = 3 is not the destination");
	bad(8, 0, 3, p3, 1, NULL, "npath 1 out of range");
	bad(8, 0, 3, p3, 4, &mode, "opts->mode 7");
	bad(8, 0, 3, p3, 4, &neg, "opts->chunks -1");
	bad(8, 0, 3, p3, 4, &tag, "opts->tag -5");
	bad(8, 0, 4, p3, 4, NULL, "destination rank 4 out of range");
	bad(8, 2, 2, p3, 4, NULL, "both rank 2");
	bad(8, 0, 3, NULL, 3, NULL, "path is NULL but npath is 3");
	if (!getenv("HOP_TOPO"))
		check_flat();
	if (rank == 0 || rank == 3) {
		/* checked where the data is, before any message */
		CHECK_RC(hop_relay(comm, NULL, 8, 0, 3, p3, 4, NULL),
			 HOP_ERR_INVALID_ARG);
		if (!strstr(hop_comm_last_error(comm), "buf is NULL with len 8"))
			FAIL("error message '%s' does not name buf",
			     hop_comm_last_error(comm));
	}
	CHECK_RC(hop_relay_plan(comm, 8, 0, 3, p3, 4, NULL, NULL),
		 HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_relay_plan(NULL, 8, 0, 3, p3, 4, NULL, &pl),
		 HOP_ERR_INVALID_HANDLE);
	/* the comm still works after argument errors */
	xfer(900, 1000, p3, 4, HOP_RELAY_PIPELINED, 3);
}

/* The HOP_TOPO file relay.sh writes: chain 0-1-2-3 with a slow middle
 * link (unequal stages) and a much slower shortcut 0-3. */
static const struct {
	int a, b;
	double alpha, beta;     /* s, B/s */
} chain[] = {
	{ 0, 1, 2e-6, 1.0e9 }, { 1, 2, 3e-6, 0.5e9 }, { 2, 3, 2e-6, 1.0e9 },
};

/* The provider's built-in min_chunk (docs/model.md), which bounds k. */
static double min_chunk(void)
{
	return strcmp(hop_comm_transport(comm), "tcp") ? 4096 : 16384;
}

/* Pipelined time of the chain hops between @lo and @hi at k chunks. */
static double chain_time(int lo, int hi, double m, long k)
{
	double sum = 0, slow = 0;

	for (int i = lo; i < hi; i++) {
		double st = chain[i].alpha + m / ((double)k * chain[i].beta);

		sum += st;
		slow = st > slow ? st : slow;
	}
	return sum + (double)(k - 1) * slow;
}

/* Brute force: the smallest k of least time in [1, m / min_chunk]. */
static long brute_k(int lo, int hi, double m)
{
	long kmax = m >= min_chunk() ? (long)floor(m / min_chunk()) : 1, best = 1;

	for (long k = 2; k <= kmax; k++)
		if (chain_time(lo, hi, m, k) < chain_time(lo, hi, m, best))
			best = k;
	return best;
}

static void check_topo_plan(int src, int dst, size_t len, int mode,
			    const hop_relay_plan_t *pl)
{
	int lo = src < dst ? src : dst, hi = src < dst ? dst : src;
	const char *env = getenv("HOP_PIPELINE_CHUNKS");
	long want_k = mode ? 1 : brute_k(lo, hi, (double)len);
	double want_t;

	if (pl->npath != hi - lo + 1)
		FAIL("route %d -> %d: %d ranks, expected %d", src, dst,
		     pl->npath, hi - lo + 1);
	for (int i = 0; i < pl->npath; i++)
		if (pl->path[i] != (src < dst ? src + i : src - i))
			FAIL("route %d -> %d: path[%d] = %d", src, dst, i,
			     pl->path[i]);
	if (!mode && env && *env)
		want_k = strtol(env, NULL, 10);
	if (want_k > (long)len)
		want_k = len ? (long)len : 1;
	if (pl->chunks != want_k)
		FAIL("route %d -> %d, %zu B, %s: k %ld, expected %ld", src, dst,
		     len, mode ? "saf" : "pipe", pl->chunks, want_k);
	want_t = chain_time(lo, hi, (double)len, 1);  /* k = 1 is s-a-f */
	if (!mode)
		want_t = chain_time(lo, hi, (double)len, want_k);
	if (fabs(pl->predicted - want_t) > 1e-9 * want_t + 1e-15)
		FAIL("route %d -> %d, %zu B: predicted %g s, expected %g s",
		     src, dst, len, pl->predicted, want_t);
	if (!strstr(pl->model, "HOP_TOPO"))
		FAIL("plan's model is '%s', not the HOP_TOPO file", pl->model);
}

/* Path NULL: routed over HOP_TOPO; plans checked, data checked. */
static void test_topo(void)
{
	static const int ends[][2] = { { 0, 3 }, { 3, 0 }, { 0, 2 }, { 1, 3 } };
	static const size_t sizes[] = { 0, 1, 4097, (1u << 20) + 13 };
	int idx = 1000;

	if (!getenv("HOP_TOPO"))
		FAIL("--topo needs HOP_TOPO (relay.sh writes it)");
	for (int e = 0; e < 4; e++) {
		for (int s = 0; s < 4; s++) {
			for (int mode = 0; mode < 2; mode++) {
				hop_relay_opts_t o = { .mode = mode };
				hop_relay_plan_t pl;

				OK(hop_relay_plan(comm, sizes[s], ends[e][0],
						  ends[e][1], NULL, 0, &o, &pl));
				check_topo_plan(ends[e][0], ends[e][1], sizes[s],
						mode, &pl);
				xfer(idx++, sizes[s], pl.path, pl.npath, mode, 0);
				/* and the routed call itself, data checked */
				routed(idx++, sizes[s], ends[e][0], ends[e][1],
				       mode, &pl);
			}
		}
	}
	if (rank == 0)
		printf("relay_test: %d routed plans and transfers checked\n",
		       idx - 1000);
}

/*
 * The relay plans a different chunk count than its neighbours: all three
 * ranks must return an error (the chunk signature differs), none hang.
 */
static void test_mismatch(void)
{
	static const int p[] = { 0, 1, 2 };
	hop_relay_opts_t o = { .chunks = rank == 1 ? 5 : 4 };
	/* chunks above every eager size: an eager chunk leaves rank 0 before
	 * rank 1 can tell it the signatures differ */
	size_t len = 400000;
	uint8_t *buf = xmalloc(len);
	int rc;

	memset(buf, 1, len);
	rc = hop_relay(comm, buf, len, 0, 2, p, 3, &o);
	free(buf);
	if (rc == HOP_SUCCESS)
		FAIL("mismatched chunk counts: hop_relay succeeded");
	/* rank 1 receives rank 0's chunk and sees the other signature; rank 0
	 * hears of it from rank 1's notice, unless rank 1 has already closed
	 * its communicator: then its post fails naming rank 1 */
	if (rank == 1 && rc != HOP_ERR_MISMATCH)
		FAIL("mismatched chunk counts: %s, expected HOP_ERR_MISMATCH",
		     hop_err_name(rc));
	if (rank == 0 && rc != HOP_ERR_MISMATCH &&
	    !(rc == HOP_ERR_PEER_FAILED &&
	      strstr(hop_comm_last_error(comm), "rank 1")))
		FAIL("mismatched chunk counts: %s (%s), expected HOP_ERR_MISMATCH "
		     "or HOP_ERR_PEER_FAILED naming rank 1", hop_err_name(rc),
		     hop_comm_last_error(comm));
	/* a deadline names the transfer, the chunk and the peer */
	if (rc == HOP_ERR_TIMEOUT &&
	    !strstr(hop_comm_last_error(comm), "hop_relay (position 2 of 3 "
					       "ranks, 100000 B in 4 chunks): "
					       "chunk 0, recv from rank 1"))
		FAIL("timeout message '%s' does not name the chunk and peer",
		     hop_comm_last_error(comm));
	printf("relay_test mismatch: rank %d got %s\n", rank,
	       hop_err_name(rc));
}

int main(int argc, char **argv)
{
	int topo = 0, mismatch = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--topo"))
			topo = 1;
		else if (!strcmp(argv[i], "--mismatch"))
			mismatch = 1;
		else
			FAIL("unknown argument '%s'", argv[i]);
	}
	OK(hop_comm_init_env(&comm));
	rank = hop_comm_rank(comm);
	size = hop_comm_size(comm);
	if (mismatch) {
		test_mismatch();
		hop_comm_destroy(comm);
		printf("relay_test: rank %d passed\n", rank);
		return 0;
	}
	if (topo)
		test_topo();
	else
		test_paths();
	test_errors();
	/* the last chunks' credits may still be on their way back */
	OK(hop_barrier(comm));
	OK(hop_comm_destroy(comm));
	printf("relay_test: rank %d passed\n", rank);
	return 0;
}
