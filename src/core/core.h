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

#define HOP_COMM_MAGIC 0x686f7063u /* "hopc" */
#define HOP_MSG_LEN 512

struct hop_comm {
	uint32_t magic;                 /* HOP_COMM_MAGIC while alive */
	int rank;
	int nranks;
	struct hop_config cfg;
	struct hop_bootstrap *bs;
	const struct hop_prov_ops *prov_ops;
	struct hop_prov *prov;          /* owned by the provider */
	struct hop_prov_ctx prov_ctx;   /* what the provider sees of the core */
	void *prov_dl;                  /* dlopen handle of a provider plugin */
	struct hop_p2p *p2p;            /* owned by src/p2p */
	struct hop_coll *coll;          /* owned by src/coll */
	int local_ranks;                /* ranks on this rank's host (>= 1) */
	int usable_cores;               /* of this process (sched_getaffinity) */
	/* the oversubscription the cost model prices, equal on every rank:
	 * the largest local_ranks/usable_cores of any rank (comm_agree.c) */
	int model_ranks, model_cores;
	uint64_t spin_min_ns;           /* auto HOP_SPIN: spin at least this long */
	atomic_int failed;              /* 0, or the code that failed it */
	atomic_int aborted;             /* set by hop_comm_abort() */
	char fail_msg[HOP_MSG_LEN];     /* first cause, kept */
	char last_error[HOP_MSG_LEN];   /* last error of any call */
};

/* Store "msg" as @comm's last error, log it at info, return @code. */
int hop_set_error(struct hop_comm *comm, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Mark @comm failed (first cause kept), log at warn, return @code. */
int hop_comm_fail(struct hop_comm *comm, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * hop_comm_check() - Entry check of every public call taking a comm:
 * HOP_ERR_INVALID_HANDLE for NULL or a destroyed comm (magic),
 * HOP_ERR_COMM_FAILED (message carries the original cause) once failed or
 * aborted; else 0. hop_comm_abort() records HOP_ERR_ABORTED as the failure
 * (unless the comm had already failed), so a wait loop that returns
 * comm->failed gives the waiting call HOP_ERR_ABORTED, and every later
 * call gets HOP_ERR_COMM_FAILED here, as hop/comm.h promises.
 */
int hop_comm_check(struct hop_comm *comm);

/* More ranks on this host than this process has cores (wait policy, cost
 * model); false before the comm counted them. */
static inline int hop_comm_oversubscribed(const struct hop_comm *comm)
{
	return comm->usable_cores > 0 && comm->local_ranks > comm->usable_cores;
}

/* Deadline for a blocking call that starts now (cfg.timeout_ms). */
static inline uint64_t hop_comm_deadline(const struct hop_comm *comm)
{
	return hop_deadline_after(comm->cfg.timeout_ms);
}

#endif /* HOP_CORE_CORE_H */
