/*
 * test_coll_hier.c - hierarchical collectives (HOP_ALGO_HIER) and rings
 * ordered by host, through the in-process simulation executor with data
 * (coll_run.h): synthetic placements of the ranks on hosts (2x2, 3x2,
 * 2x3, 3+1+2, block and cyclic, hosts with one rank, one host, one rank
 * per host), every collective, counts {0, 1, 2, N-1, N+1, 37, 1000} (odd,
 * not divisible by the hosts or their ranks), in place and not, every
 * root, tiny and default chunks, every dtype x op, every phase
 * algorithm. Each rank's result is checked bit for bit against the
 * reference folded in rank order in coll_run.h and against every other
 * rank's; chaos mode delivers messages late and reordered, so a phase
 * that starts before the one it needs ended corrupts data.
 */
#include "coll/hier.h"
#include "coll_run.h"

struct place {
	const char *name;
	int n;
	int hosts[8];
};

static const struct place places[] = {
	{ "2x2 block", 4, { 0, 0, 1, 1 } },
	{ "2x2 cyclic", 4, { 0, 1, 0, 1 } },
	{ "3x2 block", 6, { 0, 0, 1, 1, 2, 2 } },
	{ "3x2 cyclic", 6, { 0, 1, 2, 0, 1, 2 } },
	{ "2x3 block", 6, { 0, 0, 0, 1, 1, 1 } },
	{ "2x3 cyclic", 6, { 0, 1, 0, 1, 0, 1 } },
	{ "3+1+2 block", 6, { 0, 0, 0, 1, 2, 2 } },
	{ "3+1+2 mixed", 6, { 0, 1, 2, 0, 2, 0 } },
	{ "2+1", 3, { 0, 0, 1 } },
	{ "1+3", 4, { 0, 1, 1, 1 } },
	{ "one host", 3, { 0, 0, 0 } },
	{ "one rank per host", 3, { 0, 1, 2 } },
};
#define NPLACES (sizeof(places) / sizeof(*places))

static const int kinds[] = { HOP_COLL_BROADCAST, HOP_COLL_REDUCE,
			     HOP_COLL_ALLREDUCE, HOP_COLL_ALLGATHER,
			     HOP_COLL_REDUCESCATTER, HOP_COLL_BARRIER };
#define NKINDS (sizeof(kinds) / sizeof(*kinds))

/* Structure: every placement x collective x count x in place x root x
 * chunking, int32 sum of random bits. */
static void test_structure(void **state)
{
	(void)state;
	for (size_t pi = 0; pi < NPLACES; pi++)
		for (size_t ki = 0; ki < NKINDS; ki++) {
			const struct place *P = &places[pi];
			int n = P->n, k = kinds[ki];
			size_t counts[] = { 0, 1, 2, (size_t)n - 1, (size_t)n + 1, 37, 1000 };
			for (size_t ci = 0; ci < sizeof(counts) / sizeof(*counts); ci++)
				for (int ip = 0; ip < 2; ip++)
					for (int root = 0; root < (rooted(k) ? n : 1); root++)
						for (int ch = 0; ch < 2; ch++) {
				struct run R = { k, HOP_ALGO_HIER, n, root, ip, ch ? 2 : 1024,
						 (int)(ci % 3), 0, counts[ci], ch ? 1u << 20 : 12,
						 HOP_INT32, HOP_SUM, (int)(ci + pi), P->hosts,
						 { 0, 0 } };
				if (k == HOP_COLL_BARRIER && (ci || ip))
					continue;
				run_one(&R);
			}
		}
}

/* Types: every dtype x op (exact float inputs) on uneven and cyclic
 * placements. */
static void test_types(void **state)
{
	static const int which[] = { 1, 3, 7 };
	(void)state;
	for (size_t w = 0; w < sizeof(which) / sizeof(*which); w++)
		for (size_t ki = 0; ki < NKINDS - 1; ki++)
			for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++)
				for (int op = 0; op < HOP_OP_COUNT; op++) {
			const struct place *P = &places[which[w]];
			struct run R = { kinds[ki], HOP_ALGO_HIER, P->n, P->n / 2, op % 2, 2,
					 op % 3, 0, 37, 16, (hop_dtype_t)dt, (hop_op_t)op, 7,
					 P->hosts, { 0, 0 } };
			run_one(&R);
		}
}

/* Random floats: within the bound of any summation order, and bitwise
 * identical on every rank; NaN payloads and signed zeros likewise. */
static void test_random_floats(void **state)
{
	(void)state;
	for (size_t pi = 0; pi < NPLACES; pi++)
		for (int dt = HOP_FLOAT16; dt <= HOP_FLOAT64; dt++)
			for (int rnd = 1; rnd <= 2; rnd++) {
				const struct place *P = &places[pi];
				struct run R = { HOP_COLL_ALLREDUCE, HOP_ALGO_HIER, P->n, 0,
						 rnd - 1, 3, 0, rnd, 300, 64, (hop_dtype_t)dt,
						 rnd == 2 ? HOP_MAX : HOP_SUM, 11, P->hosts,
						 { 0, 0 } };
				run_one(&R);
				R.kind = HOP_COLL_REDUCESCATTER;
				run_one(&R);
			}
}

/* Every phase algorithm (intra x inter), those a phase's collective
 * does not have falling back to its default. */
static void test_sub_algos(void **state)
{
	static const int algs[] = { HOP_ALGO_AUTO, HOP_ALGO_FLAT, HOP_ALGO_TREE,
				    HOP_ALGO_CHAIN, HOP_ALGO_RING, HOP_ALGO_DBTREE,
				    HOP_ALGO_RD, HOP_ALGO_RABENSEIFNER, HOP_ALGO_BRUCK,
				    HOP_ALGO_HALVING, HOP_ALGO_HIER };
	static const int which[] = { 2, 5, 7 };
	size_t na = sizeof(algs) / sizeof(*algs);
	(void)state;
	for (size_t w = 0; w < sizeof(which) / sizeof(*which); w++)
		for (size_t ki = 0; ki < NKINDS; ki++)
			for (size_t i = 0; i < na; i++)
				for (size_t j = 0; j < na; j++) {
			const struct place *P = &places[which[w]];
			struct run R = { kinds[ki], HOP_ALGO_HIER, P->n, (int)(i + j) % P->n,
					 (int)(i + j) % 2, 3, 0, 0, 41, 24, HOP_INT32, HOP_SUM,
					 3, P->hosts, { algs[i], algs[j] } };
			run_one(&R);
		}
}

/* Large: many chunks in every phase. */
static void test_large(void **state)
{
	(void)state;
	for (size_t ki = 0; ki < NKINDS - 1; ki++)
		for (int pi = 2; pi < 8; pi += 5) {
			const struct place *P = &places[pi];
			struct run R = { kinds[ki], HOP_ALGO_HIER, P->n, 1, (int)ki % 2, 4, 1,
					 0, 100003, 4096, HOP_FLOAT32, HOP_SUM, 5, P->hosts,
					 { 0, 0 } };
			run_one(&R);
		}
}

/* The shape: a host's leader (its lowest rank; root 0 is one) that
 * shares its host takes part in at least two phases (tag regions: the
 * bits above HIER_TAG_BITS), and each phase is either all
 * inside hosts or all across them. */
static void test_shape(void **state)
{
	(void)state;
	for (size_t pi = 0; pi < 8; pi++)
		for (size_t ki = 0; ki < NKINDS; ki++) {
			const struct place *P = &places[pi];
			for (int r = 0; r < P->n; r++) {
				struct hop_sched s;
				struct hop_coll_args a = { kinds[ki], HOP_ALGO_HIER, r, P->n, 0,
							   1000, HOP_INT32, HOP_SUM, 0, 1024,
							   2, 0, NULL, NULL, 0, { 0, 0 },
							   P->hosts, hop_hosts_sig(P->hosts, P->n), 0, 0 };
				int across[HIER_MAX_PHASES] = { 0 };
				int inside[HIER_MAX_PHASES] = { 0 }, phases = 0, alone = 1;
				int lead = 1;
				for (int q = 0; q < P->n; q++) {
					alone &= q == r || P->hosts[q] != P->hosts[r];
					lead &= q >= r || P->hosts[q] != P->hosts[r];
				}
				hop_sched_init(&s);
				assert_int_equal(hop_sched_build(&s, &a), 0);
				for (int i = 0; i < s.nsteps; i++) {
					const struct hop_step *st = &s.steps[i];
					if (st->kind != HOP_STEP_SEND && st->kind != HOP_STEP_RECV)
						continue;
					if (P->hosts[st->peer] == P->hosts[r])
						inside[st->tag >> HIER_TAG_BITS]++;
					else
						across[st->tag >> HIER_TAG_BITS]++;
				}
				for (int p = 0; p < HIER_MAX_PHASES; p++) {
					phases += inside[p] || across[p];
					if (inside[p] && across[p])
						fail_msg("%s %s rank %d: phase %d both inside and "
							 "across hosts", P->name, desc_kind(kinds[ki]),
							 r, p);
				}
				if (lead && !alone && phases < 2)
					fail_msg("%s %s rank %d: %d phases", P->name,
						 desc_kind(kinds[ki]), r, phases);
				hop_sched_free(&s);
			}
		}
}

/* Rings in host order: with cyclic placement (every rank's neighbour in
 * rank order on another host) only one edge per host crosses hosts, and
 * the results stay what they were. */
static void test_ring_by_host(void **state)
{
	static const int ring_kinds[] = { HOP_COLL_ALLREDUCE, HOP_COLL_ALLGATHER,
					  HOP_COLL_REDUCESCATTER };
	(void)state;
	for (size_t ki = 0; ki < 3; ki++)
		for (int pi = 0; pi < 8; pi++) {
			const struct place *P = &places[pi];
			int n = P->n, H = 0, crossing = 0;
			for (int r = 0; r < n; r++)
				H = P->hosts[r] >= H ? P->hosts[r] + 1 : H;
			for (int r = 0; r < n; r++) {
				struct hop_sched s;
				struct hop_coll_args a = { ring_kinds[ki], HOP_ALGO_RING, r, n,
							   0, 60, HOP_INT32, HOP_SUM, 0, 1024,
							   2, 0, NULL, NULL, 0, { 0, 0 },
							   P->hosts, hop_hosts_sig(P->hosts, n), 0, 0 };
				int to = -1;
				hop_sched_init(&s);
				assert_int_equal(hop_sched_build(&s, &a), 0);
				for (int i = 0; i < s.nsteps; i++)
					if (s.steps[i].kind == HOP_STEP_SEND) {
						if (to >= 0 && s.steps[i].peer != to)
							fail_msg("%s: rank %d sends to %d and %d",
								 P->name, r, to, s.steps[i].peer);
						to = s.steps[i].peer;
					}
				crossing += P->hosts[to] != P->hosts[r];
				hop_sched_free(&s);
			}
			if (crossing != H)
				fail_msg("%s: %d ring edges cross hosts, not %d", P->name,
					 crossing, H);
			struct run R = { ring_kinds[ki], HOP_ALGO_RING, n, 0, pi % 2, 2, 0, 0,
					 1000, 64, HOP_FLOAT32, HOP_SUM, 9, P->hosts, { 0, 0 } };
			run_one(&R);
		}
}

/* Ranks of @P with a step across hosts in the hierarchical AllReduce
 * by the leaders (@leaders) or by the rails. */
static int ranks_across(const struct place *P, int leaders)
{
	int ranks = 0;

	for (int r = 0; r < P->n; r++) {
		struct hop_sched s;
		struct hop_coll_args a = { HOP_COLL_ALLREDUCE, HOP_ALGO_HIER, r,
					   P->n, 0, 1000, HOP_INT32, HOP_SUM, 0,
					   1024, 2, 0, NULL, NULL, 0, { 0, 0 },
					   P->hosts, hop_hosts_sig(P->hosts, P->n),
					   0, leaders };
		int across = 0;

		hop_sched_init(&s);
		assert_int_equal(hop_sched_build(&s, &a), 0);
		for (int i = 0; i < s.nsteps; i++)
			across |= (s.steps[i].kind == HOP_STEP_SEND ||
				   s.steps[i].kind == HOP_STEP_RECV) &&
				  P->hosts[s.steps[i].peer] != P->hosts[r];
		ranks += across;
		hop_sched_free(&s);
	}
	return ranks;
}

/* The AllReduce's two forms on the uniform placements: by the rails
 * every rank crosses hosts, by the leaders one rank per host; both bit
 * for bit against the reference, every count, in place and not. */
static void test_forms(void **state)
{
	(void)state;
	for (size_t pi = 0; pi < 6; pi++) {
		const struct place *P = &places[pi];
		int H = 0;

		for (int r = 0; r < P->n; r++)
			H = P->hosts[r] >= H ? P->hosts[r] + 1 : H;
		for (int lead = 0; lead < 2; lead++) {
			size_t counts[] = { 1, 2, (size_t)P->n + 1, 37, 1000, 65537 };
			int got = ranks_across(P, lead);

			if (got != (lead ? H : P->n))
				fail_msg("%s, %s: %d ranks cross hosts, not %d",
					 P->name, lead ? "leaders" : "rails", got,
					 lead ? H : P->n);
			coll_run_leaders = lead;
			for (size_t ci = 0; ci < sizeof(counts) / sizeof(*counts); ci++)
				for (int ip = 0; ip < 2; ip++) {
					struct run R = { HOP_COLL_ALLREDUCE, HOP_ALGO_HIER, P->n,
							 0, ip, 2, (int)(ci % 3), 0, counts[ci],
							 4096, HOP_FLOAT32, HOP_SUM, (int)ci,
							 P->hosts, { 0, 0 } };
					run_one(&R);
				}
			coll_run_leaders = 0;
		}
	}
}

/* The tag regions (phases) of rank @r's hierarchical AllReduce of @count
 * int32 on placement @P. */
static int phases_built(const struct place *P, int r, size_t count)
{
	struct hop_sched s;
	struct hop_coll_args a = { HOP_COLL_ALLREDUCE, HOP_ALGO_HIER, r, P->n, 0,
				   count, HOP_INT32, HOP_SUM, 0, 1u << 20, 2, 0, NULL,
				   NULL, 0, { 0, 0 }, P->hosts,
				   hop_hosts_sig(P->hosts, P->n), 0, 0 };
	int seen[HIER_MAX_PHASES] = { 0 }, n = 0;

	hop_sched_init(&s);
	assert_int_equal(hop_sched_build(&s, &a), 0);
	for (int i = 0; i < s.nsteps; i++)
		if (s.steps[i].kind == HOP_STEP_SEND || s.steps[i].kind == HOP_STEP_RECV)
			seen[s.steps[i].tag >> HIER_TAG_BITS] = 1;
	hop_sched_free(&s);
	for (int p = 0; p < HIER_MAX_PHASES; p++)
		n += seen[p];
	return n;
}

/* The rail-parallel AllReduce in pieces (hop_model_hier_pieces()): three
 * phases a piece, each piece's inside the hosts running while the one
 * before crosses, each with its own scratch; with messages late and
 * reordered, the results stay bit for bit, in place and not, on uniform
 * placements in blocks and round robin, 2 and 3 ranks a host. */
static void test_pieces(void **state)
{
	static const int which[] = { 0, 1, 5 };
	size_t mi = (1u << 20) / 4;     /* int32 elements of 1 MiB */
	(void)state;
	for (size_t w = 0; w < sizeof(which) / sizeof(*which); w++) {
		const struct place *P = &places[which[w]];
		int L = P->n / 2;
		size_t counts[] = { 2 * L * mi - 1, 2 * L * mi + 1, 3 * L * mi + 5,
				    4 * L * mi + 3 };
		int pieces[] = { 1, 2, 3, 4 };
		for (size_t ci = 0; ci < sizeof(counts) / sizeof(*counts); ci++) {
			struct run R = { HOP_COLL_ALLREDUCE, HOP_ALGO_HIER, P->n, 0,
					 (int)ci % 2, 3, (int)ci % 3, 0, counts[ci], 1u << 20,
					 HOP_INT32, HOP_SUM, (int)ci, P->hosts, { 0, 0 } };
			assert_int_equal(phases_built(P, 0, counts[ci]), 3 * pieces[ci]);
			if (pieces[ci] > 1)
				run_one(&R);
		}
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure),
		cmocka_unit_test(test_types),
		cmocka_unit_test(test_random_floats),
		cmocka_unit_test(test_sub_algos),
		cmocka_unit_test(test_large),
		cmocka_unit_test(test_pieces),
		cmocka_unit_test(test_shape),
		cmocka_unit_test(test_ring_by_host),
		cmocka_unit_test(test_forms),
	};
	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
