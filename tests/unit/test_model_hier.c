/*
 * test_model_hier.c - link classes and the flat/hierarchical choice of the
 * cost model (src/model/model_class.c, model_hier.c): a profile's pairs
 * per class, the placement of ranks on hosts, the hierarchical forms as
 * the sum of their phases and the choice between them and the flat
 * algorithms.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "model/model.h"
#include "model/profile.h"

/* Generic links of the two classes with these alphas (s) and betas (B/s),
 * full duplex between hosts. */
static void links_set(struct hop_model_link l[2], double a_intra,
		      double b_intra, double a_inter, double b_inter)
{
	hop_model_link_generic(&l[HOP_MODEL_INTRA]);
	hop_model_link_generic(&l[HOP_MODEL_INTER]);
	l[HOP_MODEL_INTRA].alpha = a_intra;
	l[HOP_MODEL_INTRA].beta = b_intra;
	l[HOP_MODEL_INTER].alpha = a_inter;
	l[HOP_MODEL_INTER].beta = b_inter;
	l[HOP_MODEL_INTER].duplex = 1;
}

/* 4 hosts x 2 ranks: fast shared memory inside, 1 Gbit/s between. */
static void links_1g(struct hop_model_link l[2])
{
	links_set(l, 1e-6, 10e9, 50e-6, 125e6);
}

static void test_place(void **state)
{
	static const int block[8] = { 0, 0, 1, 1, 2, 2, 3, 3 };
	static const int cyclic[8] = { 0, 1, 2, 3, 0, 1, 2, 3 };
	static const int uneven[6] = { 0, 0, 0, 1, 2, 2 };
	static const int bad[2] = { 0, 2 };
	struct hop_model_place pl;

	(void)state;
	assert_int_equal(hop_model_place_of(block, 8, 8, &pl), 0);
	assert_int_equal(pl.nhosts, 4);
	assert_int_equal(pl.lmax, 2);
	assert_true(pl.uniform);
	assert_int_equal(hop_model_place_of(cyclic, 8, 4, &pl), 0);
	assert_int_equal(pl.nhosts, 4);
	assert_true(pl.uniform);
	assert_int_equal(hop_model_place_of(uneven, 6, 3, &pl), 0);
	assert_int_equal(pl.nhosts, 3);
	assert_int_equal(pl.lmax, 3);
	assert_false(pl.uniform);
	assert_int_equal(hop_model_place_of(bad, 2, 2, &pl), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_model_place_of(NULL, 2, 2, &pl), HOP_ERR_INVALID_ARG);
}

/* The three phases of the rail-parallel AllReduce of @m on 4 hosts x 2
 * by rings: each phase's time in @ph; their sum. */
static double ring_phases(size_t m, const struct hop_model_link l[2],
			  double ph[3])
{
	struct hop_model_link rail = l[HOP_MODEL_INTER];
	size_t s = m / 2;

	rail.beta /= 2;
	ph[0] = hop_model_predict(HOP_COLL_REDUCESCATTER, HOP_ALGO_RING, s, 2,
				  &l[0], hop_model_best_chunks(
					  HOP_COLL_REDUCESCATTER,
					  HOP_ALGO_RING, s, 2, &l[0]));
	ph[1] = hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, s, 4,
				  &rail, hop_model_best_chunks(
					  HOP_COLL_ALLREDUCE, HOP_ALGO_RING, s,
					  4, &rail));
	ph[2] = hop_model_predict(HOP_COLL_ALLGATHER, HOP_ALGO_RING, s, 2,
				  &l[0], 1);
	return ph[0] + ph[1] + ph[2];
}

/* The rail-parallel AllReduce is the sum of its three phases (one
 * piece: every rail's slice below 2 HOP_MODEL_HIER_PIECE). */
static void test_hier_sum(void **state)
{
	struct hop_model_place pl = { 8, 4, 2, 1, 0 };
	struct hop_model_link l[2];
	static const int ring2[2] = { HOP_ALGO_RING, HOP_ALGO_RING };
	int sub[2];
	size_t m = 3u << 20;
	double t, want, ph[3];

	(void)state;
	links_1g(l);
	assert_int_equal(hop_model_hier_pieces(m, 2), 1);
	t = hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, &pl, l, ring2, sub,
				   NULL);
	want = ring_phases(m, l, ph);
	assert_true(fabs(t - want) <= 1e-12 * want);
	assert_int_equal(sub[0], HOP_ALGO_RING);
	assert_int_equal(sub[1], HOP_ALGO_RING);
	/* an algorithm a phase of its class cannot run: none */
	static const int bad[2] = { HOP_ALGO_BRUCK, HOP_ALGO_AUTO };
	assert_true(isnan(hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, &pl, l,
						 bad, NULL, NULL)));
	/* one host, or one rank per host: no hierarchical form */
	struct hop_model_place one = { 8, 1, 8, 1, 0 }, flat = { 4, 4, 1, 1, 0 };
	assert_true(isnan(hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, &one, l,
						 ring2, NULL, NULL)));
	assert_true(isnan(hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, &flat,
						 l, ring2, NULL, NULL)));
	assert_true(isnan(hop_model_hier_predict(HOP_COLL_ALLTOALL, m, &pl, l,
						 ring2, NULL, NULL)));
}

/* Larger, the pieces: every rail's slice of a piece at least
 * HOP_MODEL_HIER_PIECE, at most HOP_MODEL_HIER_MAX_PIECES of them; the
 * time is one piece's phases, then the slowest once per further piece. */
static void test_hier_pieces(void **state)
{
	struct hop_model_place pl = { 8, 4, 2, 1, 0 };
	struct hop_model_link l[2];
	static const int ring2[2] = { HOP_ALGO_RING, HOP_ALGO_RING };
	size_t mib = 1u << 20;
	double t, want, ph[3];

	(void)state;
	assert_int_equal(hop_model_hier_pieces(0, 2), 1);
	assert_int_equal(hop_model_hier_pieces(4 * mib - 4, 2), 1);
	assert_int_equal(hop_model_hier_pieces(4 * mib, 2), 2);
	assert_int_equal(hop_model_hier_pieces(6 * mib, 2), 3);
	assert_int_equal(hop_model_hier_pieces(8 * mib, 2), 4);
	assert_int_equal(hop_model_hier_pieces(1024 * mib, 8), 4);
	assert_int_equal(hop_model_hier_pieces(8 * mib, 4), 2);
	assert_int_equal(hop_model_hier_pieces(8 * mib, 0), 4);
	links_1g(l);
	t = hop_model_hier_predict(HOP_COLL_ALLREDUCE, 8 * mib, &pl, l, ring2,
				   NULL, NULL);
	want = ring_phases(2 * mib, l, ph);
	want += 3 * fmax(ph[0], fmax(ph[1], ph[2]));
	assert_true(fabs(t - want) <= 1e-12 * want);
}

/* 4 hosts x 2 on 1 Gbit/s: hierarchical from some size on; all on one
 * host: flat, priced on the intra link. */
static void test_choice(void **state)
{
	struct hop_model_place pl = { 8, 4, 2, 1, 0 }, one = { 8, 1, 8, 1, 0 };
	struct hop_model_link l[2];
	struct hop_model_choice ch;

	(void)state;
	links_1g(l);
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, 4 << 20, &pl,
						l, HOP_ALGO_AUTO, &ch), 0);
	assert_int_equal(ch.algo, HOP_ALGO_HIER);
	assert_true(ch.hier < ch.flat);
	assert_true(ch.predicted == ch.hier);
	assert_int_equal(ch.sub_algo[HOP_MODEL_INTRA], HOP_ALGO_RING);
	assert_true(hop_model_algo_valid(HOP_COLL_ALLREDUCE,
					 ch.sub_algo[HOP_MODEL_INTER]));
	assert_true(ch.chunk_bytes > 0 && ch.chunk_bytes % 8 == 0);
	/* the flat price is the inter link's, whose beta a host's 2 ranks
	 * share in the exchanging algorithms */
	int a, cand[HOP_ALGO_COUNT], nc;
	long k;
	double t, best = INFINITY;
	struct hop_model_link shared = l[HOP_MODEL_INTER];
	shared.beta /= 2;
	nc = hop_model_algos(HOP_COLL_ALLREDUCE, cand, HOP_ALGO_COUNT);
	for (int i = 0; i < nc; i++) {
		const struct hop_model_link *li =
			hop_model_algo_shares_host_link(cand[i])
			? &shared : &l[HOP_MODEL_INTER];
		if (cand[i] == HOP_ALGO_HIER)
			continue;
		k = hop_model_best_chunks(HOP_COLL_ALLREDUCE, cand[i], 4 << 20,
					  8, li);
		t = hop_model_predict(HOP_COLL_ALLREDUCE, cand[i], 4 << 20, 8,
				      li, k);
		best = t < best ? t : best;
	}
	assert_true(best == ch.flat);
	assert_true(hop_model_algo_shares_host_link(HOP_ALGO_RABENSEIFNER));
	assert_false(hop_model_algo_shares_host_link(HOP_ALGO_RING));
	assert_false(hop_model_algo_shares_host_link(HOP_ALGO_TREE));
	/* Bruck's AllGather sends from every rank across hosts at once:
	 * forced, it is priced on half the link, a ring on all of it */
	struct hop_model_choice br, rg;
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLGATHER, 8 << 20,
						&pl, l, HOP_ALGO_BRUCK, &br), 0);
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLGATHER, 8 << 20,
						&pl, l, HOP_ALGO_RING, &rg), 0);
	k = hop_model_best_chunks(HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK, 8 << 20,
				  8, &shared);
	assert_true(br.flat == hop_model_predict(HOP_COLL_ALLGATHER,
						 HOP_ALGO_BRUCK, 8 << 20, 8,
						 &shared, k));
	assert_true(rg.flat < br.flat);

	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, 4 << 20,
						&one, l, HOP_ALGO_AUTO, &ch), 0);
	assert_int_not_equal(ch.algo, HOP_ALGO_HIER);
	assert_true(isnan(ch.hier));
	assert_int_equal(hop_model_choose(HOP_COLL_ALLREDUCE, 4 << 20, 8,
					  &l[HOP_MODEL_INTRA], &a, &k, &t), 0);
	assert_true(t == ch.flat && a == ch.algo);

	/* these kinds take their hierarchical form at 4 MiB here (AllGather
	 * not: each rail gathers every other host's blocks, L times the
	 * bytes a flat ring moves over a host's link) */
	static const int kinds[] = { HOP_COLL_BROADCAST, HOP_COLL_REDUCE,
				     HOP_COLL_REDUCESCATTER };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++) {
		assert_int_equal(hop_model_choose_place(kinds[i], 4 << 20, &pl,
							l, HOP_ALGO_AUTO, &ch),
				 0);
		assert_int_equal(ch.algo, HOP_ALGO_HIER);
	}
	/* forced: a flat algorithm stays flat, hier chooses its phases */
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, 4 << 20, &pl,
						l, HOP_ALGO_RING, &ch), 0);
	assert_int_equal(ch.algo, HOP_ALGO_RING);
	assert_int_equal(ch.sub_algo[0], HOP_ALGO_AUTO);
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, 8, &pl, l,
						HOP_ALGO_HIER, &ch), 0);
	assert_int_equal(ch.algo, HOP_ALGO_HIER);
	assert_int_not_equal(ch.sub_algo[1], HOP_ALGO_AUTO);
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, 8, &pl, l,
						HOP_ALGO_BRUCK, &ch),
			 HOP_ERR_INVALID_ARG);
	/* the uneven placement 3+1+2: leaders' forms */
	struct hop_model_place un = { 6, 3, 3, 0, 0 };
	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, 4 << 20, &un,
						l, HOP_ALGO_AUTO, &ch), 0);
	assert_int_equal(ch.algo, HOP_ALGO_HIER);
	assert_true(ch.sub_algo[0] == HOP_ALGO_TREE ||
		    ch.sub_algo[0] == HOP_ALGO_CHAIN ||
		    ch.sub_algo[0] == HOP_ALGO_FLAT);
}

/* The two-class profile of 4 emulated hosts x 2 ranks on 1 Gbit/s tcp
 * links (docs/results/2026-12-05-cluster-hier.md): duplex and gamma as
 * hop-probe measured them there; max_chunk the built-in 1 MiB. */
static void links_cluster(struct hop_model_link l[2])
{
	links_set(l, 0.46e-6, 14.1e9, 9.06e-6, 119.2e6);
	l[HOP_MODEL_INTRA].gamma = 0.040e-9;
	l[HOP_MODEL_INTRA].duplex = 2;
	l[HOP_MODEL_INTER].gamma = 0.038e-9;
	l[HOP_MODEL_INTER].duplex = 1.04;
}

static int inter_pick(size_t m, const struct hop_model_link l[2])
{
	struct hop_model_place pl = { 8, 4, 2, 1, 0 };
	struct hop_model_choice ch;

	assert_int_equal(hop_model_choose_place(HOP_COLL_ALLREDUCE, m, &pl, l,
						HOP_ALGO_AUTO, &ch), 0);
	assert_int_equal(ch.algo, HOP_ALGO_HIER);
	return ch.sub_algo[HOP_MODEL_INTER];
}

/* The hierarchical AllReduce of @m on @pl with Rabenseifner across hosts,
 * built from the ring+ring price: its inter phase (one rail's slice on
 * 4 hosts) replaced by Rabenseifner on @inter, the rail's link. */
static double rab_from_ring(size_t m, const struct hop_model_place *pl,
			    const struct hop_model_link l[2],
			    const struct hop_model_link *rail,
			    const struct hop_model_link *inter)
{
	static const int ring2[2] = { HOP_ALGO_RING, HOP_ALGO_RING };
	size_t s = m / 2;
	long k = hop_model_best_chunks(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, s, 4,
				       rail);

	return hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, pl, l, ring2,
				      NULL, NULL) -
	       hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RING, s, 4, rail,
				 k) +
	       hop_model_predict(HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER, s,
				 4, inter, 1);
}

/*
 * Across hosts, each exchange of a message above max_chunk waits for one
 * max_chunk at the link's rate (its clear-to-send queued behind the
 * partner's chunk): Rabenseifner's rails (4 exchanges of a quarter of the
 * vector and more at 32 MiB) then lose to the ring from 8 MiB on, as
 * measured on that cluster, and keep the small sizes, where no exchange
 * is that large and they were faster.
 */
static void test_inter_exchange(void **state)
{
	struct hop_model_place pl = { 8, 4, 2, 1, 0 };
	struct hop_model_link l[2], rail;
	static const int rab[2] = { HOP_ALGO_RING, HOP_ALGO_RABENSEIFNER };
	size_t m = (size_t)3 << 20;
	double t, want, chunk;

	(void)state;
	links_cluster(l);
	assert_int_equal(inter_pick((size_t)8 << 20, l), HOP_ALGO_RING);
	assert_int_equal(inter_pick((size_t)32 << 20, l), HOP_ALGO_RING);
	assert_int_equal(inter_pick(512 << 10, l), HOP_ALGO_RABENSEIFNER);
	/* one piece (hop_model_hier_pieces()): each rail's 1.5 MiB on 4
	 * hosts, halves of 768 and 384 KiB, each swapped once on the way
	 * down and once back; with a 256 KiB max_chunk all 4 above it, on
	 * the rail's share of the link; the intra phases as before */
	l[HOP_MODEL_INTER].max_chunk = 256 << 10;
	rail = l[HOP_MODEL_INTER];
	rail.beta /= 2;
	chunk = l[HOP_MODEL_INTER].max_chunk;
	assert_int_equal(hop_model_hier_pieces(m, 2), 1);
	t = hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, &pl, l, rab, NULL,
				   NULL);
	want = rab_from_ring(m, &pl, l, &rail, &rail) + 4 * chunk / rail.beta;
	assert_true(fabs(t - want) <= 1e-9 * want);
	/* no max_chunk known, or exchanges within it: no wait */
	l[HOP_MODEL_INTER].max_chunk = 0;
	t = hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, &pl, l, rab, NULL,
				   NULL);
	l[HOP_MODEL_INTER].max_chunk = (double)m;
	assert_true(t == hop_model_hier_predict(HOP_COLL_ALLREDUCE, m, &pl, l,
						rab, NULL, NULL));
	rail.max_chunk = (double)m;
	want = rab_from_ring(m, &pl, l, &rail, &rail);
	assert_true(fabs(t - want) <= 1e-9 * want);
}

/* A profile's pairs per class; a version 1 profile by its provider. */
static void test_class_links(void **state)
{
	struct hop_profile_pair q[2];
	struct hop_profile p;
	struct hop_model_link base, out;
	const char *shm_tcp[2] = { "shm", "tcp" }, *tcp2[2] = { "tcp", "tcp" },
		   *none[2] = { "shm", "verbs" };

	(void)state;
	memset(&p, 0, sizeof(p));
	strcpy(p.provider, "tcp");
	p.nranks = 4;
	p.npairs = 2;
	p.pairs = q;
	for (int i = 0; i < 2; i++) {
		hop_profile_pair_init(&q[i]);
		q[i].a = 0;
		q[i].b = i + 1;
	}
	q[0].alpha_us = 1;
	q[0].beta_gbps = 10;
	q[1].alpha_us = 40;
	q[1].beta_gbps = 0.125;
	hop_model_link_generic(&base);
	/* unclassified: to the class whose provider measured them */
	assert_int_equal(hop_model_link_class(&p, 1, shm_tcp, &base, &out), 2);
	assert_true(out.alpha == 40 * 1e-6 && out.beta == 0.125 * 1e9);
	assert_int_equal(hop_model_link_class(&p, 0, shm_tcp, &base, &out), 0);
	assert_memory_equal(&out, &base, sizeof(out));
	assert_int_equal(hop_model_link_class(&p, 0, tcp2, &base, &out), 2);
	assert_int_equal(hop_model_link_class(&p, 0, none, &base, &out), 2);
	/* labelled: each class its own pairs */
	q[0].link_class = 0;
	q[1].link_class = 1;
	assert_int_equal(hop_model_link_class(&p, 0, tcp2, &base, &out), 1);
	assert_true(out.alpha == 1 * 1e-6 && out.beta == 10 * 1e9);
	assert_int_equal(hop_model_link_class(&p, 1, tcp2, &base, &out), 1);
	assert_true(out.alpha == 40 * 1e-6 && out.beta == 0.125 * 1e9);
	assert_int_equal(hop_model_link_class(&p, 2, tcp2, &base, &out),
			 HOP_ERR_INVALID_ARG);
}

/* Phases @k0 and @k1 (@k1 < 0: none) of @m bytes on @n ranks of link
 * @l at the fastest algorithm both have, each at its best chunk count. */
static double phases_best(int k0, int k1, size_t m, int n,
			  const struct hop_model_link *l)
{
	int algos[HOP_ALGO_COUNT], na = hop_model_algos(k0, algos, HOP_ALGO_COUNT);
	double best = INFINITY;

	for (int i = 0; i < na; i++) {
		int a = algos[i];
		double t;

		if (a == HOP_ALGO_HIER || (k1 >= 0 && !hop_model_algo_valid(k1, a)))
			continue;
		t = hop_model_predict(k0, a, m, n, l,
				      hop_model_best_chunks(k0, a, m, n, l));
		if (k1 >= 0)
			t += hop_model_predict(k1, a, m, n, l,
					       hop_model_best_chunks(k1, a, m, n, l));
		best = t < best ? t : best;
	}
	return best;
}

/* The AllReduce's two forms on a uniform placement: the leaders' priced
 * as Reduce and Broadcast inside a host plus the AllReduce among the
 * hosts; chosen up to the inter link's max_chunk unless the rails are
 * clearly cheaper. */
static void test_hier_forms(void **state)
{
	static const int auto2[2] = { HOP_ALGO_AUTO, HOP_ALGO_AUTO };
	struct hop_model_place pl = { 8, 4, 2, 1, 1 }, un = { 6, 3, 3, 0, 0 };
	struct hop_model_link l[2];
	struct hop_model_choice ch;
	double rails, lead, t, want;
	int leaders = -1;

	(void)state;
	links_1g(l);
	assert_true(hop_model_hier_has_forms(HOP_COLL_ALLREDUCE, &pl));
	assert_false(hop_model_hier_has_forms(HOP_COLL_BROADCAST, &pl));
	assert_false(hop_model_hier_has_forms(HOP_COLL_ALLREDUCE, &un));
	/* 8 B: the leaders', priced as its phases */
	rails = hop_model_hier_predict(HOP_COLL_ALLREDUCE, 8, &pl, l, auto2,
				       NULL, NULL);
	assert_true(rails == hop_model_hier_predict_form(HOP_COLL_ALLREDUCE, 8,
			&pl, l, auto2, HOP_MODEL_FORM_RAILS, NULL, NULL, &leaders));
	assert_int_equal(leaders, 0);
	lead = hop_model_hier_predict_form(HOP_COLL_ALLREDUCE, 8, &pl, l, auto2,
					   HOP_MODEL_FORM_LEADERS, NULL, NULL,
					   &leaders);
	assert_int_equal(leaders, 1);
	want = phases_best(HOP_COLL_REDUCE, HOP_COLL_BROADCAST, 8, 2,
			   &l[HOP_MODEL_INTRA]) +
	       phases_best(HOP_COLL_ALLREDUCE, -1, 8, 4, &l[HOP_MODEL_INTER]);
	assert_true(fabs(lead - want) <= 1e-9 * want);
	assert_true(lead <= rails * (1 + HOP_MODEL_HIER_TIE));
	t = hop_model_hier_predict_form(HOP_COLL_ALLREDUCE, 8, &pl, l, auto2,
					HOP_MODEL_FORM_AUTO, NULL, NULL, &leaders);
	assert_int_equal(leaders, 1);
	assert_true(t == lead);
	assert_int_equal(hop_model_choose_place_form(HOP_COLL_ALLREDUCE, 8, &pl,
			l, HOP_ALGO_HIER, HOP_MODEL_FORM_AUTO, &ch), 0);
	assert_int_equal(ch.hier_leaders, 1);
	assert_true(ch.hier == lead);
	assert_int_equal(hop_model_choose_place_form(HOP_COLL_ALLREDUCE, 8, &pl,
			l, HOP_ALGO_HIER, HOP_MODEL_FORM_RAILS, &ch), 0);
	assert_int_equal(ch.hier_leaders, 0);
	assert_true(ch.hier == rails);
	/* 2 MiB, above the inter link's max_chunk: the rails */
	assert_true(2.0 * (1 << 20) > l[HOP_MODEL_INTER].max_chunk);
	t = hop_model_hier_predict_form(HOP_COLL_ALLREDUCE, 2u << 20, &pl, l,
					auto2, HOP_MODEL_FORM_AUTO, NULL, NULL,
					&leaders);
	assert_int_equal(leaders, 0);
	assert_true(t == hop_model_hier_predict(HOP_COLL_ALLREDUCE, 2u << 20,
						&pl, l, auto2, NULL, NULL));
	/* 8 MiB: the rails run in pieces */
	assert_true(hop_model_hier_pieces(8u << 20, 2) > 1);
	rails = hop_model_hier_predict(HOP_COLL_ALLREDUCE, 8u << 20, &pl, l,
				       auto2, NULL, NULL);
	t = hop_model_hier_predict_form(HOP_COLL_ALLREDUCE, 8u << 20, &pl, l,
					auto2, HOP_MODEL_FORM_AUTO, NULL, NULL,
					&leaders);
	assert_int_equal(leaders, 0);
	assert_true(t == rails);
	/* a placement with one form: the form asked for is moot */
	assert_true(hop_model_hier_predict_form(HOP_COLL_ALLREDUCE, 8, &un, l,
			auto2, HOP_MODEL_FORM_LEADERS, NULL, NULL, &leaders) ==
		    hop_model_hier_predict(HOP_COLL_ALLREDUCE, 8, &un, l, auto2,
					   NULL, NULL));
	assert_int_equal(leaders, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place),
		cmocka_unit_test(test_hier_sum),
		cmocka_unit_test(test_hier_pieces),
		cmocka_unit_test(test_choice),
		cmocka_unit_test(test_hier_forms),
		cmocka_unit_test(test_inter_exchange),
		cmocka_unit_test(test_class_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
