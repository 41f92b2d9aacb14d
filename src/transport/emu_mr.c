/*
 * emu_mr.c - memory regions of the software providers (tcp, shm): an entry
 * in the provider's MR table, which the target checks every incoming write
 * against, and a list of live regions for close(). Nothing is pinned; a
 * region is just a published (addr, len, access).
 */
#include <stdlib.h>

#include "transport/emu.h"

int hop_emu_mr_reg(const struct hop_emu_mr_set *set, void *addr, size_t len,
		   unsigned access, struct hop_prov_mr **out)
{
	struct hop_emu_mr *mr;
	int ret;

	if (!out || (!addr && len))
		return HOP_ERR_INVALID_ARG;
	if (!hop_prov_range_ok(addr, len))
		return set->ctx->error(set->ctx, HOP_ERR_INVALID_ARG,
				     "%s: mr_reg: %zu B at %p do not fit the "
				     "address space (the range wraps or is "
				     "larger than any object)", set->prov_name,
				     len, addr);
	if (access & ~(unsigned)(HOP_PROV_REMOTE_WRITE | HOP_PROV_REMOTE_READ))
		return set->ctx->error(set->ctx, HOP_ERR_INVALID_ARG,
				     "%s: mr_reg: unknown access bits 0x%x",
				     set->prov_name, access);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return set->ctx->error(set->ctx, HOP_ERR_NO_MEMORY,
				     "%s: mr_reg: out of memory", set->prov_name);
	ret = hop_mrtab_add(set->tab, addr, len, access, &mr->pub.key);
	if (ret) {
		free(mr);
		return set->ctx->error(set->ctx, ret,
				     "%s: mr_reg: all %u region slots in use",
				     set->prov_name, set->tab->tab->nslots);
	}
	mr->pub.addr = addr;
	mr->pub.len = len;
	mr->pub.access = access;
	mr->magic = set->magic;
	mr->next = *set->live;
	if (mr->next)
		mr->next->prev = mr;
	*set->live = mr;
	*out = &mr->pub;
	return 0;
}

int hop_emu_mr_dereg(const struct hop_emu_mr_set *set, struct hop_prov_mr *pub)
{
	struct hop_emu_mr *mr = (struct hop_emu_mr *)pub;
	int ret;

	if (!pub)
		return HOP_ERR_INVALID_ARG;
	if (mr->magic != set->magic)
		return set->ctx->error(set->ctx, HOP_ERR_INVALID_HANDLE,
				     "%s: mr_dereg: not a %s region",
				     set->prov_name, set->prov_name);
	ret = hop_mrtab_remove(set->tab, pub->key);
	if (ret)
		return set->ctx->error(set->ctx, ret,
				     "%s: mr_dereg: key 0x%llx is not live",
				     set->prov_name, (unsigned long long)pub->key);
	mr->magic = 0;
	if (mr->prev)
		mr->prev->next = mr->next;
	else
		*set->live = mr->next;
	if (mr->next)
		mr->next->prev = mr->prev;
	free(mr);
	return 0;
}

void hop_emu_mr_free_all(struct hop_emu_mr **live)
{
	while (*live) {
		struct hop_emu_mr *mr = *live;

		*live = mr->next;
		mr->magic = 0;
		free(mr);
	}
}
