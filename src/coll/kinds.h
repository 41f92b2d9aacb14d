/*
 * kinds.h - the collective kinds and algorithm ids: the vocabulary the
 * cost model prices (src/model) and the schedule builders build
 * (src/coll). Enums only, including nothing, so the model, which sits
 * below coll, can use them (tests/check-layers.sh allows this one header).
 */
#ifndef HOP_COLL_KINDS_H
#define HOP_COLL_KINDS_H

enum hop_coll_kind {
	HOP_COLL_BROADCAST = 0,
	HOP_COLL_REDUCE,
	HOP_COLL_ALLREDUCE,
	HOP_COLL_ALLGATHER,
	HOP_COLL_REDUCESCATTER,
	HOP_COLL_BARRIER,
	HOP_COLL_ALLTOALL,
	HOP_COLL_ALLTOALLV,
	/* gather, scatter: flat, tree (binomial); the v-variants: ring */
	HOP_COLL_GATHER,
	HOP_COLL_SCATTER,
	HOP_COLL_ALLGATHERV,
	HOP_COLL_REDUCESCATTERV,
	HOP_COLL_KIND_COUNT
};

enum hop_coll_algo {
	HOP_ALGO_AUTO = 0,
	HOP_ALGO_FLAT,          /* bcast, reduce */
	HOP_ALGO_TREE,          /* bcast, reduce: binomial; allreduce: binomial reduce+bcast */
	HOP_ALGO_CHAIN,         /* bcast, reduce: pipelined chain */
	HOP_ALGO_RING,          /* allreduce, allgather, reducescatter */
	HOP_ALGO_DBTREE,        /* allreduce: double binary tree */
	HOP_ALGO_RD,            /* allreduce: recursive doubling */
	HOP_ALGO_RABENSEIFNER,  /* allreduce */
	HOP_ALGO_BRUCK,         /* allgather, alltoall */
	HOP_ALGO_HALVING,       /* reducescatter: recursive halving */
	HOP_ALGO_DISSEMINATION, /* barrier */
	HOP_ALGO_PAIRWISE,      /* alltoall, alltoallv */
	/* allreduce, bcast, reduce, allgather, reducescatter, barrier: an
	 * intra-host phase, an inter-host phase, an intra-host phase */
	HOP_ALGO_HIER,
	HOP_ALGO_COUNT
};

#endif /* HOP_COLL_KINDS_H */
