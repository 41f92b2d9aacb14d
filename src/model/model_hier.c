/*
 * model_hier.c - the hierarchical collectives priced as the sum of their
 * phases (the shapes the schedule builder runs, docs/model-hosts.md
 * "Hierarchical collectives"), and the choice between them and the flat
 * algorithms for a placement of ranks on hosts.
 *
 * Each phase is a flat collective on a sub-group: intra-host phases run on
 * every host at once, so the host with the most ranks (lmax) paces them;
 * the inter-host phase runs among one rank per host (the leaders), or, in
 * the rail-parallel forms of a uniform placement, among the L ranks of each
 * rail at once, which share their host's link: its bandwidth term is
 * priced at beta_inter / L.
 */
#include "model/model.h"

#include <math.h>
#include <stddef.h>

#include <hop/common.h>

#include "model/model_int.h"

#define MAX_PHASES 3

struct phase {
	int cls;        /* HOP_MODEL_INTRA / HOP_MODEL_INTER */
	int kind;       /* the flat collective it runs */
	size_t bytes;   /* as hop_model_predict() counts them */
	int n;          /* ranks of its group */
	int rail;       /* L rails share the inter link */
};

static struct phase ph(int cls, int kind, double bytes, int n, int rail)
{
	struct phase p = { cls, kind, (size_t)bytes, n, rail };

	return p;
}

int hop_model_hier_pieces(size_t bytes, int per_host)
{
	double slices = (double)bytes / (per_host > 1 ? per_host : 1) /
			HOP_MODEL_HIER_PIECE;

	if (slices < 2)
		return 1;
	return slices >= HOP_MODEL_HIER_MAX_PIECES ? HOP_MODEL_HIER_MAX_PIECES
						   : (int)slices;
}

/* How many pieces the hierarchical @kind of @bytes runs in on @pl (the
 * rail-parallel AllReduce; one through the leaders). */
static int pieces_of(int kind, size_t bytes, const struct hop_model_place *pl,
		     int leaders)
{
	if (kind != HOP_COLL_ALLREDUCE || !pl->uniform || pl->lmax < 2 ||
	    leaders)
		return 1;
	return hop_model_hier_pieces(bytes, pl->lmax);
}

/* The phases of the hierarchical @kind on @pl (hier-shape: src/coll's
 * builder runs the same); returns how many, 0 when it has none. */
static int phases_of(int kind, size_t bytes, const struct hop_model_place *pl,
		     int leaders, struct phase *p)
{
	const int A = HOP_MODEL_INTRA, E = HOP_MODEL_INTER;
	int H = pl->nhosts, L = pl->lmax, N = pl->nranks;
	int rails = pl->uniform && L > 1 &&
		    !(leaders && kind == HOP_COLL_ALLREDUCE);
	double m = (double)bytes, slice = ceil(m / L);

	switch (kind) {
	case HOP_COLL_ALLREDUCE:
		if (rails) {
			p[0] = ph(A, HOP_COLL_REDUCESCATTER, slice, L, 0);
			p[1] = ph(E, HOP_COLL_ALLREDUCE, slice, H, 1);
			p[2] = ph(A, HOP_COLL_ALLGATHER, slice, L, 0);
		} else {
			p[0] = ph(A, HOP_COLL_REDUCE, m, L, 0);
			p[1] = ph(E, HOP_COLL_ALLREDUCE, m, H, 0);
			p[2] = ph(A, HOP_COLL_BROADCAST, m, L, 0);
		}
		return 3;
	case HOP_COLL_BROADCAST:
		p[0] = ph(E, HOP_COLL_BROADCAST, m, H, 0);
		p[1] = ph(A, HOP_COLL_BROADCAST, m, L, 0);
		return 2;
	case HOP_COLL_REDUCE:
		p[0] = ph(A, HOP_COLL_REDUCE, m, L, 0);
		p[1] = ph(E, HOP_COLL_REDUCE, m, H, 0);
		return 2;
	case HOP_COLL_ALLGATHER:        /* @bytes: one rank's block */
		if (rails) {
			p[0] = ph(A, HOP_COLL_ALLGATHER, m, L, 0);
			p[1] = ph(E, HOP_COLL_ALLGATHER, m * L, H, 1);
			return 2;
		}
		p[0] = ph(A, HOP_COLL_GATHER, m, L, 0);
		p[1] = ph(E, HOP_COLL_ALLGATHERV, m * L, H, 0);
		p[2] = ph(A, HOP_COLL_BROADCAST, m * N, L, 0);
		return 3;
	case HOP_COLL_REDUCESCATTER:    /* @bytes: one rank's block */
		if (rails) {
			p[0] = ph(A, HOP_COLL_REDUCESCATTER, m * H, L, 0);
			p[1] = ph(E, HOP_COLL_REDUCESCATTER, m, H, 1);
			return 2;
		}
		p[0] = ph(A, HOP_COLL_REDUCE, m * N, L, 0);
		p[1] = ph(E, HOP_COLL_REDUCESCATTERV, m * L, H, 0);
		p[2] = ph(A, HOP_COLL_SCATTER, m, L, 0);
		return 3;
	case HOP_COLL_BARRIER:  /* arrival and release inside, one among hosts */
		p[0] = ph(A, HOP_COLL_BARRIER, 0, L, 0);
		p[1] = ph(E, HOP_COLL_BARRIER, 0, H, 0);
		p[2] = ph(A, HOP_COLL_BARRIER, 0, L, 0);
		return 3;
	}
	return 0;
}

static int place_ok(const struct hop_model_place *pl)
{
	return pl && pl->nranks >= 1 && pl->nhosts >= 1 &&
	       pl->nhosts <= pl->nranks && pl->lmax >= 1 &&
	       pl->lmax <= pl->nranks &&
	       (long)pl->nhosts * pl->lmax >= pl->nranks;
}

int hop_model_hier_applies(int kind, const struct hop_model_place *pl)
{
	struct phase p[MAX_PHASES];

	return place_ok(pl) && pl->nhosts > 1 && pl->lmax > 1 &&
	       phases_of(kind, 0, pl, 0, p) > 0;
}

/*
 * How many steps of phase @p by @algo exchange a message larger than
 * @chunk with one partner (both directions of a pair at once); 0 for
 * algorithms that send to one rank while receiving from another (ring,
 * trees, chains). Recursive doubling swaps the whole vector every step
 * (an AllGather's doubles up to half of it); Rabenseifner halves it in
 * log2 n steps and doubles it back in as many; recursive halving halves
 * it only.
 */
static int exchange_steps(const struct phase *p, int algo, double chunk)
{
	int per_rank = hop_model_per_rank(p->kind), steps = 0;
	int levels = hop_model_ceil_log2(p->n);
	double whole = (double)p->bytes * (per_rank ? p->n : 1);
	for (int i = 1; i <= levels; i++) {
		double half = ldexp(whole, -i);

		switch (algo) {
		case HOP_ALGO_RD:
			steps += (per_rank ? ldexp(whole, i - 1 - levels)
					   : whole) > chunk;
			break;
		case HOP_ALGO_RABENSEIFNER:
			steps += 2 * (half > chunk);
			break;
		case HOP_ALGO_HALVING:
			steps += half > chunk;
			break;
		}
	}
	return steps;
}

/*
 * What inter-host phase @p by @algo waits beyond the formula: each
 * exchange of a message larger than max_chunk starts with a rendezvous
 * whose clear-to-send the partner answers while its own side of the
 * exchange streams, so the answer reaches this rank behind up to one
 * max_chunk the partner already queued on the same ordered connection
 * (the tcp provider bounds what is queued ahead of a post to about that,
 * docs/providers.md). Both directions then overlap. On 1 Gbit/s tcp links
 * between emulated hosts (docs/results/2026-12-05-tcp-duplex.md):
 * recursive doubling of 16 MiB on 2 hosts 150-154 ms against 141 ms for
 * the bytes of one direction at the link's rate, Rabenseifner of 16 MiB
 * on 4 hosts (4 such exchanges) 250 ms against the ring's 216 ms. Chunks
 * within max_chunk (the pipelined algorithms, hop_model_best_chunks())
 * wait for nothing that long; inside a host shared memory has no such
 * queue.
 */
static double exchange_wait(const struct phase *p, int algo,
			    const struct hop_model_link *l)
{
	if (p->cls != HOP_MODEL_INTER || l->max_chunk <= 0 || l->beta <= 0)
		return 0;
	return exchange_steps(p, algo, l->max_chunk) * l->max_chunk / l->beta;
}

/* Time of phase @p by @algo on @l at its best chunk count. */
static double phase_time(const struct phase *p, int algo,
			 const struct hop_model_link *l, long *chunks)
{
	long k = hop_model_best_chunks(p->kind, algo, p->bytes, p->n, l);

	if (chunks)
		*chunks = k;
	return hop_model_predict(p->kind, algo, p->bytes, p->n, l, k) +
	       exchange_wait(p, algo, l);
}

/* Class @cls's phases by @algo: their sum, NAN when one cannot run it. */
static double class_time(const struct phase *p, int np, int cls, int algo,
			 const struct hop_model_link *l, long *chunks)
{
	double t = 0;

	for (int i = 0; i < np; i++) {
		if (p[i].cls != cls)
			continue;
		if (!hop_model_algo_valid(p[i].kind, algo))
			return NAN;
		t += phase_time(&p[i], algo, l, chunks);
	}
	return t;
}

/* The algorithm of class @cls's phases (@want, or the fastest every one
 * of them can run when @want is AUTO; table order on ties); its time. */
static double class_best(const struct phase *p, int np, int cls, int want,
			 const struct hop_model_link *l, int *algo,
			 long *chunks)
{
	int cand[HOP_ALGO_COUNT], nc = 0;
	double best = NAN;

	for (int i = 0; i < np && !nc; i++)
		if (p[i].cls == cls)
			nc = hop_model_algos(p[i].kind, cand, HOP_ALGO_COUNT);
	if (!nc) {                      /* no phase of this class */
		*algo = HOP_ALGO_AUTO;
		return 0;
	}
	for (int i = 0; i < nc; i++) {
		long k = 1;
		double t;

		if (cand[i] == HOP_ALGO_HIER ||
		    (want != HOP_ALGO_AUTO && cand[i] != want))
			continue;
		t = class_time(p, np, cls, cand[i], l, &k);
		if (!isnan(t) && (isnan(best) || t < best)) {
			best = t;
			*algo = cand[i];
			if (chunks)
				*chunks = k;
		}
	}
	return best;
}

/* The pieced form's time with the phase algorithms @algo: one piece's
 * phases (the largest piece), then the slowest of them once for each
 * further piece, as the pipeline overlaps the rest. */
static double pieces_time(int kind, size_t bytes, int pieces,
			  const struct hop_model_place *pl,
			  const struct hop_model_link cl[HOP_MODEL_CLASSES],
			  const int algo[HOP_MODEL_CLASSES])
{
	struct phase p[MAX_PHASES];
	/* only the rails run in pieces */
	int np = phases_of(kind, (bytes + pieces - 1) / pieces, pl, 0, p);
	double t = 0, slowest = 0;

	for (int i = 0; i < np; i++) {
		double ti = phase_time(&p[i], algo[p[i].cls], &cl[p[i].cls],
				       NULL);

		t += ti;
		slowest = ti > slowest ? ti : slowest;
	}
	return t + (pieces - 1) * slowest;
}

/* The hierarchical @kind in one form (@leaders: through one leader per
 * host; else the rails where @pl has them): hop_model_hier_predict(). */
static double form_time(int kind, size_t bytes,
			const struct hop_model_place *pl,
			const struct hop_model_link links[HOP_MODEL_CLASSES],
			const int sub[HOP_MODEL_CLASSES], int leaders,
			int sub_out[HOP_MODEL_CLASSES], long *chunks_out)
{
	struct phase p[MAX_PHASES];
	struct hop_model_link cl[HOP_MODEL_CLASSES];
	int np, algo[HOP_MODEL_CLASSES], pieces;
	long k = 1;
	double t = 0;

	np = phases_of(kind, bytes, pl, leaders, p);
	cl[HOP_MODEL_INTRA] = links[HOP_MODEL_INTRA];
	cl[HOP_MODEL_INTER] = links[HOP_MODEL_INTER];
	for (int i = 0; i < np; i++)    /* rails share the host's link */
		if (p[i].rail)
			cl[HOP_MODEL_INTER].beta /= pl->lmax;
	/* the algorithms chosen on the whole message's phases: on 4 x 2
	 * emulated hosts (1 Gbit/s) the pieced form with Rabenseifner
	 * across took 115-122 ms at 8 MiB and 650 ms at 32 MiB, with the
	 * ring 107 and 440 ms, as the unpieced form chose */
	for (int c = 0; c < HOP_MODEL_CLASSES; c++)
		t += class_best(p, np, c, sub[c], &cl[c], &algo[c],
				c == HOP_MODEL_INTER ? &k : NULL);
	pieces = pieces_of(kind, bytes, pl, leaders);
	if (pieces > 1 && !isnan(t))
		t = pieces_time(kind, bytes, pieces, pl, cl, algo);
	for (int c = 0; c < HOP_MODEL_CLASSES; c++)
		sub_out[c] = algo[c];
	*chunks_out = k;
	return t;
}

int hop_model_hier_has_forms(int kind, const struct hop_model_place *pl)
{
	return kind == HOP_COLL_ALLREDUCE && place_ok(pl) && pl->uniform &&
	       pl->lmax > 1 && pl->nhosts > 1;
}

/*
 * May HOP_MODEL_FORM_AUTO take the leaders for @bytes: the rails would
 * run in one piece, and the leaders' exchange between hosts is one
 * rendezvous chunk (@inter's max_chunk). The model prices both forms'
 * bytes between hosts alike, but the rails send L times the messages
 * there (4 x 2 emulated hosts, 1 Gbit/s: 8 B 177-280 us by the leaders
 * against 264-398 by the rails, 256 KiB 3.3 against 3.6 ms). Above one
 * chunk, one connection per pair of hosts carries the leaders' chunks
 * and the rails split them (200 Mbit/s, 2 MiB: 2 x 2 hosts 130 ms
 * against 88, 4 x 2 hosts 194 against 155); from 2 MiB a rail their
 * pieces overlap the phases too (1 Gbit/s, 8 MiB: 109 ms against 121).
 */
static int leaders_may_run(int kind, size_t bytes,
			   const struct hop_model_place *pl,
			   const struct hop_model_link *inter)
{
	return pieces_of(kind, bytes, pl, 0) == 1 &&
	       (inter->max_chunk <= 0 || (double)bytes <= inter->max_chunk);
}

double hop_model_hier_predict_form(int kind, size_t bytes,
				   const struct hop_model_place *pl,
				   const struct hop_model_link links[HOP_MODEL_CLASSES],
				   const int sub[HOP_MODEL_CLASSES], int form,
				   int sub_out[HOP_MODEL_CLASSES],
				   long *chunks_out, int *leaders_out)
{
	int algo[HOP_MODEL_CLASSES], lalgo[HOP_MODEL_CLASSES], leaders = 0;
	int two = hop_model_hier_has_forms(kind, pl);
	long k = 1, lk = 1;
	double t = NAN, tl;

	if (!hop_model_hier_applies(kind, pl) || !links || !sub ||
	    hop_model_link_check(&links[0], NULL, 0) ||
	    hop_model_link_check(&links[1], NULL, 0))
		return NAN;
	if (!two || form != HOP_MODEL_FORM_LEADERS)
		t = form_time(kind, bytes, pl, links, sub, 0, algo, &k);
	/* auto: the leaders where they may run (leaders_may_run()) and the
	 * rails are not priced clearly lower (HOP_MODEL_HIER_TIE) */
	if (two && (form == HOP_MODEL_FORM_LEADERS ||
		    (form == HOP_MODEL_FORM_AUTO &&
		     leaders_may_run(kind, bytes, pl,
				     &links[HOP_MODEL_INTER])))) {
		tl = form_time(kind, bytes, pl, links, sub, 1, lalgo, &lk);
		if (form == HOP_MODEL_FORM_LEADERS ||
		    (!isnan(tl) &&
		     (isnan(t) || tl <= t * (1 + HOP_MODEL_HIER_TIE)))) {
			t = tl;
			k = lk;
			leaders = 1;
			for (int c = 0; c < HOP_MODEL_CLASSES; c++)
				algo[c] = lalgo[c];
		}
	}
	if (sub_out)
		for (int c = 0; c < HOP_MODEL_CLASSES; c++)
			sub_out[c] = algo[c];
	if (chunks_out)
		*chunks_out = k;
	if (leaders_out)
		*leaders_out = leaders;
	return t;
}

double hop_model_hier_predict(int kind, size_t bytes,
			      const struct hop_model_place *pl,
			      const struct hop_model_link links[HOP_MODEL_CLASSES],
			      const int sub[HOP_MODEL_CLASSES],
			      int sub_out[HOP_MODEL_CLASSES], long *chunks_out)
{
	return hop_model_hier_predict_form(kind, bytes, pl, links, sub,
					   HOP_MODEL_FORM_RAILS, sub_out,
					   chunks_out, NULL);
}

void hop_model_choose_flat(int kind, size_t bytes, int n, int forced,
			   const struct hop_model_link *l,
			   struct hop_model_choice *out)
{
	out->sub_algo[0] = out->sub_algo[1] = HOP_ALGO_AUTO;
	out->hier_leaders = 0;
	out->hier_sub[0] = out->hier_sub[1] = HOP_ALGO_AUTO;
	out->hier = NAN;
	if (forced == HOP_ALGO_AUTO) {
		hop_model_choose(kind, bytes, n, l, &out->algo, &out->chunks,
				 &out->flat);
	} else {
		out->algo = forced;
		out->chunks = hop_model_best_chunks(kind, forced, bytes, n, l);
		out->flat = hop_model_predict(kind, forced, bytes, n, l,
					      out->chunks);
	}
	out->predicted = out->flat;
	out->chunk_bytes = hop_model_sched_chunk(kind, out->algo, bytes, n,
						 out->chunks);
}

int hop_model_algo_shares_host_link(int algo)
{
	return algo == HOP_ALGO_RD || algo == HOP_ALGO_RABENSEIFNER ||
	       algo == HOP_ALGO_BRUCK || algo == HOP_ALGO_HALVING ||
	       algo == HOP_ALGO_PAIRWISE || algo == HOP_ALGO_DISSEMINATION;
}

double hop_model_predict_flat_hosts(int kind, int algo, size_t bytes,
				    const struct hop_model_place *pl,
				    const struct hop_model_link links[HOP_MODEL_CLASSES],
				    long chunks, int inplace)
{
	/* recursive doubling pairs ranks in host order whatever the
	 * placement; the tree needs the ranks in host order already */
	if (!place_ok(pl) || !links || !pl->uniform ||
	    (!pl->blocked && algo != HOP_ALGO_RD) ||
	    pl->nhosts < 2 || hop_model_link_check(&links[0], NULL, 0) ||
	    hop_model_link_check(&links[1], NULL, 0))
		return NAN;
	return hop_model_form_hosts(kind, algo, bytes, pl->nranks,
				    &links[HOP_MODEL_INTRA],
				    &links[HOP_MODEL_INTER], pl->lmax, chunks,
				    inplace);
}

/* The flat @algo priced edge by edge on uniform host-ordered ranks
 * (hop_model_form_hosts()): 1 with @out filled, or 0 when @pl is not such
 * a placement or the model has no such form of @algo. */
static int choose_flat_hosts(int kind, size_t bytes,
			     const struct hop_model_place *pl,
			     const struct hop_model_link links[HOP_MODEL_CLASSES],
			     int algo, struct hop_model_choice *out)
{
	long k;

	if (isnan(hop_model_predict_flat_hosts(kind, algo, bytes, pl, links,
					       1, 1)))
		return 0;
	k = hop_model_best_chunks_hosts(kind, algo, bytes, pl->nranks,
					&links[HOP_MODEL_INTRA],
					&links[HOP_MODEL_INTER], pl->lmax);
	out->algo = algo;
	out->sub_algo[0] = out->sub_algo[1] = HOP_ALGO_AUTO;
	out->hier_leaders = 0;
	out->hier_sub[0] = out->hier_sub[1] = HOP_ALGO_AUTO;
	out->hier = NAN;
	out->chunks = k;
	out->flat = out->predicted = hop_model_predict_flat_hosts(kind, algo,
								  bytes, pl,
								  links, k, 1);
	out->chunk_bytes = hop_model_sched_chunk(kind, algo, bytes,
						 pl->nranks, k);
	return 1;
}

void hop_model_choose_flat_place(int kind, size_t bytes,
				 const struct hop_model_place *pl,
				 const struct hop_model_link links[HOP_MODEL_CLASSES],
				 int forced, struct hop_model_choice *out)
{
	const struct hop_model_link *inter = &links[HOP_MODEL_INTER];
	struct hop_model_link shared = *inter;
	struct hop_model_choice c;
	int cand[HOP_ALGO_COUNT], nc = 1;

	if (pl->nhosts <= 1 || pl->lmax <= 1) {
		hop_model_choose_flat(kind, bytes, pl->nranks, forced,
				      &links[pl->nhosts > 1], out);
		return;
	}
	shared.beta /= pl->lmax;
	/* the forced algorithm, or every flat one, each on its own link;
	 * table order breaks ties */
	cand[0] = forced;
	if (forced == HOP_ALGO_AUTO)
		nc = hop_model_algos(kind, cand, HOP_ALGO_COUNT);
	out->algo = -1;
	for (int i = 0; i < nc; i++) {
		if (cand[i] == HOP_ALGO_HIER)
			continue;
		if (!choose_flat_hosts(kind, bytes, pl, links, cand[i], &c))
			hop_model_choose_flat(kind, bytes, pl->nranks, cand[i],
					      hop_model_algo_shares_host_link(
						      cand[i]) ? &shared : inter,
					      &c);
		if (out->algo < 0 || c.predicted < out->predicted)
			*out = c;
	}
}

/* The chunk the hierarchical schedule is given: its inter-host phase's. */
static size_t hier_chunk(int kind, size_t bytes,
			 const struct hop_model_place *pl, int leaders,
			 int algo, long k)
{
	struct phase p[MAX_PHASES];
	int np = phases_of(kind, bytes, pl, leaders, p);

	for (int i = 0; i < np; i++)
		if (p[i].cls == HOP_MODEL_INTER)
			return hop_model_sched_chunk(p[i].kind, algo, p[i].bytes,
						     p[i].n, k);
	return hop_model_sched_chunk(kind, HOP_ALGO_AUTO, bytes, pl->nranks, 1);
}

int hop_model_choose_place(int kind, size_t bytes,
			   const struct hop_model_place *pl,
			   const struct hop_model_link links[HOP_MODEL_CLASSES],
			   int forced, struct hop_model_choice *out)
{
	return hop_model_choose_place_form(kind, bytes, pl, links, forced,
					   HOP_MODEL_FORM_AUTO, out);
}

int hop_model_choose_place_form(int kind, size_t bytes,
				const struct hop_model_place *pl,
				const struct hop_model_link links[HOP_MODEL_CLASSES],
				int forced, int form,
				struct hop_model_choice *out)
{
	static const int auto2[HOP_MODEL_CLASSES] = { HOP_ALGO_AUTO,
						      HOP_ALGO_AUTO };
	int sub[HOP_MODEL_CLASSES], leaders = 0;
	long k = 1;
	double th;

	if (!out || !hop_model_kind_name(kind) || !place_ok(pl) || !links ||
	    hop_model_link_check(&links[0], NULL, 0) ||
	    hop_model_link_check(&links[1], NULL, 0) ||
	    (forced != HOP_ALGO_AUTO && forced != HOP_ALGO_HIER &&
	     !hop_model_algo_valid(kind, forced)))
		return HOP_ERR_INVALID_ARG;
	out->sub_algo[0] = out->sub_algo[1] = HOP_ALGO_AUTO;
	out->hier_leaders = 0;
	out->hier_sub[0] = out->hier_sub[1] = HOP_ALGO_AUTO;
	out->hier = NAN;
	out->flat = NAN;
	if (forced != HOP_ALGO_HIER)
		hop_model_choose_flat_place(kind, bytes, pl, links, forced, out);
	if (forced != HOP_ALGO_AUTO && forced != HOP_ALGO_HIER)
		return 0;
	th = hop_model_hier_predict_form(kind, bytes, pl, links, auto2, form,
					 sub, &k, &leaders);
	out->hier = th;
	if (!isnan(th)) {
		out->hier_sub[0] = sub[0];
		out->hier_sub[1] = sub[1];
		out->hier_leaders = leaders;
	}
	if (isnan(th)) {
		if (forced == HOP_ALGO_HIER)    /* runs as the flat form */
			hop_model_choose_flat_place(kind, bytes, pl, links,
						    HOP_ALGO_AUTO, out);
		return 0;
	}
	if (forced == HOP_ALGO_HIER || th < out->flat) {
		out->algo = HOP_ALGO_HIER;
		out->sub_algo[0] = sub[0];
		out->sub_algo[1] = sub[1];
		out->chunks = k;
		out->predicted = th;
		out->chunk_bytes = hier_chunk(kind, bytes, pl, leaders, sub[1],
					      k);
	}
	return 0;
}
