/*
 * mem.c - public memory registration (hop/mem.h): regions peers hop_put()
 * into. Each live region is on its communicator's list, so that
 * hop_comm_destroy() releases what the application forgot and a put to
 * this rank can check its key.
 */
#include <stdlib.h>

#include "p2p/p2p_priv.h"

#define ACCESS_ALL (HOP_ACCESS_REMOTE_WRITE | HOP_ACCESS_REMOTE_READ)

static int mem_register(hop_comm_t *comm, void *buf, size_t len,
			unsigned access, hop_mr_t **mrp)
{
	struct hop_p2p *p = comm->p2p;
	struct hop_mr *mr;
	int ret;

	if (!mrp)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_mem_register: mr is NULL");
	*mrp = NULL;
	if (!buf && len)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_mem_register: buf is NULL with len "
				     "%zu", len);
	if (!hop_prov_range_ok(buf, len))
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_mem_register: %zu B at %p do not fit "
				     "the address space (the range wraps or is "
				     "larger than any object)", len, buf);
	if (access & ~(unsigned)ACCESS_ALL)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_mem_register: unknown access bits "
				     "0x%x (allowed: HOP_ACCESS_REMOTE_WRITE, "
				     "HOP_ACCESS_REMOTE_READ)",
				     access & ~(unsigned)ACCESS_ALL);
	if (!p)
		return hop_set_error(comm, HOP_ERR_INVALID_HANDLE,
				     "hop_mem_register: communicator has no "
				     "channels");
	if (!(mr = calloc(1, sizeof(*mr))))
		return hop_set_error(comm, HOP_ERR_NO_MEMORY,
				     "hop_mem_register: out of memory");
	if (len) {
		ret = p->ops->mr_reg(p->prov, buf, len, access, &mr->pmr);
		if (ret) {
			free(mr);
			if (ret > 0)
				ret = HOP_ERR_TRANSPORT;
			return hop_set_error(comm, ret, "hop_mem_register: "
					     "registering %zu B at %p on %s "
					     "failed: %s", len, buf,
					     p->ops->name, hop_strerror(ret));
		}
	}
	mr->magic = HOP_MR_MAGIC;
	mr->comm = comm;
	mr->addr = buf;
	mr->len = len;
	mr->access = access;
	mr->next = p->mrs;
	if (p->mrs)
		p->mrs->prev = mr;
	p->mrs = mr;
	*mrp = mr;
	return 0;
}

static void mr_release(struct hop_p2p *p, struct hop_mr *mr)
{
	if (mr->prev)
		mr->prev->next = mr->next;
	else
		p->mrs = mr->next;
	if (mr->next)
		mr->next->prev = mr->prev;
	if (mr->pmr && p->prov)
		p->ops->mr_dereg(p->prov, mr->pmr);
	mr->magic = 0;
	free(mr);
}

static int mem_deregister(hop_comm_t *comm, hop_mr_t *mr)
{
	struct hop_p2p *p;
	struct hop_mr *m;

	if (!mr)
		return 0;
	if (!(p = comm->p2p))
		return HOP_ERR_INVALID_HANDLE;
	for (m = p->mrs; m && m != mr; m = m->next)
		;
	if (!m)
		return hop_set_error(comm, HOP_ERR_INVALID_HANDLE,
				     "hop_mem_deregister: %p is not a live "
				     "region of this communicator", (void *)mr);
	/* a buffer the application releases may be freed and reused: forget
	 * cached registrations of that range too */
	hop_regcache_invalidate(&p->rc, mr->addr, mr->len);
	mr_release(p, mr);
	return 0;
}

int hop_mem_register(hop_comm_t *comm, void *buf, size_t len,
		     unsigned access, hop_mr_t **mrp)
{
	HOP_ENTERED(comm, "hop_mem_register",
		    hop_comm_derived(comm)
			    ? hop_comm_derived_refuse(comm, "hop_mem_register")
			    : mem_register(comm, buf, len, access, mrp));
}

/* Claimed without the failed-state check: releasing must always work. */
int hop_mem_deregister(hop_comm_t *comm, hop_mr_t *mr)
{
	HOP_RUN_CLAIMED(hop_comm_claim, comm, "hop_mem_deregister",
			mem_deregister(comm, mr));
}

int hop_mr_rkey(const hop_mr_t *mr, hop_rkey_t *rkey)
{
	if (!mr || !rkey || mr->magic != HOP_MR_MAGIC)
		return HOP_ERR_INVALID_ARG;
	rkey->addr = (uint64_t)(uintptr_t)mr->addr;
	rkey->len = mr->len;
	rkey->key = mr->pmr ? mr->pmr->key : 0;
	rkey->owner = (uint32_t)mr->comm->rank;
	rkey->access = mr->access;
	return 0;
}

void p2p_mrs_free(struct hop_p2p *p)
{
	while (p->mrs)
		mr_release(p, p->mrs);
}

/* The live region of this rank behind @key that holds [addr, addr + len)
 * and accepts remote writes; NULL if none. */
struct hop_mr *p2p_mr_find_key(struct hop_p2p *p, uint64_t key, uint64_t addr,
			       uint64_t len)
{
	for (struct hop_mr *m = p->mrs; m; m = m->next) {
		uint64_t a = (uint64_t)(uintptr_t)m->addr;

		if (!m->pmr || m->pmr->key != key ||
		    !(m->access & HOP_ACCESS_REMOTE_WRITE))
			continue;
		if (addr >= a && len <= m->len && addr - a <= m->len - len)
			return m;
	}
	return NULL;
}
