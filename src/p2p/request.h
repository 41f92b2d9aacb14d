/*
 * request.h - the public hop_request_t: a point-to-point request or a
 * running collective, completed by hop_test()/hop_wait() (request.c).
 */
#ifndef HOP_P2P_REQUEST_H
#define HOP_P2P_REQUEST_H

#include "p2p.h"

struct hop_coll_op;

#define HOP_REQ_MAGIC 0x68726571u /* "hreq" */

enum hop_req_kind {
	HOP_REQ_P2P = 1,
	HOP_REQ_COLL,
};

struct hop_request {
	uint32_t magic;
	int kind;
	struct hop_comm *comm;
	struct hop_p2p_req p2p;         /* HOP_REQ_P2P */
	struct hop_coll_op *coll;       /* HOP_REQ_COLL, owned by src/coll */
	struct hop_request *next_free;
};

/* From a per-comm free list; NULL (and the comm error set) when out of
 * memory. */
struct hop_request *hop_request_get(struct hop_comm *comm, int kind);
void hop_request_put(struct hop_request *req);

#endif /* HOP_P2P_REQUEST_H */
