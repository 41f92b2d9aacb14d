/*
 * mux_priv.h - the mux's instance, shared by its open/close and group
 * exchange (mux_ctx.c) and its data path (mux_ops.c).
 */
#ifndef HOP_TRANSPORT_MUX_PRIV_H
#define HOP_TRANSPORT_MUX_PRIV_H

#include "transport/mux/mux.h"
#include "transport/prov_common.h"

/* The ops table of a communicator's mux (hop_mux_new()). */
struct mux_desc {
	struct hop_prov_ops ops;        /* first: what hop holds */
	struct hop_prov_caps caps;
	char name[40];                  /* "INTRA+INTER" */
	const struct hop_prov_ops *cls[HOP_MUX_NCLS];
	unsigned soft;                  /* bit c: child c has mrtab keys */
	int nranks;
	int host_of[];                  /* the host of each rank */
};

/* A child provider opened on a group of ranks with their own numbering. */
struct mux_child {
	struct hop_prov_ctx ctx;        /* what the child sees */
	struct hop_prov *m;             /* the mux it belongs to */
	const struct hop_prov_ops *ops;
	struct hop_prov *prov;          /* NULL: this rank is not in a group */
	int cls;
	uint32_t group;                 /* the group's id in the exchange */
	int n;                          /* ranks of the group */
	int *g;                         /* child rank -> communicator rank */
	int soft;                       /* keys are mrtab keys (tcp, shm) */
	uint8_t secret[HOP_PROV_SECRET_LEN];
	char map[160];                  /* "(shm's ranks 0..1 are ranks 4,6)" */
};

struct hop_prov {
	const struct hop_prov_ctx *ctx; /* the communicator's */
	const struct mux_desc *d;
	int rank, nranks;
	struct mux_child ch[HOP_MUX_NCLS];
	int *route;                     /* communicator rank -> class */
	int *cpeer;                     /* communicator rank -> child rank */
	int first;                      /* the child poll() asks first */
	/* posts and bytes through each child, told at close (HOP_DEBUG=info)
	 * so a user and the tests see which provider carried what */
	uint64_t posts[HOP_MUX_NCLS], bytes[HOP_MUX_NCLS];
	/* open(): the first cause this rank saw, to tell the others */
	int err_code;
	int err_primary;                /* not just a peer leaving */
	char err[HOP_PROV_MSG_LEN];
};

/* A mux region: the region in each child. */
struct mux_mr {
	struct hop_prov_mr pub;
	struct hop_prov_mr *c[HOP_MUX_NCLS];
};

/* mux_ctx.c: the child's ctx (callbacks forwarding to the communicator's). */
void mux_child_ctx_init(struct hop_prov *m, struct mux_child *c);

/*
 * mux_drain() - Take part in the exchange rounds of other groups, as a rank
 * with nothing to exchange, until no rank has. Return: 0 or a HOP_ERR_*.
 */
int mux_drain(struct hop_prov *m);

/*
 * mux_agree() - After every child opened or failed: 0 when all did on
 * every rank, else the code of the first rank that failed (its message
 * recorded here too, naming it).
 */
int mux_agree(struct hop_prov *m);

#endif /* HOP_TRANSPORT_MUX_PRIV_H */
