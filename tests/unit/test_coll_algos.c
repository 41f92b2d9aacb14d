/*
 * test_coll_algos.c - every collective algorithm through the in-process
 * simulation executor: N in {1,2,3,4,5,7,8,9}, counts {0, 1, 2, N-1, N+1,
 * 37, 1000} and 1000003 for a few, in place and not, misaligned buffers,
 * every root, tiny chunks (one element: maximal pipelining) and default
 * ones, every dtype x op.
 *
 * Each rank's input is a function of (rank, index, seed); the reference is
 * folded in rank order in this file (coll_ref.h). Integers must match
 * exactly. Floats are checked two ways: inputs whose every partial result
 * is exact (small integers, powers of two) must match exactly in any
 * order; random inputs must lie within (N-1) * u * sum|x| of the exact
 * sum, u = 2^-11 (f16), 2^-8 (bf16), 2^-24 (f32), 2^-53 (f64). Every rank's
 * result must be bitwise identical to every other's, send buffers must be
 * untouched and guard bytes around every buffer intact. Most runs use the
 * simulator's chaos mode (late, reordered deliveries) so that a missing
 * dependency between steps shows up as wrong data.
 */
#include "coll_run.h"

static const int Ns[] = { 1, 2, 3, 4, 5, 7, 8, 9 };
static const struct {
	int kind, algo;
} algos[] = {
	{ HOP_COLL_BROADCAST, HOP_ALGO_FLAT }, { HOP_COLL_BROADCAST, HOP_ALGO_TREE },
	{ HOP_COLL_BROADCAST, HOP_ALGO_CHAIN }, { HOP_COLL_REDUCE, HOP_ALGO_FLAT },
	{ HOP_COLL_REDUCE, HOP_ALGO_TREE }, { HOP_COLL_REDUCE, HOP_ALGO_CHAIN },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_RING }, { HOP_COLL_ALLREDUCE, HOP_ALGO_TREE },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_DBTREE }, { HOP_COLL_ALLREDUCE, HOP_ALGO_RD },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER },
	{ HOP_COLL_ALLGATHER, HOP_ALGO_RING }, { HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK },
	{ HOP_COLL_REDUCESCATTER, HOP_ALGO_RING },
	{ HOP_COLL_REDUCESCATTER, HOP_ALGO_HALVING },
	{ HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION },
};
#define NALGOS (sizeof(algos) / sizeof(*algos))

static int nroots(int n, int *roots)
{
	int k = 0;

	for (int r = 0; r < n; r++)
		roots[k++] = r;
	return k;
}

/* Structure: every algorithm x N x count x in place x every root, int32
 * sum with random bits, tiny and default chunks, misaligned buffers. */
static void test_structure(void **state)
{
	(void)state;
	for (size_t ai = 0; ai < NALGOS; ai++)
		for (size_t ni = 0; ni < sizeof(Ns) / sizeof(*Ns); ni++) {
			int n = Ns[ni], roots[16];
			size_t counts[] = { 0, 1, 2, (size_t)n - 1, (size_t)n + 1, 37, 1000 };
			int nr = rooted(algos[ai].kind) ? nroots(n, roots) : (roots[0] = 0, 1);
			for (size_t ci = 0; ci < sizeof(counts) / sizeof(*counts); ci++)
				for (int ip = 0; ip < 2; ip++)
					for (int ri = 0; ri < nr; ri++)
						for (int ch = 0; ch < 3; ch++) {
				struct run R = { algos[ai].kind, algos[ai].algo, n, roots[ri], ip,
						 ch == 2 ? 1 : ch == 1 ? 1024 : 3, (int)(ci % 3), 0, counts[ci],
						 ch == 0 ? 1 : ch == 1 ? 12 : 1u << 20, HOP_INT32,
						 HOP_SUM, (int)ci, NULL,
				 { 0, 0 } };
				if (algos[ai].kind == HOP_COLL_BARRIER && (ci || ip || ch))
					continue;
				if (ch == 0 && counts[ci] > 100)
					R.chunk = 40; /* ten elements: keep it quick */
				run_one(&R);
			}
		}
}

/* The closing barrier of rooted collectives (HOP_ROOTED_SYNC): each
 * rooted algorithm with it, every N and root, still matches every message
 * (the simulator fails on a message left over or a deadlock) and moves the
 * same data; it adds SEND/RECV steps only above HOP_SYNC_TAG, depending on
 * none of the collective's steps. */
static void test_closing_barrier(void **state)
{
	(void)state;
	coll_run_sync = 1;
	for (size_t ai = 0; ai < NALGOS; ai++) {
		if (!rooted(algos[ai].kind))
			continue;
		for (size_t ni = 0; ni < sizeof(Ns) / sizeof(*Ns); ni++) {
			int n = Ns[ni], roots[16], nr = nroots(n, roots);

			for (int ri = 0; ri < nr; ri++) {
				struct run R = { algos[ai].kind, algos[ai].algo, n,
						 roots[ri], 0, 1, 0, 0, 37, 12,
						 HOP_INT32, HOP_SUM, ri, NULL, { 0, 0 } };
				run_one(&R);
			}
		}
	}
	coll_run_sync = 0;
	for (int n = 1; n <= 9; n++) {
		struct hop_coll_args a = { .kind = HOP_COLL_REDUCE,
					   .algo = HOP_ALGO_TREE, .rank = n / 2,
					   .nranks = n, .count = 100,
					   .dtype = HOP_INT32, .op = HOP_SUM,
					   .chunk_bytes = 64, .depth = 1 };
		struct hop_sched plain, synced;
		int rounds = 0, io = 0;

		while ((1 << rounds) < n)
			rounds++;
		hop_sched_init(&plain);
		hop_sched_init(&synced);
		assert_int_equal(hop_sched_build(&plain, &a), 0);
		a.sync = 1;
		assert_int_equal(hop_sched_build(&synced, &a), 0);
		for (int i = plain.nsteps; i < synced.nsteps; i++) {
			const struct hop_step *st = &synced.steps[i];

			for (int k = 0; k < HOP_SCHED_MAXDEPS; k++)
				assert_true(st->deps[k] < 0 ||
					    st->deps[k] >= plain.nsteps);
			if (st->kind == HOP_STEP_SEND || st->kind == HOP_STEP_RECV) {
				assert_true(st->tag >= HOP_SYNC_TAG);
				io++;
			}
		}
		assert_int_equal(io, 2 * rounds);
		hop_sched_free(&plain);
		hop_sched_free(&synced);
	}
}

/* Types: every dtype x op, exact float inputs, N in {3, 8}, root middle. */
static void test_types(void **state)
{
	(void)state;
	for (size_t ai = 0; ai < NALGOS; ai++) {
		if (algos[ai].kind == HOP_COLL_BARRIER)
			continue;
		for (int n = 3; n <= 8; n += 5)
			for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++)
				for (int op = 0; op < HOP_OP_COUNT; op++)
					for (int ci = 0; ci < 2; ci++) {
				struct run R = { algos[ai].kind, algos[ai].algo, n, n / 2, ci,
						 2, ci, 0, ci ? 37 : (size_t)n + 1, ci ? 16 : 4096,
						 (hop_dtype_t)dt, (hop_op_t)op, 7, NULL,
				 { 0, 0 } };
				run_one(&R);
			}
	}
}

/* Random floats: within the stated bound, bitwise identical on all ranks. */
static void test_random_floats(void **state)
{
	(void)state;
	for (size_t ai = 0; ai < NALGOS; ai++) {
		int k = algos[ai].kind;
		if (k == HOP_COLL_BARRIER || k == HOP_COLL_BROADCAST || k == HOP_COLL_ALLGATHER)
			continue;
		for (int dt = HOP_FLOAT16; dt <= HOP_FLOAT64; dt++)
			for (int n = 5; n <= 9; n += 2) {
				struct run R = { k, algos[ai].algo, n, n - 1, 0, 3, 0, 1, 1000, 64,
						 (hop_dtype_t)dt, HOP_SUM, 11, NULL,
				 { 0, 0 } };
				run_one(&R);
			}
	}
}

/* Operand order: with +-0 and NaN payloads, min/max/sum results depend on
 * which operand comes first; every rank must still hold the same bytes. */
static void test_order_identity(void **state)
{
	(void)state;
	for (size_t ai = 0; ai < NALGOS; ai++) {
		if (algos[ai].kind != HOP_COLL_ALLREDUCE)
			continue;
		for (int dt = HOP_FLOAT16; dt <= HOP_FLOAT64; dt++)
			for (int op = 0; op < HOP_OP_COUNT; op++)
				for (int n = 3; n <= 8; n++) {
					struct run R = { HOP_COLL_ALLREDUCE, algos[ai].algo, n, 0,
							 n % 2, 3, 0, 2, 300, 64, (hop_dtype_t)dt,
							 (hop_op_t)op, 13, NULL,
				 { 0, 0 } };
					run_one(&R);
				}
	}
}

/* Large counts: 1000003 elements with default chunking (many chunks). */
static void test_large(void **state)
{
	static const struct {
		int kind, algo, n, root;
	} big[] = {
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 7, 0 },
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER, 5, 0 },
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_DBTREE, 9, 0 },
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_TREE, 4, 0 },
		{ HOP_COLL_ALLREDUCE, HOP_ALGO_RD, 3, 0 },
		{ HOP_COLL_BROADCAST, HOP_ALGO_CHAIN, 5, 2 },
		{ HOP_COLL_REDUCE, HOP_ALGO_CHAIN, 3, 2 },
		{ HOP_COLL_REDUCE, HOP_ALGO_TREE, 8, 7 },
		{ HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK, 3, 0 },
		{ HOP_COLL_ALLGATHER, HOP_ALGO_RING, 4, 0 },
		{ HOP_COLL_REDUCESCATTER, HOP_ALGO_RING, 4, 0 },
		{ HOP_COLL_REDUCESCATTER, HOP_ALGO_HALVING, 5, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(big) / sizeof(*big); i++) {
		struct run R = { big[i].kind, big[i].algo, big[i].n, big[i].root,
				 (int)(i % 2), 4, (int)(i % 3 == 1), 0, 1000003, 65536,
				 i % 2 ? HOP_FLOAT32 : HOP_BFLOAT16, HOP_SUM, 5, NULL,
				 { 0, 0 } };
		run_one(&R);
	}
}

/* Virtual time: on uniform links the simulated ring allreduce (one chunk
 * per block) takes 2(N-1)(alpha + m/(N beta)), the chain broadcast with k
 * chunks (h+k-1)(alpha + m/(k beta)). */
static void test_sim_time(void **state)
{
	(void)state;
	for (int n = 2; n <= 9; n++) {
		struct hop_sched *s = calloc((size_t)n, sizeof(*s));
		void *base[HOP_BUF_COUNT] = { NULL };
		size_t count = (size_t)n * 1000; /* f32: m = 4000 n bytes */
		for (int r = 0; r < n; r++) {
			struct hop_coll_args a = { HOP_COLL_ALLREDUCE, HOP_ALGO_RING, r, n, 0,
						   count, HOP_FLOAT32, HOP_SUM, 0, 1u << 20, 2, 0,
						   NULL, NULL, 0, { 0, 0 }, NULL, 0, 0, 0 };
			assert_int_equal(hop_sched_build(&s[r], &a), 0);
			hop_sched_start(&s[r], base);
		}
		struct hop_sim sim = { .nranks = n, .s = s, .timed = 1, .alpha = 2e-6,
				       .beta = 1e-10 };
		assert_int_equal(hop_sim_run(&sim), 0);
		double want = 2 * (n - 1) * (2e-6 + 4000.0 * 1e-10);
		assert_true(fabs(sim.makespan - want) < 1e-9 * want + 1e-15);
		for (int r = 0; r < n; r++)
			hop_sched_free(&s[r]);
		hop_sim_free(&sim);
		free(s);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_closing_barrier),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_random_floats),
		cmocka_unit_test(test_order_identity),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_sim_time),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]); /* e.g. test_large */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
