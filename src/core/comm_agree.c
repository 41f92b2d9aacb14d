/*
 * comm_agree.c - the "auto" inputs that must be equal on every rank,
 * agreed once at init (one bootstrap allgather) and frozen on the comm.
 *
 * A process sees only its own host and itself: how many ranks share its
 * host, how many cores its affinity mask allows, what its memlock limit
 * and capabilities let it pin. Decided alone, two ranks of one job could
 * price the same collective on different links and pick different
 * algorithms or chunks (the collective's signature then differs:
 * HOP_ERR_MISMATCH), or size their eager slots differently (p2p refuses
 * that: HOP_ERR_CONFIG). So each rank contributes its view and every rank
 * takes the same fold of all of them:
 *  - oversubscription of the cost model: the largest ranks/cores of any
 *    rank (the slowest rank paces a collective);
 *  - HOP_EAGER_SIZE=auto: the smallest of the ranks that asked for auto
 *    (the largest slot every such rank can register);
 *  - the cost model's link of each class (intra-host, inter-host): each
 *    rank's HOP_PROFILE or providers' defaults, folded to the slowest, so
 *    that a rank whose profile differs still chooses what the others do.
 * The wait policy (spin or yield) stays per process: it only decides how
 * this process waits and must not be equal.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bootstrap.h"
#include "core.h"
#include "comm_agree.h"
#include "core_int.h"

/* 1 when this process may lock memory beyond RLIMIT_MEMLOCK: it holds
 * CAP_IPC_LOCK (root normally does), which the kernel checks before the
 * limit when verbs pins a registration. */
static int can_lock_unlimited(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return (data[CAP_IPC_LOCK / 32].effective >> (CAP_IPC_LOCK % 32)) & 1;
}

/* HOP_EAGER_SIZE=auto as this process alone would choose it (config.c
 * says why), from its memlock limit unless it may pin beyond it. */
static size_t local_eager_auto(const struct hop_comm *comm)
{
	const struct hop_prov_caps *caps = hop_prov_caps_of(comm->prov_ops);
	struct rlimit rl;
	uint64_t memlock = 0;

	if (!getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    !can_lock_unlimited())
		memlock = rl.rlim_cur ? (uint64_t)rl.rlim_cur : 1;
	return hop_config_eager_auto(caps ? caps->eager_size : 0,
				     hop_prov_has(comm->prov_ops,
						  HOP_PROV_CAP_RDMA),
				     comm->nranks, comm->cfg.eager_slots,
				     memlock);
}

void hop_agree_local(const struct hop_comm *comm, struct hop_agree_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->local_ranks = (uint32_t)(comm->local_ranks > 0 ? comm->local_ranks
							    : 1);
	rec->usable_cores = (uint32_t)(comm->usable_cores > 0
				       ? comm->usable_cores : 1);
	rec->eager_auto = comm->cfg.eager_size == 0;
	rec->eager = rec->eager_auto ? local_eager_auto(comm)
				     : comm->cfg.eager_size;
	rec->has_links = comm->model_links != 0;
	if (rec->has_links)
		memcpy(rec->link, comm->model_link, sizeof(rec->link));
}

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

static double dmin(double a, double b)
{
	return a < b ? a : b;
}

/* @out (a link already given) slowed to @a where @a is slower. */
static void link_fold(struct hop_agreed_link *out,
		      const struct hop_agreed_link *a)
{
	out->alpha = dmax(out->alpha, a->alpha);
	out->beta = dmin(out->beta, a->beta);
	out->gamma = dmax(out->gamma, a->gamma);
	out->duplex = dmax(out->duplex, a->duplex);
	out->min_chunk = dmax(out->min_chunk, a->min_chunk);
	/* the tighter bound; 0 is none */
	if (out->max_chunk == 0 || (a->max_chunk != 0 &&
				    a->max_chunk < out->max_chunk))
		out->max_chunk = a->max_chunk;
}

void hop_agree_fold(const struct hop_agree_rec *all, int n,
		    struct hop_agree_rec *out)
{
	memset(out, 0, sizeof(*out));
	out->local_ranks = 1;
	out->usable_cores = 1;
	for (int r = 0; r < n; r++) {
		const struct hop_agree_rec *a = &all[r];

		/* a/b > c/d, exactly: no two ranks may round differently */
		if ((uint64_t)a->local_ranks * out->usable_cores >
		    (uint64_t)out->local_ranks * a->usable_cores) {
			out->local_ranks = a->local_ranks;
			out->usable_cores = a->usable_cores;
		}
		if (a->eager_auto && (!out->eager_auto || a->eager < out->eager)) {
			out->eager_auto = 1;
			out->eager = a->eager;
		}
		for (int c = 0; a->has_links && c < 2; c++) {
			if (out->has_links)
				link_fold(&out->link[c], &a->link[c]);
			else
				out->link[c] = a->link[c];
		}
		out->has_links |= a->has_links;
	}
}

int hop_comm_agree(struct hop_comm *comm, uint64_t deadline)
{
	struct hop_agree_rec mine, *all, agreed;
	int ret;

	hop_agree_local(comm, &mine);
	if (!(all = calloc((size_t)comm->nranks, sizeof(*all))))
		return hop_set_error(comm, HOP_ERR_NO_MEMORY, "out of memory");
	ret = hop_bootstrap_allgather(comm->bs, &mine, all, sizeof(mine),
				      deadline);
	if (ret) {
		free(all);
		return hop_set_error(comm, ret, "allgather failed: %s",
				     hop_bootstrap_error(comm->bs));
	}
	hop_agree_fold(all, comm->nranks, &agreed);
	free(all);
	comm->model_ranks = (int)agreed.local_ranks;
	comm->model_cores = (int)agreed.usable_cores;
	if (agreed.has_links) {
		memcpy(comm->model_link, agreed.link, sizeof(agreed.link));
		comm->model_links = 1;
		HOP_INFO("cost model: agreed links (the slowest of every "
			 "rank's): intra alpha %.2f us beta %.3f GB/s, inter "
			 "alpha %.2f us beta %.3f GB/s",
			 agreed.link[0].alpha * 1e6, agreed.link[0].beta / 1e9,
			 agreed.link[1].alpha * 1e6, agreed.link[1].beta / 1e9);
	}
	if (mine.eager_auto) {
		comm->cfg.eager_size = agreed.eager;
		HOP_INFO("HOP_EAGER_SIZE=auto: %zu B on %s (%d ranks x %d "
			 "slots; %zu B here alone)", comm->cfg.eager_size,
			 comm->prov_ctx.name, comm->nranks,
			 comm->cfg.eager_slots, (size_t)mine.eager);
	}
	if (comm->model_ranks > comm->model_cores)
		HOP_INFO("cost model: oversubscribed as %d ranks on %d cores "
			 "(the most of any rank; here %d on %d)",
			 comm->model_ranks, comm->model_cores,
			 comm->local_ranks, comm->usable_cores);
	return 0;
}
