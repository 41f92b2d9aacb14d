/*
 * p2p.h - the channel layer between providers and collectives: tag-matched
 * nonblocking send/recv (eager through pre-registered slots, rendezvous for
 * large messages), one-sided put + immediate, and the one progress engine
 * every wait in hop goes through.
 *
 * Requests are embedded by the caller (collective schedules keep theirs in
 * their step arrays), so the steady state allocates nothing.
 */
#ifndef HOP_P2P_P2P_H
#define HOP_P2P_P2P_H

#include <stddef.h>
#include <stdint.h>

struct hop_comm;

/*
 * 64-bit internal tags: the context in the top byte keeps user point-to-point
 * traffic, collectives and internal control apart.
 */
enum hop_p2p_ctx {
	HOP_CTX_USER = 0,
	HOP_CTX_COLL = 1,
	HOP_CTX_INTERNAL = 2,
};
#define HOP_TAG(ctx, hi24, lo32)                                              \
	(((uint64_t)(ctx) << 56) | (((uint64_t)(hi24) & 0xffffffull) << 32) | \
	 (uint64_t)(uint32_t)(lo32))
/* The parts of a HOP_TAG: context, the middle 24 bits (a collective's
 * sequence number), the low 32 (its step). */
#define HOP_TAG_CTX(tag) ((unsigned)((uint64_t)(tag) >> 56) & 3u)
#define HOP_TAG_HI24(tag) ((uint32_t)((uint64_t)(tag) >> 32) & 0xffffffu)
#define HOP_TAG_LO32(tag) ((uint32_t)(tag))
/*
 * The top 6 bits of the context byte name the communicator: 0 for one made
 * by init, 1..HOP_TAG_COMM_MAX for those derived from it (split, dup),
 * which share its channels. Every member of a communicator uses the same
 * id, unique among the communicators live on each member, so traffic of
 * two communicators never matches. Wildcard matching restricted to one
 * communicator compares the upper 32 bits (context, id, middle 24).
 */
#define HOP_TAG_COMM_MAX 63
#define HOP_TAG_COMM(tag) ((unsigned)((uint64_t)(tag) >> 58))
#define HOP_TAG_WITH_COMM(tag, id)                                            \
	(((uint64_t)(tag) & ~(0x3full << 58)) | ((uint64_t)(id) << 58))
/* The collective a message of HOP_CTX_COLL belongs to: its communicator
 * id (bits 26..31) and sequence number (bits 0..23). */
#define HOP_TAG_COLL_KEY(tag)                                                 \
	((uint32_t)((uint64_t)(tag) >> 32) & ~(3u << 24))

struct hop_p2p_req;
typedef void (*hop_p2p_cb)(struct hop_p2p_req *req, void *arg);

struct hop_p2p_req {
	/* results, valid once done != 0 */
	int done;
	int status;             /* 0 or negative hop code */
	size_t bytes;           /* bytes received (recv) */
	int peer;
	uint64_t tag;
	/* optional completion callback (schedule executor), may be NULL */
	hop_p2p_cb cb;
	void *cb_arg;
	/* private to src/p2p */
	int kind;
	void *buf;
	size_t len;
	uint32_t sig;           /* collective signature, 0 for user traffic */
	uint64_t priv[8];
	struct hop_p2p_req *next;
	struct hop_p2p_req *prev;
};

/* Set up channels to every peer (after the provider is open); collective. */
int hop_p2p_init(struct hop_comm *comm);
/* Cancel outstanding requests and release channels. Safe on partial init. */
void hop_p2p_fini(struct hop_comm *comm);

/*
 * Start a send/receive. The request must stay valid (not moved, not freed)
 * until done. @sig: a collective's signature (0 for user traffic); a
 * receive whose sig differs from the matching send's fails both ends with
 * HOP_ERR_MISMATCH.
 *
 * Set req->cb / req->cb_arg (or NULL) before the call; the call sets every
 * other field. A request without a callback may be done when the call
 * returns (eager sends are: their data was copied). A request with a
 * callback is never completed inside isend/irecv: done becomes 1 and the
 * callback runs from hop_p2p_progress(), once, after the batch of
 * completions it belongs to; it may start new requests (and reuse @req).
 * @peer may be this rank (any size; used by schedules and by the public
 * API). A failure of the comm (timeout, abort, peer failure, mismatch)
 * completes every outstanding request with that code, so no request stays
 * linked after a failed wait.
 */
int hop_p2p_isend(struct hop_comm *comm, struct hop_p2p_req *req, int peer,
		  uint64_t tag, const void *buf, size_t len, uint32_t sig);
int hop_p2p_irecv(struct hop_comm *comm, struct hop_p2p_req *req, int peer,
		  uint64_t tag, void *buf, size_t len, uint32_t sig);

/*
 * A collective with sequence number @seq (the tag's middle 24 bits) and
 * signature @sig begins on this rank. Messages of #seq that no receive
 * takes are compared with @sig, before and after this call, so ranks that
 * run different collectives fail with HOP_ERR_MISMATCH even when no tag
 * matches. Returns 0, or HOP_ERR_MISMATCH (the comm failed) when a peer
 * already sent a message of another collective #seq.
 */
int hop_p2p_coll_begin(struct hop_comm *comm, uint32_t seq, uint32_t sig);

/*
 * hop_p2p_cancel_comm() - Complete with @code the requests of @comm (its
 * tag space, HOP_TAG_COMM) that no peer knows of yet: posted receives and
 * sends still queued; drop the messages of @comm that no receive took.
 * Rendezvous transfers already under way are left to finish (the peer
 * writes into their buffers). For a derived communicator that failed, was
 * aborted or is destroyed: the others sharing the channels go on.
 */
void hop_p2p_cancel_comm(struct hop_comm *comm, int code);

/* Poll the provider once and advance every protocol. Returns >= 0 (events
 * handled) or the comm's failure code. */
int hop_p2p_progress(struct hop_comm *comm);

/*
 * hop_p2p_wait_until() - The single waiting loop of hop: progress until
 * @done(@arg) is true, spinning cfg.spin_count polls (and, with HOP_SPIN
 * auto and a core per rank, at least comm->spin_min_ns), then yielding or
 * blocking in the provider's wait(); returns HOP_ERR_TIMEOUT (message
 * names @what) at the comm deadline, HOP_ERR_ABORTED when aborted, the
 * comm's failure code when it fails.
 */
int hop_p2p_wait_until(struct hop_comm *comm, int (*done)(void *arg),
		       void *arg, const char *what);

/* Writes what a wait is waiting for into @buf, when its deadline passed. */
typedef void (*hop_p2p_describe_fn)(void *arg, char *buf, size_t len);

/* hop_p2p_wait_until() whose timeout message comes from @describe, called
 * only then: a collective names the peers it still waits on. */
int hop_p2p_wait_described(struct hop_comm *comm, int (*done)(void *arg),
			   void *arg, hop_p2p_describe_fn describe,
			   void *darg);

/* Wait for one request (uses hop_p2p_wait_until). */
int hop_p2p_wait(struct hop_comm *comm, struct hop_p2p_req *req);

/*
 * One-sided put of the public API (hop_iput, hop_put) and its immediate
 * queue. hop_p2p_iput() starts put @req (no callback: the call sets every
 * field) of @len bytes from @src (inside @lmr, or NULL: registered through
 * the cache) to @raddr/@rkey of @peer, the PUT note {@imm, @len} behind it;
 * returns once both are posted. @req is done when @src may be reused.
 */
struct hop_prov_mr;
int hop_p2p_iput(struct hop_comm *comm, struct hop_p2p_req *req,
		 struct hop_prov_mr *lmr, const void *src, size_t len,
		 int peer, uint64_t raddr, uint64_t rkey, uint32_t imm);
int hop_p2p_wait_imm(struct hop_comm *comm, int peer, uint32_t *imm,
		     int *source, size_t *bytes);

/*
 * Registration cache for buffers hop registers on the user's behalf
 * (rendezvous receive buffers, put sources): returns a provider region
 * covering [addr, addr+len), registering it on first use. The region stays
 * valid until the cache's budget (HOP_REG_CACHE, HOP_REG_CACHE_BYTES) evicts
 * it, its memory is unmapped, the range is passed to hop_mem_deregister(),
 * or the comm is destroyed; when nothing is cached (HOP_REG_CACHE=0, no
 * unmapping monitor) only until the next registration through the cache.
 */
int hop_p2p_reg_cached(struct hop_comm *comm, void *addr, size_t len,
		       unsigned access, struct hop_prov_mr **out);

#endif /* HOP_P2P_P2P_H */
