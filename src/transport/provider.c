/*
 * provider.c - finding providers by name and choosing one for a
 * communicator (HOP_TRANSPORT).
 *
 * Selection is collective and decided from the same gathered data on every
 * rank, so all ranks agree: each rank contributes {host identity, which
 * providers it can use and why not, what HOP_TRANSPORT asks for}. A name
 * that is not built in is a plugin (plugin.c): every rank loads it and asks
 * its usable() before the exchange, so a rank that cannot load it makes
 * every rank fail with that rank's reason instead of hanging the others.
 */
#include "hop_autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bootstrap.h"
#include "core/core.h"
#include "transport/provider.h"

enum { SEL_VERBS = 0, SEL_TCP, SEL_SHM, SEL_N };
/* room for a provider's whole reason on the rank that has it */
#define SEL_WHY_FULL HOP_MSG_LEN
#define SEL_AUTO 0x7f
#define SEL_PLUGIN 0x7e

static const char *const sel_names[SEL_N] = { "verbs", "tcp", "shm" };

static const struct hop_prov_ops *sel_ops(int i)
{
	switch (i) {
#ifdef HOP_HAVE_VERBS
	case SEL_VERBS:
		return &hop_prov_verbs;
#endif
	case SEL_TCP:
		return &hop_prov_tcp;
	case SEL_SHM:
		return &hop_prov_shm;
	default:
		return NULL;
	}
}

int hop_prov_builtin_name(const char *name)
{
	if (!name || !strcmp(name, "auto"))
		return name != NULL;
	for (int i = 0; i < SEL_N; i++)
		if (!strcmp(name, sel_names[i]))
			return 1;
	return 0;
}

const struct hop_prov_ops *hop_prov_find(const char *name)
{
	if (!name)
		return NULL;
	for (int i = 0; i < SEL_N; i++)
		if (!strcmp(name, sel_names[i]))
			return sel_ops(i);
	return NULL;
}

/* What each rank contributes (plain bytes, same layout on every rank). */
struct sel_rec {
	uint64_t host;          /* hash of boot_id + hostname */
	uint8_t usable[SEL_N];
	uint8_t want;           /* SEL_*, SEL_AUTO or SEL_PLUGIN */
	uint8_t plug_err;       /* SEL_PLUGIN: -HOP_ERR_* of load/usable, or 0 */
	uint8_t pad[3];
	char plugin[16];        /* SEL_PLUGIN: its name (HOP_TRANSPORT) */
	char why[SEL_N][80];    /* reason each provider is not usable, cut
				 * ("...") to keep the record small */
	char plug_why[320];     /* why the plugin cannot be used here */
};

/*
 * This rank's view of plugin HOP_TRANSPORT=@rec->plugin: loaded into
 * comm->prov_dl and usable, or why not in @rec.
 */
static void sel_plugin(struct hop_comm *comm, struct sel_rec *rec,
		       const struct hop_prov_ops **plug)
{
	int ret;

	ret = hop_plugin_load(rec->plugin, comm->cfg.plugin_path,
			      &comm->prov_dl, plug, rec->plug_why,
			      sizeof(rec->plug_why));
	if (!ret) {
		comm->prov_ctx.name = comm->cfg.transport;
		if ((*plug)->usable(&comm->prov_ctx, rec->plug_why,
				    sizeof(rec->plug_why)) == 1) {
			rec->plug_why[0] = '\0';
			return;
		}
		ret = HOP_ERR_NO_DEVICE;
		if (!rec->plug_why[0])
			snprintf(rec->plug_why, sizeof(rec->plug_why),
				 "its usable() gave no reason");
	}
	rec->plug_why[sizeof(rec->plug_why) - 1] = '\0';
	rec->plug_err = (uint8_t)-ret;
}

/* @full: this rank's reasons whole (the verbs one lists every device,
 * port and GID it saw), for its own error message. */
static void sel_local(struct hop_comm *comm, struct sel_rec *rec,
		      char (*full)[SEL_WHY_FULL],
		      const struct hop_prov_ops **plug)
{
	const char *t = comm->cfg.transport;

	memset(rec, 0, sizeof(*rec));
	rec->host = comm->prov_ctx.host_id;
	for (int i = 0; i < SEL_N; i++) {
		const struct hop_prov_ops *ops = sel_ops(i);
		const size_t cut = sizeof(rec->why[i]);

		full[i][0] = '\0';
		if (!ops) {
			snprintf(full[i], SEL_WHY_FULL,
				 "not built (configure found no rdma-core)");
		} else {
			comm->prov_ctx.name = ops->name;
			rec->usable[i] = ops->usable(&comm->prov_ctx, full[i],
						     SEL_WHY_FULL) == 1;
			full[i][SEL_WHY_FULL - 1] = '\0';
			if (rec->usable[i])
				full[i][0] = '\0';
			else if (!full[i][0])
				snprintf(full[i], SEL_WHY_FULL,
					 "no reason given");
		}
		if (snprintf(rec->why[i], cut, "%s", full[i]) >= (int)cut)
			memcpy(rec->why[i] + cut - 4, "...", 4);
	}
	rec->want = SEL_PLUGIN;
	if (!t[0] || !strcmp(t, "auto"))
		rec->want = SEL_AUTO;
	for (int i = 0; i < SEL_N; i++)
		if (!strcmp(t, sel_names[i]))
			rec->want = (uint8_t)i;
	if (rec->want == SEL_PLUGIN) {
		snprintf(rec->plugin, sizeof(rec->plugin), "%s", t);
		sel_plugin(comm, rec, plug);
	}
}

static const char *want_name(const struct sel_rec *rec)
{
	return rec->want == SEL_AUTO     ? "auto"
	       : rec->want == SEL_PLUGIN ? rec->plugin
	       : rec->want < SEL_N       ? sel_names[rec->want]
					 : "unknown";
}

/* Every rank loaded the plugin and can use it, or the first that cannot. */
static int sel_plugin_decide(struct hop_comm *comm, const struct sel_rec *all,
			     const struct hop_prov_ops *plug,
			     const struct hop_prov_ops **out)
{
	for (int r = 0; r < comm->nranks; r++)
		if (all[r].plug_err)
			return hop_set_error(comm, -(int)all[r].plug_err,
					     "HOP_TRANSPORT=%s on rank %d: %s",
					     all[0].plugin, r, all[r].plug_why);
	HOP_INFO("transport: plugin %s (HOP_TRANSPORT)", all[0].plugin);
	*out = plug;
	return 0;
}

/* Rank @r's reason for provider @i: whole for this rank. */
static const char *sel_why(const struct hop_comm *comm,
			   const struct sel_rec *all,
			   const char (*full)[SEL_WHY_FULL], int r, int i)
{
	return r == comm->rank ? full[i] : all[r].why[i];
}

/* comm->host_of/nhosts from the gathered host identities: hosts numbered
 * by their lowest rank, so every rank numbers them alike. */
static int sel_hosts(struct hop_comm *comm, const struct sel_rec *all)
{
	int n = comm->nranks, *of = malloc((size_t)n * sizeof(int));

	if (!of)
		return hop_set_error(comm, HOP_ERR_NO_MEMORY, "transport "
				     "selection: out of memory for the host "
				     "map of %d ranks", n);
	comm->nhosts = 0;
	for (int r = 0; r < n; r++) {
		int q = 0;

		while (q < r && all[q].host != all[r].host)
			q++;
		of[r] = q < r ? of[q] : comm->nhosts++;
	}
	free(comm->host_of);
	comm->host_of = of;
	return 0;
}

/* Decide from the gathered records; the same choice on every rank. */
static int sel_decide(struct hop_comm *comm, const struct sel_rec *all,
		      const char (*full)[SEL_WHY_FULL],
		      const struct hop_prov_ops *plug,
		      const struct hop_prov_ops **out)
{
	int n = comm->nranks, choice, same_host = 1, all_usable[SEL_N];
	uint8_t want = all[0].want;

	if (sel_hosts(comm, all))
		return HOP_ERR_NO_MEMORY;
	comm->local_ranks = 0;  /* the wait policy needs it (comm.c) */
	for (int r = 0; r < n; r++)
		if (all[r].host == all[comm->rank].host)
			comm->local_ranks++;
	for (int r = 1; r < n; r++)
		if (all[r].want != want ||
		    strncmp(all[r].plugin, all[0].plugin, sizeof(all[0].plugin)))
			return hop_set_error(comm, HOP_ERR_MISMATCH,
					     "HOP_TRANSPORT differs between "
					     "ranks: rank 0 has %s, rank %d "
					     "has %s",
					     want_name(&all[0]), r,
					     want_name(&all[r]));
	if (want == SEL_PLUGIN)
		return sel_plugin_decide(comm, all, plug, out);
	for (int i = 0; i < SEL_N; i++) {
		all_usable[i] = 1;
		for (int r = 0; r < n; r++)
			if (!all[r].usable[i])
				all_usable[i] = 0;
	}
	for (int r = 1; r < n; r++)
		if (all[r].host != all[0].host)
			same_host = 0;

	if (want != SEL_AUTO) {
		for (int r = 0; r < n; r++)
			if (!all[r].usable[want])
				return hop_set_error(comm, HOP_ERR_NO_DEVICE,
						     "HOP_TRANSPORT=%s is not "
						     "usable on rank %d: %s",
						     sel_names[want], r,
						     sel_why(comm, all, full,
							     r, want));
		choice = want;
		HOP_INFO("transport: %s (HOP_TRANSPORT)", sel_names[choice]);
	} else {
		if (all_usable[SEL_VERBS])
			choice = SEL_VERBS;
		else if (same_host && all_usable[SEL_SHM])
			choice = SEL_SHM;
		else
			choice = SEL_TCP;
		if (!all_usable[SEL_TCP] && choice == SEL_TCP)
			return hop_set_error(comm, HOP_ERR_NO_DEVICE,
					     "HOP_TRANSPORT=auto: no transport "
					     "is usable on every rank");
		if (choice == SEL_VERBS) {
			HOP_INFO("transport: auto chose verbs (every rank "
				 "has a usable RDMA device)");
		} else {
			int vr = 0;

			while (vr < n && all[vr].usable[SEL_VERBS])
				vr++;
			HOP_INFO("transport: auto chose %s (verbs not usable "
				 "on rank %d: %s; %s)",
				 sel_names[choice], vr,
				 vr < n ? sel_why(comm, all, full, vr,
						  SEL_VERBS) : "",
				 same_host ? "all ranks on one host"
					   : "ranks on several hosts");
		}
	}
	*out = sel_ops(choice);
	return 0;
}

/* Gather every rank's record and decide; the same on every rank. */
static int sel_gather(struct hop_comm *comm, struct hop_bootstrap *bs,
		      const struct sel_rec *mine,
		      const char (*full)[SEL_WHY_FULL],
		      const struct hop_prov_ops *plug,
		      const struct hop_prov_ops **out)
{
	struct sel_rec *all;
	int ret;

	if (comm->nranks == 1 && !bs)
		return sel_decide(comm, mine, full, plug, out);
	if (!bs)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "transport selection needs a bootstrap "
				     "for %d ranks", comm->nranks);
	all = calloc((size_t)comm->nranks, sizeof(*all));
	if (!all)
		return hop_set_error(comm, HOP_ERR_NO_MEMORY,
				     "transport selection: out of memory");
	ret = hop_bootstrap_allgather(bs, mine, all, sizeof(*mine),
				      hop_comm_deadline(comm));
	if (ret)
		ret = hop_set_error(comm, ret,
				    "transport selection: allgather failed: %s",
				    hop_bootstrap_error(bs));
	else
		ret = sel_decide(comm, all, full, plug, out);
	free(all);
	return ret;
}

int hop_prov_select(struct hop_comm *comm, struct hop_bootstrap *bs,
		    const struct hop_prov_ops **out)
{
	const struct hop_prov_ops *plug = NULL;
	char full[SEL_N][SEL_WHY_FULL];
	struct sel_rec mine;
	int ret;

	if (!comm || !out)
		return HOP_ERR_INVALID_ARG;
	/* a comm selecting again (tests) drops the plugin it had */
	hop_plugin_unload(comm->prov_dl);
	comm->prov_dl = NULL;
	hop_prov_ctx_init(comm, NULL);
	sel_local(comm, &mine, full, &plug);
	ret = sel_gather(comm, bs, &mine, (const char (*)[SEL_WHY_FULL])full,
			 plug, out);
	if (ret) {
		free(comm->host_of);
		comm->host_of = NULL;
		comm->nhosts = 0;
	}
	if (ret || *out != plug) {
		hop_plugin_unload(comm->prov_dl);
		comm->prov_dl = NULL;
	}
	if (!ret) {
		comm->prov_ctx.name = *out == plug ? comm->cfg.transport
						   : (*out)->name;
		comm->class_ops[HOP_LINK_INTRA] = *out;
		comm->class_ops[HOP_LINK_INTER] = *out;
	}
	return ret;
}
