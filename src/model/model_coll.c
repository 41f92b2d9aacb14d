/*
 * model_coll.c - closed forms of the collective algorithms of src/coll.
 *
 * Notation (docs/model.md derives each form): N ranks, m bytes, a = alpha,
 * b = beta, g = gamma, d = duplex, bd = b / d (a rank sending and receiving
 * at once), L = ceil(log2 N), p = the largest power of two <= N, lp =
 * log2 p, k = chunks. A pipeline of stages s_1..s_S over k chunks takes
 * sum(s_i) + (k - 1) max(s_i'), where s_i' is the stage in steady state
 * (sending and receiving at once, so at bd). m is the whole vector: for
 * allgather and reducescatter N times the per-rank @bytes.
 */
#include "model/model.h"
#include "model/model_int.h"

#include <math.h>

struct form {
	double n, m, a, b, bd, g, d;
	int nranks;
	int L, lp;              /* ceil(log2 N), log2 p */
	double p;               /* largest power of two <= N */
};

static void form_init(struct form *f, int kind, size_t bytes, int nranks,
		      const struct hop_model_link *l)
{
	int p = 1, lp = 0, L = 0;

	while (p * 2 <= nranks) {
		p *= 2;
		lp++;
	}
	while ((1L << L) < nranks)
		L++;
	f->nranks = nranks;
	f->n = nranks;
	f->m = (double)bytes;
	if (kind == HOP_COLL_ALLGATHER || kind == HOP_COLL_REDUCESCATTER)
		f->m *= nranks;     /* per-rank block -> the whole vector */
	f->a = l->alpha;
	f->b = l->beta;
	f->d = l->duplex >= 1 ? l->duplex : 1;
	f->bd = l->beta / f->d;
	f->g = l->gamma;
	f->L = L;
	f->lp = lp;
	f->p = p;
}

static double max2(double x, double y)
{
	return x > y ? x : y;
}

/* Extra cost of folding N - p ranks onto the first p: an extra rank sends
 * its vector (a + m/b), its partner reduces it (g m) and, at the end,
 * returns @back bytes (a + back/b). */
static double fold(const struct form *f, double back)
{
	if (f->nranks == (int)f->p)
		return 0;
	return 2 * f->a + f->m / f->b + f->g * f->m + back / f->b;
}

/* ---- broadcast ---- */

static double bcast_flat(const struct form *f)
{
	return (f->n - 1) * (f->a + f->m / f->b);
}

static double bcast_tree(const struct form *f)
{
	return f->L * (f->a + f->m / f->b);
}

/* A chain of h = N-1 hops, k chunks: h stages to fill, k-1 periods in
 * which a relay receives one chunk while it forwards the previous one. */
static double bcast_chain(const struct form *f, double k)
{
	double h = f->n - 1, c = f->m / k;

	return h * (f->a + c / f->b) + (k - 1) * (f->a + c / f->bd);
}

/* ---- reduce ---- */

/* The root receives N-1 vectors one after the other over its link and
 * reduces each as it lands: a two-stage pipeline (receive, reduce). */
static double reduce_flat(const struct form *f)
{
	double s = f->a + f->m / f->b, r = f->g * f->m;

	return s + (f->n - 2) * max2(s, r) + r;
}

static double reduce_tree(const struct form *f)
{
	return f->L * (f->a + f->m / f->b + f->g * f->m);
}

/* N-1 transfer stages and N-1 reduce stages, k chunks. */
static double reduce_chain(const struct form *f, double k)
{
	double c = f->m / k, s = f->a + c / f->b, r = f->g * c;

	return (f->n - 1) * (s + r) + (k - 1) * max2(f->a + c / f->bd, r);
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
	double c = f->m / (f->n * k), t = f->a + c / f->bd, r = f->g * c;

	return (f->n - 1) * (t + max2(r, (k - 1) * t)) + (f->n - 1) * k * t;
}

/*
 * Tree: binomial reduce to rank 0 then binomial broadcast, pipelined in k
 * chunks. The first chunk climbs L levels (receive + reduce) and descends
 * L levels. After it, a chunk leaves the pipeline every (2L - 1) t': the
 * root's last child (the deepest subtree) sends chunk c+1 up only after
 * its own children's, while its port also forwards chunk c down; the
 * simulator of hop-model measures exactly this period on hop's schedule
 * (an earlier form, L t', assumed ideal overlap and was up to 70 % low).
 *   T = L (2t + r) + (k-1) max((2L-1) t', L r),  t = a + m/(k b),
 *   t' = a + m/(k bd), r = g m / k.
 */
static double allreduce_tree(const struct form *f, double k)
{
	double c = f->m / k, t = f->a + c / f->b, r = f->g * c;

	return f->L * (2 * t + r) +
	       (k - 1) * max2((2 * f->L - 1) * (f->a + c / f->bd), f->L * r);
}

/*
 * Double binary tree: two binary trees of depth D = floor(log2 N), each
 * reducing then broadcasting m/2 in k chunks; a rank is inner in at most
 * one tree. Inner nodes have c = 2 children (1 when N = 2). Per chunk of
 * each tree a rank sends and receives q = (c + 1 if D >= 2, else c) + 1
 * messages of m/(2k) and reduces c of them. Both trees run at once, so
 * every transfer is at bd.
 *   T = D c (2t + r) + (k-1) max(q t, c r),  t = a + m/(2 k bd),
 *   r = g m/(2k).
 */
static double allreduce_dbtree(const struct form *f, double k)
{
	double c = f->m / (2 * k), t = f->a + c / f->bd, r = f->g * c;
	double ch = f->nranks >= 3 ? 2 : 1, D = f->lp;
	double q = (D >= 2 ? ch + 1 : ch) + 1;

	return D * ch * (2 * t + r) + (k - 1) * max2(q * t, ch * r);
}

/* Recursive doubling: lp exchanges of the whole vector, each reduced. */
static double allreduce_rd(const struct form *f)
{
	return f->lp * (f->a + f->m / f->bd + f->g * f->m) + fold(f, f->m);
}

/* Rabenseifner: recursive-halving reduce-scatter then recursive-doubling
 * allgather among p ranks: 2 lp a + 2 (p-1)/p m/bd + (p-1)/p g m. */
static double allreduce_rabenseifner(const struct form *f)
{
	double frac = (f->p - 1) / f->p;

	return 2 * f->lp * f->a + 2 * frac * f->m / f->bd +
	       frac * f->g * f->m + fold(f, f->m);
}

/* ---- allgather and reducescatter (m: the whole vector, N blocks) ---- */

static double allgather_ring(const struct form *f)
{
	return (f->n - 1) * (f->a + f->m / (f->n * f->bd));
}

/* Bruck: L steps; N-1 blocks of m/N move in all. Step j sends min(2^j,
 * N - 2^j) blocks; a rank whose blocks wrap past rank N-1 sends them as
 * two messages, and the last rank wraps whenever a step sends more than
 * one block: one extra alpha per such step. */
static double allgather_bruck(const struct form *f)
{
	double steps = 0;

	for (int d = 1; d < f->nranks; d *= 2)
		steps += (d < f->nranks - d ? d : f->nranks - d) > 1 ? 2 : 1;
	return steps * f->a + (f->n - 1) / f->n * f->m / f->bd;
}

/* Ring reduce-scatter: N-1 steps of one block in k chunks, each chunk
 * reduced on arrival; the last reduction ends it (see allreduce_ring).
 *   T = (N-2) [t + max(r, (k-1) t)] + k t + r */
static double reducescatter_ring(const struct form *f, double k)
{
	double c = f->m / (f->n * k), t = f->a + c / f->bd, r = f->g * c;

	return (f->n - 2) * (t + max2(r, (k - 1) * t)) + k * t + r;
}

/* Recursive halving among p ranks; with the fold the extra rank's block
 * (m/N) comes back at the end. */
static double reducescatter_halving(const struct form *f)
{
	double frac = (f->p - 1) / f->p;

	return f->lp * f->a + frac * f->m / f->bd + frac * f->g * f->m +
	       fold(f, f->m / f->n);
}

static double barrier_dissemination(const struct form *f)
{
	return f->L * f->a;
}

double hop_model_form(int kind, int algo, size_t bytes, int nranks,
		      const struct hop_model_link *l, long chunks)
{
	struct form f;
	double k = (double)chunks;

	form_init(&f, kind, bytes, nranks, l);
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
		case HOP_ALGO_TREE: return reduce_tree(&f);
		case HOP_ALGO_CHAIN: return reduce_chain(&f, k);
		}
		break;
	case HOP_COLL_ALLREDUCE:
		switch (algo) {
		case HOP_ALGO_RING: return allreduce_ring(&f, k);
		case HOP_ALGO_TREE: return allreduce_tree(&f, k);
		case HOP_ALGO_DBTREE: return allreduce_dbtree(&f, k);
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
			return barrier_dissemination(&f);
		break;
	}
	return NAN;
}
