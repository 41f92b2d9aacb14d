/*
 * request.c - public requests (hop_request_t) from a per-comm free list,
 * and hop_test()/hop_wait() for point-to-point requests and operations
 * of the layers above (HOP_REQ_OP: completed through their hop_req_ops).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/group.h"

struct hop_request *hop_request_get(struct hop_comm *comm, int kind)
{
	struct hop_p2p *p = comm ? comm->p2p : NULL;
	struct hop_request *r;

	if (!p)
		return NULL;
	if (!p->req_free) {
		struct p2p_req_chunk *c;

		c = malloc(sizeof(*c) + P2P_REQ_CHUNK * sizeof(c->req[0]));
		if (!c) {
			hop_set_error(comm, HOP_ERR_NO_MEMORY,
				      "out of memory allocating requests");
			return NULL;
		}
		c->next = p->req_chunks;
		p->req_chunks = c;
		for (int i = P2P_REQ_CHUNK; i-- > 0;) {
			c->req[i].magic = 0;
			c->req[i].next_free = p->req_free;
			p->req_free = &c->req[i];
		}
	}
	r = p->req_free;
	p->req_free = r->next_free;
	memset(r, 0, sizeof(*r));
	r->magic = HOP_REQ_MAGIC;
	r->kind = kind;
	r->comm = comm;
	return r;
}

void hop_request_put(struct hop_request *r)
{
	struct hop_p2p *p;

	if (!r || !r->comm || !(p = r->comm->p2p))
		return;
	r->magic = 0;
	r->next_free = p->req_free;
	p->req_free = r;
}

void p2p_requests_free(struct hop_p2p *p)
{
	struct p2p_req_chunk *c;

	while ((c = p->req_chunks)) {
		p->req_chunks = c->next;
		free(c);
	}
	p->req_free = NULL;
}

/* The request behind *@reqp, or NULL with the code in *@ret. */
static struct hop_request *req_check(hop_request_t **reqp, int *ret)
{
	struct hop_request *r;

	*ret = HOP_ERR_INVALID_ARG;
	if (!reqp || !(r = *reqp))
		return NULL;
	*ret = HOP_ERR_INVALID_HANDLE;
	if (r->magic != HOP_REQ_MAGIC || !r->comm ||
	    r->comm->magic != HOP_COMM_MAGIC)
		return NULL;
	if (r->kind != HOP_REQ_P2P && r->kind != HOP_REQ_OP)
		return NULL;
	*ret = 0;
	return r;
}

void p2p_status_of(const struct hop_comm *comm, const struct hop_p2p_req *r,
		   int ret, hop_status_t *status)
{
	/* never started (kind 0) or not finished: nothing to report */
	int none = !r->done || !r->kind;
	/* a put has no tag */
	int unmatched = (r->kind == P2P_KIND_RECV && HOP_MATCH_IGNORE(r)) ||
			r->kind == P2P_KIND_PUT;

	if (!status)
		return;
	status->source = none ? -1 : hop_comm_rank_of(comm, r->peer);
	status->tag = none || unmatched ? -1 : (int)HOP_TAG_LO32(r->tag);
	status->bytes = none ? 0 : r->bytes;
	status->error = ret;
}

/* Hand the completed *@reqp's outcome to @status, free it, NULL *@reqp.
 * @ret: an operation's code (HOP_REQ_OP); p2p requests carry theirs. */
static int req_finish(hop_request_t **reqp, int ret, hop_status_t *status)
{
	struct hop_request *r = *reqp;

	if (r->kind == HOP_REQ_P2P) {
		ret = r->p2p.status;
		p2p_status_of(r->comm, &r->p2p, ret, status);
	} else if (status) {
		status->source = -1;
		status->tag = -1;
		status->bytes = 0;
		status->error = ret;
	}
	hop_request_put(r);
	*reqp = NULL;
	return ret;
}

static int test_run(hop_request_t **reqp, int *done, hop_status_t *status)
{
	struct hop_request *r = *reqp;
	int ret, d = 0;

	if (r->kind == HOP_REQ_OP) {
		ret = r->ops->test(r->comm, r->op, &d);
		if (ret == 0 && !d)
			return 0;
		r->ops->release(r->comm, r->op);
		*done = 1;
		return req_finish(reqp, ret, status);
	}
	if (!r->p2p.done)
		hop_p2p_progress(r->comm);  /* a failure completes it */
	if (!r->p2p.done)
		return 0;
	*done = 1;
	return req_finish(reqp, 0, status);
}

int hop_test(hop_request_t **reqp, int *done, hop_status_t *status)
{
	struct hop_request *r;
	int ret;

	if (done)
		*done = 0;
	if (!(r = req_check(reqp, &ret)) || !done)
		return ret ? ret : HOP_ERR_INVALID_ARG;
	/* a failed comm still completes (and frees) its requests */
	HOP_RUN_CLAIMED(hop_comm_claim, r->comm, "hop_test",
			test_run(reqp, done, status));
}

/* A blocking wait inside a group could wait for an operation the group
 * has not posted: refused (hop_group_start()). */
static int in_group(struct hop_comm *comm, const char *fn)
{
	if (!p2p_group_open(comm))
		return 0;
	hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: a group is open on this "
		      "communicator (call hop_group_end() first)", fn);
	return 1;
}

static int wait_run(hop_request_t **reqp, hop_status_t *status)
{
	struct hop_request *r = *reqp;
	int ret;

	if (r->kind == HOP_REQ_OP) {
		ret = r->ops->wait(r->comm, r->op);
		r->ops->release(r->comm, r->op);
		return req_finish(reqp, ret, status);
	}
	ret = hop_p2p_wait(r->comm, &r->p2p);
	if (!r->p2p.done)
		return ret;     /* cannot happen: failures complete requests */
	return req_finish(reqp, 0, status);
}

int hop_wait(hop_request_t **reqp, hop_status_t *status)
{
	struct hop_request *r;
	int ret;

	if (!(r = req_check(reqp, &ret)))
		return ret;
	HOP_RUN_CLAIMED(hop_comm_claim, r->comm, "hop_wait",
			in_group(r->comm, "hop_wait")
				? HOP_ERR_INVALID_ARG
				: wait_run(reqp, status));
}

/* ---- request sets: hop_waitall(), hop_testany(), hop_waitany() ---- */

/* The first non-NULL entry of @reqs, checked: the set's communicator. */
static struct hop_request *set_first(int n, hop_request_t **reqs, int *ret)
{
	*ret = 0;
	if (n < 0 || (n > 0 && !reqs)) {
		*ret = HOP_ERR_INVALID_ARG;
		return NULL;
	}
	for (int i = 0; i < n; i++)
		if (reqs[i])
			return req_check(&reqs[i], ret);
	return NULL;
}

/* Every entry is NULL or a live request of @comm, and a blocking @fn
 * (@blocks) is not inside a group; else the error, with a message naming
 * the index. */
static int set_check(struct hop_comm *comm, const char *fn, int n,
		     hop_request_t **reqs, int blocks)
{
	for (int i = 0; i < n; i++) {
		struct hop_request *r;
		int ret;

		if (!reqs[i])
			continue;
		if (!(r = req_check(&reqs[i], &ret)))
			return hop_set_error(comm, ret, "%s: reqs[%d] is not a "
					     "live request", fn, i);
		if (r->comm != comm)
			return hop_set_error(comm, HOP_ERR_INVALID_ARG,
					     "%s: reqs[%d] belongs to another "
					     "communicator than reqs of the "
					     "first (one set, one comm)", fn, i);
	}
	return blocks && in_group(comm, fn) ? HOP_ERR_INVALID_ARG : 0;
}

static void status_null(hop_status_t *status)
{
	if (status) {
		status->source = -1;
		status->tag = -1;
		status->bytes = 0;
		status->error = 0;
	}
}

static int waitall_run(struct hop_comm *comm, int n, hop_request_t **reqs,
		       hop_status_t *statuses)
{
	char msg[256] = "";
	int first = 0, at = -1, ret;

	if ((ret = set_check(comm, "hop_waitall", n, reqs, 1)))
		return ret;
	/* one progress engine advances every request while any one is
	 * waited for, so waiting in index order is waiting for all */
	for (int i = 0; i < n; i++) {
		hop_status_t *st = statuses ? &statuses[i] : NULL;

		if (!reqs[i]) {
			status_null(st);
			continue;
		}
		ret = wait_run(&reqs[i], st);
		if (ret && !first) {
			first = ret;
			at = i;
			snprintf(msg, sizeof(msg), "%s",
				 hop_comm_last_error(comm));
		}
	}
	if (!first)
		return 0;
	return hop_set_error(comm, first, "hop_waitall: request %d failed: %s",
			     at, msg);
}

int hop_waitall(int n, hop_request_t **reqs, hop_status_t *statuses)
{
	struct hop_request *r;
	int ret;

	if (!(r = set_first(n, reqs, &ret))) {
		for (int i = 0; !ret && statuses && i < n; i++)
			status_null(&statuses[i]);
		return ret;
	}
	HOP_RUN_CLAIMED(hop_comm_claim, r->comm, "hop_waitall",
			waitall_run(r->comm, n, reqs, statuses));
}

/* A scan of a set for its first completed entry. */
struct any_scan {
	int n;
	hop_request_t **reqs;
	int index;              /* the completed entry, or -1 */
	int ret;                /* its code, when an operation (released) */
};

/* Is an entry of @s complete? Sets index; an operation found done is
 * released at once (its code kept), so each scan completes one. */
static int any_done(void *arg)
{
	struct any_scan *s = arg;

	for (int i = 0; i < s->n; i++) {
		struct hop_request *r = s->reqs[i];
		int d = 0;

		if (!r)
			continue;
		if (r->kind == HOP_REQ_P2P) {
			if (!r->p2p.done)
				continue;
			s->ret = 0;
		} else {
			s->ret = r->ops->test(r->comm, r->op, &d);
			if (!s->ret && !d)
				continue;
			r->ops->release(r->comm, r->op);
		}
		s->index = i;
		return 1;
	}
	return 0;
}

/* Finish what any_done() found: *@index, *@done, @status, the code. */
static int any_finish(struct any_scan *s, int *index, int *done,
		      hop_status_t *status)
{
	*index = s->index;
	if (s->index < 0) {
		status_null(status);
		return 0;
	}
	*done = 1;
	return req_finish(&s->reqs[s->index], s->ret, status);
}

static int testany_run(struct hop_comm *comm, int n, hop_request_t **reqs,
		       int *index, int *done, hop_status_t *status)
{
	struct any_scan s = { n, reqs, -1, 0 };
	int ret;

	if ((ret = set_check(comm, "hop_testany", n, reqs, 0)))
		return ret;
	hop_p2p_progress(comm);  /* a failure completes the requests */
	any_done(&s);
	return any_finish(&s, index, done, status);
}

/* Checks shared by hop_testany() and hop_waitany(); the set's request. */
static struct hop_request *any_args(int n, hop_request_t **reqs, int *index,
				    hop_status_t *status, int *ret)
{
	struct hop_request *r;

	if (index)
		*index = -1;
	if (!index) {
		*ret = HOP_ERR_INVALID_ARG;
		return NULL;
	}
	if (!(r = set_first(n, reqs, ret)) && !*ret)
		status_null(status);   /* nothing to complete */
	return r;
}

int hop_testany(int n, hop_request_t **reqs, int *index, int *done,
		hop_status_t *status)
{
	struct hop_request *r;
	int ret;

	if (done)
		*done = 0;
	if (!done)
		return HOP_ERR_INVALID_ARG;
	if (!(r = any_args(n, reqs, index, status, &ret))) {
		*done = ret == 0;
		return ret;
	}
	HOP_RUN_CLAIMED(hop_comm_claim, r->comm, "hop_testany",
			testany_run(r->comm, n, reqs, index, done, status));
}

static int waitany_run(struct hop_comm *comm, int n, hop_request_t **reqs,
		       int *index, hop_status_t *status)
{
	struct any_scan s = { n, reqs, -1, 0 };
	int ret, done = 0;

	if ((ret = set_check(comm, "hop_waitany", n, reqs, 1)))
		return ret;
	ret = hop_p2p_wait_until(comm, any_done, &s, "hop_waitany");
	/* a failed wait completed the requests: hand one back with it */
	if (ret && s.index < 0)
		any_done(&s);
	if (s.index < 0)
		return ret;
	return any_finish(&s, index, &done, status);
}

int hop_waitany(int n, hop_request_t **reqs, int *index,
		hop_status_t *status)
{
	struct hop_request *r;
	int ret;

	if (!(r = any_args(n, reqs, index, status, &ret)))
		return ret;
	HOP_RUN_CLAIMED(hop_comm_claim, r->comm, "hop_waitany",
			waitany_run(r->comm, n, reqs, index, status));
}
