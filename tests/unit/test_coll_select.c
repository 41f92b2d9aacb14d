/*
 * test_coll_select.c - hop_coll_select() follows the cost model: small
 * vectors take the latency algorithm, large ones the bandwidth one, the
 * choice and chunk equal hop_model_choose()'s on a grid of collectives,
 * sizes and rank counts, HOP_ALGO and HOP_CHUNK_SIZE override, the memo
 * never returns a choice made under other tuning, and the link comes from
 * HOP_PROFILE or the provider's defaults (a bad profile names the file).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "coll/coll_int.h"
#include "transport/provider.h"

static void tune_for(struct hop_coll_tune *t, const char *provider)
{
	char err[HOP_MSG_LEN];

	memset(t, 0, sizeof(*t));
	assert_int_equal(hop_coll_tune_model(t, NULL, provider,
					     hop_prov_caps_of(hop_prov_find(provider)),
					     err, sizeof(err)), 0);
}

/* latency-bound vs bandwidth-bound ends of the size range */
static void test_small_large(void **state)
{
	struct hop_coll_tune t;
	struct hop_coll_choice c;
	(void)state;

	tune_for(&t, "tcp");
	hop_coll_select(HOP_COLL_ALLREDUCE, 8, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_RD);  /* log2 N alphas */
	hop_coll_select(HOP_COLL_ALLREDUCE, 256u << 20, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_RING);
	hop_coll_select(HOP_COLL_BROADCAST, 8, 16, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_TREE);
	hop_coll_select(HOP_COLL_BROADCAST, 64u << 20, 16, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_CHAIN);
	assert_true(c.chunk_bytes < (64u << 20) / 8); /* pipelined */
	hop_coll_select(HOP_COLL_BARRIER, 0, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_DISSEMINATION);
	assert_int_equal(c.depth, 4);
}

/* With link classes and a placement (what a communicator agreed), the
 * choice is hop_model_choose_place()'s: the hierarchical AllReduce with
 * its phase algorithms on 4 hosts x 2 at 1 Gbit/s between hosts (once its
 * schedule is built: a HIER row in the model's table; until then the
 * best flat one, priced on the inter link), flat on one host; HOP_ALGO
 * forces either. */
static void test_classes(void **state)
{
	struct hop_coll_tune t;
	struct hop_coll_choice c;
	struct hop_model_choice mc;
	(void)state;

	tune_for(&t, "tcp");
	hop_model_link_generic(&t.cls[0]);
	hop_model_link_generic(&t.cls[1]);
	t.cls[0].alpha = 1e-6;
	t.cls[0].beta = 10e9;
	t.cls[1].alpha = 50e-6;
	t.cls[1].beta = 125e6;
	t.place = (struct hop_model_place){ 8, 4, 2, 1, 0 };
	t.have_cls = 1;
	hop_coll_select(HOP_COLL_ALLREDUCE, 4 << 20, 8, &t, &c);
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, 4 << 20,
						&t.place, t.cls, HOP_ALGO_AUTO,
						&mc), 0);
	assert_int_equal(mc.algo, HOP_ALGO_HIER);
	if (hop_model_algo_valid(HOP_COLL_ALLREDUCE, HOP_ALGO_HIER)) {
		assert_int_equal(c.algo, HOP_ALGO_HIER);
		assert_int_equal(c.sub_algo[0], mc.sub_algo[0]);
		assert_int_equal(c.sub_algo[1], mc.sub_algo[1]);
		assert_int_equal(c.chunk_bytes, mc.chunk_bytes);
		assert_true(c.predicted == mc.predicted);
	} else {        /* no hierarchical schedule built: the flat pick */
		assert_int_not_equal(c.algo, HOP_ALGO_HIER);
		assert_true(c.predicted == mc.flat);
	}
	t.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_RING;
	hop_coll_select(HOP_COLL_ALLREDUCE, 4 << 20, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_RING);
	assert_int_equal(c.sub_algo[0], HOP_ALGO_AUTO);
	t.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_HIER;
	hop_coll_select(HOP_COLL_ALLREDUCE, 8, 8, &t, &c);
	assert_int_equal(c.algo == HOP_ALGO_HIER,
			 hop_model_algo_valid(HOP_COLL_ALLREDUCE, HOP_ALGO_HIER));
	t.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_AUTO;
	/* all on one host: flat, on the intra link */
	t.place = (struct hop_model_place){ 8, 1, 8, 1, 0 };
	memset(t.memo, 0, sizeof(t.memo));
	hop_coll_select(HOP_COLL_ALLREDUCE, 4 << 20, 8, &t, &c);
	assert_int_not_equal(c.algo, HOP_ALGO_HIER);
	hop_model_choose_flat(HOP_COLL_ALLREDUCE, 4 << 20, 8, HOP_ALGO_AUTO,
			      &t.cls[0], &mc);
	assert_int_equal(c.algo, mc.algo);
	/* forced hier without a placement (no comm): the flat choice */
	t.have_cls = -1;
	t.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_HIER;
	hop_coll_select(HOP_COLL_ALLREDUCE, 8, 8, &t, &c);
	assert_int_not_equal(c.algo, HOP_ALGO_HIER);
}

/* every choice is the model's, on two providers' links */
static void test_follows_model(void **state)
{
	static const char *const prov[] = { "shm", "tcp", "verbs" };
	static const int ns[] = { 2, 3, 4, 8, 13, 64, 1024 };
	(void)state;

	for (size_t p = 0; p < 3; p++) {
		struct hop_coll_tune t;

		tune_for(&t, prov[p]);
		for (int kind = 0; kind < HOP_COLL_KIND_COUNT; kind++)
			for (size_t ni = 0; ni < sizeof(ns) / sizeof(*ns); ni++)
				for (size_t m = 8; m <= (256u << 20); m *= 8) {
					struct hop_coll_choice c;
					int algo;
					long k;
					double pt;

					hop_coll_select(kind, m, ns[ni], &t, &c);
					assert_int_equal(hop_model_choose(kind, m,
						ns[ni], &t.link, &algo, &k, &pt), 0);
					assert_int_equal(c.algo, algo);
					assert_int_equal(c.chunk_bytes,
						hop_model_sched_chunk(kind, algo, m,
								      ns[ni], k));
					assert_true(c.chunk_bytes % 8 == 0);
					assert_true(c.predicted == pt);
				}
	}
}

/* HOP_ALGO wins, with the model's best chunk for the forced algorithm;
 * HOP_CHUNK_SIZE and HOP_PIPELINE_DEPTH win over the model's */
static void test_overrides(void **state)
{
	struct hop_coll_tune t;
	struct hop_coll_choice c, before;
	size_t m = 16u << 20;
	(void)state;

	tune_for(&t, "shm");
	hop_coll_select(HOP_COLL_ALLREDUCE, m, 8, &t, &before);
	assert_int_not_equal(before.algo, HOP_ALGO_TREE);
	t.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_TREE;
	hop_coll_select(HOP_COLL_ALLREDUCE, m, 8, &t, &c); /* memo: re-chosen */
	assert_int_equal(c.algo, HOP_ALGO_TREE);
	long k = hop_model_best_chunks(HOP_COLL_ALLREDUCE, HOP_ALGO_TREE, m, 8,
				       &t.link);
	assert_true(k > 1);
	assert_int_equal(c.chunk_bytes,
			 hop_model_sched_chunk(HOP_COLL_ALLREDUCE, HOP_ALGO_TREE,
					       m, 8, k));
	t.chunk_size = 12345;
	t.depth = 7;
	hop_coll_select(HOP_COLL_ALLREDUCE, m, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_TREE);
	assert_int_equal(c.chunk_bytes, 12345);
	assert_int_equal(c.depth, 7);
	t.forced[HOP_COLL_ALLREDUCE] = HOP_ALGO_AUTO;
	t.chunk_size = 0;
	t.depth = 0;
	hop_coll_select(HOP_COLL_ALLREDUCE, m, 8, &t, &c);
	assert_int_equal(c.algo, before.algo);
	assert_int_equal(c.chunk_bytes, before.chunk_bytes);
	assert_int_equal(c.depth, before.depth);
	/* other collectives are not forced by an allreduce entry */
	hop_coll_select(HOP_COLL_BROADCAST, 8, 8, &t, &c);
	assert_int_equal(c.algo, HOP_ALGO_TREE);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* the link: provider defaults, a missing or malformed HOP_PROFILE */
static void test_profile_errors(void **state)
{
	struct hop_coll_tune t;
	const struct hop_prov_caps *shm_caps =
		hop_prov_caps_of(hop_prov_find("shm"));
	struct hop_model_link shm;
	char err[HOP_MSG_LEN], path[] = "/tmp/hop_select_XXXXXX";
	int fd;
	(void)state;

	memset(&t, 0, sizeof(t));
	assert_int_equal(hop_model_link_default(shm_caps, &shm), 0);
	assert_int_equal(hop_coll_tune_model(&t, "", "shm", shm_caps, err,
					     sizeof(err)), 0);
	assert_true(t.have_link);
	assert_memory_equal(&t.link, &shm, sizeof(shm));
	assert_non_null(strstr(t.link_src, "shm"));

	memset(&t, 0, sizeof(t));
	assert_int_equal(hop_coll_tune_model(&t, "/nonexistent/p.json", "shm",
					     shm_caps, err, sizeof(err)),
			 HOP_ERR_SYSTEM);
	assert_non_null(strstr(err, "HOP_PROFILE"));
	assert_non_null(strstr(err, "/nonexistent/p.json"));
	assert_false(t.have_link);

	assert_true((fd = mkstemp(path)) >= 0);
	close(fd);
	write_file(path, "{\"format\": \"hop-probe-profile\", \"version\": 1,"
		   " \"nranks\": 2, \"pairs\": [{\"a\": 0, \"b\": 1, "
		   "\"alpha_us\": \"fast\"}]}\n");
	assert_int_equal(hop_coll_tune_model(&t, path, "shm", shm_caps, err,
					     sizeof(err)), HOP_ERR_PARSE);
	assert_non_null(strstr(err, path));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_large),
		cmocka_unit_test(test_follows_model),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_profile_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
