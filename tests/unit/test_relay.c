/*
 * test_relay.c - the pure parts of hop_relay (src/relay/relay.h): the chunk
 * count k against a brute force over every k (equal hops, unequal hops
 * where the slowest stage sets the period), its clamping and overrides,
 * chunk boundaries, the path checks and the plan signature.
 *
 * The references here are computed independently of src/model: the
 * pipelined time is written out from its definition (first chunk through
 * every stage, then one period of the slowest stage per further chunk).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "relay/relay.h"

/* sum of stages + (k-1) x slowest stage, from the definition */
static double ref_time(const struct hop_model_hop *hops, int h, double m,
		       long k)
{
	double sum = 0, slow = 0;

	for (int i = 0; i < h; i++) {
		double s = hops[i].alpha + m / ((double)k * hops[i].beta);

		sum += s;
		if (s > slow)
			slow = s;
	}
	return sum + (double)(k - 1) * slow;
}

/* the smallest k in [1, kmax] of least ref_time */
static long ref_best(const struct hop_model_hop *hops, int h, double m,
		     long kmax)
{
	long best = 1;
	double bt = ref_time(hops, h, m, 1);

	for (long k = 2; k <= kmax; k++) {
		double t = ref_time(hops, h, m, k);

		if (t < bt) {
			bt = t;
			best = k;
		}
	}
	return best;
}

static long ref_kmax(double m, double min_chunk)
{
	return m < min_chunk ? 1 : (long)floor(m / min_chunk);
}

static void fill(struct hop_model_hop *hops, int h, double a, double b)
{
	for (int i = 0; i < h; i++)
		hops[i] = (struct hop_model_hop){ a, b };
}

/* Equal hops: the model's k equals the brute force and is a neighbour
 * of the real optimum sqrt((h-1) m / (a b)) whenever that is in range. */
static void test_equal_hops_brute_force(void **state)
{
	static const double as[] = { 0.5e-6, 1e-6, 17e-6, 100e-6 };
	static const double bs[] = { 0.5e9, 1.5e9, 6e9 };
	static const double ms[] = { 1, 4096, 65537, 1 << 20, 3e6, 16 << 20 };
	struct hop_model_hop hops[8];
	int checked = 0;

	(void)state;
	for (int h = 1; h <= 6; h++)
		for (size_t ia = 0; ia < 4; ia++)
			for (size_t ib = 0; ib < 3; ib++)
				for (size_t im = 0; im < 6; im++) {
					double a = as[ia], b = bs[ib], m = ms[im];
					long kmax = ref_kmax(m, 1024);
					long k, want;
					double kr;

					fill(hops, h, a, b);
					k = relay_choose_k(hops, h, m, 1024,
							   HOP_RELAY_PIPELINED,
							   0, 0);
					want = ref_best(hops, h, m, kmax);
					/* ties: either k gives the least time */
					assert_true(fabs(ref_time(hops, h, m, k) -
							 ref_time(hops, h, m,
								  want)) <=
						    1e-12 * ref_time(hops, h, m,
								     want));
					kr = sqrt((h - 1) * m / (a * b));
					if (h > 1 && kr >= 1 && kr <= kmax)
						assert_true(k == (long)floor(kr) ||
							    k == (long)ceil(kr));
					checked++;
				}
	assert_int_equal(checked, 6 * 4 * 3 * 6);
}

/* A known case by hand: h = 3, a = 10 us, b = 1 GB/s, m = 8 MB:
 * k* = sqrt(2 * 8e6 / (1e-5 * 1e9)) = sqrt(1600) = 40 exactly. */
static void test_known_kstar(void **state)
{
	struct hop_model_hop hops[3];

	(void)state;
	fill(hops, 3, 10e-6, 1e9);
	assert_int_equal(relay_choose_k(hops, 3, 8e6, 1024,
					HOP_RELAY_PIPELINED, 0, 0), 40);
	/* the large-h approximation sqrt(h m / (a b)) = 48.99 is not used */
	assert_int_not_equal(relay_choose_k(hops, 3, 8e6, 1024,
					    HOP_RELAY_PIPELINED, 0, 0), 49);
}

static void test_clamping(void **state)
{
	struct hop_model_hop hops[4];

	(void)state;
	fill(hops, 4, 1e-6, 1e9);
	/* k* = sqrt(3 * 16 MiB / 1000) = 224; min_chunk 1 MiB allows 16 */
	assert_int_equal(relay_choose_k(hops, 4, 16 << 20, 1 << 20,
					HOP_RELAY_PIPELINED, 0, 0), 16);
	/* smaller than one minimum chunk: one chunk */
	assert_int_equal(relay_choose_k(hops, 4, 1000, 4096,
					HOP_RELAY_PIPELINED, 0, 0), 1);
	/* alpha = 0: as many chunks as allowed */
	fill(hops, 4, 0, 1e9);
	assert_int_equal(relay_choose_k(hops, 4, 1 << 20, 4096,
					HOP_RELAY_PIPELINED, 0, 0), 256);
	/* one hop, zero bytes, store-and-forward: one chunk */
	fill(hops, 4, 1e-6, 1e9);
	assert_int_equal(relay_choose_k(hops, 1, 1 << 20, 1,
					HOP_RELAY_PIPELINED, 0, 0), 1);
	assert_int_equal(relay_choose_k(hops, 4, 0, 1,
					HOP_RELAY_PIPELINED, 0, 0), 1);
	assert_int_equal(relay_choose_k(hops, 4, 1 << 20, 1,
					HOP_RELAY_STORE_FORWARD, 0, 0), 1);
	assert_int_equal(relay_choose_k(hops, 4, 1 << 20, 1,
					HOP_RELAY_STORE_FORWARD, 9, 9), 1);
}

static void test_overrides(void **state)
{
	struct hop_model_hop hops[3];

	(void)state;
	fill(hops, 3, 10e-6, 1e9);
	/* opts->chunks beats HOP_PIPELINE_CHUNKS beats the model */
	assert_int_equal(relay_choose_k(hops, 3, 8e6, 1024,
					HOP_RELAY_PIPELINED, 7, 5), 7);
	assert_int_equal(relay_choose_k(hops, 3, 8e6, 1024,
					HOP_RELAY_PIPELINED, 0, 5), 5);
	/* explicit counts ignore min_chunk but keep >= 1 byte per chunk */
	assert_int_equal(relay_choose_k(hops, 3, 8e6, 4e6,
					HOP_RELAY_PIPELINED, 100, 0), 100);
	assert_int_equal(relay_choose_k(hops, 3, 5, 1,
					HOP_RELAY_PIPELINED, 1000, 0), 5);
	assert_int_equal(relay_choose_k(hops, 3, 5, 1,
					HOP_RELAY_PIPELINED, 0, 1000), 5);
}

/* Unequal hops: brute force over k with the slowest stage as period. */
static void test_unequal_brute_force(void **state)
{
	unsigned seed = 12345;

	(void)state;
	for (int trial = 0; trial < 300; trial++) {
		struct hop_model_hop hops[6];
		int h = 2 + trial % 5;
		double m = (double)(1 + (seed = seed * 1103515245u + 12345u) %
					  (32u << 20));
		long k, want;

		for (int i = 0; i < h; i++) {
			seed = seed * 1103515245u + 12345u;
			hops[i].alpha = (1 + seed % 50) * 1e-6;
			seed = seed * 1103515245u + 12345u;
			hops[i].beta = (0.2 + (seed % 100) / 10.0) * 1e9;
		}
		k = relay_choose_k(hops, h, m, 4096, HOP_RELAY_PIPELINED, 0, 0);
		want = ref_best(hops, h, m, ref_kmax(m, 4096));
		assert_true(k >= 1 && k <= ref_kmax(m, 4096));
		assert_true(ref_time(hops, h, m, k) <=
			    ref_time(hops, h, m, want) * (1 + 1e-12));
	}
}

/*
 * The slowest stage sets the period. When stage s is the slowest for every
 * k (largest alpha, smallest beta), T(k) = sum a_i - a_s + m/b_s + k a_s +
 * (m/k) sum_{i != s} 1/b_i, least at k* = sqrt(m sum_{i != s} 1/b_i / a_s)
 * (equal hops: sqrt((h-1) m / (a b))). The chosen k must be a neighbour.
 */
static void test_slowest_stage(void **state)
{
	struct hop_model_hop hops[3];
	double m = 8 << 20, kr;
	long k;

	(void)state;
	fill(hops, 3, 5e-6, 10e9);
	hops[1] = (struct hop_model_hop){ 20e-6, 1e9 };
	kr = sqrt(m * (2 / 10e9) / 20e-6);              /* 9.16 */
	k = relay_choose_k(hops, 3, m, 1, HOP_RELAY_PIPELINED, 0, 0);
	assert_true(k == (long)floor(kr) || k == (long)ceil(kr));
	assert_int_equal(k, ref_best(hops, 3, m, 4096));
	/* an "average hop" model would pick about 3x as many chunks */
	assert_true(k < sqrt(2 * m / (((5e-6 * 2 + 20e-6) / 3) *
				      (3 / (2 / 10e9 + 1 / 1e9)))) / 2);
	/* and the time is paced by the slow link: >= m / b_slow */
	assert_true(ref_time(hops, 3, m, k) >= m / 1e9);
}

static void test_chunk_offsets(void **state)
{
	static const size_t lens[] = { 0, 1, 2, 7, 4097, 1000003, 1 << 20 };
	static const long ks[] = { 1, 2, 3, 7, 64, 1000 };

	(void)state;
	for (size_t i = 0; i < 7; i++) {
		for (size_t j = 0; j < 6; j++) {
			size_t len = lens[i], total = 0, lo = (size_t)-1, hi = 0;
			long k = ks[j];

			if ((size_t)k > len && len)
				continue;       /* hop_relay clamps k to len */
			assert_int_equal(relay_chunk_off(len, k, 0), 0);
			assert_int_equal(relay_chunk_off(len, k, k), len);
			for (long c = 0; c < k; c++) {
				size_t n = relay_chunk_off(len, k, c + 1) -
					   relay_chunk_off(len, k, c);

				total += n;
				lo = n < lo ? n : lo;
				hi = n > hi ? n : hi;
			}
			assert_int_equal(total, len);
			assert_true(hi - lo <= 1);
		}
	}
	/* no overflow near the top of size_t */
	{
		size_t len = SIZE_MAX / 2 + 12345;
		long k = 1 << 20;

		assert_true(relay_chunk_off(len, k, k) == len);
		assert_true(relay_chunk_off(len, k, k / 2) > len / 2 - len / k &&
			    relay_chunk_off(len, k, k / 2) <= len / 2 + 1);
	}
}

static void expect_path_err(const int *path, int npath, int src, int dst,
			    const char *needle)
{
	char err[160] = "";

	assert_int_equal(relay_check_path(path, npath, 4, src, dst, err,
					  sizeof(err)), HOP_ERR_INVALID_ARG);
	if (!strstr(err, needle))
		fail_msg("'%s' does not contain '%s'", err, needle);
}

static void test_check_path(void **state)
{
	static const int ok[] = { 0, 2, 1, 3 }, rep[] = { 0, 2, 2, 3 };
	static const int neg[] = { 0, -1, 3 }, big[] = { 0, 4, 3 };
	int long_path[HOP_RELAY_MAX_PATH + 1] = { 0 };
	char err[160];

	(void)state;
	assert_int_equal(relay_check_path(ok, 4, 4, 0, 3, err, sizeof(err)), 0);
	assert_int_equal(relay_check_path(ok + 2, 2, 4, 1, 3, err,
					  sizeof(err)), 0);
	expect_path_err(rep, 4, 0, 3, "rank 2 is on the path twice (path[1] "
			"and path[2])");
	expect_path_err(neg, 3, 0, 3, "path[1] = -1 out of range");
	expect_path_err(big, 3, 0, 3, "path[1] = 4 out of range (comm has 4");
	expect_path_err(ok, 4, 2, 3, "path[0] = 0 is not the source rank 2");
	expect_path_err(ok, 4, 0, 1, "path[3] = 3 is not the destination "
			"rank 1");
	expect_path_err(ok, 1, 0, 0, "npath 1 out of range");
	expect_path_err(long_path, HOP_RELAY_MAX_PATH + 1, 0, 0,
			"npath 65 out of range");
}

static void test_signature(void **state)
{
	struct relay_plan a, b;
	uint32_t s;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.npath = 3;
	a.path[0] = 0, a.path[1] = 1, a.path[2] = 2;
	a.len = 1 << 20;
	a.k = 16;
	s = relay_plan_sig(&a);
	assert_int_not_equal(s, 0);
	b = a;
	assert_int_equal(relay_plan_sig(&b), s);
	b.k = 17;
	assert_int_not_equal(relay_plan_sig(&b), s);
	b = a;
	b.len++;
	assert_int_not_equal(relay_plan_sig(&b), s);
	b = a;
	b.path[1] = 3;
	assert_int_not_equal(relay_plan_sig(&b), s);
	b = a;
	b.mode = HOP_RELAY_STORE_FORWARD;
	assert_int_not_equal(relay_plan_sig(&b), s);
	/* the caller's rank is not part of the plan */
	b = a;
	b.pos = 2;
	assert_int_equal(relay_plan_sig(&b), s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_equal_hops_brute_force),
		cmocka_unit_test(test_known_kstar),
		cmocka_unit_test(test_clamping),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_unequal_brute_force),
		cmocka_unit_test(test_slowest_stage),
		cmocka_unit_test(test_chunk_offsets),
		cmocka_unit_test(test_check_path),
		cmocka_unit_test(test_signature),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
