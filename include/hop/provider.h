/*
 * hop/provider.h - the provider ABI: what a transport implements so that
 * hop's point-to-point and collective layers run over it. The built-in
 * providers (verbs, tcp, shm) implement exactly this table; a provider built
 * outside hop is a shared object libhop-provider-NAME.so that exports one
 * struct hop_prov_plugin named hop_provider_plugin (HOP_PROV_PLUGIN()), found
 * through HOP_PLUGIN_PATH when HOP_TRANSPORT=NAME. docs/provider-plugins.md
 * walks through examples/provider/.
 *
 * The table is shaped like verbs on a reliable connected QP, so verbs is a
 * thin mapping and software providers emulate it:
 *   - mr_reg:     register memory -> a local handle + a key a peer targets;
 *   - post_write: write local bytes to (peer, remote address, key),
 *                 optionally with a 32-bit immediate delivered to the target
 *                 as a completion (RDMA_WRITE_WITH_IMM);
 *   - post_send:  a small message (<= HOP_PROV_SEND_MAX bytes) that lands in
 *                 a provider-owned buffer (SEND/RECV);
 *   - poll:       completions, local (write/send done) and remote (immediate
 *                 arrived, message received).
 *
 * Contract every provider keeps:
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
 *   5. post_* return 0, HOP_PROV_AGAIN when a queue is full (hop polls, then
 *      retries), or a negative HOP_ERR_* code after ctx->fail_comm() with a
 *      message naming the peer rank and the cause.
 *   6. poll never blocks. A failed peer (EOF, reset, QP error, dead process)
 *      is reported by ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, "... rank N ...")
 *      and poll returns that code.
 *   7. Writes into a region are checked against its bounds and access rights
 *      (by the hardware on verbs, by the target on tcp, by the writer against
 *      the owner's published table on shm); a violation fails the writer
 *      with HOP_ERR_OUT_OF_BOUNDS where it can be known there.
 *
 * Versioning: HOP_PROV_ABI_VERSION changes whenever an existing member of
 * these structures changes meaning, type or place; hop refuses a plugin
 * built for another version (HOP_ERR_NOT_SUPPORTED naming the file and both
 * versions). Members are only ever added at the end of struct hop_prov_ops
 * and struct hop_prov_ctx, without a version change: each carries its
 * builder's sizeof in .size, so check .size before using a newer member.
 */
#ifndef HOP_PROVIDER_H
#define HOP_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <hop/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI of this header; a plugin records the one it was built with. */
#define HOP_PROV_ABI_VERSION 1

/** post_*: resources busy; hop polls and retries. */
#define HOP_PROV_AGAIN 1
/** Largest post_send payload in bytes. */
#define HOP_PROV_SEND_MAX 64

/** Flags of post_write and post_send. */
enum {
	HOP_WR_SIGNALED = 1u << 0, /* want a local completion */
	HOP_WR_IMM = 1u << 1,      /* post_write: deliver @imm to the target */
};

/** Access flags of mr_reg (the same bits as enum hop_access). */
enum {
	HOP_PROV_REMOTE_WRITE = 1u << 0,
	HOP_PROV_REMOTE_READ = 1u << 1,
};

/**
 * struct hop_prov_mr - a registered region as hop sees it; a provider embeds
 * it first in its own region structure.
 */
struct hop_prov_mr {
	void *addr;
	size_t len;
	uint64_t key;           /* what a peer passes as @rkey */
	unsigned access;        /* HOP_PROV_REMOTE_* */
};

/** Kinds of completion. */
enum hop_cqe_op {
	HOP_CQE_WRITE = 1,      /* local: a signaled write completed */
	HOP_CQE_SEND,           /* local: a signaled send completed */
	HOP_CQE_RECV_IMM,       /* remote: a write with immediate landed */
	HOP_CQE_RECV,           /* remote: a post_send message arrived */
};

/** struct hop_cqe - one completion, filled by poll(). */
struct hop_cqe {
	uint64_t wr_id;         /* WRITE/SEND: the posted wr_id */
	int op;                 /* enum hop_cqe_op */
	int status;             /* 0, or a negative HOP_ERR_* code */
	int peer;               /* the other rank */
	uint32_t imm;           /* RECV_IMM */
	uint32_t len;           /* RECV_IMM: bytes written; RECV: bytes */
	uint8_t data[HOP_PROV_SEND_MAX]; /* RECV: the message */
};

/** A provider's instance; its layout is the provider's own. */
struct hop_prov;

/** Levels of ctx->log(), shown as HOP_DEBUG=warn|info|trace allows. */
enum hop_prov_log_level {
	HOP_PROV_LOG_WARN = 1,
	HOP_PROV_LOG_INFO = 2,
	HOP_PROV_LOG_TRACE = 3,
};

#if defined(__GNUC__) || defined(__clang__)
#define HOP_PROV_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define HOP_PROV_PRINTF(f, a)
#endif

/**
 * struct hop_prov_ctx - what hop hands to usable() and open(): the job and
 * the services of the core. Owned by hop; valid from open() until close()
 * returns, so a provider keeps the pointer. Callbacks may be called from
 * any provider function but not from other threads at the same time.
 */
struct hop_prov_ctx {
	size_t size;            /* sizeof(struct hop_prov_ctx) in hop */
	int rank;               /* this process, 0 .. nranks - 1 */
	int nranks;
	int timeout_ms;         /* HOP_TIMEOUT: bound every wait of open() */
	const char *name;       /* the provider's name (HOP_TRANSPORT) */

	/**
	 * allgather() - Exchange @len bytes per rank through hop's bootstrap
	 * (collective: every rank calls it with the same @len, in open()).
	 * @mine: this rank's bytes; @all: nranks * @len bytes, rank order;
	 * nranks * @len is at most HOP_PROV_ALLGATHER_MAX.
	 * Return: 0, or a HOP_ERR_* code already described (ctx->fail_comm() is
	 * not needed; return the code from open()).
	 */
	int (*allgather)(const struct hop_prov_ctx *ctx, const void *mine,
			 void *all, size_t len);

	/**
	 * fail() - The communicator has failed (peer gone, protocol error,
	 * bounds violation, timeout): record @code and the message, which
	 * names the rank/peer/size concerned. The first cause is kept.
	 * Return: @code, so a provider writes `return ctx->fail_comm(ctx, ...)`.
	 */
	int (*fail_comm)(const struct hop_prov_ctx *ctx, int code,
		    const char *fmt, ...) HOP_PROV_PRINTF(3, 4);

	/**
	 * error() - An error that leaves the communicator usable (a bad
	 * argument, a failed open()): record @code and the message.
	 * Return: @code.
	 */
	int (*error)(const struct hop_prov_ctx *ctx, int code,
		     const char *fmt, ...) HOP_PROV_PRINTF(3, 4);

	/**
	 * failed() - 0 while the communicator is healthy, else the negative
	 * code it failed with (another layer, hop_comm_abort()). Cheap; a
	 * provider checks it in waits so they end when the comm fails.
	 */
	int (*failed)(const struct hop_prov_ctx *ctx);

	/** log() - A line to hop's log, prefixed with the rank. */
	void (*log)(const struct hop_prov_ctx *ctx, int level,
		    const char *fmt, ...) HOP_PROV_PRINTF(3, 4);

	/**
	 * config() - The provider's own setting @key: the environment
	 * variable HOP_PROV_<NAME>_<KEY> (NAME upper-cased, '-' as '_'),
	 * or NULL when unset. hop does not warn about these variables.
	 */
	const char *(*config)(const struct hop_prov_ctx *ctx, const char *key);

	/* Members below were added after .config: check ctx->size. */

	/**
	 * setting() - hop's own variable @var (a HOP_* name of
	 * docs/config.md, e.g. "HOP_IB_MTU") as validated at init, its default
	 * applied: a number (integer; size in bytes; time in milliseconds)
	 * in *@num, a string in @str (@len bytes, NUL-terminated, cut to fit).
	 * Either output may be NULL when the caller knows the kind.
	 * Return: 0, or HOP_ERR_CONFIG when hop has no such variable.
	 */
	int (*setting)(const struct hop_prov_ctx *ctx, const char *var,
		       long long *num, char *str, size_t len);

	/**
	 * barrier() - Return once every rank has entered (collective, like
	 * allgather(), bounded by timeout_ms). Return: 0 or a HOP_ERR_* code
	 * already described.
	 */
	int (*barrier)(const struct hop_prov_ctx *ctx);

	/* Identity of this host: equal for every process of one boot of one
	 * host, different across hosts (what chooses shm under auto). */
	uint64_t host_id;
	/* IPv4 address (network byte order) of this rank's bootstrap
	 * connection: bind listeners there to be reachable by the others. */
	uint32_t local_addr;
	/* HOP_PROV_SECRET_LEN bytes every rank of the job shares and no one
	 * else knows: present them in connection hellos, refuse others. */
	const uint8_t *secret;
};

/** Most bytes one ctx->allgather() gathers (nranks * len). */
#define HOP_PROV_ALLGATHER_MAX (64u << 20)
/** Bytes of hop_prov_ctx.secret. */
#define HOP_PROV_SECRET_LEN 16

/** Capability flags of struct hop_prov_caps. */
enum {
	/* posts are carried out by RDMA hardware (or a kernel/soft RDMA
	 * device), not emulated by hop's own software: a receiver sees a
	 * write land without the sender's process running */
	HOP_PROV_CAP_RDMA = 1u << 0,
	/* an 8-byte aligned word of a post_write lands whole at the target
	 * (never torn) and after every earlier byte of that write, so a
	 * receiver may poll memory for a flag word (hop's LL protocol) */
	HOP_PROV_CAP_ATOMIC8 = 1u << 1,
	/* every peer is a process of this host, reached through memory the
	 * host shares: the collectives may meet in a shared region of their
	 * own (the fast boxes) */
	HOP_PROV_CAP_HOST_MEMORY = 1u << 2,
	/* wait() returns as soon as poll() has something to report, a
	 * write that landed or a peer that closed included: a quiet waiter
	 * may block for longer than a millisecond at a time */
	HOP_PROV_CAP_WAKES = 1u << 3,
};

/**
 * struct hop_prov_caps - what a provider is, for the layers above that
 * tune themselves to it. Zero in a number means "no opinion": hop uses its
 * own default. Members are only ever added at the end (check .size).
 */
struct hop_prov_caps {
	size_t size;            /* sizeof(struct hop_prov_caps) of the builder */
	unsigned flags;         /* HOP_PROV_CAP_* */
	/* HOP_EAGER_SIZE=auto: the largest eager payload in bytes; with
	 * HOP_PROV_CAP_RDMA halved (to 8 KiB at least) while the registered
	 * eager slots of the job would pass 16 MiB or a quarter of
	 * RLIMIT_MEMLOCK. 0: 8 KiB. */
	size_t eager_size;
	/* Built-in link the cost model prices when no HOP_PROFILE is loaded:
	 * one-way latency in seconds, bandwidth in bytes per second, the
	 * slowdown of sending and receiving at once (1 .. 4), and the smallest
	 * chunk worth pipelining in bytes. 0: the model's generic link. */
	double alpha;
	double beta;
	double duplex;
	double min_chunk;
};

/**
 * struct hop_prov_ops - the provider. Every member up to peer_closed is
 * required but mem_alloc, mem_free and peer_closed (NULL allowed); caps is
 * optional.
 */
struct hop_prov_ops {
	size_t size;            /* sizeof(struct hop_prov_ops) of the builder */
	const char *name;       /* "verbs", "tcp", "shm", a plugin's NAME */

	/**
	 * usable() - Can this provider run here at all (device present, ...)?
	 * Cheap, no side effects, not collective. Return: 1 yes, 0 no with
	 * the reason in @why.
	 */
	int (*usable)(const struct hop_prov_ctx *ctx, char *why, size_t whylen);

	/**
	 * open() - Create the instance and connect to every other rank,
	 * exchanging addresses through ctx->allgather() (every rank calls it;
	 * collective). Bounded by ctx->timeout_ms.
	 * Return: 0 with *@out set, or a HOP_ERR_* code after ctx->error().
	 */
	int (*open)(const struct hop_prov_ctx *ctx, struct hop_prov **out);

	/** close() - Release everything; outstanding work is dropped. */
	void (*close)(struct hop_prov *prov);

	/**
	 * mr_reg() - Register @len bytes at @addr with HOP_PROV_REMOTE_*
	 * @access. Return: 0 with *@out set, or a HOP_ERR_* code.
	 */
	int (*mr_reg)(struct hop_prov *prov, void *addr, size_t len,
		      unsigned access, struct hop_prov_mr **out);
	/** mr_dereg() - Retire @mr; its key is refused from now on. */
	int (*mr_dereg)(struct hop_prov *prov, struct hop_prov_mr *mr);

	/**
	 * post_write() - Write @len bytes at @laddr (inside @lmr, or any
	 * memory when @lmr is NULL and @len <= max_inline) to @raddr of the
	 * region @rkey of @peer; with HOP_WR_IMM, @imm reaches @peer as a
	 * HOP_CQE_RECV_IMM completion once the bytes are in place.
	 * Return: 0, HOP_PROV_AGAIN, or a HOP_ERR_* code after ctx->fail_comm().
	 */
	int (*post_write)(struct hop_prov *prov, int peer,
			  struct hop_prov_mr *lmr, const void *laddr,
			  size_t len, uint64_t raddr, uint64_t rkey,
			  uint32_t imm, unsigned flags, uint64_t wr_id);

	/** post_send() - Send @len <= HOP_PROV_SEND_MAX bytes to @peer. */
	int (*post_send)(struct hop_prov *prov, int peer, const void *buf,
			 size_t len, unsigned flags, uint64_t wr_id);

	/** poll() - Up to @max completions into @cqe; returns the count. */
	int (*poll)(struct hop_prov *prov, struct hop_cqe *cqe, int max);

	/**
	 * wait() - Block up to @timeout_us for something poll() may report
	 * (an fd, a completion channel), or just yield. Never longer.
	 */
	void (*wait)(struct hop_prov *prov, int timeout_us);

	/** max_inline() - Largest write postable without a registered source. */
	size_t (*max_inline)(const struct hop_prov *prov);

	/**
	 * mem_alloc() / mem_free() - Optional: memory peers can write into
	 * most cheaply once registered (the shm segment). @len is a multiple
	 * of 4096; the result is page aligned; NULL on failure.
	 */
	void *(*mem_alloc)(struct hop_prov *prov, size_t len);
	void (*mem_free)(struct hop_prov *prov, void *addr, size_t len);

	/**
	 * peer_closed() - Optional: 1 once @peer closed its communicator in
	 * order (its close() said goodbye), when a post to it would fail the
	 * comm; else 0. Cheap. hop then skips messages only a live peer needs.
	 */
	int (*peer_closed)(struct hop_prov *prov, int peer);

	/* Members below were added after peer_closed: check ops->size. */

	/** caps - Optional: what the provider is; NULL: all defaults. */
	const struct hop_prov_caps *caps;

	/* Members below were added after caps: check ops->size. */

	/**
	 * connect() - Optional: hop waits for a message from @peer (a
	 * receive from it is posted). A provider that connects pairs on
	 * first use starts connecting @peer now if it has not, so a peer
	 * that is gone fails the comm (HOP_ERR_PEER_FAILED naming it)
	 * instead of leaving the receive to time out, and a connected peer
	 * is watched as any other. Cheap once connected; never blocks.
	 * Return: 0, or a HOP_ERR_* code after ctx->fail_comm().
	 */
	int (*connect)(struct hop_prov *prov, int peer);
};

/**
 * hop_prov_connect() - @ops->connect(@prov, @peer) when @ops has it (see
 * there), else 0: a provider without it connects every pair at open.
 */
static inline int hop_prov_connect(const struct hop_prov_ops *ops,
				   struct hop_prov *prov, int peer)
{
	if (!ops || ops->size < offsetof(struct hop_prov_ops, connect) +
				sizeof(ops->connect) || !ops->connect)
		return 0;
	return ops->connect(prov, peer);
}

/**
 * hop_prov_caps_of() - The caps of @ops, or NULL when it has none (or was
 * built before ops had caps): then every capability takes hop's default.
 */
static inline const struct hop_prov_caps *
hop_prov_caps_of(const struct hop_prov_ops *ops)
{
	if (!ops || ops->size < offsetof(struct hop_prov_ops, caps) +
				sizeof(ops->caps) || !ops->caps ||
	    ops->caps->size < offsetof(struct hop_prov_caps, min_chunk) +
			      sizeof(ops->caps->min_chunk))
		return NULL;
	return ops->caps;
}

/** hop_prov_has() - Does @ops declare every HOP_PROV_CAP_* bit of @flags? */
static inline int hop_prov_has(const struct hop_prov_ops *ops, unsigned flags)
{
	const struct hop_prov_caps *c = hop_prov_caps_of(ops);

	return c && (c->flags & flags) == flags;
}

/**
 * struct hop_prov_plugin - what libhop-provider-NAME.so exports as
 * hop_provider_plugin. @abi_version stays the first member in every ABI
 * version, so hop can read it from any plugin.
 */
struct hop_prov_plugin {
	unsigned abi_version;   /* HOP_PROV_ABI_VERSION at the plugin's build */
	const char *name;       /* NAME, as in the file name and HOP_TRANSPORT */
	const struct hop_prov_ops *ops;
};

/** Name of the symbol hop looks up in a plugin. */
#define HOP_PROV_PLUGIN_SYMBOL "hop_provider_plugin"

/** HOP_PROV_PLUGIN(name, ops) - define the exported plugin descriptor. */
#define HOP_PROV_PLUGIN(pname, pops)                                          \
	__attribute__((visibility("default")))                                \
	const struct hop_prov_plugin hop_provider_plugin = {                  \
		.abi_version = HOP_PROV_ABI_VERSION, .name = (pname),         \
		.ops = (pops),                                                \
	}

#ifdef __cplusplus
}
#endif

#endif /* HOP_PROVIDER_H */
