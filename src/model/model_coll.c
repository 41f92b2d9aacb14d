/*
 * model_coll.c - closed forms of the collective algorithms of src/coll.
 *
 * Notation (docs/model.md derives each form): N ranks, m bytes, a = alpha
 * (a message above the link's eager size costs 3a: fa()), b = beta,
 * g = gamma, d = duplex, bd = b / d (a rank sending and receiving at
 * once), L = ceil(log2 N), p = the largest power of two <= N, lp =
 * log2 p, k = chunks. A pipeline of stages s_1..s_S over k chunks takes
 * sum(s_i) + (k - 1) max(s_i'), where s_i' is the stage in steady state
 * (sending and receiving at once, so at bd). m is the whole vector: for
 * allgather and reducescatter N times the per-rank @bytes.
 */
#include "model/model.h"
#include "model/model_form.h"
#include "model/model_int.h"

#include <math.h>

void hop_form_init(struct form *f, int kind, size_t bytes, int nranks,
		      const struct hop_model_link *l, int inplace)
{
	int p = 1, lp = 0, L = hop_model_ceil_log2(nranks);

	while (p * 2 <= nranks) {
		p *= 2;
		lp++;
	}
	f->nranks = nranks;
	f->n = nranks;
	f->m = (double)bytes;
	/* alltoall(v): @bytes per peer, priced like a per-rank block */
	if (hop_model_per_rank(kind) || kind == HOP_COLL_ALLTOALL ||
	    kind == HOP_COLL_ALLTOALLV)
		f->m *= nranks;     /* per-rank block -> the whole vector */
	f->inplace = inplace;
	f->l = l;
	f->li = NULL;
	f->hl = 0;
	f->a = l->alpha;
	f->b = l->beta;
	f->d = l->duplex >= 1 ? l->duplex : 1;
	f->bd = l->beta / f->d;
	f->g = l->gamma;
	f->cp = inplace ? 0 : f->g * f->m;
	f->L = L;
	f->lp = lp;
	f->p = p;
}

/*
 * When the p ranks of a recursive algorithm start. Every one first spends
 * @copy (the input copied to the output, out of place); with the fold, an
 * extra rank meanwhile sends its vector to its partner (a + m/b), which
 * reduces it (g m). Each step pairs every rank with another, so every
 * rank's end waits for the latest start.
 */
static double fold_start(const struct form *f, double copy)
{
	if (f->nranks == (int)f->p)
		return copy;
	return max2(copy, fa(f, f->m) + f->m / f->b) + f->g * f->m;
}

/* With the fold, the partner returns @back bytes at the end. */
static double fold_end(const struct form *f, double back)
{
	return f->nranks == (int)f->p ? 0 : fa(f, back) + back / f->b;
}

/* ---- broadcast ---- */

static double bcast_flat(const struct form *f)
{
	return (f->n - 1) * (fa(f, f->m) + f->m / f->b);
}

static double bcast_tree(const struct form *f)
{
	return f->L * (fa(f, f->m) + f->m / f->b);
}

/* A chain of h = N-1 hops, k chunks: h stages to fill, k-1 periods in
 * which a relay receives one chunk while it forwards the previous one. */
static double bcast_chain(const struct form *f, double k)
{
	double h = f->n - 1, c = f->m / k, a = fa(f, c);

	return h * (a + c / f->b) + (k - 1) * (a + c / f->bd);
}

/* ---- reduce ---- */

/* The root receives N-1 vectors one after the other over its link and
 * reduces each as it lands: a two-stage pipeline (receive, reduce).
 * Out of place, the first reduction also waits for the root's copy of
 * its own vector (g m), made meanwhile. */
static double reduce_flat(const struct form *f)
{
	double s = fa(f, f->m) + f->m / f->b, r = f->g * f->m;

	return max2(max2(s, f->cp) + (f->n - 1) * r, (f->n - 1) * s + r);
}

/* N-1 transfer stages and N-1 reduce stages, k chunks. Out of place,
 * the root's first fold also waits for its copy of the chunk (g c). */
static double reduce_chain(const struct form *f, double k)
{
	double c = f->m / k, a = fa(f, c), s = a + c / f->b, r = f->g * c;
	double first = max2((f->n - 1) * s + (f->n - 2) * r, f->cp / k);

	return first + r + (k - 1) * max2(a + c / f->bd, r);
}

/* ---- allreduce ---- */

/*
 * Ring: reduce-scatter then allgather, 2(N-1) steps of one block (m/N) in
 * k chunks of t = a + m/(N k bd) each; a chunk is reduced (r = g m/(N k))
 * before the next step forwards it. While r <= (k-1) t the link streams
 * and every reduction hides behind the other chunks; otherwise each
 * reduce-scatter step waits t + r for its first chunk.
 *   T = (N-1) [t + max(r, (k-1) t)] + (N-1) k t
 * k = 1: 2(N-1)(a + m/(N bd)) + (N-1)/N g m, the textbook form.
 */
static double allreduce_ring(const struct form *f, double k)
{
	double c = f->m / (f->n * k), t = fa(f, c) + c / f->bd, r = f->g * c;
	double step = t + max2(r, (k - 1) * t);
	/* out of place, a chunk's first reduction also waits for the copy
	 * of the rank's own chunk (g c, from the start): step 1 begins at
	 * max(max(t, g c) + r, k t) */
	double first = max2(max2(t, f->cp / (f->n * k)) + r, k * t);

	return first + (f->n - 2) * step + (f->n - 1) * k * t;
}

/* Recursive doubling: lp exchanges of the whole vector, each reduced. */
static double allreduce_rd(const struct form *f)
{
	return fold_start(f, f->cp) +
	       f->lp * (fa(f, f->m) + f->m / f->bd + f->g * f->m) +
	       fold_end(f, f->m);
}

/*
 * Recursive doubling on ranks in host order, f->hl on each host, N and hl
 * powers of two (the builder pairs positions in host order): the partner
 * at distance 2^j shares the host while 2^j < hl, so those steps run on
 * the intra link (f->li); the others cross between hosts, all hl ranks of
 * a host at once, each at beta_inter / hl.
 */
double hop_form_allreduce_rd_hosts(const struct form *f)
{
	double t = f->cp;

	for (int j = 0; j < f->lp; j++) {
		int inside = (1L << j) < f->hl;
		const struct hop_model_link *l = inside ? f->li : f->l;
		double d = l->duplex >= 1 ? l->duplex : 1;
		double bd = l->beta / d / (inside ? 1 : f->hl);

		t += hop_model_msg_alpha(l, f->m) + f->m / bd + f->g * f->m;
	}
	return t;
}

/* Rabenseifner: recursive-halving reduce-scatter then recursive-doubling
 * allgather among p ranks: 2 lp a + 2 (p-1)/p m/bd + (p-1)/p g m. Step j
 * of each half moves m/2^j, so its alpha is that message's. */
static double allreduce_rabenseifner(const struct form *f)
{
	double frac = (f->p - 1) / f->p, alphas = 0;

	for (int j = 1; j <= f->lp; j++)
		alphas += 2 * fa(f, f->m / (double)(1L << j));
	return fold_start(f, f->cp) + alphas +
	       2 * frac * f->m / f->bd + frac * f->g * f->m + fold_end(f, f->m);
}

/* ---- allgather and reducescatter (m: the whole vector, N blocks) ---- */

/* Out of place, the copy of the own block (g m/N) runs beside the
 * transfers, which send it from the input. */
static double allgather_ring(const struct form *f)
{
	double blk = f->m / f->n;

	return max2((f->n - 1) * (fa(f, blk) + blk / f->bd), f->cp / f->n);
}

/* Bruck: L steps; N-1 blocks of m/N move in all. Step j sends min(2^j,
 * N - 2^j) blocks; a rank whose blocks wrap past rank N-1 sends them as
 * two messages, and the last rank wraps whenever a step sends more than
 * one block: one extra alpha per such step. With an eager size, a step
 * costs the alphas of its slowest rank: one message of cnt blocks, or
 * the two pieces of a wrapped run, each a rendezvous when larger than the
 * eager size (the split that makes the most of them). */
static double bruck_step_alpha(const struct form *f, int cnt)
{
	double blk = f->m / f->n, whole = fa(f, cnt * blk);
	int e = f->l->eager > 0 ? (int)fmin(f->l->eager / blk, cnt) : cnt;
	int nrndv = cnt >= 2 * e + 2 ? 2 : cnt >= e + 2 ? 1 : 0;

	if (cnt < 2)
		return whole;
	return max2(whole, (2 + nrndv * HOP_MODEL_RNDV_ALPHAS) * f->a);
}

static double allgather_bruck(const struct form *f)
{
	double alphas = 0;

	for (int d = 1; d < f->nranks; d *= 2)
		alphas += bruck_step_alpha(f, d < f->nranks - d ? d
							 : f->nranks - d);
	/* out of place the own block is copied before the first send */
	return f->cp / f->n + alphas + (f->n - 1) / f->n * f->m / f->bd;
}

/* Ring reduce-scatter: N-1 steps of one block in k chunks, each chunk
 * reduced on arrival; the last reduction ends it (see allreduce_ring).
 *   T = (N-2) [t + max(r, (k-1) t)] + k t + r */
static double reducescatter_ring(const struct form *f, double k)
{
	double c = f->m / (f->n * k), t = fa(f, c) + c / f->bd, r = f->g * c;

	/* out of place, the last step's reductions wait for the copies of
	 * the own block's chunks (g c each; they start with the ring and,
	 * on the forms' machine, do not contend: docs/model.md) */
	return max2((f->n - 2) * (t + max2(r, (k - 1) * t)) + k * t,
		    f->cp / (f->n * k)) + r;
}

/*
 * Recursive halving among p ranks. With the fold, new rank i < rem = N-p
 * owns two blocks (its own and its extra rank's), so the halves are
 * unequal: at step j (1..lp) a rank keeps the blocks of p/2^j new ranks,
 * and new rank 0 keeps the most, p/2^j + min(rem, p/2^j) blocks of m/N,
 * at every step. Its steps are the critical path: a rank's step j waits
 * for its partner's step j-1, whose kept range was the same, so the end
 * is the latest start plus new rank 0's steps. At the end every rank
 * copies its block to the output (g m/N) while the partner of an extra
 * rank returns that rank's block (a + (m/N)/b).
 */
static double reducescatter_halving(const struct form *f)
{
	double blk = f->m / f->n, kept = 0, alphas = 0, end = f->g * blk;
	int rem = f->nranks - (int)f->p;

	for (int w = (int)f->p / 2; w >= 1; w /= 2) {
		int step = w + (rem < w ? rem : w);   /* blocks kept and sent */

		kept += step;
		alphas += fa(f, step * blk);
	}
	return fold_start(f, 0) + alphas +
	       kept * blk * (1 / f->bd + f->g) + max2(end, fold_end(f, blk));
}

double hop_model_form(int kind, int algo, size_t bytes, int nranks,
		      const struct hop_model_link *l, long chunks, int inplace)
{
	struct form f;
	double k = (double)chunks;

	hop_form_init(&f, kind, bytes, nranks, l, inplace);
	switch (kind) {
	case HOP_COLL_BROADCAST:
		switch (algo) {
		case HOP_ALGO_FLAT: return bcast_flat(&f);
		case HOP_ALGO_TREE: return bcast_tree(&f);
		case HOP_ALGO_CHAIN: return bcast_chain(&f, k);
		}
		break;
	case HOP_COLL_REDUCE:
		switch (algo) {
		case HOP_ALGO_FLAT: return reduce_flat(&f);
		case HOP_ALGO_TREE: return hop_form_reduce_tree(&f);
		case HOP_ALGO_CHAIN: return reduce_chain(&f, k);
		}
		break;
	case HOP_COLL_ALLREDUCE:
		switch (algo) {
		case HOP_ALGO_RING: return allreduce_ring(&f, k);
		case HOP_ALGO_TREE: return hop_form_allreduce_tree(&f, k);
		case HOP_ALGO_DBTREE: return hop_form_allreduce_dbtree(&f, k);
		case HOP_ALGO_RD: return allreduce_rd(&f);
		case HOP_ALGO_RABENSEIFNER: return allreduce_rabenseifner(&f);
		}
		break;
	case HOP_COLL_ALLGATHER:
		switch (algo) {
		case HOP_ALGO_RING: return allgather_ring(&f);
		case HOP_ALGO_BRUCK: return allgather_bruck(&f);
		}
		break;
	case HOP_COLL_REDUCESCATTER:
		switch (algo) {
		case HOP_ALGO_RING: return reducescatter_ring(&f, k);
		case HOP_ALGO_HALVING: return reducescatter_halving(&f);
		}
		break;
	case HOP_COLL_BARRIER:
		if (algo == HOP_ALGO_DISSEMINATION)
			return hop_form_barrier(&f);
		break;
	case HOP_COLL_ALLTOALL:
		if (algo == HOP_ALGO_BRUCK)
			return hop_form_alltoall_bruck(&f);
		/* fall through */
	case HOP_COLL_ALLTOALLV:
		if (algo == HOP_ALGO_PAIRWISE)
			return hop_form_alltoall_pairwise(&f, kind == HOP_COLL_ALLTOALL
						      && k > 1 ? k : 1);
		break;
	case HOP_COLL_GATHER:
	case HOP_COLL_SCATTER:
		if (algo == HOP_ALGO_FLAT)
			return hop_form_gather_flat(&f);
		if (algo == HOP_ALGO_TREE)
			return hop_form_gather_tree(&f);
		break;
	/* the v-variants as their even forms at the largest block (the
	 * caller's @bytes): every step of the ring waits for it */
	case HOP_COLL_ALLGATHERV:
		if (algo == HOP_ALGO_RING)
			return allgather_ring(&f);
		break;
	case HOP_COLL_REDUCESCATTERV:
		if (algo == HOP_ALGO_RING)
			return reducescatter_ring(&f, k);
		break;
	}
	return NAN;
}
