/*
 * model_tree.c - the closed forms of the tree algorithms of src/coll
 * (tree.c): the binomial Reduce and AllReduce and the double binary tree
 * AllReduce, evaluated node by node, and the binomial AllReduce and the
 * Broadcast and Reduce chains on ranks in host order with each edge on
 * its class's link. Notation: model_coll.c.
 */
#include "model/model.h"
#include "model/model_form.h"
#include "model/model_int.h"

#include <math.h>

/*
 * One chunk through a tree, node by node, as hop's schedule runs it
 * (tree.c): a node receives its children's partials in the order they
 * are ready (ties: child order), one at a time on its receive port (t
 * each); folds them in child order (r each, the first after @cp, the
 * copy of its own data to the accumulator, when it has one); sends the
 * result up. Down, it sends to its children one after the other, the
 * last child (the largest subtree) first.
 */
#define TREE_MAXCH 32

struct tnode {
	double t, r, cp;        /* one chunk: transfer, reduction, copy */
	double up[32], down[32]; /* complete subtree of height h */
	/* binomial trees over hosts: the transfer to or from child i (span
	 * 2^i), whose link depends on the span; NULL: t for every child */
	const double *ts;
};

static double child_t(const struct tnode *d, int i)
{
	return d->ts ? d->ts[i] : d->t;
}

/* A node whose @nc children (in child order) are ready to send up at
 * u[i] and take down[i] to finish their subtree once they hold the data:
 * when it is ready to send up (*u_out; 0 for a leaf) and how long its
 * subtree's descent takes once it holds the data (*down_out). @cp: when
 * its accumulator is ready (the copy of its data out of place, else 0). */
static void tree_node(const struct tnode *d, int nc, const double *u,
		      const double *down, double cp, double *u_out,
		      double *down_out)
{
	double rv[TREE_MAXCH], port = 0, red = cp, span = 0, sent = 0;
	unsigned taken = 0;

	for (int n = 0; n < nc; n++) {
		int first = -1;

		for (int i = 0; i < nc; i++)
			if (!(taken >> i & 1) && (first < 0 || u[i] < u[first]))
				first = i;
		taken |= 1u << first;
		rv[first] = port = max2(port, u[first]) + child_t(d, first);
	}
	for (int i = 0; i < nc; i++)
		red = max2(rv[i], red) + d->r;
	for (int i = nc - 1, pos = 1; i >= 0; i--, pos++) {
		sent = d->ts ? sent + d->ts[i] : pos * d->t;
		span = max2(span, sent + down[i]);
	}
	*u_out = nc ? red : 0;
	*down_out = span;
}

/*
 * Binomial tree (reduce, and the AllReduce tree): the subtree of a node
 * over @s ranks (itself first) has children over min(2^i, s - 2^i)
 * ranks, i = 0, 1, ...: all complete but the last, so this recursion
 * visits at most log2 N incomplete subtrees (d->up/down[h]: complete
 * ones). @cp: when a non-root node may fold (0 when it folds into its
 * first child's slot), @own_cp: when this node may.
 */
static void binom_sub(const struct tnode *d, int s, double cp, double own_cp,
		      double *u, double *down)
{
	double cu[TREE_MAXCH], cd[TREE_MAXCH];
	int nc = 0;

	for (int w = 1; w < s; w *= 2, nc++) {
		if (s - w >= w) {
			cu[nc] = d->up[nc];
			cd[nc] = d->down[nc];
		} else {
			binom_sub(d, s - w, cp, cp, &cu[nc], &cd[nc]);
		}
	}
	tree_node(d, nc, cu, cd, own_cp, u, down);
}

/* One chunk up a binomial tree over @n ranks, and down if @down. */
static double binom_once(struct tnode *d, int n, double cp, double root_cp,
			 int down)
{
	double u, dn;

	d->up[0] = d->down[0] = 0;
	for (int h = 1; (1 << h) <= n; h++)
		binom_sub(d, 1 << h, cp, cp, &d->up[h], &d->down[h]);
	binom_sub(d, n, cp, root_cp, &u, &dn);
	return u + (down ? dn : 0);
}


/* Binomial: every node folds its children's partials as they arrive,
 * the root after copying its own data (out of place); on N = 2^L,
 * L (a + m/b + g m). */
double hop_form_reduce_tree(const struct form *f)
{
	struct tnode d = { .t = fa(f, f->m) + f->m / f->b, .r = f->g * f->m };

	return binom_once(&d, f->nranks, 0, f->cp, 0);
}

/*
 * The link of a binomial tree's edge of span @w (child = parent + w) when
 * the ranks sit in host order, f->hl on each host: the parent is a
 * multiple of 2w, so every such edge stays inside a host when 2w divides
 * hl; otherwise some edge of that span crosses hosts, and it paces them.
 */
static const struct hop_model_link *span_link(const struct form *f, long w)
{
	return f->hl % (2 * w) == 0 ? f->li : f->l;
}

/* One message of @c bytes on the edges of span 2^@i: at b, or at bd when
 * @both (the rank sends and receives at once). */
static double span_t(const struct form *f, int i, double c, int both)
{
	const struct hop_model_link *l = span_link(f, 1L << i);
	double b = both && l->duplex > 1 ? l->beta / l->duplex : l->beta;

	return hop_model_msg_alpha(l, c) + c / b;
}

/*
 * The pipelined tree's period on host-ordered ranks (@tsd: span_t() at
 * bd of each span). Per chunk a node's ports carry a partial up from
 * each child and the result down to it, and its own partial up and the
 * result down; the schedule overlaps one of these messages with the rest
 * (on one link, the root's L children and the root's last child's L - 1
 * and its parent: 2L messages, (2L - 1) t'). So the period is, over the
 * root and the first node of each level (the one with the most
 * children), the largest sum of its messages less the largest one: a
 * tree with one edge between two hosts streams its reduction and its
 * broadcast through that edge in opposite directions at once, about
 * m / beta_inter in all, where the one-link form charges (2L - 1) m /
 * beta_inter.
 */
static double tree_period_hosts(const struct form *f, const double *tsd)
{
	double worst = 0;

	for (int j = 0; j <= f->L; j++) {       /* j = L: the root */
		long v = j == f->L ? 0 : 1L << j;
		double sum = v ? 2 * tsd[j] : 0, big = v ? tsd[j] : 0;

		for (int i = 0; i < (v ? j : f->L) &&
				v + (1L << i) < f->nranks; i++) {
			sum += 2 * tsd[i];
			big = max2(big, tsd[i]);
		}
		worst = max2(worst, sum - big);
	}
	return worst;
}

/*
 * Tree: binomial reduce to rank 0 then binomial broadcast, pipelined in k
 * chunks. One chunk climbs (receive + reduce) and descends the tree node
 * by node: T1 (binom_once(); on N = 2^L, L (2t + r)). With more, a chunk
 * leaves the pipeline every (2L - 1) t': the root's last child (the
 * deepest subtree) sends chunk c+1 up only after its own children's,
 * while its port also forwards chunk c down; the simulator of hop-model
 * measures exactly this period on hop's schedule (an earlier form, L t',
 * assumed ideal overlap and was up to 70 % low). The chunks wait at these
 * ports, so their reductions hide, all but the root's fold of the last
 * chunk: T0 (T1 at g = 0) + r + (k-1)(2L-1) t'. (T1 + (k-1)(2L-1) t'
 * counted every level's reduction once more, up to 7 % high.) When a
 * node's reductions outlast the ports, (k-1) L r (pessimistic: the
 * simulator overlaps one rank's reductions of different chunks).
 *   t = a + m/(k b), t' = a + m/(k bd), r = g m / k.
 */
double hop_form_allreduce_tree(const struct form *f, double k)
{
	double c = f->m / k, cp = f->cp / k, a = fa(f, c);
	double period = (2 * f->L - 1) * (a + c / f->bd);
	double ts[TREE_MAXCH], tsd[TREE_MAXCH];
	struct tnode d = { .t = a + c / f->b, .r = f->g * c };
	struct tnode d0 = { .t = d.t };
	double t1;

	if (f->li) {            /* host-ordered ranks: each edge its link */
		for (int i = 0; i < f->L; i++) {
			ts[i] = span_t(f, i, c, 0);
			tsd[i] = span_t(f, i, c, 1);
		}
		d.ts = d0.ts = ts;
		period = tree_period_hosts(f, tsd);
	}
	t1 = binom_once(&d, f->nranks, cp, cp, 1);
	if (k == 1)
		return t1;
	return max2(binom_once(&d0, f->nranks, 0, 0, 1) + d.r +
		    (k - 1) * period, t1 + (k - 1) * f->L * d.r);
}

/* One hop of a chunk of @c bytes on @l; @steady: while the hop also
 * receives the next chunk (beta over the link's duplex factor). */
static double chain_hop(const struct hop_model_link *l, double c, int steady)
{
	double d = steady && l->duplex >= 1 ? l->duplex : 1;

	return hop_model_msg_alpha(l, c) + c / (l->beta / d);
}

/*
 * The pipelined chain of a Broadcast, or with @reduce of a Reduce, on
 * ranks in host order, f->hl on each host: rank r hands each chunk to
 * r + 1 (tree.c), so from root 0 its N-1 hops cross between hosts H-1
 * times (on f->l) and stay inside N-H times (on f->li). The first chunk
 * fills every hop (a Reduce also folds it at N-2 relays, r each); every
 * further chunk waits for the slowest stage, a hop between hosts or a
 * fold (model_coll.c's bcast_chain() and reduce_chain() on one link).
 */
static double chain_hosts(const struct form *f, double k, int reduce)
{
	double c = f->m / k, hosts = f->n / f->hl;
	double r = reduce ? f->g * c : 0;
	double fill = (hosts - 1) * chain_hop(f->l, c, 0) +
		      (f->n - hosts) * chain_hop(f->li, c, 0);

	if (reduce)
		fill = max2(fill + (f->n - 2) * r, f->cp / k);
	return fill + r + (k - 1) * max2(chain_hop(f->l, c, 1), r);
}

double hop_model_form_hosts(int kind, int algo, size_t bytes, int nranks,
			    const struct hop_model_link *intra,
			    const struct hop_model_link *inter, int per_host,
			    long chunks, int inplace)
{
	struct form f;

	if (nranks < 2 || per_host < 1 || chunks < 1)
		return NAN;
	hop_form_init(&f, kind, bytes, nranks, inter, inplace);
	f.li = intra;
	f.hl = per_host;
	if (algo == HOP_ALGO_CHAIN && nranks % per_host == 0 &&
	    (kind == HOP_COLL_BROADCAST || kind == HOP_COLL_REDUCE))
		return chain_hosts(&f, (double)chunks,
				   kind == HOP_COLL_REDUCE);
	if (kind != HOP_COLL_ALLREDUCE)
		return NAN;
	switch (algo) {
	case HOP_ALGO_TREE:
		return hop_form_allreduce_tree(&f, (double)chunks);
	case HOP_ALGO_RD:       /* the fold's pairs would cross unpriced */
		if (f.p != nranks || (per_host & (per_host - 1)) ||
		    nranks % per_host)
			return NAN;
		return hop_form_allreduce_rd_hosts(&f);
	}
	return NAN;
}

/*
 * Double binary tree: two in-order binary trees (tree.c) over the same
 * virtual ranks, each reducing then broadcasting m/2 in k chunks. At
 * k = 1 each tree runs as if alone (a rank's role in the other tree costs
 * it one send early and one receive late), so the time is one tree's,
 * evaluated node by node (tree_node()), every node copying its own data
 * first out of place. Its transfers run at bd: the other tree's cross
 * them the other way (a leaf of one tree sends up while, as an inner
 * node of the other, it receives; at N = 2 the two halves are swapped at
 * once), as the ring's do.
 */
/* Virtual rank @v (@bit: its lowest set bit) of a tree over @n ranks. Its
 * left child's subtree is always complete; only the right spine is cut
 * by n, so this recursion visits at most log2 n nodes. */
static void dbt_sub(const struct tnode *d, int v, int bit, int n, double *u,
		    double *down)
{
	double cu[2], cd[2];
	int h = 0, low = bit >> 1, nc = 0;

	while ((1 << h) < bit)
		h++;
	if (v + bit - 1 < n) {
		*u = d->up[h];
		*down = d->down[h];
		return;
	}
	if (low) {
		cu[nc] = d->up[h - 1];
		cd[nc++] = d->down[h - 1];
	}
	while (low && v + low >= n)
		low >>= 1;
	if (low) {
		dbt_sub(d, v + low, low, n, &cu[nc], &cd[nc]);
		nc++;
	}
	tree_node(d, nc, cu, cd, d->cp, u, down);
}

/* One chunk through one tree over @n >= 2 ranks: up, then down. */
static double dbt_once(struct tnode *d, int n)
{
	int top = 1, h = 0;
	double u, down;

	d->up[0] = d->down[0] = 0;
	while (top * 2 < n) {
		double cu[2] = { d->up[h], d->up[h] };
		double cd[2] = { d->down[h], d->down[h] };

		tree_node(d, 2, cu, cd, d->cp, &d->up[h + 1],
			  &d->down[h + 1]);
		top *= 2;
		h++;
	}
	/* the root (virtual rank 0) has one child, the largest power of
	 * two below n */
	dbt_sub(d, top, top, n, &u, &down);
	tree_node(d, 1, &u, &down, d->cp, &u, &down);
	return u + down;
}

/*
 * Pipelined, the first chunk takes the one-chunk time above (at m/(2k));
 * then a chunk pair leaves every max(q t', c r): per chunk pair a rank
 * sends and receives q = (c+1 if D >= 2, else c) + 1 messages of m/(2k)
 * (c = 2 children, 1 when N = 2) and reduces c of them. That is the
 * ports' load, a lower bound: the simulated schedule takes up to 43 %
 * longer, with a period not even monotonic in k, because a port that is
 * free may find every message it could take waiting for its partner's
 * busy port (docs/simulator.md, "Limits").
 */
double hop_form_allreduce_dbtree(const struct form *f, double k)
{
	double c = f->m / (2 * k), ch = f->nranks >= 3 ? 2 : 1;
	double q = (f->lp >= 2 ? ch + 1 : ch) + 1;
	double a = fa(f, c);
	struct tnode d = { .t = a + c / f->bd, .r = f->g * c,
			 .cp = f->cp / (2 * k) };

	return dbt_once(&d, f->nranks) +
	       (k - 1) * max2(q * (a + c / f->bd), ch * d.r);
}
