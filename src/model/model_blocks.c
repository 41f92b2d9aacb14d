/*
 * model_blocks.c - closed forms of the collectives that move per-rank
 * blocks rather than reduce a vector: gather and scatter, alltoall, and
 * the barrier (notation: model_coll.c; forms: docs/model.md and
 * docs/gather_scatter.md).
 */
#include <math.h>

#include "model/model_form.h"
#include "model/model_int.h"

/* ---- gather and scatter (m: the root's N blocks) ---- */

/* Flat: the root's port moves N-1 blocks one after the other; out of
 * place it also copies its own block (g m/N) meanwhile. */
double hop_form_gather_flat(const struct form *f)
{
	double blk = f->m / f->n;

	return max2((f->n - 1) * (fa(f, blk) + blk / f->b), f->cp / f->n);
}

/*
 * Binomial: the root takes its children's ranges, 1, 2, 4, .. blocks
 * (the last cut at N), each child having first collected its own range
 * the same way; the largest range arrives last and its subtree's
 * collection is the critical path: a chain of ranges 1, 2, .., 2^(L-1)
 * (cut at N), each a + range/b, plus the copy of every inner node's own
 * block into its scratch (g m/N at each level). Scatter is the mirror.
 */
double hop_form_gather_tree(const struct form *f)
{
	double blk = f->m / f->n, t = 0;

	for (long w = 1; w < f->nranks; w *= 2) {
		double cnt = (double)(w < f->nranks - w ? w : f->nranks - w);

		t += fa(f, cnt * blk) + cnt * blk / f->b;
	}
	return t + (f->L > 1 ? f->g * blk : 0) + f->cp / f->n;
}

double hop_form_barrier(const struct form *f)
{
	return f->L * f->a;
}

/* ---- alltoall (m: the whole send buffer, N blocks of m/N) ---- */

/* Pairwise: N-1 exchanges of one block (as @k pieces), HOP_A2A_WINDOW
 * posted at once: one alpha (or a rendezvous's three) per window, the
 * bytes one after the other. The own block's copy runs beside them; in
 * place, the send data is first copied to scratch (g m). */
double hop_form_alltoall_pairwise(const struct form *f, double k)
{
	double blk = f->m / f->n;
	double windows = ceil((f->n - 1) / HOP_A2A_WINDOW);
	double xfer = windows * fa(f, blk / k) + (f->n - 1) * blk / f->bd;

	return (f->inplace ? f->g * f->m : 0) + max2(xfer, f->g * blk);
}

/* Bruck: a rotation (g m) and L rounds, round k sending the blocks whose
 * index has bit k set, packed before and unpacked after (2 g per byte),
 * then the inverse rotation (g m). */
double hop_form_alltoall_bruck(const struct form *f)
{
	double blk = f->m / f->n, t = 2 * f->g * f->m;

	for (int k = 1; k < f->nranks; k *= 2) {
		double c = 0;

		for (int j = k; j < f->nranks; j += 2 * k)
			c += j + k <= f->nranks ? k : f->nranks - j;
		t += fa(f, c * blk) + c * blk * (1 / f->bd + 2 * f->g);
	}
	return t;
}
