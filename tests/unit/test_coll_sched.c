/*
 * test_coll_sched.c - the schedule driver (dependencies, queue order),
 * block partitioning, the trees (every parent/child relation mutual,
 * every rank reached once, the double binary tree's complementary
 * leaves), HOP_ALGO parsing (strict, errors name the bad part), the
 * default selection, and the simulator's deadlock report.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll/coll_int.h"
#include "sim/sim.h"
#include "coll/tree.h"

static void test_partition(void **state)
{
	(void)state;
	for (int n = 1; n <= 9; n++)
		for (size_t count = 0; count < 40; count++) {
			size_t sum = 0;
			for (int b = 0; b < n; b++) {
				assert_int_equal(hop_blk_start(count, n, b), sum);
				sum += hop_blk_count(count, n, b);
				assert_true(hop_blk_count(count, n, b) >= count / (size_t)n);
				assert_true(hop_blk_count(count, n, b) <= count / (size_t)n + 1);
			}
			assert_int_equal(sum, count); /* remainder never dropped */
			assert_int_equal(hop_blk_start(count, n, n), count);
		}
}

typedef void (*tree_fn)(struct hop_tree *t, int rank, int n, int arg);

static void check_tree(tree_fn fn, int n, int arg, int want_root)
{
	int child[64], before[64], seen[64] = { 0 };
	int parent[64], root = -1;
	struct hop_tree t = { .child = child, .before = before };

	for (int r = 0; r < n; r++) {
		fn(&t, r, n, arg);
		parent[r] = t.parent;
		if (t.parent < 0) {
			assert_int_equal(root, -1);
			root = r;
		}
	}
	if (want_root >= 0)
		assert_int_equal(root, want_root);
	for (int r = 0; r < n; r++) {
		fn(&t, r, n, arg);
		for (int i = 0; i < t.nchild; i++) {
			assert_int_equal(parent[t.child[i]], r);
			seen[t.child[i]]++;
		}
	}
	for (int r = 0; r < n; r++)
		assert_int_equal(seen[r], r == root ? 0 : 1);
	/* every rank reaches the root */
	for (int r = 0; r < n; r++) {
		int x = r, hops = 0;
		while (parent[x] >= 0 && hops <= n)
			x = parent[x], hops++;
		assert_int_equal(x, root);
	}
}

static void binary0(struct hop_tree *t, int r, int n, int a)
{
	(void)a;
	hop_tree_binary(t, r, n, 0);
}

static void binary1(struct hop_tree *t, int r, int n, int a)
{
	(void)a;
	hop_tree_binary(t, r, n, 1);
}

static void test_trees(void **state)
{
	(void)state;
	for (int n = 1; n <= 40; n++) {
		for (int root = 0; root < n; root += (n > 5 ? 3 : 1)) {
			check_tree(hop_tree_binomial, n, root, root);
			check_tree(hop_tree_chain, n, root, root);
			check_tree(hop_tree_flat, n, root, root);
		}
		check_tree(binary0, n, 0, 0);
		check_tree(binary1, n, 0, -1);
		/* double binary tree: at most a few ranks are inner in both */
		int child[2], before[2], inner_both = 0;
		struct hop_tree t = { .child = child, .before = before };
		for (int r = 0; r < n; r++) {
			hop_tree_binary(&t, r, n, 0);
			int in0 = t.nchild > 0;
			hop_tree_binary(&t, r, n, 1);
			inner_both += in0 && t.nchild > 0;
		}
		assert_true(inner_both <= 2);
	}
}

static void test_parse_algo(void **state)
{
	int f[HOP_COLL_KIND_COUNT];
	char err[512];
	(void)state;

	assert_int_equal(hop_coll_parse_algo("", f, err, sizeof(err)), 0);
	for (int k = 0; k < HOP_COLL_KIND_COUNT; k++)
		assert_int_equal(f[k], HOP_ALGO_AUTO);
	assert_int_equal(hop_coll_parse_algo("allreduce:ring,broadcast:tree,"
					     "reduce:chain,allgather:bruck,"
					     "reducescatter:halving,barrier:"
					     "dissemination", f, err, sizeof(err)), 0);
	assert_int_equal(f[HOP_COLL_ALLREDUCE], HOP_ALGO_RING);
	assert_int_equal(f[HOP_COLL_BROADCAST], HOP_ALGO_TREE);
	assert_int_equal(f[HOP_COLL_REDUCE], HOP_ALGO_CHAIN);
	assert_int_equal(f[HOP_COLL_ALLGATHER], HOP_ALGO_BRUCK);
	assert_int_equal(f[HOP_COLL_REDUCESCATTER], HOP_ALGO_HALVING);
	assert_int_equal(f[HOP_COLL_BARRIER], HOP_ALGO_DISSEMINATION);
	assert_int_equal(hop_coll_parse_algo("allreduce:rabenseifner", f, err,
					     sizeof(err)), 0);
	assert_int_equal(f[HOP_COLL_ALLREDUCE], HOP_ALGO_RABENSEIFNER);

	assert_int_equal(hop_coll_parse_algo("allreduce:bogus", f, err, sizeof(err)),
			 HOP_ERR_CONFIG);
	assert_non_null(strstr(err, "\"bogus\""));
	assert_non_null(strstr(err, "allreduce"));
	assert_int_equal(hop_coll_parse_algo("allgather:tree", f, err, sizeof(err)),
			 HOP_ERR_CONFIG); /* exists, but not for allgather */
	assert_non_null(strstr(err, "\"tree\""));
	assert_int_equal(hop_coll_parse_algo("scan:ring", f, err, sizeof(err)),
			 HOP_ERR_CONFIG);
	assert_non_null(strstr(err, "\"scan\""));
	assert_int_equal(hop_coll_parse_algo("gather:ring", f, err, sizeof(err)),
			 HOP_ERR_CONFIG); /* ring is not a gather algorithm */
	assert_non_null(strstr(err, "flat"));
	assert_int_equal(hop_coll_parse_algo("gather:binomial,scatter:flat", f,
					     err, sizeof(err)), 0);
	assert_int_equal(f[HOP_COLL_GATHER], HOP_ALGO_TREE);
	assert_int_equal(f[HOP_COLL_SCATTER], HOP_ALGO_FLAT);
	assert_int_equal(hop_coll_parse_algo("allreduce", f, err, sizeof(err)),
			 HOP_ERR_CONFIG);
	assert_int_equal(hop_coll_parse_algo("allreduce:ring,,", f, err, sizeof(err)),
			 HOP_ERR_CONFIG);
	assert_int_equal(hop_coll_parse_algo("allreduce:ring ", f, err, sizeof(err)),
			 HOP_ERR_CONFIG);
}

static void test_select(void **state)
{
	struct hop_coll_tune t;
	struct hop_coll_choice c;
	(void)state;

	memset(&t, 0, sizeof(t));
	hop_coll_select(HOP_COLL_ALLREDUCE, 8, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_RD);
	hop_coll_select(HOP_COLL_ALLREDUCE, 64u << 20, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_RING);
	/* the cost model's chunk: a ring pipelines within one block (m/N) */
	assert_true(c.chunk_bytes >= 16384 && c.chunk_bytes <= (8u << 20));
	assert_int_equal(c.depth, 4);
	hop_coll_select(HOP_COLL_BROADCAST, 16u << 20, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_CHAIN);
	hop_coll_select(HOP_COLL_BARRIER, 0, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_DISSEMINATION);
	t.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_DBTREE;
	t.chunk_size = 12345;
	t.depth = 7;
	hop_coll_select(HOP_COLL_ALLREDUCE, 8, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_DBTREE);
	assert_int_equal(c.chunk_bytes, 12345);
	assert_int_equal(c.depth, 7);
}

/* the driver runs a built schedule to completion (one rank: a copy) */
static void test_driver(void **state)
{
	struct hop_sched s;
	int a[4] = { 1, 2, 3, 4 }, b[4] = { 10, 20, 30, 40 };
	void *base[HOP_BUF_COUNT] = { NULL, a, b, NULL };
	struct hop_coll_args ar = { HOP_COLL_ALLREDUCE, HOP_ALGO_RING, 0, 1, 0, 4,
				    HOP_INT32, HOP_SUM, 0, 64, 2, 0, NULL, NULL,
				    0, { 0, 0 }, NULL, 0, 0, 0 };
	(void)state;

	hop_sched_init(&s);
	assert_int_equal(hop_sched_build(&s, &ar), 0);
	assert_int_equal(s.nsteps, 1);
	hop_sched_start(&s, base);
	assert_int_equal(hop_sched_advance(&s, NULL, NULL), 0);
	assert_true(s.finished);
	assert_memory_equal(a, b, sizeof(a));
	/* rerun: the same schedule, fresh run state */
	b[0] = 0;
	hop_sched_start(&s, base);
	assert_int_equal(hop_sched_advance(&s, NULL, NULL), 0);
	assert_int_equal(b[0], 1);
	hop_sched_free(&s);
}

/* schedules that cannot finish are reported, not hung */
static void test_sim_deadlock(void **state)
{
	struct hop_sched s[2];
	void *base[HOP_BUF_COUNT] = { NULL };
	struct hop_coll_args a = { HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION, 0, 2,
				   0, 0, HOP_UINT8, HOP_SUM, 0, 64, 1, 0, NULL,
				   NULL, 0, { 0, 0 }, NULL, 0, 0, 0 };
	(void)state;

	hop_sched_init(&s[0]);
	hop_sched_init(&s[1]);
	assert_int_equal(hop_sched_build(&s[0], &a), 0);
	a.rank = 1;
	a.nranks = 3; /* rank 1 believes in 3 ranks: its messages differ */
	assert_int_equal(hop_sched_build(&s[1], &a), 0);
	hop_sched_start(&s[0], base);
	hop_sched_start(&s[1], base);
	struct hop_sim sim = { .nranks = 2, .s = s };
	assert_int_not_equal(hop_sim_run(&sim), 0);
	assert_true(strlen(sim.err) > 0);
	hop_sim_free(&sim);
	hop_sched_free(&s[0]);
	hop_sched_free(&s[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_partition),
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_parse_algo),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_driver),
		cmocka_unit_test(test_sim_deadlock),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
