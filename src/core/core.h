/*
 * core.h - the communicator object and the error helpers every layer uses.
 *
 * Error discipline: a layer that detects an error calls hop_set_error()
 * (argument errors: the comm stays usable) or hop_comm_fail() (transport,
 * peer, timeout: the comm becomes failed and every later call returns
 * HOP_ERR_COMM_FAILED with the first cause in the message). Both return the
 * code so callers write `return hop_set_error(comm, HOP_ERR_..., "...")`.
 */
#ifndef HOP_CORE_CORE_H
#define HOP_CORE_CORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <hop/hop.h>
#include <hop/provider.h>

#include "config.h"
#include "log.h"
#include "timer.h"

struct hop_bootstrap;
struct hop_prov;
struct hop_prov_ops;
struct hop_p2p;
struct hop_coll;
struct relay_env;

#define HOP_COMM_MAGIC 0x686f7063u /* "hopc" */

enum hop_link_class { HOP_LINK_INTRA = 0, HOP_LINK_INTER = 1 };

/* A link of the cost model as plain numbers (the first fields of
 * src/model's struct hop_model_link: seconds, bytes per second, seconds
 * per byte, factor, bytes, bytes), what comm_agree.c exchanges. */
struct hop_agreed_link {
	double alpha, beta, gamma, duplex, min_chunk, max_chunk;
};
#define HOP_MSG_LEN 512

struct hop_comm {
	_Atomic uint32_t magic;         /* HOP_COMM_MAGIC while alive */
	_Atomic(const char *) busy;     /* the public call running, or NULL */
	struct hop_comm *next_dead;     /* quarantine (comm_handle.c) */
	int rank;
	int nranks;
	struct hop_config cfg;
	/* open only while hop_comm_init_rank() runs: every bootstrap exchange
	 * is part of init, and its star around rank 0 holds a socket per rank */
	struct hop_bootstrap *bs;
	uint8_t secret[16];             /* the id's secret, kept past the
					   bootstrap for connections on first
					   use (prov_ctx.secret points here) */
	const struct hop_prov_ops *prov_ops;
	struct hop_prov *prov;          /* owned by the provider */
	struct hop_prov_ctx prov_ctx;   /* what the provider sees of the core */
	void *prov_dl;                  /* dlopen handle of a provider plugin */
	struct hop_p2p *p2p;            /* owned by src/p2p */
	struct hop_coll *coll;          /* owned by src/coll */
	struct relay_env *relay_env;    /* HOP_PROFILE/HOP_TOPO of relays */
	/* ranks of this rank's host whose CPU affinity meets its own, it
	 * included (>= 1), and the cores of their masks together: the cost
	 * model's oversubscription (core/cpus.h; set by transport selection) */
	int local_ranks;
	/* on @root: the host of each rank, hosts numbered 0 .. nhosts - 1 in
	 * the order of their lowest rank; the same on every rank (set by
	 * transport selection from the gathered host identities) */
	int *host_of;
	int nhosts;
	/* the provider of each link class (enum hop_link_class): the one
	 * that carries traffic between two ranks of one host, and between
	 * hosts; both prov_ops when one provider serves every peer */
	const struct hop_prov_ops *class_ops[2];
	int usable_cores;
	/* the same among the ranks of this rank's kernel, which emulated
	 * hosts on one machine share: the wait policy */
	int kernel_ranks, kernel_cores;
	/* the oversubscription the cost model prices, equal on every rank:
	 * the largest local_ranks/usable_cores of any rank (comm_agree.c) */
	int model_ranks, model_cores;
	/* the cost model's link of each class (enum hop_link_class): this
	 * rank's own (HOP_PROFILE or its providers' defaults) until
	 * hop_comm_agree() replaces it with the fold of every rank's;
	 * model_links 0 when none was given */
	struct hop_agreed_link model_link[2];
	int model_links;
	uint64_t spin_min_ns;           /* auto HOP_SPIN: spin at least this long */
	/* A derived communicator (hop_comm_split/dup, src/api/split.c)
	 * shares the provider, channels and slots of the communicator made
	 * by init (@root, itself for that one), under its own @comm_id in
	 * the tag (p2p.h HOP_TAG_COMM), with ranks of its own: @peer_of maps
	 * them to @root's ranks, @rank_of back (-1: not a member); both NULL
	 * when the ranks are @root's. */
	struct hop_comm *root;
	int comm_id;
	int *peer_of;
	int *rank_of;
	/* on @root: the comm ids live on this rank (bit 0: itself) and the
	 * communicators sharing its endpoints, itself included until it is
	 * destroyed; the endpoints go with the last of them */
	uint64_t ids_live;
	int family;
	atomic_int failed;              /* 0, or the code that failed it */
	atomic_int aborted;             /* set by hop_comm_abort() */
	char fail_msg[HOP_MSG_LEN];     /* first cause, kept */
	char last_error[HOP_MSG_LEN];   /* last error of any call */
	/* called once, by the call that records the failure (any thread):
	 * ranks that wait on this one in shared memory, where no provider
	 * reports it, learn of it (src/coll's fast boxes set it) */
	void (*on_fail)(struct hop_comm *comm, int code);
	/* publishes the CPU this rank waits on and tells whether another
	 * rank of the comm last waited on the same CPU, which a spinning
	 * waiter would keep off it (src/coll's fast boxes set it, in whose
	 * region every rank's CPU lies); NULL: not known */
	int (*cpu_shared)(struct hop_comm *comm);
};

/* Store "msg" as @comm's last error, log it at info, return @code. */
int hop_set_error(struct hop_comm *comm, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Mark @comm failed (first cause kept), log at warn, return @code. */
int hop_comm_fail(struct hop_comm *comm, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * hop_comm_check() - The state check of hop_comm_enter(), without the claim:
 * HOP_ERR_INVALID_HANDLE for NULL or a destroyed comm (magic),
 * HOP_ERR_COMM_FAILED (message carries the original cause) once failed or
 * aborted; else 0. hop_comm_abort() records HOP_ERR_ABORTED as the failure
 * (unless the comm had already failed), so a wait loop that returns
 * comm->failed gives the waiting call HOP_ERR_ABORTED, and every later
 * call gets HOP_ERR_COMM_FAILED here, as hop/comm.h promises.
 */
int hop_comm_check(struct hop_comm *comm);
/* The failure half of hop_comm_check(), for a @comm already known live. */
int hop_comm_check_failed(struct hop_comm *comm);

/* A derived @comm fails with the cause of its root's failure (the shared
 * endpoints failed: a dead peer, a transport error, the root's abort).
 * Returns the code, or 0 when the root has not failed. */
int hop_comm_inherit_failure(struct hop_comm *comm);

/*
 * hop_comm_init_env_flags() - hop_comm_init_env() for hop's own tools.
 * HOP_INIT_KEEP_BOOTSTRAP keeps comm->bs open until hop_comm_destroy(), for
 * a tool that uses it as an out-of-band channel after init (hop-probe's
 * barriers between measurements, which must not share the provider).
 */
#define HOP_INIT_KEEP_BOOTSTRAP 1u
int hop_comm_init_env_flags(struct hop_comm **commp, unsigned flags);

/*
 * Handles (comm_handle.c). hop_comm_alloc() returns zeroed storage with
 * magic set; hop_comm_release() clears magic and keeps the storage, so a
 * stale handle can always be checked (hop_comm_live()) without reading
 * freed memory.
 */
struct hop_comm *hop_comm_alloc(void);
void hop_comm_release(struct hop_comm *comm);
int hop_comm_live(const struct hop_comm *comm);

/*
 * hop_comm_enter() - Entry of a public call @fn on @comm: refuses a
 * NULL or destroyed comm (HOP_ERR_INVALID_HANDLE) and a comm another
 * thread is inside (HOP_ERR_INVALID_ARG, naming both calls), claims it,
 * then hop_comm_check(). On 0 the caller must hop_comm_leave() when done.
 */
int hop_comm_enter(struct hop_comm *comm, const char *fn);
/* Return @call run on @comm claimed for @fn by @entry (hop_comm_enter
 * or hop_comm_claim), released after. */
#define HOP_RUN_CLAIMED(entry, comm, fn, call)                                \
	do {                                                                  \
		struct hop_comm *c_ = (comm);                                 \
		int r_ = entry(c_, (fn));                                     \
		if (r_)                                                       \
			return r_;                                            \
		r_ = (call);                                                  \
		hop_comm_leave(c_);                                           \
		return r_;                                                    \
	} while (0)
#define HOP_ENTERED(comm, fn, call)                                           \
	HOP_RUN_CLAIMED(hop_comm_enter, comm, fn, call)
/* The claim alone (hop_comm_destroy() of a failed comm). */
int hop_comm_claim(struct hop_comm *comm, const char *fn);
void hop_comm_leave(struct hop_comm *comm);

/* A refusal of a call that does not own @comm: the message goes to this
 * thread only (hop_comm_last_error() returns it here), not to
 * comm->last_error, which the owning thread may be writing. */
int hop_comm_refuse(const struct hop_comm *comm, int code, const char *fmt,
		    ...) __attribute__((format(printf, 3, 4)));
/* This thread's refusal message about @comm, or NULL; clear it. */
const char *hop_comm_refusal(const struct hop_comm *comm);
void hop_comm_refusal_clear(const struct hop_comm *comm);

/* More ranks share this rank's cores on its kernel than there are cores
 * (how a rank waits); false before the comm counted them. */
static inline int hop_comm_oversubscribed(const struct hop_comm *comm)
{
	return comm->kernel_cores > 0 && comm->kernel_ranks > comm->kernel_cores;
}

/* @comm's rank @r as a rank of the channel layer (its root's rank). */
static inline int hop_comm_peer(const struct hop_comm *comm, int r)
{
	return comm->peer_of ? comm->peer_of[r] : r;
}

/* The rank in @comm of the channel layer's rank @q, or -1. */
static inline int hop_comm_rank_of(const struct hop_comm *comm, int q)
{
	return comm->rank_of && q >= 0 ? comm->rank_of[q] : q;
}

/* The provider ops carrying @comm's traffic of link class @cls (enum
 * hop_link_class): the class's own, or the one provider's when transport
 * selection set no class (a provider loaded as a plugin). */
static inline const struct hop_prov_ops *
hop_comm_class_ops(const struct hop_comm *comm, int cls)
{
	return comm->class_ops[cls] ? comm->class_ops[cls] : comm->prov_ops;
}

/* The host (0 .. root's nhosts - 1) of @comm's rank @r; 0 before the
 * transport was selected. */
static inline int hop_comm_host(const struct hop_comm *comm, int r)
{
	const struct hop_comm *root = comm->root ? comm->root : comm;

	return root->host_of ? root->host_of[hop_comm_peer(comm, r)] : 0;
}

/* The provider between hosts (the only one of a single-provider comm):
 * the link a flat algorithm or a relay over the whole comm is priced on. */
static inline const struct hop_prov_ops *
hop_comm_inter_ops(const struct hop_comm *comm)
{
	return comm->class_ops[HOP_LINK_INTER] ? comm->class_ops[HOP_LINK_INTER]
					       : comm->prov_ops;
}

/* Shares the endpoints of another communicator (split, dup). */
static inline int hop_comm_derived(const struct hop_comm *comm)
{
	return comm->root && comm->root != comm;
}

/* HOP_ERR_NOT_SUPPORTED from @fn on a derived @comm: one-sided puts,
 * their immediates, registered regions and relays address the ranks of
 * the communicator made by init (comm_error.c). */
int hop_comm_derived_refuse(struct hop_comm *comm, const char *fn);

/* Deadline for a blocking call that starts now (cfg.timeout_ms). */
static inline uint64_t hop_comm_deadline(const struct hop_comm *comm)
{
	return hop_deadline_after(comm->cfg.timeout_ms);
}

#endif /* HOP_CORE_CORE_H */
