/*
 * fbox_int.h - the fast boxes' steps that both of their forms use: the
 * payload form (fbox.c, up to HOP_FBOX_MAX bytes in the slot) and the
 * CMA form (fbox_cma.c, larger calls, whose slot carries the addresses
 * the peers read by process_vm_readv).
 */
#ifndef HOP_COLL_FBOX_INT_H
#define HOP_COLL_FBOX_INT_H

#include "coll/fbox.h"

/* What a wait polls: @word reaching @want, written by rank @peer. */
struct hop_fbox_wait {
	const struct hop_coll_call *c;
	const struct hop_fbox *fb;
	const _Atomic uint64_t *word;
	uint64_t want, seq;
	int peer;
	const char *what;
	unsigned polls;
	int peer_failed;
};

/* Wait for @w within the comm's deadline, its failure and abort, and a
 * failure rank w->peer publishes; 0 or the error (published too). */
int hop_fbox_wait(struct hop_comm *comm, struct hop_fbox *fb,
		  struct hop_fbox_wait *w);

/* Publish this rank's failure @code for the peers that wait on it;
 * returns @code. */
int hop_fbox_failed(struct hop_fbox *fb, int code);

/* Every peer's done word at @want or beyond (they finished the
 * collective whose flag is @want). */
int hop_fbox_wait_readers(struct hop_comm *comm, struct hop_fbox *fb,
			  const struct hop_coll_call *c, uint64_t want,
			  uint64_t seq);

/* Write @bytes of @data into this rank's slot of @seq, flag last. */
int hop_fbox_publish(struct hop_comm *comm, struct hop_fbox *fb,
		     const struct hop_coll_call *c, uint64_t seq,
		     const void *data, size_t bytes);

/* Rank @q's payload of @seq once it is there and matches @c; NULL on
 * failure (*@ret set). */
const uint8_t *hop_fbox_read_slot(struct hop_comm *comm, struct hop_fbox *fb,
				  const struct hop_coll_call *c,
				  uint64_t seq, int q, int *ret);

/* The CMA form of @c (fbox_cma.c): its bytes above HOP_FBOX_MAX. */
int hop_fbox_cma_run(struct hop_comm *comm, struct hop_fbox *fb,
		     const struct hop_coll_call *c, uint64_t seq, size_t bytes);

#endif /* HOP_COLL_FBOX_INT_H */
