/*
 * tcp_mr.c - memory regions of the tcp provider: entries of its private MR
 * table (emu_mr.c), which the receive path checks every incoming write's
 * header against. A write whose payload is still arriving when its region
 * is deregistered is cut off (tcp_rx_cut()): the rest of it must not land
 * in memory the application may already have freed.
 */
#include "transport/tcp/tcp.h"

static struct hop_emu_mr_set tcp_mr_set(struct hop_prov *prov)
{
	return (struct hop_emu_mr_set){ prov->ctx, "tcp", TCP_MR_MAGIC,
					&prov->mrs, &prov->mrs_live };
}

int tcp_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out)
{
	struct hop_emu_mr_set set;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	set = tcp_mr_set(prov);
	return hop_emu_mr_reg(&set, addr, len, access, out);
}

int tcp_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *pub)
{
	struct hop_emu_mr_set set;
	uint64_t key;
	int ret;

	if (!prov || !pub)
		return HOP_ERR_INVALID_ARG;
	key = pub->key;
	set = tcp_mr_set(prov);
	if ((ret = hop_emu_mr_dereg(&set, pub)))
		return ret;
	tcp_rx_cut(prov, key);
	return 0;
}

void tcp_mr_free_all(struct hop_prov *prov)
{
	hop_emu_mr_free_all(&prov->mrs_live);
}
