/*
 * group.h - what the public point-to-point calls (api.c), groups
 * (group.c) and request sets (request.c) share.
 */
#ifndef HOP_P2P_GROUP_H
#define HOP_P2P_GROUP_H

#include <hop/p2p.h>

#include "p2p/p2p_priv.h"

/* One send or receive of the public API, as the user named it: @peer may
 * be HOP_ANY_SOURCE and @tag HOP_ANY_TAG for a receive. */
struct p2p_user_op {
	int send;
	void *buf;
	size_t len;
	int peer, tag;
};

/* Start @op into @r (its callback fields set by the caller): user tag
 * space, wildcards turned into the channel layer's. */
int p2p_user_post(struct hop_comm *comm, struct hop_p2p_req *r,
		  const struct p2p_user_op *op);

/* The public status of request @r whose outcome is @ret: one never
 * started or not finished has source and tag -1, a wildcard receive that
 * no message matched -1 for what it left open. */
void p2p_status_of(const struct hop_comm *comm, const struct hop_p2p_req *r,
		   int ret, hop_status_t *status);

/* A queued operation; @req is posted in place by hop_group_end(). */
struct p2p_group_op {
	struct hop_p2p_req req;
	struct p2p_user_op op;
	hop_status_t *status;
};

/* The group of a communicator: kept between groups for reuse. */
struct p2p_group {
	int depth;              /* hop_group_start() calls not yet ended */
	size_t n, cap;
	struct p2p_group_op *ops;
};

/* Is a group open on @comm? */
static inline int p2p_group_open(const struct hop_comm *comm)
{
	const struct hop_p2p *p = comm->p2p;

	return p && p->group && p->group->depth > 0;
}

/* Queue @op (arguments already checked) in @comm's open group; @status
 * is written by hop_group_end(). 0 or HOP_ERR_NO_MEMORY. */
int p2p_group_add(struct hop_comm *comm, const struct p2p_user_op *op,
		  hop_status_t *status);

#endif /* HOP_P2P_GROUP_H */
