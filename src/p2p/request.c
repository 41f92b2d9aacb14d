/*
 * request.c - public requests (hop_request_t) from a per-comm free list,
 * and hop_test()/hop_wait() for point-to-point requests and operations
 * of the layers above (HOP_REQ_OP: completed through their hop_req_ops).
 */
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p_priv.h"

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

static int req_finish(hop_request_t **reqp, hop_status_t *status)
{
	struct hop_request *r = *reqp;
	int ret;

	if (r->kind == HOP_REQ_P2P) {
		ret = r->p2p.status;
		if (status) {
			status->source = hop_comm_rank_of(r->comm,
							  r->p2p.peer);
			status->tag = (int)(uint32_t)r->p2p.tag;
			status->bytes = r->p2p.bytes;
		}
	} else {
		ret = 0;
		if (status) {
			status->source = -1;
			status->tag = -1;
			status->bytes = 0;
		}
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
		req_finish(reqp, status);
		return ret;
	}
	if (!r->p2p.done)
		hop_p2p_progress(r->comm);  /* a failure completes it */
	if (!r->p2p.done)
		return 0;
	*done = 1;
	return req_finish(reqp, status);
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

static int wait_run(hop_request_t **reqp, hop_status_t *status)
{
	struct hop_request *r = *reqp;
	int ret;

	if (r->kind == HOP_REQ_OP) {
		ret = r->ops->wait(r->comm, r->op);
		r->ops->release(r->comm, r->op);
		req_finish(reqp, status);
		return ret;
	}
	ret = hop_p2p_wait(r->comm, &r->p2p);
	if (!r->p2p.done)
		return ret;     /* cannot happen: failures complete requests */
	return req_finish(reqp, status);
}

int hop_wait(hop_request_t **reqp, hop_status_t *status)
{
	struct hop_request *r;
	int ret;

	if (!(r = req_check(reqp, &ret)))
		return ret;
	HOP_RUN_CLAIMED(hop_comm_claim, r->comm, "hop_wait",
			wait_run(reqp, status));
}
