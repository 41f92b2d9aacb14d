/*
 * tree.c - binomial, chain, flat and (double) binary trees; pipelined
 * chunk moves up and down a tree; AllReduce tree (binomial reduce to rank
 * 0 + broadcast, pipelined per chunk) and double binary tree (each half
 * of the data on one of two complementary binary trees, so every rank's
 * links carry data in both directions).
 *
 * Results are bitwise identical: each chunk is reduced once, at the root,
 * and broadcast as those bytes.
 */
#include "coll/tree.h"

void hop_tree_binomial(struct hop_tree *t, int rank, int n, int root)
{
	int vr = hop_mod(rank - root, n);

	t->parent = vr == 0 ? -1 : ((vr & (vr - 1)) + root) % n;
	t->nchild = 0;
	/* children in increasing subtree size: the fold order by vrank */
	for (int mask = 1; mask < n; mask <<= 1) {
		if (vr & mask)
			break;
		if ((vr | mask) < n) {
			t->before[t->nchild] = 0;
			t->child[t->nchild++] = ((vr | mask) + root) % n;
		}
	}
}

void hop_tree_chain(struct hop_tree *t, int rank, int n, int root)
{
	int vr = hop_mod(rank - root, n);

	t->parent = vr == 0 ? -1 : hop_mod(rank - 1, n);
	t->nchild = 0;
	if (vr + 1 < n) {
		t->before[0] = 0;
		t->child[t->nchild++] = (rank + 1) % n;
	}
}

void hop_tree_flat(struct hop_tree *t, int rank, int n, int root)
{
	t->nchild = 0;
	if (rank != root) {
		t->parent = root;
		return;
	}
	t->parent = -1;
	/* lower ranks first, nearest first (each goes in front of the
	 * fold), then the higher ranks in order */
	for (int c = root - 1; c >= 0; c--) {
		t->before[t->nchild] = 1;
		t->child[t->nchild++] = c;
	}
	for (int c = root + 1; c < n; c++) {
		t->before[t->nchild] = 0;
		t->child[t->nchild++] = c;
	}
}

/* In-order binary tree over virtual ranks (NCCL's layout): v's level is
 * its lowest set bit; virtual rank 0 is the root with one child. */
static void btree(int v, int n, int *up, int *d0, int *d1)
{
	int bit;

	for (bit = 1; bit < n; bit <<= 1)
		if (bit & v)
			break;
	if (v == 0) {
		*up = -1;
		*d0 = -1;
		*d1 = n > 1 ? bit >> 1 : -1;
		return;
	}
	*up = (v ^ bit) | (bit << 1);
	if (*up >= n)
		*up = v ^ bit;
	int low = bit >> 1;
	*d0 = low ? v - low : -1;
	*d1 = low ? v + low : -1;
	while (*d1 >= n) {
		low >>= 1;
		*d1 = low ? v + low : -1;
	}
}

static int bt_virt(int rank, int n, int second)
{
	if (!second)
		return rank;
	return n % 2 == 0 ? n - 1 - rank : hop_mod(rank - 1, n);
}

static int bt_real(int v, int n, int second)
{
	if (!second || v < 0)
		return v;
	return n % 2 == 0 ? n - 1 - v : (v + 1) % n;
}

void hop_tree_binary(struct hop_tree *t, int rank, int n, int second)
{
	int v = bt_virt(rank, n, second), up, d[2];

	btree(v, n, &up, &d[0], &d[1]);
	t->parent = bt_real(up, n, second);
	t->nchild = 0;
	for (int i = 0; i < 2; i++) {
		if (d[i] < 0)
			continue;
		t->before[t->nchild] = d[i] < v;
		t->child[t->nchild++] = bt_real(d[i], n, second);
	}
}

void hop_tree_pipe_init(struct hop_sched *s, struct hop_tree_pipe *p,
			int tree_id, size_t off, size_t elems, int *lastuse)
{
	int nc = p->t.nchild > 0 ? p->t.nchild : 1;

	p->tree_id = tree_id;
	p->off = off;
	p->elems = elems;
	p->ce = hop_chunk_elems(s, elems, 4);
	p->nch = hop_nchunks(elems, p->ce);
	p->lanes = (size_t)s->args.depth < p->nch ? s->args.depth : (int)p->nch;
	if (p->lanes < 1)
		p->lanes = 1;
	p->lastuse = lastuse;
	p->slot0 = 0;
	if (!lastuse)
		return; /* down only: no slots */
	p->slot0 = hop_sched_scratch(s, (size_t)p->lanes * (size_t)nc *
					       p->ce * s->esize);
	for (int i = 0; i < p->lanes * nc; i++)
		lastuse[i] = -1;
}

static void chunk_range(const struct hop_sched *s,
			const struct hop_tree_pipe *p, size_t c, size_t *off,
			size_t *len)
{
	size_t co = c * p->ce;

	*off = (p->off + co) * s->esize;
	*len = (p->elems - co < p->ce ? p->elems - co : p->ce) * s->esize;
}

static uint32_t tree_tag(const struct hop_tree_pipe *p, int down, size_t c)
{
	return (uint32_t)((size_t)(p->tree_id * 2 + down) * p->nch + c);
}

int hop_tree_up(struct hop_sched *s, struct hop_tree_pipe *p, size_t c,
		int obuf, int abuf, int need_copy)
{
	const struct hop_tree *t = &p->t;
	int L = (int)(c % (size_t)p->lanes), nc = t->nchild;
	int *lu = p->lastuse + (size_t)L * (size_t)(nc > 0 ? nc : 1);
	uint32_t tag = tree_tag(p, 0, c);
	size_t off, len, acc_slot = 0;
	int prev = -1;

	chunk_range(s, p, c, &off, &len);
	if (nc == 0) {
		if (t->parent >= 0)
			return hop_s_send(s, t->parent, tag, obuf, off, len, -1,
					  -1, -1);
		if (abuf != HOP_BUF_NONE && need_copy)
			return hop_s_copy(s, abuf, off, obuf, off, len, -1, -1,
					  -1);
		return -1;
	}
	if (abuf != HOP_BUF_NONE && need_copy)
		prev = hop_s_copy(s, abuf, off, obuf, off, len, -1, -1, -1);
	for (int i = 0; i < nc; i++) {
		size_t slot = p->slot0 + ((size_t)L * (size_t)nc + (size_t)i) *
						 p->ce * s->esize;
		int rv = hop_s_recv(s, t->child[i], tag, HOP_BUF_SCRATCH, slot,
				    len, lu[i], -1, -1);
		int red;
		if (abuf == HOP_BUF_NONE && i == 0) {
			/* the first child's slot becomes the accumulator */
			red = hop_s_reduce(s, t->before[0] ? 0 : HOP_STEP_REV,
					   HOP_BUF_SCRATCH, slot, obuf, off, len,
					   rv, -1, -1);
			acc_slot = slot;
		} else if (abuf == HOP_BUF_NONE) {
			red = hop_s_reduce(s, t->before[i] ? HOP_STEP_REV : 0,
					   HOP_BUF_SCRATCH, acc_slot,
					   HOP_BUF_SCRATCH, slot, len, rv, prev,
					   -1);
			lu[i] = red;
		} else {
			red = hop_s_reduce(s, t->before[i] ? HOP_STEP_REV : 0,
					   abuf, off, HOP_BUF_SCRATCH, slot, len,
					   rv, prev, -1);
			lu[i] = red;
		}
		prev = red;
	}
	if (t->parent < 0)
		return prev;
	int sd = abuf != HOP_BUF_NONE
			 ? hop_s_send(s, t->parent, tag, abuf, off, len, prev,
				      -1, -1)
			 : hop_s_send(s, t->parent, tag, HOP_BUF_SCRATCH,
				      acc_slot, len, prev, -1, -1);
	if (abuf == HOP_BUF_NONE)
		lu[0] = sd; /* the accumulator slot is busy until sent */
	return sd;
}

int hop_tree_down(struct hop_sched *s, struct hop_tree_pipe *p, size_t c,
		  int buf, int dep)
{
	const struct hop_tree *t = &p->t;
	uint32_t tag = tree_tag(p, 1, c);
	size_t off, len;
	int src = dep;

	chunk_range(s, p, c, &off, &len);
	if (t->parent >= 0)
		src = hop_s_recv(s, t->parent, tag, buf, off, len, dep, -1, -1);
	for (int i = t->nchild - 1; i >= 0; i--)
		hop_s_send(s, t->child[i], tag, buf, off, len, src, -1, -1);
	return src;
}

/* ---- AllReduce: binomial tree, or double binary tree ---- */

/*
 * One chunk through the mirrored tree: list the children right to left,
 * lower real rank first. Partials that arrive together are taken lower
 * rank first (the simulator does), so a node folds first the one it got
 * first: L op (own op R), still an in-order expression, and on the way
 * down the left child (the larger subtree) goes first. Pipelined, the
 * left child's partials lead in steady state and its lane slot frees at
 * its own fold, so the list stays left to right.
 */
static void lower_rank_first(struct hop_tree *t)
{
	if (t->nchild != 2)
		return;
	int c = t->child[0], b = t->before[0];

	t->child[0] = t->child[1];
	t->before[0] = t->before[1];
	t->child[1] = c;
	t->before[1] = b;
}

int hop_build_allreduce_tree(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, ntrees = a->algo == HOP_ALGO_DBTREE && n > 1 ? 2 : 1;
	int child[2][HOP_TREE_MAXCH], before[2][HOP_TREE_MAXCH];
	struct hop_tree_pipe p[2];
	size_t count = a->count;

	s->avg_buf = HOP_BUF_RECV;
	s->avg_count = count;
	if (!count)
		return 0;
	int *lu = hop_sched_tmp(s, 2 * (size_t)a->depth * HOP_TREE_MAXCH);
	if (!lu)
		return s->err;
	for (int k = 0; k < ntrees; k++) {
		p[k].t.child = child[k];
		p[k].t.before = before[k];
		if (a->algo == HOP_ALGO_DBTREE)
			hop_tree_binary(&p[k].t, a->rank, n, k);
		else
			hop_tree_binomial(&p[k].t, a->rank, n, 0);
		/* tree k carries half k of the data */
		size_t off = ntrees == 1 ? 0 : hop_blk_start(count, 2, k);
		size_t elems = ntrees == 1 ? count : hop_blk_count(count, 2, k);
		hop_tree_pipe_init(s, &p[k], k, off, elems,
				   lu + (size_t)k * (size_t)a->depth *
						HOP_TREE_MAXCH);
		if (k == 1 && n % 2 == 0 && p[k].nch == 1)
			lower_rank_first(&p[k].t);
	}
	size_t nch = p[0].nch > p[ntrees - 1].nch ? p[0].nch
						  : p[ntrees - 1].nch;
	for (size_t c = 0; c < nch; c++)
		for (int k = 0; k < ntrees; k++) {
			if (c >= p[k].nch)
				continue;
			int up = hop_tree_up(s, &p[k], c, HOP_BUF_SEND,
					     HOP_BUF_RECV, !a->inplace);
			hop_tree_down(s, &p[k], c, HOP_BUF_RECV, up);
		}
	return 0;
}
