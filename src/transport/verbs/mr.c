/*
 * mr.c - memory registration of the verbs provider, with the least access
 * flags: a region that is only a write source gets none (the HCA reads it
 * with the local key), REMOTE_WRITE (which verbs require to come with
 * LOCAL_WRITE) only when peers write into it, REMOTE_READ only when asked.
 * Repeated registration of the same buffer is avoided above us, by the
 * p2p layer's registration cache.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/verbs/verbs.h"

int vrb_access_flags(unsigned access)
{
	int f = 0;

	if (access & HOP_PROV_REMOTE_WRITE)
		f |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (access & HOP_PROV_REMOTE_READ)
		f |= IBV_ACCESS_REMOTE_READ;
	return f;
}

int vrb_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out)
{
	struct vrb_mr *m;

	if (!out || (len && !addr))
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
				     "verbs: mr_reg(%p, %zu): %s", addr, len,
				     out ? "NULL address" : "NULL out");
	if (access & ~(unsigned)(HOP_PROV_REMOTE_WRITE | HOP_PROV_REMOTE_READ))
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_ARG,
				     "verbs: mr_reg: unknown access bits 0x%x", access);
	m = calloc(1, sizeof(*m));
	if (!m)
		return prov->pctx->error(prov->pctx, HOP_ERR_NO_MEMORY,
				     "verbs: mr_reg: out of memory");
	if (len) {
		m->mr = ibv_reg_mr(prov->pd, addr, len, vrb_access_flags(access));
		if (!m->mr) {
			int e = errno;

			free(m);
			return prov->pctx->error(prov->pctx,
					     e == ENOMEM ? HOP_ERR_NO_MEMORY : HOP_ERR_TRANSPORT,
					     "verbs: rank %d: ibv_reg_mr(%p, %zu bytes, "
					     "access 0x%x) on %s: %s%s", prov->rank, addr,
					     len, vrb_access_flags(access), prov->devname,
					     strerror(e), e == ENOMEM || e == EPERM ?
					     " (RLIMIT_MEMLOCK? see ulimit -l)" : "");
		}
	}
	m->pub.addr = addr;
	m->pub.len = len;
	m->pub.key = m->mr ? m->mr->rkey : 0;
	m->pub.access = access;
	m->magic = VRB_MR_MAGIC;
	m->next = prov->mrs;
	if (prov->mrs)
		prov->mrs->prev = m;
	prov->mrs = m;
	*out = &m->pub;
	return 0;
}

static void mr_free(struct hop_prov *prov, struct vrb_mr *m)
{
	if (m->prev)
		m->prev->next = m->next;
	else
		prov->mrs = m->next;
	if (m->next)
		m->next->prev = m->prev;
	m->magic = 0;
	if (m->mr) {
		int rc = ibv_dereg_mr(m->mr);

		if (rc)
			HOP_PROV_WARN(prov->pctx, "rank %d: ibv_dereg_mr(%p, %zu): %s",
				 prov->rank, m->pub.addr, m->pub.len, strerror(rc));
	}
	free(m);
}

int vrb_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *mr)
{
	struct vrb_mr *m = (struct vrb_mr *)mr;

	if (!m || m->magic != VRB_MR_MAGIC)
		return prov->pctx->error(prov->pctx, HOP_ERR_INVALID_HANDLE,
				     "verbs: mr_dereg: %p is not a live region", (void *)mr);
	mr_free(prov, m);
	return 0;
}

void vrb_mr_free_all(struct hop_prov *prov)
{
	while (prov->mrs)
		mr_free(prov, prov->mrs);
}
