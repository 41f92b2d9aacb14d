/*
 * group.c - grouped point-to-point (hop_group_start()/hop_group_end()):
 * hop_send()/hop_recv() inside a group are queued; the outermost end
 * posts them all as nonblocking requests and waits for all at once.
 *
 * Why that cannot deadlock: nothing is waited for until everything is
 * posted, and one progress engine advances every request while the wait
 * runs, so each rank's sends and receives proceed whatever order its peers
 * queued theirs in. Receives are posted before sends so that messages
 * (this rank's own included) find their receive posted instead of being
 * kept as unexpected; each kind keeps call order, which is all the
 * ordering rules constrain.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/group.h"

void p2p_group_free(struct hop_p2p *p)
{
	if (p->group) {
		free(p->group->ops);
		free(p->group);
		p->group = NULL;
	}
}

static int start_run(struct hop_comm *comm)
{
	struct hop_p2p *p = comm->p2p;

	if (!p)
		return hop_set_error(comm, HOP_ERR_INVALID_HANDLE,
				     "hop_group_start: communicator has no "
				     "point-to-point channels");
	if (!p->group && !(p->group = calloc(1, sizeof(*p->group))))
		return hop_set_error(comm, HOP_ERR_NO_MEMORY,
				     "hop_group_start: out of memory");
	p->group->depth++;
	return 0;
}

int hop_group_start(hop_comm_t *comm)
{
	HOP_ENTERED(comm, "hop_group_start", start_run(comm));
}

int p2p_group_add(struct hop_comm *comm, const struct p2p_user_op *op,
		  hop_status_t *status)
{
	struct p2p_group *g = comm->p2p->group;
	struct p2p_group_op *o;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;

		if (!(o = realloc(g->ops, cap * sizeof(*o))))
			return hop_set_error(comm, HOP_ERR_NO_MEMORY,
					     "%s: out of memory queueing "
					     "operation %zu of the group",
					     op->send ? "hop_send" : "hop_recv",
					     g->n);
		g->ops = o;
		g->cap = cap;
	}
	o = &g->ops[g->n++];
	memset(&o->req, 0, sizeof(o->req));    /* kind 0: not posted */
	o->op = *op;
	o->status = status;
	return 0;
}

/* Post the queued operations of one kind; the first failure to post. */
static int post_kind(struct hop_comm *comm, struct p2p_group *g, int send)
{
	for (size_t i = 0; i < g->n; i++) {
		struct p2p_group_op *o = &g->ops[i];
		int ret;

		if (o->op.send != send)
			continue;
		if ((ret = p2p_user_post(comm, &o->req, &o->op))) {
			/* not posted: it fails with the code, unlinked */
			o->req.done = 1;
			o->req.status = ret;
			o->req.bytes = 0;
			return ret;
		}
	}
	return 0;
}

/* Operations a failure kept from being posted fail with its code. */
static void fail_unposted(struct p2p_group *g, int code)
{
	for (size_t i = 0; i < g->n; i++) {
		struct hop_p2p_req *r = &g->ops[i].req;

		if (r->kind || r->done)
			continue;
		r->done = 1;
		r->status = code;
		r->peer = -1;
	}
}

static int all_done(void *arg)
{
	const struct p2p_group *g = arg;

	for (size_t i = 0; i < g->n; i++)
		if (!g->ops[i].req.done)
			return 0;
	return 1;
}

static void describe(void *arg, char *buf, size_t len)
{
	const struct p2p_group *g = arg;
	char what[96];

	for (size_t i = 0; i < g->n; i++) {
		if (g->ops[i].req.done)
			continue;
		p2p_describe_req(&g->ops[i].req, what, sizeof(what));
		snprintf(buf, len, "hop_group_end: operation %zu of %zu (%s)",
			 i, g->n, what);
		return;
	}
	snprintf(buf, len, "hop_group_end");
}

/* Statuses, and the first failure in call order, named. */
static int collect(struct hop_comm *comm, struct p2p_group *g)
{
	char msg[256] = "";
	size_t at = 0;
	int first = 0;

	for (size_t i = 0; i < g->n; i++) {
		struct p2p_group_op *o = &g->ops[i];

		if (o->status)
			p2p_status_of(comm, &o->req, o->req.status, o->status);
		if (o->req.status && !first) {
			first = o->req.status;
			at = i;
		}
	}
	if (!first)
		return 0;
	/* the last error may be another operation's: named as such */
	snprintf(msg, sizeof(msg), "%s", hop_comm_last_error(comm));
	return hop_set_error(comm, first, "hop_group_end: operation %zu (%s "
			     "rank %d tag %d) failed with %s (%s); last error "
			     "of the communicator: %s", at,
			     g->ops[at].op.send ? "send to" : "recv from",
			     g->ops[at].op.peer, g->ops[at].op.tag,
			     hop_err_name(first), hop_strerror(first), msg);
}

static int run(struct hop_comm *comm, struct p2p_group *g)
{
	int ret;

	ret = post_kind(comm, g, 0);
	if (!ret)
		ret = post_kind(comm, g, 1);
	if (ret)
		fail_unposted(g, ret);
	ret = hop_p2p_wait_described(comm, all_done, g, describe, g);
	if (!all_done(g))
		return ret;     /* cannot happen: failures complete requests */
	return collect(comm, g);
}

static int end_run(struct hop_comm *comm)
{
	struct hop_p2p *p = comm->p2p;
	struct p2p_group *g = p ? p->group : NULL;
	int ret;

	if (!g || g->depth <= 0)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_group_end: no group is open on this "
				     "communicator (hop_group_start() first)");
	if (--g->depth > 0)
		return 0;
	ret = g->n ? run(comm, g) : 0;
	g->n = 0;
	return ret;
}

/* The comm may have failed inside the group: the claim that lets a
 * failed comm's requests complete, so the queue is still emptied. */
int hop_group_end(hop_comm_t *comm)
{
	HOP_RUN_CLAIMED(hop_comm_claim, comm, "hop_group_end", end_run(comm));
}
