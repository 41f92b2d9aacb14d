/*
 * model_form.h - what the closed forms of model_coll.c and model_blocks.c
 * share: one collective's parameters (struct form, notation in
 * model_coll.c) and the alpha of one message.
 */
#ifndef HOP_MODEL_FORM_H
#define HOP_MODEL_FORM_H

#include <stddef.h>

#include "model/model.h"

struct form {
	double n, m, a, b, bd, g, d;
	const struct hop_model_link *l;
	/* ranks in host order, @hl on each: a tree edge inside a host runs
	 * on @li, one between hosts on @l (NULL @li: every edge on @l) */
	const struct hop_model_link *li;
	int hl;
	double cp;              /* out of place: copying m to the output, g m */
	int inplace;
	int nranks;
	int L, lp;              /* ceil(log2 N), log2 p */
	double p;               /* largest power of two <= N */
};

/* @f for (@kind, @bytes, @nranks) on link @l; @inplace: no output copy. */
void hop_form_init(struct form *f, int kind, size_t bytes, int nranks,
		   const struct hop_model_link *l, int inplace);

static inline double max2(double x, double y)
{
	return x > y ? x : y;
}

/* alpha of one message of @len bytes: a rendezvous above the eager size
 * costs its RTS and CTS too */
static inline double fa(const struct form *f, double len)
{
	return hop_model_msg_alpha(f->l, len);
}

/* The tree forms (model_tree.c). */
double hop_form_reduce_tree(const struct form *f);
double hop_form_allreduce_tree(const struct form *f, double k);
double hop_form_allreduce_dbtree(const struct form *f, double k);

/* Recursive doubling, each step on its link (model_coll.c). */
double hop_form_allreduce_rd_hosts(const struct form *f);

/* The forms of the block-moving collectives (model_blocks.c). */
double hop_form_gather_flat(const struct form *f);
double hop_form_gather_tree(const struct form *f);
double hop_form_barrier(const struct form *f);
double hop_form_alltoall_pairwise(const struct form *f, double k);
double hop_form_alltoall_bruck(const struct form *f);

#endif
