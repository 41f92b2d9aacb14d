/*
 * gather_scatter.c - Gather and Scatter: flat (the root exchanges with
 * every rank) and binomial tree.
 *
 * Over virtual ranks v = (rank - root) mod N, a node of the tree owns the
 * contiguous range [v, v + size) of virtual ranks: its own block and its
 * subtree's. Gather collects that range and sends it to the parent;
 * scatter receives it from the parent and hands each child its part.
 * Inner nodes keep the range in scratch, in virtual-rank order; the root
 * works in the caller's buffer, in rank order, where a range that runs
 * past rank N-1 continues at rank 0: every range is therefore moved as
 * up to two pieces, split where the ranks wrap, so each lands straight
 * at its place in the root's buffer. A tree moves whole ranges; they are
 * not pipelined (each block crosses at most log2 N links).
 *
 * Tags: 2 * (the child's virtual rank) + piece, unique per tree edge.
 */
#include "coll/sched.h"

/* One node: its virtual rank, range size and number of children. */
struct gs_node {
	int n, root, vr, size, nchild, flat;
};

static int vrank_to_rank(const struct gs_node *g, int v)
{
	return (v + g->root) % g->n;
}

static void gs_node_init(struct gs_node *g, const struct hop_coll_args *a)
{
	int n = a->nranks, vr = hop_mod(a->rank - a->root, n);

	g->n = n;
	g->root = a->root;
	g->vr = vr;
	g->nchild = 0;
	g->flat = a->algo == HOP_ALGO_FLAT;
	if (g->flat) {
		g->size = vr ? 1 : n;
		g->nchild = vr ? 0 : n - 1;
		return;
	}
	g->size = n - vr;
	for (int mask = 1; mask < n; mask <<= 1) {
		if (vr & mask) {
			g->size = mask < n - vr ? mask : n - vr;
			break;
		}
		if ((vr | mask) < n)
			g->nchild++;
	}
}

/* Child @i (smallest range first): its virtual rank and range size. */
static void gs_child(const struct gs_node *g, int i, int *cv, int *csize)
{
	int mask = 1 << i;

	if (g->flat) {
		*cv = i + 1;
		*csize = 1;
		return;
	}
	*cv = g->vr | mask;
	*csize = mask < g->n - *cv ? mask : g->n - *cv;
}

static int gs_parent(const struct gs_node *g)
{
	if (!g->vr)
		return -1;
	return vrank_to_rank(g, g->flat ? 0 : g->vr & (g->vr - 1));
}

/* Pieces of range [lo, lo + size): split where the ranks wrap. */
static int gs_pieces(const struct gs_node *g, int lo, int size, int plo[2],
		     int plen[2])
{
	int w = g->n - g->root, hi = lo + size;

	if (g->root == 0 || hi <= w || lo >= w) {
		plo[0] = lo;
		plen[0] = size;
		return 1;
	}
	plo[0] = lo;
	plen[0] = w - lo;
	plo[1] = w;
	plen[1] = hi - w;
	return 2;
}

/* Where virtual rank @v's block is on this node: the root's buffer in
 * rank order, else scratch at @sbase in virtual-rank order. */
static void gs_at(const struct gs_node *g, size_t per, size_t sbase, int v,
		  int *buf, size_t *off)
{
	if (g->vr == 0) {
		*buf = HOP_BUF_RECV;
		*off = (size_t)vrank_to_rank(g, v) * per;
	} else {
		*buf = HOP_BUF_SCRATCH;
		*off = sbase + (size_t)(v - g->vr) * per;
	}
}

/* A step that waits for @a and @b (-1: none). */
static int join(struct hop_sched *s, int a, int b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return hop_s_nop(s, a, b, -1);
}

/* Scatter's root holds the data in its send buffer, gather's in its
 * receive buffer. */
static void gs_root_src(const struct gs_node *g, size_t per, int v,
			int *buf, size_t *off)
{
	*buf = HOP_BUF_SEND;
	*off = (size_t)vrank_to_rank(g, v) * per;
}

static void build_gather(struct hop_sched *s, const struct gs_node *g,
			 size_t per, int parent)
{
	int plo[2], plen[2], np, buf, done = -1;
	size_t sbase = 0, off;

	if (g->vr && g->size > 1)
		sbase = hop_sched_scratch(s, (size_t)g->size * per);
	if (g->vr == 0 ? !s->args.inplace : g->size > 1) {
		gs_at(g, per, sbase, g->vr, &buf, &off);
		done = hop_s_copy(s, buf, off, HOP_BUF_SEND, 0, per, -1, -1, -1);
	}
	for (int i = 0; i < g->nchild; i++) {
		int cv, csize;

		gs_child(g, i, &cv, &csize);
		np = gs_pieces(g, cv, csize, plo, plen);
		for (int p = 0; p < np; p++) {
			gs_at(g, per, sbase, plo[p], &buf, &off);
			done = join(s, done, hop_s_recv(s, vrank_to_rank(g, cv),
				(uint32_t)(2 * cv + p), buf, off,
				(size_t)plen[p] * per, -1, -1, -1));
		}
	}
	if (parent < 0)
		return;
	if (g->size == 1) {
		hop_s_send(s, parent, (uint32_t)(2 * g->vr), HOP_BUF_SEND, 0,
			   per, -1, -1, -1);
		return;
	}
	np = gs_pieces(g, g->vr, g->size, plo, plen);
	for (int p = 0; p < np; p++) {
		gs_at(g, per, sbase, plo[p], &buf, &off);
		hop_s_send(s, parent, (uint32_t)(2 * g->vr + p), buf, off,
			   (size_t)plen[p] * per, done, -1, -1);
	}
}

static void build_scatter(struct hop_sched *s, const struct gs_node *g,
			  size_t per, int parent)
{
	int plo[2], plen[2], np, buf, got = -1;
	size_t sbase = 0, off;

	if (g->vr == 0) {
		if (!s->args.inplace)
			hop_s_copy(s, HOP_BUF_RECV, 0, HOP_BUF_SEND,
				   (size_t)g->root * per, per, -1, -1, -1);
	} else if (g->size == 1) {
		hop_s_recv(s, parent, (uint32_t)(2 * g->vr), HOP_BUF_RECV, 0,
			   per, -1, -1, -1);
		return;
	} else {
		sbase = hop_sched_scratch(s, (size_t)g->size * per);
		np = gs_pieces(g, g->vr, g->size, plo, plen);
		for (int p = 0; p < np; p++) {
			gs_at(g, per, sbase, plo[p], &buf, &off);
			got = join(s, got, hop_s_recv(s, parent,
				(uint32_t)(2 * g->vr + p), buf, off,
				(size_t)plen[p] * per, -1, -1, -1));
		}
		hop_s_copy(s, HOP_BUF_RECV, 0, HOP_BUF_SCRATCH, sbase, per, got,
			   -1, -1);
	}
	/* the largest range first: it has the most left to forward */
	for (int i = g->nchild - 1; i >= 0; i--) {
		int cv, csize;

		gs_child(g, i, &cv, &csize);
		np = gs_pieces(g, cv, csize, plo, plen);
		for (int p = 0; p < np; p++) {
			if (g->vr == 0)
				gs_root_src(g, per, plo[p], &buf, &off);
			else
				gs_at(g, per, sbase, plo[p], &buf, &off);
			hop_s_send(s, vrank_to_rank(g, cv),
				   (uint32_t)(2 * cv + p), buf, off,
				   (size_t)plen[p] * per, got, -1, -1);
		}
	}
}

int hop_build_gather_scatter(struct hop_sched *s)
{
	const struct hop_coll_args *a = &s->args;
	struct gs_node g;
	size_t per = a->count * s->esize;

	if (a->algo != HOP_ALGO_FLAT && a->algo != HOP_ALGO_TREE)
		return HOP_ERR_NOT_SUPPORTED;
	if (!per)
		return 0;
	gs_node_init(&g, a);
	if (a->kind == HOP_COLL_GATHER)
		build_gather(s, &g, per, gs_parent(&g));
	else
		build_scatter(s, &g, per, gs_parent(&g));
	return 0;
}
