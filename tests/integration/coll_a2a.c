/*
 * coll_a2a.c - AllToAll and AllToAllv on a real transport, run by
 * coll_a2a.sh through hop-run.
 *
 * Every byte rank f sends rank t is a hash of (f, t, byte index, case),
 * so each rank computes what it must receive on its own (the serial
 * reference) and compares bit for bit; bytes of the receive buffer
 * outside the blocks (gaps, guard bytes, a misaligned start) hold a
 * guard pattern that must survive. Cases: pairwise, Bruck and the
 * model's choice x counts {0, 1, odd, N+1, eager pieces, large} x
 * element sizes {1, 4, 8} x in place x blocking / nonblocking
 * interleaved with an AllReduce, alltoallv with uneven, zero, permuted
 * and gapped blocks, argument errors.
 *
 *   --mismatch KIND  KIND alltoall: rank 0 passes another count;
 *                    short / long: rank 0 expects one element more / less
 *                    from rank 1 than rank 1 sends (alltoallv); short-rndv
 *                    / long-rndv: the same with 256 KiB blocks.
 *                    Prints "coll_a2a mismatch: rank R got CODE: msg".
 *
 * Prints "coll_a2a: rank R passed C cases" and exits 0, or names the
 * failing case and exits 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/hop.h>

#include "coll/coll_int.h" /* to force each algorithm in turn */

#define TEST_NAME "coll_a2a"
static hop_comm_t *comm;
static int rank, nranks, cases;
#include "rank_check.h"

#define GUARD 0xa5
#define MAXN 64

static uint8_t byte_of(int from, int to, size_t i, unsigned seed)
{
	uint64_t h = ((uint64_t)from << 40) ^ ((uint64_t)to << 20) ^ i ^
		     ((uint64_t)seed << 52);

	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint8_t)(h == GUARD ? h + 1 : h);
}

/* One case: per-peer blocks in elements of @es bytes. */
struct a2a_case {
	int algo, inplace, nb, v;
	size_t es;
	hop_dtype_t dt;
	size_t sc[MAXN], sd[MAXN], rc[MAXN], rd[MAXN];
	unsigned seed;
};

static size_t extent(const size_t *cnt, const size_t *dsp, size_t es)
{
	size_t e = 0;

	for (int p = 0; p < nranks; p++)
		if (cnt[p] && (dsp[p] + cnt[p]) * es > e)
			e = (dsp[p] + cnt[p]) * es;
	return e;
}

static const char *case_str(const struct a2a_case *k)
{
	static char b[160];

	snprintf(b, sizeof(b), "%s %s N=%d es=%zu sc[0]=%zu inplace=%d %s "
		 "seed=%u", k->v ? "alltoallv" : "alltoall",
		 hop_coll_algo_name(k->algo), nranks, k->es, k->sc[0],
		 k->inplace, k->nb ? "nonblocking" : "blocking", k->seed);
	return b;
}

/* Run the collective (nonblocking: beside an AllReduce, waited on in
 * the other order). */
static void launch(const struct a2a_case *k, const void *sb, void *rb)
{
	hop_request_t *r1, *r2;
	uint32_t x = (uint32_t)rank + 1, sum = 0;
	int rc;

	if (!k->nb) {
		rc = k->v ? hop_alltoallv(comm, sb, k->sc, k->sd, rb, k->rc,
					  k->rd, k->dt)
			  : hop_alltoall(comm, sb, rb, k->sc[0], k->dt);
		if (rc)
			FAIL("%s: %s", case_str(k), hop_err_name(rc));
		return;
	}
	rc = k->v ? hop_ialltoallv(comm, sb, k->sc, k->sd, rb, k->rc, k->rd,
				   k->dt, &r1)
		  : hop_ialltoall(comm, sb, rb, k->sc[0], k->dt, &r1);
	if (rc)
		FAIL("%s: start: %s", case_str(k), hop_err_name(rc));
	OK(hop_iallreduce(comm, &x, &sum, 1, HOP_UINT32, HOP_SUM, &r2));
	OK(hop_wait(&r2, NULL));
	if ((rc = hop_wait(&r1, NULL)))
		FAIL("%s: wait: %s", case_str(k), hop_err_name(rc));
	if (sum != (uint32_t)(nranks * (nranks + 1) / 2))
		FAIL("%s: the interleaved allreduce gave %u", case_str(k), sum);
}

static void run_case(struct a2a_case *k, size_t misalign)
{
	size_t es = k->es, sext = extent(k->sc, k->sd, es);
	size_t rext = extent(k->rc, k->rd, es);
	size_t len = (sext > rext ? sext : rext) + misalign + 16;
	uint8_t *sraw = malloc(len), *rraw = k->inplace ? sraw : malloc(len);
	uint8_t *sb = sraw + misalign, *rb = rraw + misalign;

	if (!sraw || !rraw)
		FAIL("out of memory (%zu B)", len);
	memset(rraw, GUARD, len);
	for (int p = 0; p < nranks; p++)
		for (size_t i = 0; i < k->sc[p] * es; i++)
			sb[k->sd[p] * es + i] = byte_of(rank, p, i, k->seed);
	k->dt = es == 1 ? HOP_UINT8 : es == 4 ? HOP_FLOAT32 : HOP_UINT64;
	launch(k, sb, rb);
	/* expected image of the receive buffer: guard, then the blocks */
	uint8_t *want = malloc(len);
	if (!want)
		FAIL("out of memory (%zu B)", len);
	memset(want, GUARD, len);
	for (int p = 0; p < nranks; p++)
		for (size_t i = 0; i < k->rc[p] * es; i++)
			want[misalign + k->rd[p] * es + i] =
				byte_of(p, rank, i, k->seed);
	for (size_t i = 0; i < len; i++) {
		int in_block = 0;
		for (int p = 0; p < nranks && !in_block; p++)
			in_block = i >= misalign + k->rd[p] * es &&
				   i < misalign + (k->rd[p] + k->rc[p]) * es;
		if (k->inplace && !in_block)
			continue; /* send data or guard: not specified */
		if (rraw[i] != want[i])
			FAIL("%s: byte %zu of the receive buffer (misalign "
			     "%zu): 0x%02x, want 0x%02x", case_str(k), i,
			     misalign, rraw[i], want[i]);
	}
	free(want);
	if (rraw != sraw)
		free(rraw);
	free(sraw);
	cases++;
}

/* alltoall: @count elements to every peer, at p * count. */
static void uniform(struct a2a_case *k, size_t count)
{
	k->v = 0;
	for (int p = 0; p < nranks; p++) {
		k->sc[p] = k->rc[p] = count;
		k->sd[p] = k->rd[p] = (size_t)p * count;
	}
}

/* Elements rank @f sends rank @t in alltoallv pattern @seed: uneven,
 * every third pair none. */
static size_t vcount(int f, int t, unsigned seed, size_t maxc)
{
	if ((f + 2 * t + (int)seed) % 3 == 0)
		return 0;
	return byte_of(f, t, 0, seed + 1000) % (maxc + 1);
}

/* alltoallv: send blocks in peer order with 1-element gaps, receive
 * blocks in reverse peer order with 3-element gaps. */
static void uneven(struct a2a_case *k, size_t maxc)
{
	size_t s = 0, r = 0;

	k->v = 1;
	for (int p = 0; p < nranks; p++) {
		k->sc[p] = vcount(rank, p, k->seed, maxc);
		k->sd[p] = s;
		s += k->sc[p] + 1;
	}
	for (int p = nranks - 1; p >= 0; p--) {
		k->rc[p] = vcount(p, rank, k->seed, maxc);
		k->rd[p] = r;
		r += k->rc[p] + 3;
	}
}

/* Counts above @max_count are left out (--max-count). */
static void matrix(size_t max_count)
{
	static const int algo[] = { HOP_ALGO_PAIRWISE, HOP_ALGO_BRUCK,
				    HOP_ALGO_AUTO };
	static const size_t esz[] = { 1, 4, 8 };
	/* 5003: blocks of 2 to 8 eager sizes (8 KiB), cut into eager
	 * pieces of odd length; 50001: large blocks, whole */
	size_t counts[] = { 0, 1, 7, (size_t)nranks + 1, 5003, 50001 };
	unsigned idx = 0;
	struct a2a_case k;

	for (int a = 0; a < 3; a++) {
		comm->coll->tune.forced[HOP_COLL_ALLTOALL] = algo[a];
		for (int c = 0; c < 6; c++)
			for (int e = 0; e < 3; e++)
				for (int ip = 0; ip < 2; ip++) {
					if (c == 5 && (e != 1 || ip != a % 2))
						continue; /* large: a few */
					if (counts[c] > max_count)
						continue;
					memset(&k, 0, sizeof(k));
					k.algo = algo[a];
					k.es = esz[e];
					k.inplace = ip;
					k.nb = idx % 2;
					k.seed = idx++;
					uniform(&k, counts[c]);
					run_case(&k, idx % 3);
				}
	}
	comm->coll->tune.forced[HOP_COLL_ALLTOALL] = HOP_ALGO_AUTO;
	for (unsigned i = 0; i < 12; i++) {
		size_t maxc = i < 10 ? 9 : 70001;

		if (maxc > max_count)
			continue;
		memset(&k, 0, sizeof(k));
		k.algo = HOP_ALGO_PAIRWISE;
		k.es = esz[i % 3];
		k.inplace = i % 4 == 3;
		k.nb = i % 2;
		k.seed = 100 + i;
		uneven(&k, maxc);
		run_case(&k, i % 3);
	}
}

#define EXPECT_ERR(call, code, word)                                          \
	do {                                                                  \
		int rc_ = (call);                                             \
		if (rc_ != (code) ||                                          \
		    !strstr(hop_comm_last_error(comm), word))                 \
			FAIL("%s returned %s (want %s, message with \"%s\")",  \
			     #call, hop_err_name(rc_), hop_err_name(code),    \
			     word);                                           \
		cases++;                                                      \
	} while (0)

/* Local checks: every rank fails alike, nothing is sent. */
static void argument_errors(void)
{
	size_t c[MAXN] = { 0 }, d[MAXN] = { 0 }, big[MAXN] = { 0 };
	char buf[MAXN * 2 + 32], msg[64];

	EXPECT_ERR(hop_alltoall(comm, NULL, buf, 1, HOP_UINT8),
		   HOP_ERR_INVALID_ARG, "sendbuf is NULL");
	EXPECT_ERR(hop_alltoall(comm, buf, NULL, 1, HOP_UINT8),
		   HOP_ERR_INVALID_ARG, "recvbuf is NULL");
	EXPECT_ERR(hop_alltoall(comm, buf, buf, 1, (hop_dtype_t)99),
		   HOP_ERR_INVALID_ARG, "invalid dtype");
	EXPECT_ERR(hop_alltoall(comm, buf, buf + 1, 2, HOP_UINT8),
		   HOP_ERR_INVALID_ARG, "overlap");
	EXPECT_ERR(hop_alltoall(comm, buf, buf + 32, SIZE_MAX / 2, HOP_UINT64),
		   HOP_ERR_INVALID_ARG, "overflows");
	EXPECT_ERR(hop_alltoall(comm, buf, buf + 32, (size_t)1 << 54,
				HOP_UINT64),
		   HOP_ERR_INVALID_ARG, "2^56");
	EXPECT_ERR(hop_ialltoall(comm, buf, buf + 32, 0, HOP_UINT8, NULL),
		   HOP_ERR_INVALID_ARG, "req is NULL");
	EXPECT_ERR(hop_alltoallv(comm, buf, NULL, d, buf + 32, c, d,
				 HOP_UINT8),
		   HOP_ERR_INVALID_ARG, "sendcounts is NULL");
	EXPECT_ERR(hop_alltoallv(comm, buf, c, d, buf + 32, c, NULL,
				 HOP_UINT8),
		   HOP_ERR_INVALID_ARG, "rdispls is NULL");
	big[nranks - 1] = (size_t)1 << 62;
	snprintf(msg, sizeof(msg), "recvcounts[%d]", nranks - 1);
	EXPECT_ERR(hop_alltoallv(comm, buf, c, d, buf + 32, big, d,
				 HOP_UINT32),
		   HOP_ERR_INVALID_ARG, msg);
	big[nranks - 1] = 0;
	d[0] = SIZE_MAX - 1;
	c[0] = 2;
	EXPECT_ERR(hop_alltoallv(comm, buf, c, d, buf + 32, big, big,
				 HOP_UINT8),
		   HOP_ERR_INVALID_ARG, "sdispls[0]");
	d[0] = 0;
	c[0] = 0;
	c[rank] = 3; /* the own block: 3 sent, 0 expected */
	snprintf(msg, sizeof(msg), "sendcounts[%d] = 3", rank);
	EXPECT_ERR(hop_alltoallv(comm, buf, c, d, buf + 32, big, d,
				 HOP_UINT8),
		   HOP_ERR_MISMATCH, msg);
	/* still usable: the errors sent nothing */
	struct a2a_case k = { .algo = HOP_ALGO_AUTO, .es = 4, .seed = 7 };
	uniform(&k, 3);
	run_case(&k, 0);
}

/* Rank 0 disagrees: it must fail with @code naming the peer; nobody
 * hangs (every rank prints its result and exits). */
static int mismatch(const char *kind)
{
	/* -rndv: blocks above the eager size, so the sender learns of it */
	size_t blk = strstr(kind, "rndv") ? 256 * 1024 : 4;
	size_t sc[MAXN], rc[MAXN], d[MAXN];
	uint8_t *sb = calloc((size_t)nranks, 2 * blk);
	uint8_t *rb = malloc((size_t)nranks * 2 * blk);
	int ret;

	if (!sb || !rb)
		FAIL("out of memory");
	for (int p = 0; p < nranks; p++) {
		sc[p] = rc[p] = blk;
		d[p] = (size_t)p * 2 * blk;
	}
	/* a rank still in this barrier may already hold the next call's
	 * messages from ranks 0 and 2, whose signatures differ: p2p fails it
	 * there, which is its result */
	ret = hop_barrier(comm);
	if (ret && (rank == 0 || ret != HOP_ERR_MISMATCH))
		FAIL("hop_barrier: %s", hop_err_name(ret));
	if (!ret && !strcmp(kind, "alltoall")) {
		ret = hop_alltoall(comm, sb, rb, rank ? 4 : 5, HOP_UINT8);
	} else if (!ret) {
		if (rank == 0)
			rc[1] += strncmp(kind, "short", 5) ? -1 : 1;
		ret = hop_alltoallv(comm, sb, sc, d, rb, rc, d, HOP_UINT8);
	}
	printf("coll_a2a mismatch: rank %d got %s: %s\n", rank,
	       hop_err_name(ret), ret ? hop_comm_last_error(comm) : "");
	fflush(stdout);
	free(sb);
	free(rb);
	hop_comm_destroy(comm);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mm = NULL;
	size_t max_count = SIZE_MAX;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--mismatch") && i + 1 < argc) {
			mm = argv[++i];
		} else if (!strcmp(argv[i], "--max-count") && i + 1 < argc) {
			max_count = strtoull(argv[++i], NULL, 0);
		} else {
			fprintf(stderr, "usage: coll_a2a [--max-count N] "
				"[--mismatch alltoall|short|long|short-rndv|"
				"long-rndv]\n");
			return 2;
		}
	}
	rank = -1;
	if (hop_comm_init_env(&comm)) {
		fprintf(stderr, "coll_a2a: init: %s\n", hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	nranks = hop_comm_size(comm);
	if (nranks > MAXN)
		FAIL("at most %d ranks", MAXN);
	if (mm)
		return mismatch(mm);
	argument_errors();
	matrix(max_count);
	OK(hop_comm_destroy(comm));
	printf("coll_a2a: rank %d passed %d cases\n", rank, cases);
	return 0;
}
