/*
 * test_model_forms.c - every collective closed form against values
 * computed by hand (docs/model.md has the forms), the chunk-count choice
 * against a brute-force search, and hop_model_choose() against the
 * minimum of all predictions.
 *
 * Hand link: alpha 2, beta 4, gamma 0.5, duplex 1 (units arbitrary: the
 * forms are homogeneous), min_chunk 1.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model_eq.h"

#include <hop/common.h>

#include "model/model.h"
#include "transport/provider.h"

static const struct hop_model_link L1 = { 2, 4, 0.5, 1, 1, 0, 0 };

static double P(int kind, int algo, size_t m, int n, long k)
{
	return hop_model_predict(kind, algo, m, n, &L1, k);
}

static void test_broadcast(void **state)
{
	(void)state;
	EQ(P(HOP_COLL_BROADCAST, HOP_ALGO_FLAT, 64, 4, 1), 54);
	EQ(P(HOP_COLL_BROADCAST, HOP_ALGO_TREE, 64, 4, 1), 36);
	EQ(P(HOP_COLL_BROADCAST, HOP_ALGO_TREE, 64, 5, 1), 54);
	EQ(P(HOP_COLL_BROADCAST, HOP_ALGO_TREE, 64, 2, 1), 18);
	EQ(P(HOP_COLL_BROADCAST, HOP_ALGO_CHAIN, 64, 4, 1), 54);
	/* (h + k - 1)(a + m/(k b)) = 6 * 6 */
	EQ(P(HOP_COLL_BROADCAST, HOP_ALGO_CHAIN, 64, 4, 4), 36);
	/* duplex 2: fill 3 (2 + 4), steady 3 (2 + 8) */
	struct hop_model_link d2 = L1;
	d2.duplex = 2;
	EQ(hop_model_predict(HOP_COLL_BROADCAST, HOP_ALGO_CHAIN, 64, 4, &d2, 4),
	   48);
	/* flat ignores the chunk count */
	EQ(P(HOP_COLL_BROADCAST, HOP_ALGO_FLAT, 64, 4, 7), 54);
}

static void test_reduce(void **state)
{
	(void)state;
	/* s = 18, r = 32: s + (N-2) max(s, r) + r */
	EQ(P(HOP_COLL_REDUCE, HOP_ALGO_FLAT, 64, 4, 1), 114);
	EQ(P(HOP_COLL_REDUCE, HOP_ALGO_TREE, 64, 4, 1), 100);
	/* c = 16: s = 6, r = 8: 3 (6 + 8) + 3 max(6, 8) */
	EQ(P(HOP_COLL_REDUCE, HOP_ALGO_CHAIN, 64, 4, 4), 66);
	EQ(P(HOP_COLL_REDUCE, HOP_ALGO_CHAIN, 64, 4, 1), 3 * (18 + 32));
}

static void test_allreduce(void **state)
{
	(void)state;
	/* ring k=1: 2(N-1)(a + m/(N b)) + (N-1)/N g m = 36 + 24 */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 64, 4, 1), 60);
	/* k=2: t = 4, r = 4: 3 (4 + 4) + 3 * 2 * 4 */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 64, 4, 2), 48);
	/* N = 5: t = 5.2, r = 6.4 */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 64, 5, 1), 67.2);
	/* tree k=1: L (2t + r) = 2 (36 + 32); k=2: 2 (20 + 16) + 2 * 16 */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_TREE, 64, 4, 1), 136);
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_TREE, 64, 4, 2), 104);
	/* dbtree N=4, k=1, t = 10, r = 16: 0 -> 2 -> {1, 3}. Rank 2 receives
	 * at 10 and 20, reduces until 26 and 42; the root gets it at 52,
	 * reduces until 68, sends down (78), rank 2 sends to 3 and 1 (98) */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_DBTREE, 64, 4, 1), 98);
	/* k=2: t = 6, r = 8: the first chunk 54, then q = 4 messages per
	 * chunk pair: + max(4 t, 2 r) = 24 */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_DBTREE, 64, 4, 2), 78);
	/* N = 5: 0 -> 4 -> 2 -> {1, 3}: rank 4 has one child; up at 42,
	 * 68, 94; down 10 + 10 + 20 */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_DBTREE, 64, 5, 1), 134);
	/* recursive doubling: log2 N (a + m/b + g m) */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RD, 64, 4, 1), 100);
	/* N = 5 folds one rank: + 2a + 2 m/b + g m = 68 */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RD, 64, 5, 1), 168);
	/* Rabenseifner: 2 log2 N a + 2 (N-1)/N m/b + (N-1)/N g m */
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER, 64, 4, 1), 56);
	EQ(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER, 64, 5, 1), 124);
	/* out of place the input is first copied (g m = 32); with the fold
	 * the copy runs while the extra rank's vector arrives (18) */
	EQ(hop_model_predict_inplace(HOP_COLL_ALLREDUCE, HOP_ALGO_RD, 64, 4,
				     &L1, 1, 0), 132);
	EQ(hop_model_predict_inplace(HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER,
				     64, 5, &L1, 1, 0), 138);
	/* the ring's first reduction waits for the copy of the own block
	 * (g m/N = 8) instead of its arrival (t = 6): 2 more than in place
	 * (60) */
	EQ(hop_model_predict_inplace(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 64, 4,
				     &L1, 1, 0), 62);
	/* duplex 2, N = 2: 2 (a + m/(2 b/2)) + g m / 2 */
	struct hop_model_link d2 = L1;
	d2.duplex = 2;
	EQ(hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 64, 2, &d2, 1),
	   52);
}

static void test_gather_scatter_barrier(void **state)
{
	(void)state;
	/* bytes is the per-rank block: 16 B each, m = 64 at N = 4 */
	EQ(P(HOP_COLL_ALLGATHER, HOP_ALGO_RING, 16, 4, 1), 18);
	/* steps of 1 and 2 blocks; the 2-block step wraps on rank 3: 3a +
	 * 3/4 m/b */
	EQ(P(HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK, 16, 4, 1), 18);
	/* out of place the own block is copied first: g m/N = 8 */
	EQ(hop_model_predict_inplace(HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK, 16, 4,
				     &L1, 1, 0), 26);
	/* N = 5, m = 80: steps of 1, 2, 1 blocks: 4a + 4/5 m/b */
	EQ(P(HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK, 16, 5, 1), 24);
	/* (N-1)(a + m/(N b) + g m/N) */
	EQ(P(HOP_COLL_REDUCESCATTER, HOP_ALGO_RING, 16, 4, 1), 42);
	/* k = 2: t = 4, r = 4: 2 (4 + 4) + 2 * 4 + 4 */
	EQ(P(HOP_COLL_REDUCESCATTER, HOP_ALGO_RING, 16, 4, 2), 28);
	/* 2a + 3/4 (m/b + g m) = 40, and the block is copied out: g m/N */
	EQ(P(HOP_COLL_REDUCESCATTER, HOP_ALGO_HALVING, 16, 4, 1), 48);
	/* N = 5, m = 80: the fold first (a + m/b + g m = 62); new rank 0
	 * keeps 2 + 1 then 1 + 1 blocks: 2a + 5 (m/N)(1/b + g) = 64; at the
	 * end max(g m/N, a + (m/N)/b) = 8 */
	EQ(P(HOP_COLL_REDUCESCATTER, HOP_ALGO_HALVING, 16, 5, 1), 134);
	EQ(P(HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION, 0, 4, 1), 4);
	EQ(P(HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION, 0, 5, 1), 6);
}

static void test_degenerate_and_invalid(void **state)
{
	int algos[16];

	(void)state;
	for (int kind = 0; kind < HOP_COLL_KIND_COUNT; kind++) {
		int n = hop_model_algos(kind, algos, 16);

		assert_true(n >= 1);
		for (int i = 0; i < n; i++)
			EQ(P(kind, algos[i], 1 << 20, 1, 1), 0);
	}
	assert_true(isnan(P(HOP_COLL_ALLGATHER, HOP_ALGO_TREE, 64, 4, 1)));
	assert_true(isnan(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 64, 0, 1)));
	assert_true(isnan(P(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 64, 4, 0)));
	assert_true(isnan(P(HOP_COLL_KIND_COUNT, HOP_ALGO_RING, 64, 4, 1)));
	assert_true(isnan(hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RING,
					    64, 4, NULL, 1)));
	struct hop_model_link bad = L1;
	bad.beta = 0;
	assert_true(isnan(hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RING,
					    64, 4, &bad, 1)));
	assert_int_equal(hop_model_choose(HOP_COLL_ALLREDUCE, 64, 4, &bad, NULL,
					  NULL, NULL),
			 HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_model_choose(-1, 64, 4, &L1, NULL, NULL, NULL),
			 HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_model_choose(HOP_COLL_ALLREDUCE, 64, 0, &L1, NULL,
					  NULL, NULL),
			 HOP_ERR_INVALID_ARG);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(hop_model_kind_name(HOP_COLL_REDUCESCATTER),
			    "reducescatter");
	assert_int_equal(hop_model_kind_lookup("allgather"), HOP_COLL_ALLGATHER);
	assert_int_equal(hop_model_kind_lookup("gather"), HOP_COLL_GATHER);
	assert_int_equal(hop_model_kind_lookup("scan"), -1);
	assert_null(hop_model_kind_name(HOP_COLL_KIND_COUNT));
	assert_string_equal(hop_model_algo_name(HOP_ALGO_RABENSEIFNER),
			    "rabenseifner");
	assert_int_equal(hop_model_algo_lookup(HOP_COLL_ALLREDUCE, "ring"),
			 HOP_ALGO_RING);
	assert_int_equal(hop_model_algo_lookup(HOP_COLL_BROADCAST, "binomial"),
			 HOP_ALGO_TREE);
	assert_int_equal(hop_model_algo_lookup(HOP_COLL_ALLGATHER,
					       "recursive_doubling"),
			 HOP_ALGO_BRUCK);
	assert_int_equal(hop_model_algo_lookup(HOP_COLL_ALLREDUCE,
					       "recursive_doubling"),
			 HOP_ALGO_RD);
	assert_int_equal(hop_model_algo_lookup(HOP_COLL_ALLGATHER, "rd"), -1);
	assert_int_equal(hop_model_algo_lookup(HOP_COLL_BARRIER, "ring"), -1);
	assert_int_equal(hop_model_algo_lookup(HOP_COLL_BARRIER, NULL), -1);
	assert_true(hop_model_pipelined(HOP_COLL_ALLREDUCE, HOP_ALGO_RING));
	assert_false(hop_model_pipelined(HOP_COLL_ALLGATHER, HOP_ALGO_RING));
	assert_false(hop_model_pipelined(HOP_COLL_ALLREDUCE, HOP_ALGO_RD));
	assert_int_equal(hop_model_algos(HOP_COLL_ALLREDUCE, NULL, 0), 6);
	assert_true(hop_model_algo_valid(HOP_COLL_BARRIER, HOP_ALGO_HIER));
	assert_false(hop_model_algo_valid(HOP_COLL_ALLTOALL, HOP_ALGO_HIER));
}

/* AllToAll pairwise posts HOP_A2A_WINDOW exchanges at once, so their
 * alphas overlap: one per window, the bytes one after the other. */
static void test_alltoall(void **state)
{
	struct hop_model_link e = L1;

	(void)state;
	/* out of place, N=4, 8 B per peer: one window of 3 exchanges,
	 * a + 3 * 8/4 (the own block's copy, g 8, runs beside) */
	EQ(hop_model_predict_inplace(HOP_COLL_ALLTOALL, HOP_ALGO_PAIRWISE, 8, 4,
				     &L1, 1, 0), 8);
	/* in place, the send data is copied first (g m = 16) */
	EQ(P(HOP_COLL_ALLTOALL, HOP_ALGO_PAIRWISE, 8, 4, 1), 24);
	/* N=9: 8 exchanges in two windows, 2a + 8 * 8/4 */
	EQ(hop_model_predict_inplace(HOP_COLL_ALLTOALL, HOP_ALGO_PAIRWISE, 8, 9,
				     &L1, 1, 0), 20);
	/* rendezvous blocks: three alphas per window */
	e.eager = 4;
	EQ(hop_model_predict_inplace(HOP_COLL_ALLTOALL, HOP_ALGO_PAIRWISE, 8, 4,
				     &e, 1, 0), 12);
}

/* A block a few eager sizes long goes as eager pieces: one alpha per
 * window instead of a rendezvous's three; a longer one stays whole. */
static void test_alltoall_pieces(void **state)
{
	struct hop_model_link l = { 10e-6, 1e9, 0, 1, 4096, 8192, 0 };

	(void)state;
	assert_int_equal(hop_model_best_chunks(HOP_COLL_ALLTOALL,
					       HOP_ALGO_PAIRWISE, 32768, 2, &l), 4);
	assert_int_equal(hop_model_sched_chunk(HOP_COLL_ALLTOALL,
					       HOP_ALGO_PAIRWISE, 32768, 2, 4),
			 8192);
	EQ(hop_model_predict(HOP_COLL_ALLTOALL, HOP_ALGO_PAIRWISE, 32768, 2,
			     &l, 4), 10e-6 + 32768 / 1e9);
	assert_int_equal(hop_model_best_chunks(HOP_COLL_ALLTOALL,
					       HOP_ALGO_PAIRWISE, 1 << 17, 2,
					       &l), 1);
	assert_int_equal(hop_model_best_chunks(HOP_COLL_ALLTOALL,
					       HOP_ALGO_PAIRWISE, 8192, 4, &l), 1);
	/* tcp's 32 KiB eager: a 64 KiB block in 2 pieces, a longer one
	 * whole, though it would fit 8 pieces */
	l.eager = 32768;
	assert_int_equal(hop_model_best_chunks(HOP_COLL_ALLTOALL,
					       HOP_ALGO_PAIRWISE, 65536, 2, &l), 2);
	assert_int_equal(hop_model_best_chunks(HOP_COLL_ALLTOALL,
					       HOP_ALGO_PAIRWISE, 1 << 17, 2,
					       &l), 1);
	l.eager = 8192;
	/* pieces below the link's min_chunk (tcp's 16 KiB): whole */
	l.min_chunk = 16384;
	assert_int_equal(hop_model_best_chunks(HOP_COLL_ALLTOALL,
					       HOP_ALGO_PAIRWISE, 32768, 2, &l), 1);
	l.min_chunk = 4096;
	/* alltoallv's blocks differ per rank: always whole */
	assert_int_equal(hop_model_best_chunks(HOP_COLL_ALLTOALLV,
					       HOP_ALGO_PAIRWISE, 32768, 2, &l), 1);
}

/* The built-in shm link with 4 ranks on 2 cores (alpha 3 us, 3 GB/s,
 * duplex 1.2, 8 KiB eager): 256 B blocks measure 40 us pairwise against
 * 63 us Bruck (two rounds, one waiting for the other); among 64 ranks
 * Bruck's 6 rounds still beat pairwise's 16 windows. */
static void test_choose_alltoall(void **state)
{
	struct hop_model_link l = { 3e-6, 3e9, 1e-10, 1.2, 4096, 8192, 0 };
	int algo;

	(void)state;
	assert_int_equal(hop_model_choose(HOP_COLL_ALLTOALL, 256, 4, &l, &algo,
					  NULL, NULL), 0);
	assert_int_equal(algo, HOP_ALGO_PAIRWISE);
	assert_int_equal(hop_model_choose(HOP_COLL_ALLTOALL, 8, 64, &l, &algo,
					  NULL, NULL), 0);
	assert_int_equal(algo, HOP_ALGO_BRUCK);
}

static void test_chunk_bytes(void **state)
{
	(void)state;
	/* ring: one block m/N split in k */
	assert_int_equal(hop_model_chunk_bytes(HOP_COLL_ALLREDUCE, HOP_ALGO_RING,
					       1 << 20, 4, 8), 32768);
	/* dbtree: half the vector */
	assert_int_equal(hop_model_chunk_bytes(HOP_COLL_ALLREDUCE,
					       HOP_ALGO_DBTREE, 1000, 4, 3), 167);
	assert_int_equal(hop_model_chunk_bytes(HOP_COLL_BROADCAST,
					       HOP_ALGO_CHAIN, 1000, 4, 3), 334);
	assert_int_equal(hop_model_chunk_bytes(HOP_COLL_BROADCAST,
					       HOP_ALGO_CHAIN, 0, 4, 3), 1);
	/* reducescatter ring: the per-rank block is the region */
	assert_int_equal(hop_model_chunk_bytes(HOP_COLL_REDUCESCATTER,
					       HOP_ALGO_RING, 4096, 8, 4), 1024);
	/* not pipelined: one chunk, the whole vector */
	assert_int_equal(hop_model_chunk_bytes(HOP_COLL_ALLREDUCE, HOP_ALGO_RD,
					       4096, 8, 4), 4096);
	assert_int_equal(hop_model_chunk_bytes(HOP_COLL_ALLGATHER, HOP_ALGO_RING,
					       4096, 8, 1), 32768);
	/* max chunks: region / min_chunk */
	struct hop_model_link l = L1;
	l.min_chunk = 1024;
	assert_int_equal(hop_model_max_chunks(HOP_COLL_ALLREDUCE, HOP_ALGO_RING,
					      1 << 20, 4, &l), 256);
	assert_int_equal(hop_model_max_chunks(HOP_COLL_ALLREDUCE, HOP_ALGO_RD,
					      1 << 20, 4, &l), 1);
	assert_int_equal(hop_model_max_chunks(HOP_COLL_BROADCAST, HOP_ALGO_CHAIN,
					      100, 4, &l), 1);
	l.min_chunk = 1;
	assert_int_equal(hop_model_max_chunks(HOP_COLL_BROADCAST, HOP_ALGO_CHAIN,
					      (size_t)1 << 40, 4, &l),
			 HOP_MODEL_MAX_CHUNKS);
}

static double urand(double lo, double hi)
{
	return lo + (hi - lo) * ((double)rand() / RAND_MAX);
}

static struct hop_model_link rand_link(void)
{
	/* every field set: max_chunk stays 0 (no cap), as the brute force
	 * below assumes */
	struct hop_model_link l = { 0 };

	l.alpha = pow(10, urand(-7, -4));
	l.beta = pow(10, urand(8, 10.5));
	l.gamma = urand(0, 1) < 0.2 ? 0 : pow(10, urand(-11, -9));
	l.duplex = urand(0, 1) < 0.3 ? 1 : urand(1, 2);
	l.min_chunk = pow(2, (int)urand(8, 16));
	/* half with an eager size, where a chunk count's time jumps */
	l.eager = urand(0, 1) < 0.5 ? 0 : pow(2, (int)urand(6, 21));
	return l;
}

/* best_chunks equals the argmin over every k; choose() the minimum. */
static void test_best_chunks_brute(void **state)
{
	(void)state;
	srand(1234);
	for (int it = 0; it < 300; it++) {
		struct hop_model_link l = rand_link();
		int n = 2 + rand() % 40;
		size_t m = (size_t)pow(2, urand(3, 28));
		int kinds[] = { HOP_COLL_BROADCAST, HOP_COLL_REDUCE,
				HOP_COLL_ALLREDUCE, HOP_COLL_REDUCESCATTER };

		/* keep brute force affordable */
		if (m / (size_t)l.min_chunk > 20000)
			l.min_chunk = (double)(m / 20000 + 1);
		for (size_t ki = 0; ki < 4; ki++) {
			int algos[8], na = hop_model_algos(kinds[ki], algos, 8);
			int best_a = -1, pick;
			double best_t = INFINITY, pt;
			long pk;

			for (int i = 0; i < na; i++) {
				long kmax = hop_model_max_chunks(kinds[ki], algos[i],
								 m, n, &l);
				long bk = 1, got;
				double bt = INFINITY;

				for (long k = 1; k <= kmax; k++) {
					double t = hop_model_predict(kinds[ki], algos[i],
								     m, n, &l, k);
					if (t < bt) {
						bt = t;
						bk = k;
					}
				}
				got = hop_model_best_chunks(kinds[ki], algos[i], m,
							    n, &l);
				double gt = hop_model_predict(kinds[ki], algos[i], m,
							      n, &l, got);
				if (gt > bt * (1 + 1e-12)) {
					print_error("%s/%s N=%d m=%zu: got k=%ld "
						    "(%g), brute k=%ld (%g)\n",
						    hop_model_kind_name(kinds[ki]),
						    hop_model_algo_name(algos[i]),
						    n, m, got, gt, bk, bt);
					fail();
				}
				if (bt < best_t) {
					best_t = bt;
					best_a = algos[i];
				}
			}
			assert_int_equal(hop_model_choose(kinds[ki], m, n, &l, &pick,
							  &pk, &pt), 0);
			assert_true(pt <= best_t * (1 + 1e-12));
			EQ(hop_model_predict(kinds[ki], pick, m, n, &l, pk), pt);
			if (pick != best_a)  /* only an exact tie may differ */
				EQ(pt, best_t);
		}
	}
}

/* Above the eager size a message costs 3 alphas (RTS, CTS, data), at it
 * one; worked by hand on L1 (a = 2, b = 4, g = 0.5) with eager = 4. */
static void test_eager(void **state)
{
	struct hop_model_link l = L1;

	(void)state;
	l.eager = 4;
	EQ(hop_model_msg_alpha(&l, 4), 2);
	EQ(hop_model_msg_alpha(&l, 4.5), 6);
	/* rd, N = 4: 2 steps of a + m/b + g m */
	EQ(hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RD, 4, 4, &l, 1),
	   2 * (2 + 1 + 2));
	EQ(hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RD, 8, 4, &l, 1),
	   2 * (6 + 2 + 4));
	/* Rabenseifner, N = 4, m = 16: messages of 8 (rendezvous) and 4
	 * (eager), each twice; 2 (3/4) m/b; (3/4) g m */
	EQ(hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER, 16, 4,
			     &l, 1), 2 * (6 + 2) + 6 + 6);
	/* ring, N = 2, m = 16, k = 1: one block of 8 each way, rendezvous:
	 * 2 (3a + 8/b) + g 8 */
	EQ(hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 16, 2, &l, 1),
	   2 * (6 + 2) + 4);
	/* eager 0: one alpha whatever the size */
	l.eager = 0;
	EQ(hop_model_msg_alpha(&l, 1e9), 2);
}

/* Known picks: tiny messages go to the fewest rounds, large ones to the
 * bandwidth-optimal algorithms. */
static void test_choose_known(void **state)
{
	struct hop_model_link l = { 10e-6, 1e9, 0, 1, 4096, 0, 0 };
	int algo;
	long k;
	double t;

	(void)state;
	assert_int_equal(hop_model_choose(HOP_COLL_ALLREDUCE, 8, 8, &l, &algo, &k,
					  &t), 0);
	assert_int_equal(algo, HOP_ALGO_RD);
	EQ(t, 3 * (10e-6 + 8 / 1e9));
	/* large: without reduction cost Rabenseifner moves the ring's bytes
	 * in fewer rounds; with it the pipelined ring hides the reductions */
	assert_int_equal(hop_model_choose(HOP_COLL_ALLREDUCE, 256 << 20, 8, &l,
					  &algo, &k, &t), 0);
	assert_int_equal(algo, HOP_ALGO_RABENSEIFNER);
	l.gamma = 1e-10;
	assert_int_equal(hop_model_choose(HOP_COLL_ALLREDUCE, 256 << 20, 8, &l,
					  &algo, &k, &t), 0);
	assert_int_equal(algo, HOP_ALGO_RING);
	assert_true(k > 1);
	l.gamma = 0;
	assert_int_equal(hop_model_choose(HOP_COLL_ALLGATHER, 1, 64, &l, &algo,
					  &k, &t), 0);
	assert_int_equal(algo, HOP_ALGO_BRUCK);
	assert_int_equal(hop_model_choose(HOP_COLL_BROADCAST, 256 << 20, 16, &l,
					  &algo, &k, &t), 0);
	assert_int_equal(algo, HOP_ALGO_CHAIN);
	assert_true(k > 1);
	assert_int_equal(hop_model_choose(HOP_COLL_BARRIER, 0, 1000, &l, &algo,
					  &k, &t), 0);
	assert_int_equal(algo, HOP_ALGO_DISSEMINATION);
	EQ(t, 10 * 10e-6);
	/* one rank: nothing to do, the first algorithm at 0 s */
	assert_int_equal(hop_model_choose(HOP_COLL_ALLREDUCE, 1 << 20, 1, &l,
					  &algo, &k, &t), 0);
	assert_int_equal(algo, HOP_ALGO_RING);
	assert_int_equal(k, 1);
	EQ(t, 0);
}

/* max_chunk bounds the chunk the choice cuts, and only from above: the
 * ring of 64 MiB over 2 ranks on the built-in shm link takes a few chunks
 * of many MiB without the bound, 1 MiB ones with it, and a region already
 * smaller than the bound keeps the unbounded choice. */
static void test_max_chunk(void **state)
{
	struct hop_model_link l, free_l;
	int kind = HOP_COLL_ALLREDUCE, algo = HOP_ALGO_RING;
	long k, k0;

	(void)state;
	assert_int_equal(hop_model_link_default(
			 hop_prov_caps_of(hop_prov_find("shm")), &l), 0);
	free_l = l;
	free_l.max_chunk = 0;
	k0 = hop_model_best_chunks(kind, algo, 64u << 20, 2, &free_l);
	assert_true(hop_model_chunk_bytes(kind, algo, 64u << 20, 2, k0) >
		    (1u << 20));
	k = hop_model_best_chunks(kind, algo, 64u << 20, 2, &l);
	assert_int_equal(hop_model_chunk_bytes(kind, algo, 64u << 20, 2, k),
			 1u << 20);
	/* below the bound: nothing changes */
	for (size_t m = 4096; m <= (2u << 20); m *= 4)
		assert_int_equal(hop_model_best_chunks(kind, algo, m, 2, &l),
				 hop_model_best_chunks(kind, algo, m, 2, &free_l));
	/* a bound under min_chunk: kmax still caps the count */
	l.max_chunk = 1;
	assert_int_equal(hop_model_best_chunks(kind, algo, 64u << 20, 2, &l),
			 hop_model_max_chunks(kind, algo, 64u << 20, 2, &l));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_broadcast),
		cmocka_unit_test(test_reduce),
		cmocka_unit_test(test_allreduce),
		cmocka_unit_test(test_gather_scatter_barrier),
		cmocka_unit_test(test_degenerate_and_invalid),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_alltoall),
		cmocka_unit_test(test_alltoall_pieces),
		cmocka_unit_test(test_choose_alltoall),
		cmocka_unit_test(test_chunk_bytes),
		cmocka_unit_test(test_best_chunks_brute),
		cmocka_unit_test(test_eager),
		cmocka_unit_test(test_choose_known),
		cmocka_unit_test(test_max_chunk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
