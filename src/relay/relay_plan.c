/*
 * relay_plan.c - the plan of a multi-hop transfer: argument checks, the
 * path (explicit or routed over HOP_TOPO), each hop's alpha and beta, the
 * chunk count k and the predicted time. Every rank on the path computes
 * the same plan from the same arguments and files, so no message is spent
 * agreeing on it; a signature of the plan travels with every chunk so
 * ranks that disagree fail with HOP_ERR_MISMATCH instead of misreading
 * chunk boundaries.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/topo.h"
#include "p2p/p2p_priv.h"
#include "relay/relay.h"

int relay_check_path(const int *path, int npath, int nranks, int src,
		     int dst, char *err, size_t errlen)
{
	if (npath < 2 || npath > HOP_RELAY_MAX_PATH) {
		snprintf(err, errlen, "npath %d out of range (a path has 2..%d "
			 "ranks)", npath, HOP_RELAY_MAX_PATH);
		return HOP_ERR_INVALID_ARG;
	}
	for (int i = 0; i < npath; i++) {
		if (path[i] < 0 || path[i] >= nranks) {
			snprintf(err, errlen, "path[%d] = %d out of range (comm "
				 "has %d ranks)", i, path[i], nranks);
			return HOP_ERR_INVALID_ARG;
		}
		for (int j = 0; j < i; j++) {
			if (path[j] == path[i]) {
				snprintf(err, errlen, "rank %d is on the path "
					 "twice (path[%d] and path[%d])",
					 path[i], j, i);
				return HOP_ERR_INVALID_ARG;
			}
		}
	}
	if (path[0] != src) {
		snprintf(err, errlen, "path[0] = %d is not the source rank %d",
			 path[0], src);
		return HOP_ERR_INVALID_ARG;
	}
	if (path[npath - 1] != dst) {
		snprintf(err, errlen, "path[%d] = %d is not the destination "
			 "rank %d", npath - 1, path[npath - 1], dst);
		return HOP_ERR_INVALID_ARG;
	}
	return 0;
}

/* An explicit count: at least 1, at most one byte per chunk. */
static long clamp_explicit(long k, double m)
{
	double top = m < 1 ? 1 : m;

	if (top > (double)HOP_MODEL_MAX_CHUNKS)
		top = (double)HOP_MODEL_MAX_CHUNKS;
	return (double)k > top ? (long)top : k;
}

long relay_choose_k(const struct hop_model_hop *hops, int h, double m,
		    double min_chunk, int mode, long opt_chunks,
		    long env_chunks)
{
	if (mode == HOP_RELAY_STORE_FORWARD || h < 1 || !(m >= 1))
		return 1;
	if (opt_chunks > 0)
		return clamp_explicit(opt_chunks, m);
	if (env_chunks > 0)
		return clamp_explicit(env_chunks, m);
	return hop_model_path_kopt(hops, h, m, min_chunk);
}

uint32_t relay_plan_sig(const struct relay_plan *pl)
{
	uint64_t words[4 + HOP_RELAY_MAX_PATH];
	const unsigned char *b = (const unsigned char *)words;
	uint32_t h = 2166136261u;
	size_t n = 0;

	words[n++] = 0x72656c6179ull;   /* "relay" */
	words[n++] = (uint64_t)pl->len;
	words[n++] = (uint64_t)pl->mode << 32 | (uint64_t)pl->npath;
	words[n++] = (uint64_t)pl->k;
	for (int i = 0; i < pl->npath; i++)
		words[n++] = (uint64_t)(uint32_t)pl->path[i];
	for (size_t i = 0; i < n * sizeof(words[0]); i++)
		h = (h ^ b[i]) * 16777619u;
	return h ? h : 1;
}

static int check_args(struct hop_comm *comm, const char *fn, int src,
		      int dst, const int *path, int npath,
		      const hop_relay_opts_t *o)
{
	char err[160];

	if (o && o->mode != HOP_RELAY_PIPELINED &&
	    o->mode != HOP_RELAY_STORE_FORWARD)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: opts->mode "
				     "%d is not HOP_RELAY_PIPELINED (0) or "
				     "HOP_RELAY_STORE_FORWARD (1)", fn, o->mode);
	if (o && o->chunks < 0)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: opts->chunks"
				     " %ld is negative (0: the model's choice)",
				     fn, o->chunks);
	if (o && o->tag < 0)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: opts->tag %d"
				     " is negative (tags are 0..%d)", fn, o->tag,
				     HOP_TAG_MAX);
	if (src < 0 || src >= comm->nranks || dst < 0 || dst >= comm->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: %s rank %d "
				     "out of range (comm has %d ranks)", fn,
				     src < 0 || src >= comm->nranks ? "source"
								    : "destination",
				     src < 0 || src >= comm->nranks ? src : dst,
				     comm->nranks);
	if (src == dst)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: source and "
				     "destination are both rank %d", fn, src);
	if (!path) {
		if (npath != 0)
			return hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: path"
					     " is NULL but npath is %d (0 routes "
					     "over HOP_TOPO)", fn, npath);
		return 0;
	}
	if (relay_check_path(path, npath, comm->nranks, src, dst, err,
			     sizeof(err)))
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: %s", fn, err);
	return 0;
}

/* The route of least predicted time over @t into @pl; without a
 * topology (HOP_TOPO unset: flat, every pair one hop apart) the direct
 * path. */
static int route(struct hop_comm *comm, const char *fn,
		 const struct hop_topo *t, size_t len, int src, int dst,
		 int mode, double min_chunk, struct relay_plan *pl)
{
	struct hop_route r;
	char err[256];
	int ret;

	if (!t) {
		pl->path[0] = src;
		pl->path[1] = dst;
		pl->npath = 2;
		return 0;
	}
	ret = hop_topo_route(t, src, dst, (double)len,
			     mode == HOP_RELAY_STORE_FORWARD ? HOP_ROUTE_SAF
							     : HOP_ROUTE_PIPE,
			     min_chunk, &r, err, sizeof(err));
	if (ret)
		return hop_set_error(comm, ret, "%s: HOP_TOPO %s: %s", fn,
				     comm->cfg.topo, err);
	if (r.nhops + 1 > HOP_RELAY_MAX_PATH) {
		ret = hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: HOP_TOPO %s: "
				    "the route from rank %d to rank %d has %d "
				    "ranks (at most %d)", fn, comm->cfg.topo,
				    src, dst, r.nhops + 1, HOP_RELAY_MAX_PATH);
		goto out;
	}
	for (int i = 0; i <= r.nhops; i++) {
		if (r.path[i] >= comm->nranks) {
			ret = hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: "
					    "HOP_TOPO %s routes through rank %d"
					    " (comm has %d ranks)", fn,
					    comm->cfg.topo, r.path[i],
					    comm->nranks);
			goto out;
		}
		pl->path[i] = r.path[i];
	}
	pl->npath = r.nhops + 1;
out:
	hop_route_free(&r);
	return ret;
}

/* Each hop's link: HOP_TOPO's when it has one, else @def. Returns how
 * many hops the topology described. */
static int hop_links(const struct hop_topo *t, const struct relay_plan *pl,
		     const struct hop_model_link *def,
		     struct hop_model_hop *hops)
{
	int from_topo = 0;

	for (int i = 0; i + 1 < pl->npath; i++) {
		const struct hop_topo_link *l =
			t ? hop_topo_find(t, pl->path[i], pl->path[i + 1]) : NULL;

		if (l) {
			hops[i] = (struct hop_model_hop){ l->alpha, l->beta };
			from_topo++;
		} else {
			hops[i] = (struct hop_model_hop){ def->alpha, def->beta };
		}
	}
	return from_topo;
}

/* k, the predicted time, the model's source and the signature. */
static void finish(struct hop_comm *comm, const struct hop_model_hop *hops,
		   int ntopo, const struct hop_model_link *def,
		   const char *defsrc, long opt_chunks, struct relay_plan *pl)
{
	int h = pl->npath - 1;
	double m = (double)pl->len;

	pl->k = relay_choose_k(hops, h, m, def->min_chunk, pl->mode, opt_chunks,
			       comm->cfg.pipeline_chunks);
	pl->predicted = pl->mode == HOP_RELAY_STORE_FORWARD
				? hop_model_path_saf(hops, h, m)
				: hop_model_path_pipe(hops, h, m, pl->k);
	if (ntopo == h)
		snprintf(pl->model, sizeof(pl->model), "HOP_TOPO %.255s",
			 comm->cfg.topo);
	else if (ntopo)
		snprintf(pl->model, sizeof(pl->model), "HOP_TOPO %.180s (%d of "
			 "%d hops), %.90s", comm->cfg.topo, ntopo, h, defsrc);
	else
		snprintf(pl->model, sizeof(pl->model), "%s", defsrc);
	pl->pos = -1;
	for (int i = 0; i < pl->npath; i++)
		if (pl->path[i] == comm->rank)
			pl->pos = i;
	pl->sig = relay_plan_sig(pl);
}

/*
 * What a relay takes from HOP_PROFILE and HOP_TOPO, read at the first
 * relay of a communicator and kept until it is destroyed: re-reading
 * them on every call cost a file parse per transfer, and a file changed
 * between calls made ranks plan differently. A failed read is kept too,
 * so every later call reports the same error.
 */
struct relay_env {
	int ret;                        /* 0, or the reader's code */
	char err[HOP_MSG_LEN];          /* "HOP_TOPO: file:3: ..." */
	struct hop_model_link def;      /* HOP_PROFILE's or built-in link */
	char defsrc[128];
	struct hop_topo topo;
	int have_topo;                  /* HOP_TOPO set: route over topo */
};

static void env_load(struct hop_comm *comm, struct relay_env *e)
{
	const struct hop_prov_ops *inter = hop_comm_inter_ops(comm);
	char err[256];

	e->ret = hop_model_link_load(comm->cfg.profile, inter->name,
				     hop_prov_caps_of(inter), &e->def,
				     e->defsrc, sizeof(e->defsrc), err,
				     sizeof(err));
	if (e->ret) {
		snprintf(e->err, sizeof(e->err), "HOP_PROFILE: %s", err);
		return;
	}
	if (!comm->cfg.topo[0])
		return;
	if ((e->ret = hop_topo_load(comm->cfg.topo, &e->topo, err, sizeof(err))))
		snprintf(e->err, sizeof(e->err), "HOP_TOPO: %s", err);
	else
		e->have_topo = 1;
}

/* @comm's relay environment into *@out, read on first use. */
static int env_get(struct hop_comm *comm, const char *fn,
		   const struct relay_env **out)
{
	struct relay_env *e = comm->relay_env;

	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return hop_set_error(comm, HOP_ERR_NO_MEMORY, "%s: out of "
					     "memory for HOP_PROFILE and "
					     "HOP_TOPO", fn);
		env_load(comm, e);
		comm->relay_env = e;
	}
	if (e->ret)
		return hop_set_error(comm, e->ret, "%s: %s", fn, e->err);
	*out = e;
	return 0;
}

void relay_env_free(struct hop_comm *comm)
{
	struct relay_env *e = comm->relay_env;

	if (e && e->have_topo)
		hop_topo_free(&e->topo);
	free(e);
	comm->relay_env = NULL;
}

int relay_plan_make(struct hop_comm *comm, const char *fn, size_t len,
		    int src, int dst, const int *path, int npath,
		    const hop_relay_opts_t *opts, struct relay_plan *pl)
{
	struct hop_model_hop hops[HOP_RELAY_MAX_PATH];
	const struct relay_env *e = NULL;
	const struct hop_topo *t;
	int ret, ntopo;

	if ((ret = check_args(comm, fn, src, dst, path, npath, opts)))
		return ret;
	if ((ret = env_get(comm, fn, &e)))
		return ret;
	t = e->have_topo ? &e->topo : NULL;
	memset(pl, 0, sizeof(*pl));
	pl->len = len;
	pl->mode = opts ? opts->mode : HOP_RELAY_PIPELINED;
	if (path) {
		memcpy(pl->path, path, (size_t)npath * sizeof(int));
		pl->npath = npath;
	} else if ((ret = route(comm, fn, t, len, src, dst, pl->mode,
				e->def.min_chunk, pl))) {
		return ret;
	}
	ntopo = hop_links(t, pl, &e->def, hops);
	finish(comm, hops, ntopo, &e->def, e->defsrc, opts ? opts->chunks : 0,
	       pl);
	return 0;
}

static int plan_call(struct hop_comm *comm, size_t len, int src, int dst,
		     const int *path, int npath, const hop_relay_opts_t *opts,
		     hop_relay_plan_t *plan)
{
	struct relay_plan pl;
	int ret;

	if (!plan)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_relay_plan: plan is NULL");
	if ((ret = relay_plan_make(comm, "hop_relay_plan", len, src, dst, path,
				   npath, opts, &pl)))
		return ret;
	memset(plan, 0, sizeof(*plan));
	plan->npath = pl.npath;
	memcpy(plan->path, pl.path, (size_t)pl.npath * sizeof(int));
	plan->position = pl.pos;
	plan->mode = pl.mode;
	plan->chunks = pl.k;
	plan->chunk_bytes = relay_chunk_off(len, pl.k, 1) +
			    (len % (size_t)pl.k ? 1 : 0);
	plan->predicted = pl.predicted;
	snprintf(plan->model, sizeof(plan->model), "%s", pl.model);
	return 0;
}

int hop_relay_plan(hop_comm_t *comm, size_t len, int src, int dst,
		   const int *path, int npath, const hop_relay_opts_t *opts,
		   hop_relay_plan_t *plan)
{
	/* a derived communicator cannot run hop_relay(), so it has no plan */
	HOP_ENTERED(comm, "hop_relay_plan",
		    hop_comm_derived(comm)
			    ? hop_comm_derived_refuse(comm, "hop_relay_plan")
			    : plan_call(comm, len, src, dst, path, npath, opts,
					plan));
}
