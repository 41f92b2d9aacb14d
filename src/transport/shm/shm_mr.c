/*
 * shm_mr.c - memory regions of the shm provider: entries of the MR table
 * published in this rank's segment (emu_mr.c). Writers check their
 * target's table before copying into it (process_vm_writev) and the owner
 * re-checks every inline write it applies.
 */
#include "transport/shm/shm.h"

static struct hop_emu_mr_set shm_mr_set(struct hop_prov *prov)
{
	return (struct hop_emu_mr_set){ prov->comm, "shm", SHM_MR_MAGIC,
					&prov->mrs, &prov->mrs_live };
}

int shm_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out)
{
	struct hop_emu_mr_set set;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	set = shm_mr_set(prov);
	return hop_emu_mr_reg(&set, addr, len, access, out);
}

int shm_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *pub)
{
	struct hop_emu_mr_set set;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	set = shm_mr_set(prov);
	return hop_emu_mr_dereg(&set, pub);
}

void shm_mr_free_all(struct hop_prov *prov)
{
	hop_emu_mr_free_all(&prov->mrs_live);
}
