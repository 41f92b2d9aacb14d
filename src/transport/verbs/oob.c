/*
 * oob.c - connecting the QPs without librdmacm (HOP_IB_CM=oob): one
 * bootstrap allgather of every rank's {GID, LID, MTU} and a {QPN, PSN}
 * per peer, then each QP is moved to RTS with the peer's numbers. For
 * fabrics where rdma_cm cannot resolve the bootstrap address; it carries
 * no secret of its own (the bootstrap already checked every rank's).
 */
#include <stdlib.h>
#include <string.h>

#include "core/wire.h"
#include "transport/verbs/verbs.h"

#define OOB_HDR 24
#define OOB_ENT 8

int vrb_oob_connect_all(struct hop_prov *prov)
{
	size_t len = OOB_HDR + OOB_ENT * (size_t)prov->nranks;
	uint8_t *mine, *all;
	int rc = 0;

	if (len * (size_t)prov->nranks > HOP_PROV_ALLGATHER_MAX)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NOT_SUPPORTED,
				     "verbs: HOP_IB_CM=oob exchanges %zu bytes for %d "
				     "ranks, more than the bootstrap carries: use "
				     "HOP_IB_CM=rdmacm", len * (size_t)prov->nranks,
				     prov->nranks);
	mine = calloc(1, len);
	all = malloc(len * (size_t)prov->nranks);
	if (!mine || !all) {
		rc = prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_MEMORY, "verbs: out of memory");
		goto out;
	}
	memcpy(mine, prov->gid.raw, 16);
	mine[16] = (uint8_t)prov->lid;
	mine[17] = (uint8_t)(prov->lid >> 8);
	mine[18] = (uint8_t)prov->mtu;
	hop_put_le32(mine + 20, (uint32_t)prov->nranks);
	for (int r = 0; r < prov->nranks; r++) {
		hop_put_le32(mine + OOB_HDR + OOB_ENT * (size_t)r, prov->peers[r].qp->qp_num);
		hop_put_le32(mine + OOB_HDR + OOB_ENT * (size_t)r + 4, prov->peers[r].psn);
	}
	/* a failed exchange is described by hop already */
	if ((rc = prov->pctx->allgather(prov->pctx, mine, all, len)))
		goto out;
	for (int r = 0; r < prov->nranks; r++) {
		const uint8_t *h = all + len * (size_t)r;
		const uint8_t *e = h + OOB_HDR + OOB_ENT * (size_t)prov->rank;
		struct vrb_peer *p = &prov->peers[r];
		struct ibv_qp_attr a;
		union ibv_gid gid;
		int mask;

		if (r == prov->rank)
			continue;
		memcpy(gid.raw, h, 16);
		memset(&a, 0, sizeof(a));
		a.port_num = (uint8_t)prov->port;
		if ((rc = vrb_qp_init(prov, p, &a, IBV_QP_PKEY_INDEX | IBV_QP_PORT)))
			goto out;
		vrb_qp_attr_rtr(prov, &a, &mask, hop_get_le32(e), hop_get_le32(e + 4), &gid,
				(uint16_t)(h[16] | h[17] << 8), h[18]);
		if ((rc = vrb_qp_rtr(prov, p, &a, mask)))
			goto out;
		vrb_qp_attr_rts(prov, &a, &mask, p->psn);
		if ((rc = vrb_qp_rts(prov, p, &a, mask)))
			goto out;
		p->state = VRB_PEER_RTS;
	}
out:
	free(mine);
	free(all);
	return rc;
}
