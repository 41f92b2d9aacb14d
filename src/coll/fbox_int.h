/*
 * fbox_int.h - the fast boxes' steps that both of their forms use: the
 * payload form (fbox.c, up to HOP_FBOX_MAX bytes in the slot) and the
 * CMA form (fbox_cma.c, larger calls, whose slot carries the addresses
 * the peers read by process_vm_readv).
 */
#ifndef HOP_COLL_FBOX_INT_H
#define HOP_COLL_FBOX_INT_H

#include <string.h>

#include "coll/coll_int.h"
#include "coll/fbox.h"
#include "core/copy.h"

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

/* Every peer's control word at offset @word of struct hop_fbox_ctrl
 * (done, wread) at @want or beyond, @what saying what a timeout waited
 * for; *@floor rises to the lowest such word seen. */
int hop_fbox_wait_peers(struct hop_comm *comm, struct hop_fbox *fb,
			const struct hop_coll_call *c, size_t word,
			uint64_t want, uint64_t seq, const char *what,
			uint64_t *floor);

/* Every peer's done word at @want or beyond (they finished the
 * collective whose flag is @want). */
int hop_fbox_wait_readers(struct hop_comm *comm, struct hop_fbox *fb,
			  const struct hop_coll_call *c, uint64_t want,
			  uint64_t seq);

/* Write @bytes of @data into this rank's slot of @seq, flag last; first
 * wait until every peer read the slot's last collective, unless known. */
static inline int hop_fbox_publish(struct hop_comm *comm, struct hop_fbox *fb,
				   const struct hop_coll_call *c, uint64_t seq,
				   const void *data, size_t bytes)
{
	struct hop_fbox_hdr *h = hop_fbox_slot(fb, fb->rank, seq);
	uint64_t *last = &fb->last_w[seq % HOP_FBOX_DEPTH];
	int ret;

	if (*last > fb->floor &&
	    (ret = hop_fbox_wait_readers(comm, fb, c, *last, seq)))
		return ret;
	h->count = c->count;
	h->root = c->root;
	h->kind = (uint8_t)c->kind;
	h->op = (uint8_t)c->op;
	h->dtype = (uint8_t)c->dtype;
	if (bytes)
		memcpy(h->data, data, bytes);
	atomic_store_explicit(&h->flag, seq + 1, memory_order_release);
	*last = seq + 1;
	return 0;
}

/* Does @h, a peer's slot header, describe the same call as @c? (A
 * Broadcast has no op, an AllReduce no root.) */
static inline int hop_fbox_hdr_matches(const struct hop_fbox_hdr *h,
				       const struct hop_coll_call *c)
{
	return h->kind == c->kind && h->count == c->count &&
	       h->dtype == (uint8_t)c->dtype &&
	       (c->kind == HOP_COLL_BROADCAST || h->op == c->op) &&
	       (c->kind == HOP_COLL_ALLREDUCE || h->root == c->root);
}

/* The slow part of hop_fbox_read_slot(): wait for the flag, check the
 * header, fail on a mismatch (fbox.c). */
const uint8_t *hop_fbox_read_wait(struct hop_comm *comm, struct hop_fbox *fb,
				  const struct hop_coll_call *c,
				  uint64_t seq, int q, int *ret);

/* Rank @q's payload of @seq once it is there and matches @c; NULL on
 * failure (*@ret set). A slot already written that matches takes no
 * call. */
static inline const uint8_t *hop_fbox_read_slot(struct hop_comm *comm,
						struct hop_fbox *fb,
						const struct hop_coll_call *c,
						uint64_t seq, int q, int *ret)
{
	struct hop_fbox_hdr *h = hop_fbox_slot(fb, q, seq);

	if (atomic_load_explicit(&h->flag, memory_order_acquire) < seq + 1 ||
	    !hop_fbox_hdr_matches(h, c))
		return hop_fbox_read_wait(comm, fb, c, seq, q, ret);
	return h->data;
}

/* AllGather, AllToAll or ReduceScatter of @bytes per rank (its block, or
 * all N of its AllToAll or ReduceScatter blocks) in the slots, or with
 * @wide in the wide areas (fbox_gather.c). */
int hop_fbox_gather(struct hop_comm *comm, struct hop_fbox *fb,
		    const struct hop_coll_call *c, uint64_t seq, size_t bytes,
		    int wide);

/* Wide form (fbox_wide.c): copy @bytes of @data (none when @bytes is 0)
 * into this rank's wide ring, but for the @hole_len bytes at @hole, which
 * no peer reads, then publish @seq's slot with its offset; first wait
 * until every peer read the ring entries it overwrites. */
int hop_fbox_wide_publish_except(struct hop_comm *comm, struct hop_fbox *fb,
				 const struct hop_coll_call *c, uint64_t seq,
				 const void *data, size_t bytes, size_t hole,
				 size_t hole_len);

/* The same for all @bytes of @data. */
static inline int hop_fbox_wide_publish(struct hop_comm *comm,
					struct hop_fbox *fb,
					const struct hop_coll_call *c,
					uint64_t seq, const void *data,
					size_t bytes)
{
	return hop_fbox_wide_publish_except(comm, fb, c, seq, data, bytes, 0,
					    0);
}

/* Rank @q's @bytes of @seq in its wide ring, once its slot is there and
 * matches @c; NULL on failure (*@ret set). */
const uint8_t *hop_fbox_wide_read(struct hop_comm *comm, struct hop_fbox *fb,
				  const struct hop_coll_call *c, uint64_t seq,
				  int q, size_t bytes, int *ret);

/* Rank @q's data of @seq: in its slot, or with @wide in its wide area. */
static inline const uint8_t *
hop_fbox_read_data(struct hop_comm *comm, struct hop_fbox *fb,
		   const struct hop_coll_call *c, uint64_t seq, int q,
		   size_t bytes, int wide, int *ret)
{
	return wide ? hop_fbox_wide_read(comm, fb, c, seq, q, bytes, ret)
		    : hop_fbox_read_slot(comm, fb, c, seq, q, ret);
}

/* recvbuf = rank 0's data op rank 1's ... op rank N-1's, in the slots or
 * with @wide the wide rings (@own: this rank's), as an AllReduce and a
 * Reduce's root do (fbox_reduce.c). */
int hop_fbox_reduce_all(struct hop_comm *comm, struct hop_fbox *fb,
			const struct hop_coll_call *c, uint64_t seq,
			const void *own, size_t bytes, int wide);

/* A Reduce, and an AllReduce, of @bytes in the wide area (fbox_reduce.c) */
int hop_fbox_wide_reduce(struct hop_comm *comm, struct hop_fbox *fb,
			 const struct hop_coll_call *c, uint64_t seq,
			 size_t bytes);
int hop_fbox_wide_allreduce(struct hop_comm *comm, struct hop_fbox *fb,
			    const struct hop_coll_call *c, uint64_t seq,
			    size_t bytes);

/* Publish this rank's CPU; 1 when another rank last began a wait on it
 * (a waiter outside the fast boxes, p2p's, yields to it: comm->cpu_shared). */
int hop_fbox_cpu_shared(const struct hop_fbox *fb);

/* The CMA form of @c (fbox_cma.c): its bytes above HOP_FBOX_MAX. */
int hop_fbox_cma_run(struct hop_comm *comm, struct hop_fbox *fb,
		     const struct hop_coll_call *c, uint64_t seq, size_t bytes);

#endif /* HOP_COLL_FBOX_INT_H */
