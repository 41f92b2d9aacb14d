/*
 * hop/p2p.h - point-to-point: tag-matched send/recv (blocking and
 * nonblocking, from a named source or any, with a given tag or any),
 * grouped sends and receives, request sets, one-sided put (blocking or
 * nonblocking) with a 32-bit immediate. docs/p2p.md is the reference.
 *
 * Ordering: messages between one pair of ranks whose tags a receive
 * matches are taken in the order they were sent (non-overtaking), and a
 * message takes the earliest-posted receive that matches it, wildcard or
 * not. Any size from 0 bytes is allowed; a rank may send to itself (the
 * data is copied into the matching receive). Small messages go eagerly;
 * large ones by rendezvous (the receiver advertises its buffer and the
 * sender writes straight into it).
 *
 * Bytes, not count + datatype: point-to-point moves bytes without
 * interpreting them (no reduction, no derived or strided types), so a
 * typed form would only multiply; pass count * hop_dtype_size(dtype).
 *
 * Request life cycle: hop_isend()/hop_irecv()/hop_iput()/collective i-calls
 * return a request; hop_test(), hop_wait(), hop_testany(), hop_waitany() or
 * hop_waitall() complete it and free it, setting the caller's pointer to
 * NULL. A request not yet complete is cancelled by hop_comm_destroy().
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
/** hop_recv()/hop_irecv() @peer: a message from any rank (itself too). */
#define HOP_ANY_SOURCE (-1)
/** hop_recv()/hop_irecv() @tag: a message with any user tag. Collective
 * and internal traffic is never matched. */
#define HOP_ANY_TAG (-1)

/** Opaque request of a nonblocking call. */
typedef struct hop_request hop_request_t;

/**
 * struct hop_status - outcome of a completed request.
 * @source: sending rank of a receive (the actual one after HOP_ANY_SOURCE);
 *          the destination of a send; -1 for a collective, and for a
 *          HOP_ANY_SOURCE receive that no message matched (it failed).
 * @tag:    the message's tag (the actual one after HOP_ANY_TAG); -1 for a
 *          collective, and for a HOP_ANY_TAG receive that no message
 *          matched.
 * @bytes:  bytes received (receive) or sent (send).
 * @error:  0 or the request's HOP_ERR_* code (what hop_test()/hop_wait()
 *          return for it); the only report of each request's outcome in
 *          hop_waitall().
 */
typedef struct hop_status {
	int source;
	int tag;
	size_t bytes;
	int error;
} hop_status_t;

/**
 * hop_send() - Send @len bytes to @peer with @tag; blocks until @buf may be
 * reused.
 * @comm: communicator.
 * @buf:  data; may be NULL only when @len is 0.
 * @len:  bytes, any size from 0.
 * @peer: destination rank; this rank too. A send to this rank of more
 *        than HOP_EAGER_SIZE bytes completes only into a receive posted
 *        before it (hop_irecv()) and otherwise fails at once with
 *        HOP_ERR_INVALID_ARG; inside a group it is queued like any other.
 * @tag:  0 .. HOP_TAG_MAX.
 * Between hop_group_start() and hop_group_end() on @comm the send is
 * queued and this call returns at once (see hop_group_start()).
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
 * @peer:   source rank (this rank too), or HOP_ANY_SOURCE.
 * @tag:    0 .. HOP_TAG_MAX, or HOP_ANY_TAG.
 * @status: receives source, tag, size and error; may be NULL.
 * A blocking receive from this rank with no matching message already
 * sent fails at once with HOP_ERR_INVALID_ARG (nothing could send it).
 * Between hop_group_start() and hop_group_end() on @comm the receive is
 * queued, returns at once, and @status is written by hop_group_end().
 * Return: as hop_send(), plus HOP_ERR_TRUNCATED.
 */
HOP_EXPORT int hop_recv(hop_comm_t *comm, void *buf, size_t len, int peer,
			int tag, hop_status_t *status);

/**
 * hop_isend() - Start a send; complete it with hop_test()/hop_wait().
 * @req: receives the request; NULL on failure.
 * Other arguments and errors as hop_send(), but a send to this rank of any
 * size is allowed: it completes once a receive takes it. @buf must stay
 * untouched until the request completes. Starts at once inside a group.
 */
HOP_EXPORT int hop_isend(hop_comm_t *comm, const void *buf, size_t len,
			 int peer, int tag, hop_request_t **req);

/**
 * hop_irecv() - Start a receive; complete it with hop_test()/hop_wait().
 * @req: receives the request; NULL on failure.
 * Other arguments and errors as hop_recv() (a receive from this rank may
 * wait for a later send). Starts at once inside a group.
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
 * Blocks until @src may be reused (hop_iput() and a wait for it). The target may be this rank (the data
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
 * hop_iput() - Start the put hop_put() makes and return without waiting
 * for it: many puts may be in flight to one or several peers, each
 * delivered (data, then @imm) in the order started per target. The call
 * returns once the data and the immediate are posted to the transport; it
 * makes progress only while the transport's queue to the peer is full
 * (until the comm's deadline: HOP_ERR_TIMEOUT). *@req completes, through
 * hop_wait(), hop_test() or the set calls, when @src may be reused; until
 * then @src must not change. A put that fails once posted fails the comm
 * (its immediate may already be on its way). Arguments as hop_put()'s,
 * checked the same way, and:
 * @req: receives the request (NULL on failure); status.source is the
 *       target, status.tag -1, status.bytes @len.
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_OUT_OF_BOUNDS, HOP_ERR_NO_MEMORY,
 * HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED, HOP_ERR_COMM_FAILED,
 * HOP_ERR_TRANSPORT.
 */
HOP_EXPORT int hop_iput(hop_comm_t *comm, hop_mr_t *local_mr,
			const void *src, size_t len, const hop_rkey_t *rkey,
			uint64_t offset, uint32_t imm, hop_request_t **req);

/**
 * hop_wait_imm() - Wait for the next immediate delivered by a hop_put()
 * or hop_iput() from @peer (or from any peer when @peer is -1).
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


/* ---- multi-hop transfers (relays) ---- */

/** Longest relay path, in ranks (source and destination included). */
#define HOP_RELAY_MAX_PATH 64

/** enum hop_relay_mode - how relays forward a multi-hop message. */
typedef enum hop_relay_mode {
	/* k chunks; a relay forwards chunk i while chunk i+1 arrives:
	 * T = (h + k - 1)(alpha + m/(k beta)) on h equal hops */
	HOP_RELAY_PIPELINED = 0,
	/* each relay receives the whole message, then sends it on:
	 * T = h (alpha + m/beta) */
	HOP_RELAY_STORE_FORWARD = 1,
} hop_relay_mode_t;

/**
 * struct hop_relay_opts - options of hop_relay() (NULL: all defaults, i.e.
 * zero-initialised).
 * @mode:   HOP_RELAY_PIPELINED (0) or HOP_RELAY_STORE_FORWARD.
 * @chunks: pipelined chunk count k; 0: HOP_PIPELINE_CHUNKS when set, else
 *          the cost model's optimum for this path and size (docs/multihop.md).
 *          Clamped to the message size (every chunk has >= 1 byte). Ignored
 *          by store-and-forward, which moves one chunk.
 * @tag:    0 .. HOP_TAG_MAX; relay traffic never matches hop_recv()s, so
 *          any tag is safe; concurrent relays over one pair of ranks need
 *          different tags.
 */
typedef struct hop_relay_opts {
	int mode;
	long chunks;
	int tag;
} hop_relay_opts_t;

/**
 * struct hop_relay_plan - what hop_relay() will do (hop_relay_plan()).
 * @npath:       ranks on the path (hops + 1).
 * @path:        the ranks, source first, destination last.
 * @position:    this rank's index on @path, -1 when it is not on it.
 * @mode:        the hop_relay_mode_t used.
 * @chunks:      k (1 for store-and-forward and for 0 bytes).
 * @chunk_bytes: the largest chunk (chunks differ by at most one byte).
 * @predicted:   the model's time of the transfer, seconds.
 * @model:       where alpha and beta came from ("HOP_TOPO t.topo",
 *               "profile p.json (shm, 1 pairs)", "built-in tcp").
 */
typedef struct hop_relay_plan {
	int npath;
	int path[HOP_RELAY_MAX_PATH];
	int position;
	int mode;
	long chunks;
	size_t chunk_bytes;
	double predicted;
	char model[320];
} hop_relay_plan_t;

/**
 * hop_relay() - Move @len bytes from rank @src to rank @dst through relay
 * ranks, whole per hop (store-and-forward) or pipelined in chunks. Called
 * with the same arguments by every rank on the path (source, relays,
 * destination); a rank not on the path returns 0 at once (it need not
 * call). Ranks that disagree on the size, path or chunk count fail with
 * HOP_ERR_MISMATCH (the chunks carry a signature of the plan).
 * @comm: communicator.
 * @buf:  source: the @len bytes to send. Destination: receives them.
 *        Relay: NULL (hop stages the chunks in memory of its own: a few
 *        chunks, or the whole message for store-and-forward) or @len bytes
 *        that receive a copy of the message. May be NULL when @len is 0.
 * @len:  bytes, any size from 0.
 * @src:  first rank; @dst: last rank; different ranks of @comm.
 * @path: the ranks in order, @path[0] == @src, @path[@npath - 1] == @dst,
 *        no rank twice; or NULL to route through the HOP_TOPO topology
 *        (the path of least predicted time for this size and mode; with
 *        HOP_TOPO unset, flat: the direct path @src -> @dst). HOP_TOPO and
 *        HOP_PROFILE are read at the first relay of @comm and kept.
 * @npath: ranks in @path, 2 .. HOP_RELAY_MAX_PATH; 0 when @path is NULL.
 * @opts: mode, chunks and tag; NULL for the defaults.
 * Return: 0, HOP_ERR_INVALID_ARG (the message names the argument, the
 * position on the path or the rank that is wrong), HOP_ERR_PARSE or
 * HOP_ERR_SYSTEM (HOP_TOPO / HOP_PROFILE unreadable), HOP_ERR_NO_MEMORY,
 * HOP_ERR_MISMATCH, HOP_ERR_TIMEOUT (no progress within HOP_TIMEOUT; names
 * the chunk and peer waited for), HOP_ERR_PEER_FAILED, HOP_ERR_COMM_FAILED,
 * HOP_ERR_ABORTED, HOP_ERR_TRANSPORT, HOP_ERR_NOT_SUPPORTED (@comm was made
 * by hop_comm_split() or hop_comm_dup(): relay on the communicator made by
 * init).
 */
HOP_EXPORT int hop_relay(hop_comm_t *comm, void *buf, size_t len, int src,
			 int dst, const int *path, int npath,
			 const hop_relay_opts_t *opts);

/**
 * hop_relay_plan() - The path, chunk count and predicted time hop_relay()
 * would use with these arguments; no communication (any rank may call).
 * @plan: receives the plan; unchanged on failure.
 * Other arguments and errors as hop_relay() (less the transfer's).
 */
HOP_EXPORT int hop_relay_plan(hop_comm_t *comm, size_t len, int src, int dst,
			      const int *path, int npath,
			      const hop_relay_opts_t *opts,
			      hop_relay_plan_t *plan);


/* ---- grouped point-to-point and request sets ---- */

/**
 * hop_group_start() - Open a group on @comm: until the matching
 * hop_group_end(), hop_send() and hop_recv() on @comm are queued, not run,
 * and return 0 at once (or an argument error, and the call is not
 * queued). Groups nest; only the outermost hop_group_end() runs them.
 * Inside a group, hop_isend()/hop_irecv() start at once as outside it,
 * hop_test()/hop_testany() work, and hop_wait()/hop_waitany()/
 * hop_waitall() of a request of @comm fail with HOP_ERR_INVALID_ARG (they
 * could wait for an operation the group has not posted). Other calls
 * (collectives, hop_put()) run as outside a group. A group still open at
 * hop_comm_destroy() is discarded: nothing of it was sent or received.
 * Groups belong to one communicator; other comms are not affected.
 * @comm: communicator.
 * Return: 0, HOP_ERR_INVALID_HANDLE, HOP_ERR_NO_MEMORY, or the comm's
 * failure code.
 */
HOP_EXPORT int hop_group_start(hop_comm_t *comm);

/**
 * hop_group_end() - Close the group; when it is the outermost, post every
 * queued receive, then every queued send (each kind in call order, so the
 * ordering rules hold among them), and make progress on all of them until
 * all complete, whatever order the peers queued theirs in. A rank may
 * send to itself within the group at any size. Each hop_recv()'s status
 * is written here.
 * @comm: communicator.
 * Return: 0 when every operation succeeded; else the code of the first
 * failed operation in call order, with a message naming its index in the
 * group, kind, peer and tag (the others still complete: a truncated
 * receive does not stop the rest); HOP_ERR_INVALID_ARG when no group is
 * open; HOP_ERR_TIMEOUT (names an operation still pending) and the comm
 * failure codes as hop_wait().
 */
HOP_EXPORT int hop_group_end(hop_comm_t *comm);

/**
 * hop_waitall() - Wait until every request of @reqs completes, free each
 * and set its entry to NULL.
 * @n:        entries in @reqs, >= 0.
 * @reqs:     requests of one communicator; NULL entries are skipped.
 * @statuses: @n statuses, one per entry, or NULL. A NULL entry's status is
 *            {source -1, tag -1, bytes 0, error 0}; each other's carries
 *            its outcome, @error included.
 * Return: 0 when all succeeded; else the code of the first failed request
 * by index, with a message naming that index (check @statuses[i].error for
 * the others). Every request is complete and freed either way, unless the
 * arguments are rejected (HOP_ERR_INVALID_ARG: @reqs NULL with @n > 0,
 * @n < 0, requests of two communicators, inside a group;
 * HOP_ERR_INVALID_HANDLE: an entry that is not a live request; the message
 * names the index), which touches no request.
 */
HOP_EXPORT int hop_waitall(int n, hop_request_t **reqs,
			   hop_status_t *statuses);

/**
 * hop_testany() - Make progress once and complete at most one request of
 * @reqs: the lowest-indexed one that is done.
 * @n, @reqs: as hop_waitall(); NULL entries are skipped.
 * @index:  receives the completed request's index (its entry is freed
 *          and set to NULL), or -1.
 * @done:   1 when a request completed, or when no entry is non-NULL (with
 *          @index -1); else 0.
 * @status: receives the completed request's status; may be NULL.
 * Return: 0, or the completed request's error code; argument errors as
 * hop_waitall().
 */
HOP_EXPORT int hop_testany(int n, hop_request_t **reqs, int *index,
			   int *done, hop_status_t *status);

/**
 * hop_waitany() - Block until one request of @reqs completes (or
 * HOP_TIMEOUT expires), then as hop_testany(). With no non-NULL entry it
 * returns 0 at once with *@index -1.
 * Return: as hop_testany(), plus HOP_ERR_TIMEOUT.
 */
HOP_EXPORT int hop_waitany(int n, hop_request_t **reqs, int *index,
			   hop_status_t *status);

#ifdef __cplusplus
}
#endif
#endif /* HOP_P2P_H */
