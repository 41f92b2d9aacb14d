/*
 * reduce_rooted.c - Reduce to a root: flat (the root receives from
 * everyone), binomial tree, pipelined chain; chunked, so partial sums of
 * chunk c climb while chunk c+1 is received. The root accumulates in its
 * receive buffer; other ranks accumulate in scratch lanes (depth x
 * children chunk slots), never in their (const) send buffer.
 */
#include "coll/tree.h"

int hop_build_reduce(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, root = a->root, is_root = a->rank == root;
	struct hop_tree_pipe p;

	if (is_root) {
		s->avg_buf = HOP_BUF_RECV;
		s->avg_count = a->count;
	}
	if (!a->count)
		return 0;
	size_t w = (size_t)(n > HOP_TREE_MAXCH ? n : HOP_TREE_MAXCH);
	int *tmp = hop_sched_tmp(s, 2 * w + (size_t)a->depth * w);
	if (!tmp)
		return s->err;
	p.t.child = tmp;
	p.t.before = tmp + w;
	switch (a->algo) {
	case HOP_ALGO_FLAT:
		hop_tree_flat(&p.t, a->rank, n, root);
		break;
	case HOP_ALGO_CHAIN:
		hop_tree_chain(&p.t, a->rank, n, root);
		break;
	case HOP_ALGO_TREE:
		hop_tree_binomial(&p.t, a->rank, n, root);
		break;
	default:
		return HOP_ERR_NOT_SUPPORTED;
	}
	hop_tree_pipe_init(s, &p, 0, 0, a->count, tmp + 2 * w);
	for (size_t c = 0; c < p.nch; c++)
		hop_tree_up(s, &p, c, HOP_BUF_SEND,
			    is_root ? HOP_BUF_RECV : HOP_BUF_NONE,
			    is_root && !a->inplace);
	return 0;
}
