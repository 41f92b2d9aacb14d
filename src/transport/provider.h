/*
 * provider.h - the one narrow interface every transport implements.
 *
 * It is shaped like verbs on an RC QP so that the verbs provider is a thin
 * mapping and tcp/shm emulate it:
 *   - mr_reg:      register memory -> local handle + a key a peer can target
 *   - post_write:  write (local bytes) -> (peer, remote addr, key), optionally
 *                  with a 32-bit immediate delivered to the target as a
 *                  completion (RDMA_WRITE_WITH_IMM)
 *   - post_send:   a small message (<= HOP_PROV_SEND_MAX) that lands in a
 *                  provider-owned receive buffer (SEND/RECV)
 *   - poll:        completions, local (write/send done) and remote (immediate
 *                  arrived, message received)
 *
 * Contract shared by all providers:
 *   1. Per peer, operations are delivered in the order they were posted: a
 *      RECV or RECV_IMM completion at the target implies that every write
 *      posted before it to that target is in place.
 *   2. A post with HOP_WR_SIGNALED produces exactly one local completion with
 *      its wr_id (a provider may signal its hardware only every k-th post
 *      and synthesise the others, as ordering allows). Without the flag, none.
 *      The source of a write must not change until its completion, or a later
 *      signaled completion to the same peer, is seen.
 *   3. post_send copies @buf before returning; it may be reused at once.
 *      So does post_write with @lmr NULL (inline, @len <= max_inline).
 *   4. Zero-length writes are valid (an immediate alone).
 *   5. post_* return 0, HOP_PROV_AGAIN when a queue is full (poll, then
 *      retry), or a negative hop code after calling hop_comm_fail() with a
 *      message naming the peer rank and the cause.
 *   6. poll never blocks. A failed peer (EOF, reset, QP error, dead process)
 *      is reported by hop_comm_fail(comm, HOP_ERR_PEER_FAILED, "... rank N
 *      ...") and poll returns that code.
 *   7. Writes into a region are checked against its bounds and access rights
 *      (by the hardware on verbs, by the target on tcp, by the writer against
 *      the owner's published table on shm); a violation fails the writer
 *      with HOP_ERR_OUT_OF_BOUNDS where it can be known there.
 */
#ifndef HOP_TRANSPORT_PROVIDER_H
#define HOP_TRANSPORT_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

struct hop_comm;
struct hop_bootstrap;
struct hop_prov;

#define HOP_PROV_AGAIN 1        /* post_*: resources busy, poll and retry */
#define HOP_PROV_SEND_MAX 64    /* largest post_send payload */

/* post flags */
enum {
	HOP_WR_SIGNALED = 1u << 0, /* want a local completion */
	HOP_WR_IMM = 1u << 1,      /* deliver @imm to the target */
};

/* access flags of mr_reg, the same bits as enum hop_access */
enum {
	HOP_PROV_REMOTE_WRITE = 1u << 0,
	HOP_PROV_REMOTE_READ = 1u << 1,
};

/* Region as the rest of hop sees it; providers embed it in their own. */
struct hop_prov_mr {
	void *addr;
	size_t len;
	uint64_t key;           /* what a peer passes as @rkey */
	unsigned access;
};

enum hop_cqe_op {
	HOP_CQE_WRITE = 1,      /* local: a signaled write completed */
	HOP_CQE_SEND,           /* local: a signaled send completed */
	HOP_CQE_RECV_IMM,       /* remote: a write with immediate landed */
	HOP_CQE_RECV,           /* remote: a post_send message arrived */
};

struct hop_cqe {
	uint64_t wr_id;         /* WRITE/SEND: the posted wr_id */
	int op;                 /* enum hop_cqe_op */
	int status;             /* 0, or a negative hop code */
	int peer;               /* the other rank */
	uint32_t imm;           /* RECV_IMM */
	uint32_t len;           /* RECV_IMM: bytes written; RECV: bytes */
	uint8_t data[HOP_PROV_SEND_MAX]; /* RECV: the message */
};

struct hop_prov_ops {
	size_t size;            /* sizeof(struct hop_prov_ops) of the builder */
	const char *name;       /* "verbs", "tcp", "shm", ... */

	/*
	 * usable() - Can this provider run here at all (device present, ...)?
	 * Cheap, no side effects. 1 yes, 0 no (a reason goes to @why).
	 */
	int (*usable)(const struct hop_comm *comm, char *why, size_t whylen);

	/*
	 * open() - Create the instance for @comm (device, PD, CQ, listener)
	 * and connect to every other rank, exchanging addresses through @bs
	 * (every rank calls it; collective). Honour cfg.timeout_ms.
	 */
	int (*open)(struct hop_comm *comm, struct hop_bootstrap *bs,
		    struct hop_prov **out);

	/* close() - Release everything; outstanding work is dropped. */
	void (*close)(struct hop_prov *prov);

	int (*mr_reg)(struct hop_prov *prov, void *addr, size_t len,
		      unsigned access, struct hop_prov_mr **out);
	int (*mr_dereg)(struct hop_prov *prov, struct hop_prov_mr *mr);

	/*
	 * post_write() - Write @len bytes at @laddr (inside @lmr, or any
	 * memory when @lmr is NULL and @len <= max_inline) to @raddr of the
	 * region @rkey of @peer.
	 */
	int (*post_write)(struct hop_prov *prov, int peer,
			  struct hop_prov_mr *lmr, const void *laddr,
			  size_t len, uint64_t raddr, uint64_t rkey,
			  uint32_t imm, unsigned flags, uint64_t wr_id);

	/* post_send() - Send @len <= HOP_PROV_SEND_MAX bytes to @peer. */
	int (*post_send)(struct hop_prov *prov, int peer, const void *buf,
			 size_t len, unsigned flags, uint64_t wr_id);

	/* poll() - Up to @max completions into @cqe; returns the count. */
	int (*poll)(struct hop_prov *prov, struct hop_cqe *cqe, int max);

	/*
	 * wait() - Block up to @timeout_us for something poll() may report
	 * (an fd, a completion channel), or just yield. Never longer.
	 */
	void (*wait)(struct hop_prov *prov, int timeout_us);

	/* Largest write that may be posted without a registered source. */
	size_t (*max_inline)(const struct hop_prov *prov);

	/*
	 * mem_alloc() / mem_free() - Optional (may be NULL; check size
	 * first): memory that peers can write into most cheaply once it is
	 * registered, e.g. inside the shm segment so that an eager write is
	 * a plain copy with no system call. p2p allocates its eager rings
	 * with it. @len is a multiple of 4096; the result is page aligned;
	 * NULL on failure (p2p then uses ordinary memory).
	 */
	void *(*mem_alloc)(struct hop_prov *prov, size_t len);
	void (*mem_free)(struct hop_prov *prov, void *addr, size_t len);

	/*
	 * peer_closed() - Optional (may be NULL; check size first): 1 once
	 * @peer is known to have closed its communicator in order
	 * (hop_comm_destroy(): BYE seen, closed flag set), when a post to it
	 * would fail the comm; else 0. Cheap, no side effects. p2p skips
	 * messages that only matter to a live peer (credit returns, NAKs of
	 * eager messages), so a peer's orderly exit does not fail the comm
	 * of a rank still talking to others.
	 */
	int (*peer_closed)(struct hop_prov *prov, int peer);
};

extern const struct hop_prov_ops hop_prov_tcp;
extern const struct hop_prov_ops hop_prov_shm;
#ifdef HOP_HAVE_VERBS
extern const struct hop_prov_ops hop_prov_verbs;
#endif

/* Look a provider up by name; NULL when unknown or not built. */
const struct hop_prov_ops *hop_prov_find(const char *name);

/*
 * hop_prov_select() - Resolve cfg.transport ("auto" included) to a
 * provider, identically on every rank: auto takes verbs when every rank has
 * an ACTIVE device, else shm when every rank is on one host, else tcp. Uses
 * @bs to agree. An explicit choice that is not usable is HOP_ERR_NO_DEVICE
 * with the provider's reason.
 */
int hop_prov_select(struct hop_comm *comm, struct hop_bootstrap *bs,
		    const struct hop_prov_ops **out);

#endif /* HOP_TRANSPORT_PROVIDER_H */
