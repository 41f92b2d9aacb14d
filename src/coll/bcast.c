/*
 * bcast.c - Broadcast: flat (the root sends to everyone), binomial tree,
 * pipelined chain. All three are the tree machinery of tree.c with a
 * different tree; every chunk travels on its own, so the chain and the
 * tree pipeline (chunk c+1 leaves while chunk c is forwarded).
 */
#include "coll/tree.h"

int hop_build_bcast(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks;
	struct hop_tree_pipe p;

	if (!a->count || n == 1)
		return 0;
	int *tmp = hop_sched_tmp(s, 2 * (size_t)(n > HOP_TREE_MAXCH ? n
							  : HOP_TREE_MAXCH));
	if (!tmp)
		return s->err;
	p.t.child = tmp;
	p.t.before = tmp + (n > HOP_TREE_MAXCH ? n : HOP_TREE_MAXCH);
	switch (a->algo) {
	case HOP_ALGO_FLAT:
		hop_tree_flat(&p.t, a->rank, n, a->root);
		break;
	case HOP_ALGO_CHAIN:
		hop_tree_chain(&p.t, a->rank, n, a->root);
		break;
	case HOP_ALGO_TREE:
		hop_tree_binomial(&p.t, a->rank, n, a->root);
		break;
	default:
		return HOP_ERR_NOT_SUPPORTED;
	}
	hop_tree_pipe_init(s, &p, 0, 0, a->count, NULL); /* no slots */
	for (size_t c = 0; c < p.nch; c++)
		hop_tree_down(s, &p, c, HOP_BUF_RECV, -1);
	return 0;
}
