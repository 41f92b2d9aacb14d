/*
 * split.c - communicators derived from another: hop_comm_split(),
 * hop_comm_split_host(), hop_comm_dup() and their destruction.
 *
 * A derived communicator opens nothing: it shares the provider, channels
 * and slots of the communicator made by init (its root), and is told apart
 * by a communicator id in the tag (p2p.h HOP_TAG_COMM). One allgather over
 * the parent carries each rank's color, key and the ids live on it; every
 * rank then computes the same groups, ranks and ids. A group takes the
 * lowest id free on all of its members: unique among the communicators
 * live on each member, so no message of another communicator can match.
 *
 * The root's endpoints live as long as any communicator of the family:
 * destroying the root first only retires its handle (docs/comm.md).
 */
#include <stdlib.h>
#include <string.h>

#include "api/split.h"
#include "coll/coll.h"
#include "p2p/p2p.h"
#include "transport/provider.h"

/* What each rank of the parent contributes (same layout everywhere). */
struct split_rec {
	uint64_t color;
	uint64_t ids_live;      /* ids live on this rank's root */
	int32_t key;
	int32_t defined;        /* 0: HOP_UNDEFINED, no communicator */
};

struct member {
	int32_t key;
	int prank;              /* rank in the parent */
};

static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->prank > y->prank) - (x->prank < y->prank);
}

/* The lowest id free on every member, or -1. */
static int pick_id(const struct split_rec *all, const struct member *m,
		   int n)
{
	uint64_t used = 1; /* 0 is the root's */

	for (int i = 0; i < n; i++)
		used |= all[m[i].prank].ids_live;
	for (int id = 1; id <= HOP_TAG_COMM_MAX; id++)
		if (!(used & (1ull << id)))
			return id;
	return -1;
}

/* @child's rank maps, from the members' parent ranks in child order. */
static int map_ranks(struct hop_comm *child, struct hop_comm *parent,
		     const struct member *m, int n)
{
	int rn = child->root->nranks;

	child->peer_of = malloc((size_t)n * sizeof(int));
	child->rank_of = malloc((size_t)rn * sizeof(int));
	if (!child->peer_of || !child->rank_of)
		return HOP_ERR_NO_MEMORY;
	for (int q = 0; q < rn; q++)
		child->rank_of[q] = -1;
	for (int i = 0; i < n; i++) {
		int q = hop_comm_peer(parent, m[i].prank);

		child->peer_of[i] = q;
		child->rank_of[q] = i;
	}
	return 0;
}

static void free_child(struct hop_comm *child)
{
	if (child->coll)
		hop_coll_fini(child);
	free(child->peer_of);
	free(child->rank_of);
	child->peer_of = child->rank_of = NULL;
	hop_comm_release(child);
}

/* The communicator of the members @m (n of them, in rank order) with
 * id @id; @me is this rank's index. */
static int make_child(struct hop_comm *parent, const struct member *m, int n,
		      int me, int id, struct hop_comm **out)
{
	struct hop_comm *root = parent->root, *child;
	int ret;

	if (!(child = hop_comm_alloc()))
		return hop_set_error(parent, HOP_ERR_NO_MEMORY, "rank %d: out "
				     "of memory for a communicator",
				     parent->rank);
	child->rank = me;
	child->nranks = n;
	child->cfg = parent->cfg;
	child->prov_ops = root->prov_ops;
	child->class_ops[HOP_LINK_INTRA] = root->class_ops[HOP_LINK_INTRA];
	child->class_ops[HOP_LINK_INTER] = root->class_ops[HOP_LINK_INTER];
	child->prov = root->prov;
	child->prov_ctx = root->prov_ctx;
	child->p2p = root->p2p;
	child->local_ranks = parent->local_ranks;
	child->usable_cores = parent->usable_cores;
	child->kernel_ranks = parent->kernel_ranks;
	child->kernel_cores = parent->kernel_cores;
	child->model_ranks = parent->model_ranks;
	child->model_cores = parent->model_cores;
	child->spin_min_ns = parent->spin_min_ns;
	child->root = root;
	child->comm_id = id;
	if ((ret = map_ranks(child, parent, m, n)))
		hop_set_error(parent, ret, "rank %d: out of memory for a "
			      "communicator of %d ranks", parent->rank, n);
	else if ((ret = hop_coll_init(child)))
		hop_set_error(parent, ret, "%s", child->last_error);
	if (ret) {
		free_child(child);
		return ret;
	}
	root->ids_live |= 1ull << id;
	root->family++;
	*out = child;
	return 0;
}

/* This rank's group of @all, sorted by key then parent rank, into @m;
 * returns its size and this rank's index in *@me. */
static int group_of(const struct hop_comm *parent, const struct split_rec *all,
		    struct member *m, int *me)
{
	const struct split_rec *mine = &all[parent->rank];
	int n = 0;

	for (int r = 0; r < parent->nranks; r++)
		if (all[r].defined && all[r].color == mine->color)
			m[n++] = (struct member){ all[r].key, r };
	qsort(m, (size_t)n, sizeof(*m), member_cmp);
	for (int i = 0; i < n; i++)
		if (m[i].prank == parent->rank)
			*me = i;
	return n;
}

/* The agreed groups are built; this rank's (if any) becomes *@out. */
static int build(struct hop_comm *parent, const char *fn,
		 const struct split_rec *all, struct hop_comm **out)
{
	struct member *m;
	int n, me = 0, id, ret;

	if (!all[parent->rank].defined)
		return 0;
	if (!(m = malloc((size_t)parent->nranks * sizeof(*m))))
		return hop_set_error(parent, HOP_ERR_NO_MEMORY, "%s: rank %d: "
				     "out of memory", fn, parent->rank);
	n = group_of(parent, all, m, &me);
	if ((id = pick_id(all, m, n)) < 0) {
		ret = hop_set_error(parent, HOP_ERR_NO_MEMORY, "%s: rank %d: "
				    "every communicator id is in use on the "
				    "ranks of the new communicator (at most "
				    "%d derived communicators live at once); "
				    "destroy some first", fn, parent->rank,
				    HOP_TAG_COMM_MAX);
	} else {
		ret = make_child(parent, m, n, me, id, out);
	}
	free(m);
	return ret;
}

/*
 * The split: @defined 0 for HOP_UNDEFINED. Collective over @parent; every
 * rank returns the same code unless its own allocation fails.
 */
static int split(struct hop_comm *parent, const char *fn, uint64_t color,
		 int defined, int key, struct hop_comm **out)
{
	struct split_rec mine, *all;
	int ret;

	if (!out)
		return hop_comm_refuse(parent, HOP_ERR_INVALID_ARG, "%s: "
				       "newcomm (the output pointer) is NULL",
				       fn);
	*out = NULL;
	if ((ret = hop_comm_enter(parent, fn)))
		return ret;
	memset(&mine, 0, sizeof(mine));
	mine.color = color;
	mine.defined = defined;
	mine.key = key;
	mine.ids_live = parent->root->ids_live;
	all = calloc((size_t)parent->nranks, sizeof(*all));
	hop_comm_leave(parent);
	if (!all)
		return hop_set_error(parent, HOP_ERR_NO_MEMORY, "%s: rank %d: "
				     "out of memory for %d records", fn,
				     parent->rank, parent->nranks);
	/* the parent's own collective: its endpoints, its tag space */
	ret = hop_allgather(parent, &mine, all, sizeof(mine), HOP_UINT8);
	if (!ret && !(ret = hop_comm_enter(parent, fn))) {
		ret = build(parent, fn, all, out);
		hop_comm_leave(parent);
	}
	free(all);
	return ret;
}

int hop_comm_split(hop_comm_t *comm, int color, int key, hop_comm_t **newcomm)
{
	if (newcomm)
		*newcomm = NULL;
	if (color < 0 && color != HOP_UNDEFINED)
		HOP_ENTERED(comm, "hop_comm_split",
			    hop_set_error(comm, HOP_ERR_INVALID_ARG,
					  "hop_comm_split: rank %d: color %d is "
					  "negative and not HOP_UNDEFINED",
					  comm->rank, color));
	return split(comm, "hop_comm_split", (uint64_t)(uint32_t)color,
		     color != HOP_UNDEFINED, key, newcomm);
}

int hop_comm_dup(hop_comm_t *comm, hop_comm_t **newcomm)
{
	return split(comm, "hop_comm_dup", 0, 1, hop_comm_rank(comm), newcomm);
}

int hop_comm_split_host(hop_comm_t *comm, hop_comm_t **newcomm)
{
	/* the host identity the providers use to find peers on this host */
	return split(comm, "hop_comm_split_host", comm->prov_ctx.host_id, 1,
		     hop_comm_rank(comm), newcomm);
}

void hop_split_destroy(struct hop_comm *comm)
{
	struct hop_comm *root = comm->root;

	/* what no peer knows of goes now; the rest is adopted by the root */
	hop_p2p_cancel_comm(comm, HOP_ERR_ABORTED);
	hop_coll_fini(comm);    /* fails @comm when a collective was running */
	/* a failed one's peers may still send on its id, and a communicator
	 * reusing it would take those messages: its id stays out of use */
	if (!atomic_load(&comm->failed))
		root->ids_live &= ~(1ull << comm->comm_id);
	free_child(comm);
	atomic_store(&root->busy, NULL);
}
