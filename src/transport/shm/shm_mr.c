/*
 * shm_mr.c - memory regions of the shm provider: an entry in the MR table
 * published in this rank's segment. Writers check their target's table
 * before copying into it (process_vm_writev) and the owner re-checks every
 * inline write it applies. Nothing is pinned.
 */
#include <stdlib.h>

#include "transport/shm/shm.h"

int shm_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out)
{
	struct shm_mr *mr;
	int ret;

	if (!prov || !out || (!addr && len))
		return HOP_ERR_INVALID_ARG;
	if (access & ~(unsigned)(HOP_PROV_REMOTE_WRITE | HOP_PROV_REMOTE_READ))
		return hop_set_error(prov->comm, HOP_ERR_INVALID_ARG,
				     "shm: mr_reg: unknown access bits 0x%x",
				     access);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return hop_set_error(prov->comm, HOP_ERR_NO_MEMORY,
				     "shm: mr_reg: out of memory");
	ret = hop_mrtab_add(&prov->mrs, addr, len, access, &mr->pub.key);
	if (ret) {
		free(mr);
		return hop_set_error(prov->comm, ret,
				     "shm: mr_reg: all %u region slots in use",
				     prov->mrs.tab->nslots);
	}
	mr->pub.addr = addr;
	mr->pub.len = len;
	mr->pub.access = access;
	mr->magic = SHM_MR_MAGIC;
	mr->next = prov->mrs_live;
	if (mr->next)
		mr->next->prev = mr;
	prov->mrs_live = mr;
	*out = &mr->pub;
	return 0;
}

int shm_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *pub)
{
	struct shm_mr *mr = (struct shm_mr *)pub;
	int ret;

	if (!prov || !pub)
		return HOP_ERR_INVALID_ARG;
	if (mr->magic != SHM_MR_MAGIC)
		return hop_set_error(prov->comm, HOP_ERR_INVALID_HANDLE,
				     "shm: mr_dereg: not a shm region");
	ret = hop_mrtab_remove(&prov->mrs, pub->key);
	if (ret)
		return hop_set_error(prov->comm, ret,
				     "shm: mr_dereg: key 0x%llx is not live",
				     (unsigned long long)pub->key);
	mr->magic = 0;
	if (mr->prev)
		mr->prev->next = mr->next;
	else
		prov->mrs_live = mr->next;
	if (mr->next)
		mr->next->prev = mr->prev;
	free(mr);
	return 0;
}

void shm_mr_free_all(struct hop_prov *prov)
{
	while (prov->mrs_live) {
		struct shm_mr *mr = prov->mrs_live;

		prov->mrs_live = mr->next;
		mr->magic = 0;
		free(mr);
	}
}
