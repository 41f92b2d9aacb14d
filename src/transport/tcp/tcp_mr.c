/*
 * tcp_mr.c - memory regions of the tcp provider: an entry in the private
 * MR table that the receive path checks every incoming write against.
 * Nothing is pinned; a region is just a published (addr, len, access).
 */
#include <stdlib.h>

#include "transport/tcp/tcp.h"

int tcp_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out)
{
	struct tcp_mr *mr;
	int ret;

	if (!prov || !out || (!addr && len))
		return HOP_ERR_INVALID_ARG;
	if (access & ~(unsigned)(HOP_PROV_REMOTE_WRITE | HOP_PROV_REMOTE_READ))
		return hop_set_error(prov->comm, HOP_ERR_INVALID_ARG,
				     "tcp: mr_reg: unknown access bits 0x%x",
				     access);
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return hop_set_error(prov->comm, HOP_ERR_NO_MEMORY,
				     "tcp: mr_reg: out of memory");
	ret = hop_mrtab_add(&prov->mrs, addr, len, access, &mr->pub.key);
	if (ret) {
		free(mr);
		return hop_set_error(prov->comm, ret,
				     "tcp: mr_reg: all %u region slots in use",
				     prov->mrs.tab->nslots);
	}
	mr->pub.addr = addr;
	mr->pub.len = len;
	mr->pub.access = access;
	mr->magic = TCP_MR_MAGIC;
	mr->next = prov->mrs_live;
	if (mr->next)
		mr->next->prev = mr;
	prov->mrs_live = mr;
	*out = &mr->pub;
	return 0;
}

int tcp_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *pub)
{
	struct tcp_mr *mr = (struct tcp_mr *)pub;
	int ret;

	if (!prov || !pub)
		return HOP_ERR_INVALID_ARG;
	if (mr->magic != TCP_MR_MAGIC)
		return hop_set_error(prov->comm, HOP_ERR_INVALID_HANDLE,
				     "tcp: mr_dereg: not a tcp region");
	ret = hop_mrtab_remove(&prov->mrs, pub->key);
	if (ret)
		return hop_set_error(prov->comm, ret,
				     "tcp: mr_dereg: key 0x%llx is not live",
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

void tcp_mr_free_all(struct hop_prov *prov)
{
	while (prov->mrs_live) {
		struct tcp_mr *mr = prov->mrs_live;

		prov->mrs_live = mr->next;
		mr->magic = 0;
		free(mr);
	}
}
