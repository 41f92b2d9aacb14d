/*
 * hop/p2p.h - point-to-point: tag-matched send/recv (blocking and
 * nonblocking), one-sided put with a 32-bit immediate, and requests.
 *
 * Ordering: messages between one pair of ranks with the same tag match in
 * the order they were sent. Any size from 0 bytes is allowed. Small
 * messages go eagerly; large ones by rendezvous (the receiver advertises
 * its buffer and the sender writes straight into it).
 *
 * Request life cycle: hop_isend()/hop_irecv()/collective i-calls return a
 * request; hop_test() or hop_wait() completes it and frees it, setting the
 * caller's pointer to NULL. A request not yet complete is cancelled by
 * hop_comm_destroy().
 */
#ifndef HOP_P2P_H
#define HOP_P2P_H

#include <hop/comm.h>
#include <hop/mem.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Largest user tag. Tags are 0 .. HOP_TAG_MAX. */
#define HOP_TAG_MAX 0x7fffffff

/** Opaque request of a nonblocking call. */
typedef struct hop_request hop_request_t;

/** struct hop_status - outcome of a completed receive. */
typedef struct hop_status {
	int source;   /* sending rank */
	int tag;      /* message tag */
	size_t bytes; /* bytes received */
} hop_status_t;

/**
 * hop_send() - Send @len bytes to @peer with @tag; blocks until @buf may be
 * reused.
 * @comm: communicator.
 * @buf:  data; may be NULL only when @len is 0.
 * @len:  bytes, any size from 0.
 * @peer: destination rank, not this rank.
 * @tag:  0 .. HOP_TAG_MAX.
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED,
 * HOP_ERR_COMM_FAILED, HOP_ERR_ABORTED, HOP_ERR_TRANSPORT.
 */
HOP_EXPORT int hop_send(hop_comm_t *comm, const void *buf, size_t len,
			int peer, int tag);

/**
 * hop_recv() - Receive a message from @peer with @tag into @buf.
 * @comm:   communicator.
 * @buf:    destination; may be NULL only when @len is 0.
 * @len:    capacity of @buf; a larger message fails with HOP_ERR_TRUNCATED
 *          and none of it is written past @len.
 * @peer:   source rank, not this rank.
 * @tag:    0 .. HOP_TAG_MAX.
 * @status: receives source, tag and size; may be NULL.
 * Return: as hop_send(), plus HOP_ERR_TRUNCATED.
 */
HOP_EXPORT int hop_recv(hop_comm_t *comm, void *buf, size_t len, int peer,
			int tag, hop_status_t *status);

/**
 * hop_isend() - Start a send; complete it with hop_test()/hop_wait().
 * @req: receives the request; NULL on failure.
 * Other arguments and errors as hop_send(). @buf must stay untouched until
 * the request completes.
 */
HOP_EXPORT int hop_isend(hop_comm_t *comm, const void *buf, size_t len,
			 int peer, int tag, hop_request_t **req);

/**
 * hop_irecv() - Start a receive; complete it with hop_test()/hop_wait().
 * @req: receives the request; NULL on failure.
 * Other arguments and errors as hop_recv().
 */
HOP_EXPORT int hop_irecv(hop_comm_t *comm, void *buf, size_t len, int peer,
			 int tag, hop_request_t **req);

/**
 * hop_test() - Make progress and check whether *@req has completed.
 * @req:    the request; set to NULL once complete (the request is freed).
 * @done:   set to 1 when complete, else 0.
 * @status: for receives, receives the status when complete; may be NULL.
 * Return: 0 when the request is complete with success or still running;
 * the request's error code when it completed with an error.
 */
HOP_EXPORT int hop_test(hop_request_t **req, int *done, hop_status_t *status);

/**
 * hop_wait() - Block until *@req completes (or HOP_TIMEOUT expires), then
 * free it and set *@req to NULL.
 * @status: for receives, receives the status; may be NULL.
 * Return: 0 or the request's error code; HOP_ERR_TIMEOUT names what was
 * still pending.
 */
HOP_EXPORT int hop_wait(hop_request_t **req, hop_status_t *status);

/**
 * hop_put() - Write @len bytes from @src (inside @local_mr) into the peer's
 * region described by @rkey at @offset, then deliver @imm to the target,
 * which receives it with hop_wait_imm() after the data is in place.
 * Blocks until @src may be reused. The target may be this rank (the data
 * is copied and the immediate queued for this rank's hop_wait_imm()).
 * @comm:     communicator.
 * @local_mr: a region of @comm containing [@src, @src + @len), or NULL to
 *            let hop register @src (through its registration cache).
 * @src:      data; may be NULL only when @len is 0.
 * @len:      bytes.
 * @rkey:     key from the target's hop_mr_rkey(); rkey->owner is the target.
 * @offset:   byte offset into the target region; @offset + @len must not
 *            exceed rkey->len (HOP_ERR_OUT_OF_BOUNDS).
 * @imm:      32-bit immediate delivered to the target.
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_OUT_OF_BOUNDS, HOP_ERR_TIMEOUT,
 * HOP_ERR_PEER_FAILED, HOP_ERR_COMM_FAILED, HOP_ERR_TRANSPORT.
 */
HOP_EXPORT int hop_put(hop_comm_t *comm, hop_mr_t *local_mr, const void *src,
		       size_t len, const hop_rkey_t *rkey, uint64_t offset,
		       uint32_t imm);

/**
 * hop_wait_imm() - Wait for the next immediate delivered by a hop_put()
 * from @peer (or from any peer when @peer is -1).
 * @comm:   communicator.
 * @peer:   source rank, or -1.
 * @imm:    receives the immediate.
 * @source: receives the writer's rank; may be NULL.
 * @bytes:  receives the put's length; may be NULL.
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED,
 * HOP_ERR_COMM_FAILED.
 */
HOP_EXPORT int hop_wait_imm(hop_comm_t *comm, int peer, uint32_t *imm,
			    int *source, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif /* HOP_P2P_H */
