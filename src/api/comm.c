/*
 * comm.c - the composition root: communicator life cycle. Init wires the
 * layers together (bootstrap, agreement, provider, p2p, collectives,
 * unwound in reverse on any failure); destroy takes them apart; abort and
 * the accessors. It sits above every layer it composes, so core knows
 * nothing above it (docs/layers.md).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/split.h"
#include "coll/coll.h"
#include "core/comm_agree.h"
#include "core/copy.h"
#include "core/core.h"
#include "core/core_int.h"
#include "model/model_comm.h"
#include "p2p/p2p.h"
#include "relay/relay.h"
#include "transport/provider.h"

/* The message a layer left on @comm for its failure. */
static const char *layer_msg(struct hop_comm *comm, int code)
{
	if (comm->last_error[0])
		return comm->last_error;
	if (atomic_load(&comm->failed) < 0)
		return comm->fail_msg;
	return hop_strerror(code);
}

#define SPIN_MIN_NS 1000000ull    /* 1 ms */
#define YIELD_US 10000            /* oversubscribed up to YIELD_FULL_OVER */
#define YIELD_FULL_OVER 4

/*
 * HOP_YIELD_US auto when oversubscribed: 10 ms up to 4 ranks per core;
 * beyond, 40 ms divided by the ranks per core. Every yielding waiter
 * stays runnable, so with 512 ranks per core the rank that has work
 * shared its core with hundreds of yielders (a 1024-rank AllReduce took
 * 10 ms per ring step), while a sleeping one costs nothing until woken.
 */
static int auto_yield_us(const struct hop_comm *comm)
{
	int per_core = (comm->kernel_ranks + comm->kernel_cores - 1) /
		       comm->kernel_cores;

	return per_core <= YIELD_FULL_OVER ? YIELD_US
					   : YIELD_US * YIELD_FULL_OVER / per_core;
}

/*
 * Resolve HOP_SPIN/HOP_YIELD_US "auto" (-1). A rank that spins while the
 * rank it waits for has no core burns the time slice that rank needs
 * (4 ranks on 2 cores: a tcp AllReduce of 8 B took 5 ms instead of
 * 0.2 ms): oversubscribed, a waiter polls once, then yields its core
 * between polls, and sleeps in the provider only after a longer quiet.
 */
static void resolve_wait_policy(struct hop_comm *comm)
{
	int over;

	over = hop_comm_oversubscribed(comm);
	/*
	 * Not oversubscribed, spin by time as well as by polls: a poll costs
	 * ~10 ns on shm but ~1 us on tcp, so 2000 polls are 20 us on shm,
	 * shorter than a blocked peer takes to wake, and a pair that once
	 * blocked kept blocking (a 1 KiB AllReduce over 2 ranks on 2 cores
	 * took 5-16 us instead of 2).
	 */
	comm->spin_min_ns = comm->cfg.spin_count < 0 && !over ? SPIN_MIN_NS : 0;
	if (comm->cfg.spin_count < 0)
		comm->cfg.spin_count = over ? 0 : 2000;
	if (comm->cfg.yield_us < 0)
		comm->cfg.yield_us = over ? auto_yield_us(comm) : 0;
	HOP_INFO("ranks sharing this rank's cores on its kernel: %d on %d "
		 "cores%s: a waiter spins %d polls and at least %d us, yields "
		 "for %d us, then sleeps", comm->kernel_ranks, comm->kernel_cores,
		 over ? " (oversubscribed)" : "", comm->cfg.spin_count,
		 (int)(comm->spin_min_ns / 1000), comm->cfg.yield_us);
}

int hop_comm_init_rank(hop_comm_t **commp, int nranks, hop_unique_id_t id,
		       int rank)
{
	return hop_comm_init_rank_with(commp, nranks, id, rank, NULL);
}

static int init_rank(hop_comm_t **commp, int nranks, hop_unique_id_t id,
		     int rank, const char *const *settings, unsigned flags);

int hop_comm_init_rank_with(hop_comm_t **commp, int nranks,
			    hop_unique_id_t id, int rank,
			    const char *const *settings)
{
	return init_rank(commp, nranks, id, rank, settings, 0);
}

static int init_rank(hop_comm_t **commp, int nranks, hop_unique_id_t id,
		     int rank, const char *const *settings, unsigned flags)
{
	struct hop_comm *comm;
	struct hop_id_info info;
	const struct hop_prov_ops *ops;
	char msg[HOP_MSG_LEN];
	const char *stage;
	char prov_stage[32];    /* the provider's name, outliving comm */
	uint64_t deadline;
	int ret;

	hop_clear_init_error();
	if (!commp) {
		hop_set_init_error("hop_comm_init_rank: comm (the output "
				   "pointer) is NULL");
		return HOP_ERR_INVALID_ARG;
	}
	*commp = NULL;
	if (nranks < 1 || nranks > 65536) {
		hop_set_init_error("hop_comm_init_rank: nranks %d is out of "
				   "range 1..65536", nranks);
		return HOP_ERR_INVALID_ARG;
	}
	if (rank < 0 || rank >= nranks) {
		hop_set_init_error("hop_comm_init_rank: rank %d is out of range "
				   "0..%d for %d ranks", rank, nranks - 1, nranks);
		return HOP_ERR_INVALID_ARG;
	}
	if ((ret = hop_id_decode_msg(&id, &info, msg, sizeof(msg)))) {
		hop_set_init_error("hop_comm_init_rank(rank %d): id: %s", rank,
				   msg);
		return ret;
	}
	if ((ret = hop_log_init())) {
		hop_set_init_error("hop_comm_init_rank(rank %d): HOP_DEBUG='%s' "
				   "is not one of none, warn, info, trace",
				   rank, getenv("HOP_DEBUG"));
		return ret;
	}
	hop_log_set_rank(rank);
	if (!(comm = hop_comm_alloc())) {
		hop_set_init_error("hop_comm_init_rank(rank %d): out of memory",
				   rank);
		return HOP_ERR_NO_MEMORY;
	}
	comm->rank = rank;
	comm->nranks = nranks;
	comm->root = comm;
	comm->ids_live = 1;
	comm->family = 1;
	if ((ret = hop_config_load_with(&comm->cfg, settings, msg,
					sizeof(msg)))) {
		stage = "configuration";
		goto err_free;
	}
	hop_copy_set_piece(comm->cfg.copy_piece);
	deadline = hop_comm_deadline(comm);

	stage = "bootstrap";
	if ((ret = hop_bootstrap_open(&id, rank, nranks, &comm->cfg, deadline,
				      &comm->bs, msg, sizeof(msg))))
		goto err_free;

	stage = "transport selection";
	if ((ret = hop_prov_select(comm, comm->bs, &ops))) {
		snprintf(msg, sizeof(msg), "%s", layer_msg(comm, ret));
		goto err_bs;
	}
	comm->prov_ops = ops;
	resolve_wait_policy(comm);
	stage = "cost model links";
	if ((ret = hop_model_comm_links(comm, msg, sizeof(msg))))
		goto err_prov;
	stage = "agreement on the auto settings";
	if ((ret = hop_comm_agree(comm, deadline))) {
		snprintf(msg, sizeof(msg), "%s", layer_msg(comm, ret));
		goto err_prov;
	}

	/* a copy: ops->name is unloaded with a plugin, and prov_ctx is freed
	 * with comm before the error below is written */
	snprintf(prov_stage, sizeof(prov_stage), "%s", comm->prov_ctx.name);
	stage = prov_stage;
	if ((ret = hop_prov_open(comm))) {
		snprintf(msg, sizeof(msg), "%s", layer_msg(comm, ret));
		goto err_prov;
	}

	stage = "p2p";
	if ((ret = hop_p2p_init(comm))) {
		snprintf(msg, sizeof(msg), "%s", layer_msg(comm, ret));
		goto err_p2p; /* p2p.h: fini is safe on a partial init */
	}

	stage = "collectives";
	if ((ret = hop_coll_init(comm))) {
		snprintf(msg, sizeof(msg), "%s", layer_msg(comm, ret));
		if (comm->coll)
			hop_coll_fini(comm);
		goto err_p2p;
	}
	/* every bootstrap exchange is behind us: its sockets (rank 0 holds
	 * one per rank) would only count against the descriptor limit */
	if (!(flags & HOP_INIT_KEEP_BOOTSTRAP)) {
		hop_bootstrap_close(comm->bs);
		comm->bs = NULL;
	}
	comm->last_error[0] = '\0';
	HOP_INFO("rank %d of %d joined; transport %s", rank, nranks, ops->name);
	*commp = comm;
	return 0;

err_p2p:
	hop_p2p_fini(comm);
err_prov:
	hop_prov_close(comm); /* and unloads a plugin */
err_bs:
	hop_bootstrap_close(comm->bs);
err_free:
	hop_comm_release(comm);
	hop_set_init_error("hop_comm_init_rank(rank %d of %d): %s: %s (%s)",
			   rank, nranks, stage, msg, hop_err_name(ret));
	return ret;
}

int hop_comm_init_env(hop_comm_t **commp)
{
	return hop_comm_init_env_flags(commp, 0);
}

int hop_comm_init_env_flags(hop_comm_t **commp, unsigned flags)
{
	struct hop_env_job job;
	char msg[HOP_MSG_LEN];
	int ret;

	hop_clear_init_error();
	if (!commp) {
		hop_set_init_error("hop_comm_init_env: comm (the output "
				   "pointer) is NULL");
		return HOP_ERR_INVALID_ARG;
	}
	*commp = NULL;
	hop_log_init();
	if ((ret = hop_env_job_parse(&job, msg, sizeof(msg)))) {
		hop_set_init_error("hop_comm_init_env: %s", msg);
		return ret;
	}
	HOP_TRACE("hop_comm_init_env: rank %d of %d from %s", job.rank,
		  job.nranks, job.rank_var);
	return init_rank(commp, job.nranks, job.id, job.rank, NULL, flags);
}

/* The last communicator sharing @root's endpoints is gone: close them. */
static void family_end(struct hop_comm *root)
{
	hop_coll_fini(root);
	relay_env_free(root);
	hop_p2p_fini(root);
	hop_prov_close(root);
	hop_bootstrap_close(root->bs);
	root->bs = NULL;
	hop_comm_release(root);
}

int hop_comm_destroy(hop_comm_t *comm)
{
	struct hop_comm *root;
	int ret;

	if (!comm)
		return 0;
	/* a failed comm is destroyed all the same: no hop_comm_check() */
	if ((ret = hop_comm_claim(comm, "hop_comm_destroy")))
		return ret;
	root = comm->root;
	if (hop_comm_derived(comm)) {
		hop_split_destroy(comm);
	} else if (root->family > 1) {
		/* derived communicators still use the endpoints: retire the
		 * handle, keep the storage they point to until the last goes */
		hop_p2p_cancel_comm(root, HOP_ERR_ABORTED);
		atomic_store(&root->magic, 0);
		atomic_store(&root->busy, NULL);
	}
	if (--root->family == 0)
		family_end(root);
	return 0;
}

int hop_comm_abort(hop_comm_t *comm)
{
	int none = 0;

	if (!hop_comm_live(comm))
		return HOP_ERR_INVALID_ARG;
	if (atomic_compare_exchange_strong(&comm->aborted, &none, 1))
		hop_comm_fail_async(comm, HOP_ERR_ABORTED, "rank %d: aborted by "
				    "hop_comm_abort()", comm->rank);
	return 0;
}

int hop_comm_rank(const hop_comm_t *comm)
{
	return hop_comm_live(comm) ? comm->rank : -1;
}

int hop_comm_size(const hop_comm_t *comm)
{
	return hop_comm_live(comm) ? comm->nranks : -1;
}

const char *hop_comm_transport(const hop_comm_t *comm)
{
	return hop_comm_live(comm) && comm->prov_ops ? comm->prov_ops->name
						       : "none";
}
