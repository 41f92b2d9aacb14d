/*
 * api.c - the public point-to-point calls (hop/p2p.h): argument checks
 * with messages naming what is wrong, then the channel layer. User tags
 * live in HOP_CTX_USER, apart from collectives and internal traffic; a
 * receive of HOP_ANY_TAG ignores only the user's 32 bits of the internal
 * tag, so it stays inside that space.
 */
#include <string.h>

#include "p2p/group.h"

/* @tag of @comm's user traffic: its communicator id keeps communicators
 * sharing channels apart (split, dup). */
static inline uint64_t user_tag(const struct hop_comm *comm, int tag)
{
	return HOP_TAG_WITH_COMM(HOP_TAG(HOP_CTX_USER, 0, (uint32_t)tag),
				 comm->comm_id);
}

/* @wild: the receive forms, which take HOP_ANY_SOURCE and HOP_ANY_TAG. */
static int check_xfer(struct hop_comm *comm, const char *fn, const void *buf,
		      size_t len, int peer, int tag, int wild)
{
	if (!buf && len)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: buf is NULL with len %zu", fn, len);
	if ((peer < 0 || peer >= comm->nranks) &&
	    !(wild && peer == HOP_ANY_SOURCE))
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: peer %d out of range (comm has %d "
				     "ranks%s)", fn, peer, comm->nranks,
				     wild ? "; HOP_ANY_SOURCE is -1" : "");
	if (tag < 0 && !(wild && tag == HOP_ANY_TAG))
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: tag %d is negative (tags are 0..%d%s)",
				     fn, tag, HOP_TAG_MAX,
				     wild ? "; HOP_ANY_TAG is -1" : "");
	return 0;
}

int p2p_user_post(struct hop_comm *comm, struct hop_p2p_req *r,
		  const struct p2p_user_op *op)
{
	int peer = op->peer == HOP_ANY_SOURCE ? HOP_MATCH_ANY_PEER
					      : hop_comm_peer(comm, op->peer);

	if (op->send)
		return hop_p2p_isend(comm, r, peer, user_tag(comm, op->tag),
				     op->buf, op->len, 0);
	return hop_p2p_irecv_match(comm, r, peer,
				   user_tag(comm, op->tag == HOP_ANY_TAG ? 0
								 : op->tag),
				   op->tag == HOP_ANY_TAG ? HOP_MATCH_ANY_TAG : 0,
				   op->buf, op->len, 0);
}

/*
 * A blocking send or receive to or from this rank (or from any source on
 * a communicator of one rank) that posting did not complete can never
 * complete: the comm is claimed by this call, so no other call can post
 * its partner. Withdraw it and say why.
 */
static int self_unmatched(struct hop_comm *comm, struct hop_p2p_req *r,
			  const struct p2p_user_op *op)
{
	struct hop_p2p *p = comm->p2p;
	struct hop_match *m = &p->peers[p->rank].mq;
	struct hop_ux *ux;

	if (!op->send && op->peer == HOP_ANY_SOURCE) {
		hop_rlist_remove(&p->any.posted, r);
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_recv: HOP_ANY_SOURCE on a "
				     "communicator of one rank, and no message "
				     "from this rank with tag %d was sent (a "
				     "blocking receive from self needs the send "
				     "first)", op->tag);
	}
	if (!op->send) {
		hop_rlist_remove(&m->posted, r);
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_recv: peer %d is this rank and no "
				     "message from it with tag %d was sent "
				     "(a blocking receive from self needs the "
				     "send first)", op->peer, op->tag);
	}
	for (ux = m->unexp.head; ux && ux->sreq != r; ux = ux->next)
		;
	if (ux) {
		hop_match_remove_unexp(m, ux);
		hop_ux_put(&p->uxpool, ux);
	}
	return hop_set_error(comm, HOP_ERR_INVALID_ARG,
			     "hop_send: peer %d is this rank, the %zu B message "
			     "is larger than HOP_EAGER_SIZE (%zu B) and no "
			     "receive for it is posted (post hop_irecv first, "
			     "or send inside a group)", op->peer, op->len,
			     p->eager_size);
}

/* Post @op and wait for it; @r receives the outcome. */
static int blocking_run(struct hop_comm *comm, struct hop_p2p_req *r,
			const struct p2p_user_op *op)
{
	int ret;

	r->cb = NULL;
	r->cb_arg = NULL;
	if ((ret = p2p_user_post(comm, r, op)))
		return ret;
	if (r->done)
		return r->status;
	/* on one rank, any source can only be this rank */
	if (op->peer == comm->rank ||
	    (op->peer == HOP_ANY_SOURCE && comm->nranks == 1))
		return self_unmatched(comm, r, op);
	return hop_p2p_wait(comm, r);
}

static int send_run(struct hop_comm *comm, const void *buf, size_t len,
		    int peer, int tag)
{
	struct p2p_user_op op = { 1, (void *)(uintptr_t)buf, len, peer, tag };
	struct hop_p2p_req r;
	int ret;

	if ((ret = check_xfer(comm, "hop_send", buf, len, peer, tag, 0)))
		return ret;
	if (p2p_group_open(comm))
		return p2p_group_add(comm, &op, NULL);
	if (peer != comm->rank &&
	    (ret = p2p_direct_send(comm, hop_comm_peer(comm, peer),
				   user_tag(comm, tag), buf, len)))
		return ret < 0 ? ret : 0;
	return blocking_run(comm, &r, &op);
}

int hop_send(hop_comm_t *comm, const void *buf, size_t len, int peer,
	     int tag)
{
	HOP_ENTERED(comm, "hop_send", send_run(comm, buf, len, peer, tag));
}

/* The direct path (eager_direct.c) matches one peer and one tag, and only
 * when no earlier receive from any source could take the message. */
static int direct_ok(const struct hop_comm *comm, int peer, int tag)
{
	return peer >= 0 && peer != comm->rank && tag >= 0 &&
	       !comm->p2p->any.posted.head;
}

static int recv_run(struct hop_comm *comm, void *buf, size_t len, int peer,
		    int tag, hop_status_t *status)
{
	struct p2p_user_op op = { 0, buf, len, peer, tag };
	struct hop_p2p_req r = { .done = 0 };
	size_t got = 0;
	int ret;

	if ((ret = check_xfer(comm, "hop_recv", buf, len, peer, tag, 1)))
		return ret;
	if (p2p_group_open(comm))
		return p2p_group_add(comm, &op, status);
	ret = direct_ok(comm, peer, tag)
		      ? p2p_direct_recv(comm, hop_comm_peer(comm, peer),
					user_tag(comm, tag), buf, len, &got)
		      : 0;
	if (ret > 0) {
		r.kind = P2P_KIND_RECV;
		r.done = 1;
		r.peer = hop_comm_peer(comm, peer);
		r.tag = user_tag(comm, tag);
		r.bytes = got;
		ret = 0;
	} else if (ret == 0) {
		ret = blocking_run(comm, &r, &op);
	}
	p2p_status_of(comm, &r, ret, status);
	return ret;
}

int hop_recv(hop_comm_t *comm, void *buf, size_t len, int peer, int tag,
	     hop_status_t *status)
{
	HOP_ENTERED(comm, "hop_recv", recv_run(comm, buf, len, peer, tag,
					       status));
}

static int start(hop_comm_t *comm, const char *fn, int send, void *buf,
		 size_t len, int peer, int tag, hop_request_t **req)
{
	struct p2p_user_op op = { send, buf, len, peer, tag };
	struct hop_request *r;
	int ret;

	if (!req)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: req is NULL", fn);
	*req = NULL;
	if ((ret = check_xfer(comm, fn, buf, len, peer, tag, !send)))
		return ret;
	if (!(r = hop_request_get(comm, HOP_REQ_P2P)))
		return HOP_ERR_NO_MEMORY;
	r->p2p.cb = NULL;
	r->p2p.cb_arg = NULL;
	if ((ret = p2p_user_post(comm, &r->p2p, &op))) {
		hop_request_put(r);
		return ret;
	}
	*req = r;
	return 0;
}

int hop_isend(hop_comm_t *comm, const void *buf, size_t len, int peer,
	      int tag, hop_request_t **req)
{
	if (req)
		*req = NULL;
	HOP_ENTERED(comm, "hop_isend", start(comm, "hop_isend", 1,
					     (void *)(uintptr_t)buf, len,
					     peer, tag, req));
}

int hop_irecv(hop_comm_t *comm, void *buf, size_t len, int peer, int tag,
	      hop_request_t **req)
{
	if (req)
		*req = NULL;
	HOP_ENTERED(comm, "hop_irecv", start(comm, "hop_irecv", 0, buf, len,
					     peer, tag, req));
}
/* The checks of hop_put() and hop_iput() (@fn), with messages naming
 * what is wrong. */
static int check_put(struct hop_comm *comm, const char *fn,
		     const hop_mr_t *local_mr, const void *src, size_t len,
		     const hop_rkey_t *rkey, uint64_t offset)
{
	if (hop_comm_derived(comm))
		return hop_comm_derived_refuse(comm, fn);
	if (!rkey)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: rkey is NULL", fn);
	if (!src && len)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: src is NULL with len %zu", fn, len);
	if (rkey->owner >= (uint32_t)comm->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: rkey owner rank %u out of range "
				     "(comm has %d ranks)", fn, rkey->owner,
				     comm->nranks);
	if (!(rkey->access & HOP_ACCESS_REMOTE_WRITE))
		return hop_set_error(comm, HOP_ERR_OUT_OF_BOUNDS,
				     "%s: the region of rank %u (key 0x%llx) "
				     "was not registered with "
				     "HOP_ACCESS_REMOTE_WRITE", fn, rkey->owner,
				     (unsigned long long)rkey->key);
	if (offset > rkey->len || len > rkey->len - offset)
		return hop_set_error(comm, HOP_ERR_OUT_OF_BOUNDS,
				     "%s: offset %llu + len %zu exceeds the "
				     "%llu B region of rank %u", fn,
				     (unsigned long long)offset, len,
				     (unsigned long long)rkey->len,
				     rkey->owner);
	if (local_mr) {
		uintptr_t a = (uintptr_t)src, b = (uintptr_t)local_mr->addr;

		if (local_mr->magic != HOP_MR_MAGIC || local_mr->comm != comm)
			return hop_set_error(comm, HOP_ERR_INVALID_ARG,
					     "%s: local_mr is not a live region "
					     "of this communicator", fn);
		if (len && (a < b || len > local_mr->len ||
			    a - b > local_mr->len - len))
			return hop_set_error(comm, HOP_ERR_INVALID_ARG,
					     "%s: source [%p, +%zu) is not "
					     "inside local_mr [%p, +%zu)", fn,
					     src, len, local_mr->addr,
					     local_mr->len);
	}
	if (rkey->owner == (uint32_t)comm->rank && len &&
	    !p2p_mr_find_key(comm->p2p, rkey->key, rkey->addr + offset, len))
		return hop_set_error(comm, HOP_ERR_OUT_OF_BOUNDS,
				     "%s to self: no live region with key "
				     "0x%llx holds [0x%llx, +%zu)", fn,
				     (unsigned long long)rkey->key,
				     (unsigned long long)(rkey->addr + offset),
				     len);
	return 0;
}

/* Check and start a put; *@out: its request (freed on failure). */
static int iput_start(struct hop_comm *comm, const char *fn,
		      hop_mr_t *local_mr, const void *src, size_t len,
		      const hop_rkey_t *rkey, uint64_t offset, uint32_t imm,
		      struct hop_request **out)
{
	struct hop_request *r;
	int ret;

	if ((ret = check_put(comm, fn, local_mr, src, len, rkey, offset)))
		return ret;
	if (!(r = hop_request_get(comm, HOP_REQ_P2P)))
		return HOP_ERR_NO_MEMORY;
	ret = hop_p2p_iput(comm, &r->p2p, local_mr ? local_mr->pmr : NULL,
			   src, len, (int)rkey->owner, rkey->addr + offset,
			   rkey->key, imm);
	if (ret) {
		hop_request_put(r);
		return ret;
	}
	*out = r;
	return 0;
}

static int iput_run(struct hop_comm *comm, hop_mr_t *local_mr,
		    const void *src, size_t len, const hop_rkey_t *rkey,
		    uint64_t offset, uint32_t imm, hop_request_t **req)
{
	if (!req)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_iput: req is NULL");
	return iput_start(comm, "hop_iput", local_mr, src, len, rkey, offset,
			  imm, req);
}

int hop_iput(hop_comm_t *comm, hop_mr_t *local_mr, const void *src,
	     size_t len, const hop_rkey_t *rkey, uint64_t offset, uint32_t imm,
	     hop_request_t **req)
{
	if (req)
		*req = NULL;
	HOP_ENTERED(comm, "hop_iput", iput_run(comm, local_mr, src, len, rkey,
					       offset, imm, req));
}

/* hop_iput() and a wait for it. */
static int put_run(struct hop_comm *comm, hop_mr_t *local_mr,
		   const void *src, size_t len, const hop_rkey_t *rkey,
		   uint64_t offset, uint32_t imm)
{
	struct hop_request *r;
	int ret;

	if ((ret = iput_start(comm, "hop_put", local_mr, src, len, rkey,
			      offset, imm, &r)))
		return ret;
	ret = hop_p2p_wait(comm, &r->p2p);
	if (!r->p2p.done)
		return ret;     /* cannot happen: failures complete requests */
	ret = r->p2p.status;
	hop_request_put(r);
	return ret;
}

int hop_put(hop_comm_t *comm, hop_mr_t *local_mr, const void *src,
	    size_t len, const hop_rkey_t *rkey, uint64_t offset, uint32_t imm)
{
	HOP_ENTERED(comm, "hop_put", put_run(comm, local_mr, src, len, rkey,
					     offset, imm));
}

static int wait_imm_run(struct hop_comm *comm, int peer, uint32_t *imm,
			int *source, size_t *bytes)
{
	if (hop_comm_derived(comm))
		return hop_comm_derived_refuse(comm, "hop_wait_imm");
	if (!imm)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_wait_imm: imm is NULL");
	if (peer < -1 || peer >= comm->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_wait_imm: peer %d out of range (-1 "
				     "or 0..%d)", peer, comm->nranks - 1);
	return hop_p2p_wait_imm(comm, peer, imm, source, bytes);
}

int hop_wait_imm(hop_comm_t *comm, int peer, uint32_t *imm, int *source,
		 size_t *bytes)
{
	HOP_ENTERED(comm, "hop_wait_imm", wait_imm_run(comm, peer, imm, source, bytes));
}
