/*
 * tree.h - trees shared by broadcast, reduce and the tree AllReduces, and
 * the per-chunk builders that move one chunk up (reduce) or down
 * (broadcast) a tree. Every chunk is independent, so chunk c+1 climbs
 * while chunk c is reduced: the trees are pipelined.
 *
 * Reduction order: the children are listed in fold order; a child marked
 * `before` holds data that precedes this rank's in the fold (lower
 * virtual ranks), so the result is a fixed, rank-independent expression.
 */
#ifndef HOP_COLL_TREE_H
#define HOP_COLL_TREE_H

#include "coll/sched.h"

#define HOP_TREE_MAXCH 20   /* binomial children of 65536 ranks: 16 */

struct hop_tree {
	int parent;             /* -1 at the root */
	int nchild;
	int *child;             /* fold order */
	int *before;            /* child's data precedes ours in the fold */
};

/* Trees over @n ranks; child/before arrays: HOP_TREE_MAXCH entries, or
 * @n for the flat tree. */
void hop_tree_binomial(struct hop_tree *t, int rank, int n, int root);
void hop_tree_chain(struct hop_tree *t, int rank, int n, int root);
void hop_tree_flat(struct hop_tree *t, int rank, int n, int root);
/* In-order binary tree (rooted at virtual rank 0); @second selects the
 * complementary tree of the double binary tree (mirrored for even n,
 * shifted by one for odd n), where most leaves of the first are inner. */
void hop_tree_binary(struct hop_tree *t, int rank, int n, int second);

/* One tree over a region of elements, chunked. */
struct hop_tree_pipe {
	struct hop_tree t;
	int tree_id;            /* 0 or 1: separates tags */
	size_t off, elems;      /* region, elements */
	size_t ce, nch;         /* chunk elements, chunks */
	int lanes;              /* min(depth, nch): chunks in flight */
	size_t slot0;           /* scratch: lanes x nchild slots of ce */
	int *lastuse;           /* [lanes][nchild]: last step reading a slot */
};

/* Set up @p's chunking, scratch and lastuse (from @lastuse storage of
 * depth * max(nchild,1) ints; NULL for a pipe that only goes down). */
void hop_tree_pipe_init(struct hop_sched *s, struct hop_tree_pipe *p,
			int tree_id, size_t off, size_t elems, int *lastuse);

/*
 * hop_tree_up() - Chunk @c climbs: receive each child's partial into a
 * scratch slot, reduce it into the accumulator, send the result to the
 * parent. @obuf holds this rank's data; @abuf is the accumulator (RECV,
 * with a copy of @obuf first when @need_copy) or HOP_BUF_NONE to
 * accumulate in the first child's slot (leaves send @obuf directly).
 * Return: the step after which the chunk is done here (send to parent;
 * on the root the last reduce or copy), -1 if none.
 */
int hop_tree_up(struct hop_sched *s, struct hop_tree_pipe *p, size_t c,
		int obuf, int abuf, int need_copy);

/* Chunk @c descends in @buf: receive from the parent (after step @dep),
 * send to every child (largest subtree first). Returns the receive (or
 * @dep on the root). */
int hop_tree_down(struct hop_sched *s, struct hop_tree_pipe *p, size_t c,
		  int buf, int dep);

#endif /* HOP_COLL_TREE_H */
