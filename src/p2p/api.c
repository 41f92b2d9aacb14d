/*
 * api.c - the public point-to-point calls (hop/p2p.h): argument checks
 * with messages naming what is wrong, then the channel layer. User tags
 * live in HOP_CTX_USER, apart from collectives and internal traffic.
 */
#include <string.h>

#include "p2p/p2p_priv.h"

/* @tag of @comm's user traffic: its communicator id keeps communicators
 * sharing channels apart (split, dup). */
static inline uint64_t user_tag(const struct hop_comm *comm, int tag)
{
	return HOP_TAG_WITH_COMM(HOP_TAG(HOP_CTX_USER, 0, (uint32_t)tag),
				 comm->comm_id);
}

static int check_xfer(struct hop_comm *comm, const char *fn, const void *buf,
		      size_t len, int peer, int tag)
{
	if (!buf && len)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: buf is NULL with len %zu", fn, len);
	if (peer < 0 || peer >= comm->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: peer %d out of range (comm has %d "
				     "ranks)", fn, peer, comm->nranks);
	if (peer == comm->rank)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: peer %d is this rank (point-to-point "
				     "to self is not supported)", fn, peer);
	if (tag < 0)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: tag %d is negative (tags are 0..%d)",
				     fn, tag, HOP_TAG_MAX);
	return 0;
}

static int send_run(struct hop_comm *comm, const void *buf, size_t len,
		    int peer, int tag)
{
	struct hop_p2p_req r;
	int ret, q;

	if ((ret = check_xfer(comm, "hop_send", buf, len, peer, tag)))
		return ret;
	q = hop_comm_peer(comm, peer);
	if ((ret = p2p_direct_send(comm, q, user_tag(comm, tag), buf, len)))
		return ret < 0 ? ret : 0;
	r.cb = NULL;
	r.cb_arg = NULL;
	if ((ret = hop_p2p_isend(comm, &r, q, user_tag(comm, tag), buf, len,
				 0)))
		return ret;
	return r.done ? r.status : hop_p2p_wait(comm, &r);
}

int hop_send(hop_comm_t *comm, const void *buf, size_t len, int peer,
	     int tag)
{
	HOP_ENTERED(comm, "hop_send", send_run(comm, buf, len, peer, tag));
}

static int recv_run(struct hop_comm *comm, void *buf, size_t len, int peer,
		    int tag, hop_status_t *status)
{
	struct hop_p2p_req r;
	size_t got = 0;
	int ret, q;

	if ((ret = check_xfer(comm, "hop_recv", buf, len, peer, tag)))
		return ret;
	q = hop_comm_peer(comm, peer);
	ret = p2p_direct_recv(comm, q, user_tag(comm, tag), buf, len, &got);
	if (ret < 0)
		return ret;
	if (!ret) {
		r.cb = NULL;
		r.cb_arg = NULL;
		if ((ret = hop_p2p_irecv(comm, &r, q, user_tag(comm, tag), buf,
					 len, 0)))
			return ret;
		ret = r.done ? r.status : hop_p2p_wait(comm, &r);
		got = r.done ? r.bytes : 0;
	} else {
		ret = 0;
	}
	if (status) {
		status->source = peer;
		status->tag = tag;
		status->bytes = got;
	}
	return ret;
}

int hop_recv(hop_comm_t *comm, void *buf, size_t len, int peer, int tag,
	     hop_status_t *status)
{
	HOP_ENTERED(comm, "hop_recv", recv_run(comm, buf, len, peer, tag, status));
}

static int start(hop_comm_t *comm, const char *fn, int send, void *buf,
		 size_t len, int peer, int tag, hop_request_t **req)
{
	struct hop_request *r;
	int ret;

	if (!req)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: req is NULL", fn);
	*req = NULL;
	if ((ret = check_xfer(comm, fn, buf, len, peer, tag)))
		return ret;
	if (!(r = hop_request_get(comm, HOP_REQ_P2P)))
		return HOP_ERR_NO_MEMORY;
	r->p2p.cb = NULL;
	r->p2p.cb_arg = NULL;
	peer = hop_comm_peer(comm, peer);
	ret = send ? hop_p2p_isend(comm, &r->p2p, peer, user_tag(comm, tag), buf,
				   len, 0)
		   : hop_p2p_irecv(comm, &r->p2p, peer, user_tag(comm, tag), buf,
				   len, 0);
	if (ret) {
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
	HOP_ENTERED(comm, "hop_isend", start(comm, "hop_isend", 1, (void *)(uintptr_t)buf,
				   len, peer, tag, req));
}

int hop_irecv(hop_comm_t *comm, void *buf, size_t len, int peer, int tag,
	      hop_request_t **req)
{
	if (req)
		*req = NULL;
	HOP_ENTERED(comm, "hop_irecv", start(comm, "hop_irecv", 0, buf, len, peer, tag,
				   req));
}

static int put_run(struct hop_comm *comm, hop_mr_t *local_mr,
		   const void *src, size_t len, const hop_rkey_t *rkey,
		   uint64_t offset, uint32_t imm)
{
	if (hop_comm_derived(comm))
		return hop_comm_derived_refuse(comm, "hop_put");
	if (!rkey)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_put: rkey is NULL");
	if (!src && len)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_put: src is NULL with len %zu", len);
	if (rkey->owner >= (uint32_t)comm->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_put: rkey owner rank %u out of range "
				     "(comm has %d ranks)", rkey->owner,
				     comm->nranks);
	if (!(rkey->access & HOP_ACCESS_REMOTE_WRITE))
		return hop_set_error(comm, HOP_ERR_OUT_OF_BOUNDS,
				     "hop_put: the region of rank %u (key "
				     "0x%llx) was not registered with "
				     "HOP_ACCESS_REMOTE_WRITE", rkey->owner,
				     (unsigned long long)rkey->key);
	if (offset > rkey->len || len > rkey->len - offset)
		return hop_set_error(comm, HOP_ERR_OUT_OF_BOUNDS,
				     "hop_put: offset %llu + len %zu exceeds "
				     "the %llu B region of rank %u",
				     (unsigned long long)offset, len,
				     (unsigned long long)rkey->len,
				     rkey->owner);
	if (local_mr) {
		uintptr_t a = (uintptr_t)src, b = (uintptr_t)local_mr->addr;

		if (local_mr->magic != HOP_MR_MAGIC || local_mr->comm != comm)
			return hop_set_error(comm, HOP_ERR_INVALID_ARG,
					     "hop_put: local_mr is not a live "
					     "region of this communicator");
		if (len && (a < b || len > local_mr->len ||
			    a - b > local_mr->len - len))
			return hop_set_error(comm, HOP_ERR_INVALID_ARG,
					     "hop_put: source [%p, +%zu) is "
					     "not inside local_mr [%p, +%zu)",
					     src, len, local_mr->addr,
					     local_mr->len);
	}
	if (rkey->owner == (uint32_t)comm->rank && len &&
	    !p2p_mr_find_key(comm->p2p, rkey->key, rkey->addr + offset, len))
		return hop_set_error(comm, HOP_ERR_OUT_OF_BOUNDS,
				     "hop_put to self: no live region with key "
				     "0x%llx holds [0x%llx, +%zu)",
				     (unsigned long long)rkey->key,
				     (unsigned long long)(rkey->addr + offset),
				     len);
	return hop_p2p_put(comm, local_mr ? local_mr->pmr : NULL, src, len,
			   (int)rkey->owner, rkey->addr + offset, rkey->key,
			   imm);
}

int hop_put(hop_comm_t *comm, hop_mr_t *local_mr, const void *src,
	    size_t len, const hop_rkey_t *rkey, uint64_t offset, uint32_t imm)
{
	HOP_ENTERED(comm, "hop_put", put_run(comm, local_mr, src, len, rkey, offset,
				   imm));
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
