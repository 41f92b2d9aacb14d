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
#include "core/cpus.h"
#include "transport/mux/mux.h"
#include "transport/provider.h"

enum { SEL_VERBS = 0, SEL_TCP, SEL_SHM, SEL_N };
/* room for a provider's whole reason on the rank that has it */
#define SEL_WHY_FULL HOP_MSG_LEN
#define SEL_AUTO 0x7f
#define SEL_PLUGIN 0x7e
#define SEL_CLASSES 0x7d /* per class: intra:NAME,inter:NAME */

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
	uint8_t want;           /* SEL_*, SEL_AUTO, SEL_PLUGIN or SEL_CLASSES */
	uint8_t plug_err;       /* SEL_PLUGIN: -HOP_ERR_* of load/usable;
				 * SEL_CLASSES: of parsing; or 0 */
	uint8_t cls[2];         /* SEL_CLASSES, SEL_AUTO: SEL_* or SEL_AUTO of
				 * intra and inter pairs */
	uint8_t pad[1];
	char plugin[48];        /* SEL_PLUGIN: its name (HOP_TRANSPORT) */
	char why[SEL_N][80];    /* reason each provider is not usable, cut
				 * ("...") to keep the record small */
	char plug_why[320];     /* why the plugin cannot be used here */
	struct hop_cpu_rec cpu; /* its kernel and affinity mask */
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

/* HOP_TRANSPORT=@t in its per-class form; a malformed one is reported by
 * sel_decide() on every rank, as a plugin that cannot load is. */
static void sel_classes(struct sel_rec *rec, const char *t)
{
	int cls[2];

	rec->want = SEL_CLASSES;
	if (hop_mux_parse(t, sel_names, SEL_N, SEL_AUTO, cls, rec->plug_why,
			  sizeof(rec->plug_why))) {
		rec->plug_err = (uint8_t)-HOP_ERR_CONFIG;
		return;
	}
	rec->cls[0] = (uint8_t)cls[0];
	rec->cls[1] = (uint8_t)cls[1];
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
	hop_cpu_rec_local(&rec->cpu);
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
	rec->cls[0] = rec->cls[1] = SEL_AUTO;
	if (rec->want == SEL_PLUGIN && hop_mux_is_classes(t))
		sel_classes(rec, t);
	else if (rec->want == SEL_PLUGIN) {
		snprintf(rec->plugin, sizeof(rec->plugin), "%s", t);
		sel_plugin(comm, rec, plug);
	}
}

static const char *sel_name(int i)
{
	return i == SEL_AUTO ? "auto" : i < SEL_N ? sel_names[i] : "unknown";
}

static const char *want_name(const struct sel_rec *rec, char *buf,
			     size_t len)
{
	if (rec->want != SEL_CLASSES)
		return rec->want == SEL_PLUGIN ? rec->plugin
					       : sel_name(rec->want);
	snprintf(buf, len, "intra:%s,inter:%s", sel_name(rec->cls[0]),
		 sel_name(rec->cls[1]));
	return buf;
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

static const char *const cls_words[2] = { "intra", "inter" };

/*
 * The provider of the pairs of class @cls among the ranks @in: the one
 * HOP_TRANSPORT forces, else auto's rule (inside a host shm, then verbs,
 * then tcp; across hosts verbs, then tcp), usable on every rank of @in.
 */
static int sel_class(struct hop_comm *comm, const struct sel_rec *all,
		     const char (*full)[SEL_WHY_FULL], int cls,
		     const uint8_t *in, int *choice)
{
	static const int order[2][SEL_N] = {
		{ SEL_SHM, SEL_VERBS, SEL_TCP }, { SEL_VERBS, SEL_TCP, -1 },
	};
	int want = all[0].cls[cls];

	for (int k = 0; k < SEL_N; k++) {
		int i = want != SEL_AUTO ? (k ? -1 : want) : order[cls][k], r = 0;

		if (i < 0)
			break;
		while (r < comm->nranks && (!in[r] || all[r].usable[i]))
			r++;
		if (r == comm->nranks) {
			*choice = i;
			return 0;
		}
		if (want != SEL_AUTO)
			return hop_set_error(comm, HOP_ERR_NO_DEVICE,
					     "HOP_TRANSPORT %s:%s is not usable "
					     "on rank %d: %s", cls_words[cls],
					     sel_names[i], r,
					     sel_why(comm, all, full, r, i));
	}
	return hop_set_error(comm, HOP_ERR_NO_DEVICE, "HOP_TRANSPORT=auto: no "
			     "transport is usable on every rank for the pairs "
			     "%s hosts", cls ? "across" : "inside");
}

/* The HOP_DEBUG=info line of a choice made per class. */
static void sel_mix_info(const struct hop_comm *comm,
			 const struct sel_rec *all,
			 const char (*full)[SEL_WHY_FULL], const int *choice,
			 const int *per_host)
{
	char hosts[96], why[SEL_WHY_FULL + 64] = "", w[40];
	size_t n;
	int vr = 0;

	n = (size_t)snprintf(hosts, sizeof(hosts), "%d host%s, ranks per "
			     "host ", comm->nhosts, comm->nhosts > 1 ? "s" : "");
	for (int h = 0; h < comm->nhosts && n < sizeof(hosts); h++)
		n += (size_t)snprintf(hosts + n, sizeof(hosts) - n, "%s%d",
				      h ? "," : "", per_host[h]);
	while (vr < comm->nranks && all[vr].usable[SEL_VERBS])
		vr++;
	if (all[0].want == SEL_CLASSES)
		snprintf(why, sizeof(why), "HOP_TRANSPORT=%s; ",
			 want_name(&all[0], w, sizeof(w)));
	else if (vr < comm->nranks && choice[0] != SEL_VERBS &&
		 choice[1] != SEL_VERBS)
		snprintf(why, sizeof(why), "verbs not usable on rank %d: %s; ",
			 vr, sel_why(comm, all, full, vr, SEL_VERBS));
	if (choice[0] == choice[1])
		HOP_INFO("transport: %s%s for every pair (%s%s: %s)",
			 all[0].want == SEL_AUTO ? "auto chose " : "",
			 sel_names[choice[0]], why,
			 comm->nhosts > 1 ? "ranks on several hosts"
					  : "all ranks on one host", hosts);
	else
		HOP_INFO("transport: %s%s inside hosts, %s across (%s%s)",
			 all[0].want == SEL_AUTO ? "auto chose " : "",
			 sel_names[choice[0]], sel_names[choice[1]], why, hosts);
}

/*
 * HOP_TRANSPORT=auto or per class: a provider for the pairs inside a host
 * (when a host has two ranks) and one for the pairs across hosts (when
 * there are two hosts). One provider serving every pair is used alone;
 * two are joined by the mux.
 */
static int sel_mix(struct hop_comm *comm, const struct sel_rec *all,
		   const char (*full)[SEL_WHY_FULL],
		   const struct hop_prov_ops **out)
{
	int n = comm->nranks, choice[2] = { -1, -1 }, has[2] = { 0, 0 }, ret = 0;
	int *per_host = calloc((size_t)comm->nhosts, sizeof(int));
	uint8_t *in = calloc(2 * (size_t)n, 1);

	if (!per_host || !in) {
		ret = hop_set_error(comm, HOP_ERR_NO_MEMORY, "transport "
				    "selection: out of memory for %d ranks", n);
		goto out;
	}
	for (int r = 0; r < n; r++)
		per_host[comm->host_of[r]]++;
	for (int r = 0; r < n; r++) {
		/* a rank alone on the only host still needs a provider */
		in[r] = per_host[comm->host_of[r]] > 1 || comm->nhosts == 1;
		in[n + r] = comm->nhosts > 1;
		has[0] |= in[r];
		has[1] |= in[n + r];
	}
	for (int c = 0; c < 2 && !ret; c++)
		if (has[c])
			ret = sel_class(comm, all, full, c, in + (size_t)c * n,
					&choice[c]);
	if (ret)
		goto out;
	choice[0] = has[0] ? choice[0] : choice[1];
	choice[1] = has[1] ? choice[1] : choice[0];
	sel_mix_info(comm, all, full, choice, per_host);
	*out = choice[0] == choice[1]
		       ? sel_ops(choice[0])
		       : hop_mux_new(sel_ops(choice[0]), sel_ops(choice[1]),
				     (choice[0] != SEL_VERBS) << HOP_MUX_INTRA |
					     (choice[1] != SEL_VERBS)
						     << HOP_MUX_INTER,
				     comm->host_of, n);
	if (!*out)
		ret = hop_set_error(comm, HOP_ERR_NO_MEMORY, "transport "
				    "selection: out of memory for the mux");
	comm->class_ops[HOP_LINK_INTRA] = sel_ops(choice[0]);
	comm->class_ops[HOP_LINK_INTER] = sel_ops(choice[1]);
out:
	free(in);
	free(per_host);
	return ret;
}

/* The ranks that share this rank's cores (core/cpus.h), among the ranks
 * of its host (comm->host_of, from sel_hosts(): the cost model's
 * oversubscription) and of its kernel (the wait policy, comm.c). */
static int sel_cpus(struct hop_comm *comm, const struct sel_rec *all)
{
	int n = comm->nranks;
	struct hop_cpu_rec *cpu = calloc((size_t)n, sizeof(*cpu));

	if (!cpu)
		return hop_set_error(comm, HOP_ERR_NO_MEMORY, "selection: out "
				     "of memory for %d ranks' CPU masks", n);
	for (int r = 0; r < n; r++)
		cpu[r] = all[r].cpu;
	hop_cpu_share(cpu, comm->host_of, n, comm->rank, &comm->local_ranks,
		      &comm->usable_cores);
	hop_cpu_share(cpu, NULL, n, comm->rank, &comm->kernel_ranks,
		      &comm->kernel_cores);
	free(cpu);
	return 0;
}

/* Decide from the gathered records; the same choice on every rank. */
static int sel_decide(struct hop_comm *comm, const struct sel_rec *all,
		      const char (*full)[SEL_WHY_FULL],
		      const struct hop_prov_ops *plug,
		      const struct hop_prov_ops **out)
{
	int n = comm->nranks, choice;
	uint8_t want = all[0].want;
	char w0[40], wr[40];

	if (sel_hosts(comm, all) || sel_cpus(comm, all))
		return HOP_ERR_NO_MEMORY;
	for (int r = 0; r < n; r++)
		if (want == SEL_CLASSES && all[r].plug_err)
			return hop_set_error(comm, -(int)all[r].plug_err,
					     "%s (rank %d)", all[r].plug_why,
					     r);
	for (int r = 1; r < n; r++)
		if (all[r].want != want ||
		    memcmp(all[r].cls, all[0].cls, sizeof(all[0].cls)) ||
		    strncmp(all[r].plugin, all[0].plugin, sizeof(all[0].plugin)))
			return hop_set_error(comm, HOP_ERR_MISMATCH,
					     "HOP_TRANSPORT differs between "
					     "ranks: rank 0 has %s, rank %d "
					     "has %s",
					     want_name(&all[0], w0, sizeof(w0)),
					     r, want_name(&all[r], wr,
							  sizeof(wr)));
	if (want == SEL_PLUGIN)
		return sel_plugin_decide(comm, all, plug, out);
	if (want == SEL_AUTO || want == SEL_CLASSES)
		return sel_mix(comm, all, full, out);
	for (int r = 0; r < n; r++)
		if (!all[r].usable[want])
			return hop_set_error(comm, HOP_ERR_NO_DEVICE,
					     "HOP_TRANSPORT=%s is not usable "
					     "on rank %d: %s", sel_names[want],
					     r, sel_why(comm, all, full, r,
							want));
	choice = want;
	HOP_INFO("transport: %s (HOP_TRANSPORT)", sel_names[choice]);
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
		if (!hop_mux_is(*out)) /* else sel_mix() set them */
			comm->class_ops[HOP_LINK_INTRA] = *out;
		if (!hop_mux_is(*out))
			comm->class_ops[HOP_LINK_INTER] = *out;
	}
	return ret;
}
