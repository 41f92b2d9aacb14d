/*
 * request.h - the public hop_request_t: a point-to-point request or a
 * running collective, completed by hop_test()/hop_wait() (request.c).
 */
#ifndef HOP_P2P_REQUEST_H
#define HOP_P2P_REQUEST_H

#include "p2p.h"

#define HOP_REQ_MAGIC 0x68726571u /* "hreq" */

enum hop_req_kind {
	HOP_REQ_P2P = 1,
	HOP_REQ_OP,             /* an operation of a layer above p2p */
};

/*
 * How hop_test()/hop_wait() complete a request of a layer above p2p (a
 * running collective): that layer hands its functions down, so p2p never
 * calls up into it.
 */
struct hop_req_ops {
	/* Advance @op; *@done = 1 once finished. 0 or the op's error. */
	int (*test)(struct hop_comm *comm, void *op, int *done);
	/* Block until @op finishes or its deadline passes. */
	int (*wait)(struct hop_comm *comm, void *op);
	/* Give @op's resources back (after done, or to cancel). */
	void (*release)(struct hop_comm *comm, void *op);
};

struct hop_request {
	uint32_t magic;
	int kind;
	struct hop_comm *comm;
	struct hop_p2p_req p2p;         /* HOP_REQ_P2P */
	const struct hop_req_ops *ops;  /* HOP_REQ_OP */
	void *op;                       /* HOP_REQ_OP, owned by its layer */
	struct hop_request *next_free;
};

/* From a per-comm free list; NULL (and the comm error set) when out of
 * memory. */
struct hop_request *hop_request_get(struct hop_comm *comm, int kind);
void hop_request_put(struct hop_request *req);

#endif /* HOP_P2P_REQUEST_H */
