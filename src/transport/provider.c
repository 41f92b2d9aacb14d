/*
 * provider.c - finding providers by name and choosing one for a
 * communicator (HOP_TRANSPORT).
 *
 * Selection is collective and decided from the same gathered data on every
 * rank, so all ranks agree: each rank contributes {host identity, which
 * providers it can use and why not, what HOP_TRANSPORT asks for}.
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
#define SEL_AUTO 0x7f
#define SEL_UNKNOWN 0x7e

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
	uint8_t want;           /* SEL_*, SEL_AUTO or SEL_UNKNOWN */
	uint8_t pad[4];
	char why[SEL_N][80];    /* reason each provider is not usable */
};

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Identity of this host (same for every process of one boot of one host). */
static uint64_t host_identity(void)
{
	uint64_t h = 0xcbf29ce484222325ull;
	char buf[256];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f) {
		size_t n = fread(buf, 1, sizeof(buf), f);

		h = fnv1a(h, buf, n);
		fclose(f);
	}
	if (gethostname(buf, sizeof(buf)) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		h = fnv1a(h, buf, strlen(buf));
	}
	return h;
}

static void sel_local(const struct hop_comm *comm, struct sel_rec *rec)
{
	const char *t = comm->cfg.transport;

	memset(rec, 0, sizeof(*rec));
	rec->host = host_identity();
	for (int i = 0; i < SEL_N; i++) {
		const struct hop_prov_ops *ops = sel_ops(i);

		if (!ops) {
			snprintf(rec->why[i], sizeof(rec->why[i]),
				 "not built (configure found no rdma-core)");
			continue;
		}
		rec->usable[i] = ops->usable(comm, rec->why[i],
					     sizeof(rec->why[i])) == 1;
		if (rec->usable[i])
			rec->why[i][0] = '\0';
		else if (!rec->why[i][0])
			snprintf(rec->why[i], sizeof(rec->why[i]),
				 "no reason given");
		rec->why[i][sizeof(rec->why[i]) - 1] = '\0';
	}
	rec->want = SEL_UNKNOWN;
	if (!t[0] || !strcmp(t, "auto"))
		rec->want = SEL_AUTO;
	for (int i = 0; i < SEL_N; i++)
		if (!strcmp(t, sel_names[i]))
			rec->want = (uint8_t)i;
}

static const char *want_name(uint8_t w)
{
	return w == SEL_AUTO ? "auto" : w < SEL_N ? sel_names[w] : "unknown";
}

/* Decide from the gathered records; identical on every rank. */
static int sel_decide(struct hop_comm *comm, const struct sel_rec *all,
		      const struct hop_prov_ops **out)
{
	int n = comm->nranks, choice, same_host = 1, all_usable[SEL_N];
	uint8_t want = all[0].want;

	for (int r = 1; r < n; r++)
		if (all[r].want != want)
			return hop_set_error(comm, HOP_ERR_MISMATCH,
					     "HOP_TRANSPORT differs between "
					     "ranks: rank 0 has %s, rank %d "
					     "has %s",
					     want_name(want), r,
					     want_name(all[r].want));
	if (want == SEL_UNKNOWN)
		return hop_set_error(comm, HOP_ERR_CONFIG,
				     "HOP_TRANSPORT=%s: unknown transport "
				     "(auto, verbs, tcp, shm)",
				     comm->cfg.transport);
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
						     all[r].why[want]);
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
				 vr < n ? all[vr].why[SEL_VERBS] : "",
				 same_host ? "all ranks on one host"
					   : "ranks on several hosts");
		}
	}
	*out = sel_ops(choice);
	return 0;
}

int hop_prov_select(struct hop_comm *comm, struct hop_bootstrap *bs,
		    const struct hop_prov_ops **out)
{
	struct sel_rec mine, *all;
	int ret;

	if (!comm || !out)
		return HOP_ERR_INVALID_ARG;
	sel_local(comm, &mine);
	if (comm->nranks == 1 && !bs)
		return sel_decide(comm, &mine, out);
	if (!bs)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "transport selection needs a bootstrap "
				     "for %d ranks", comm->nranks);
	all = calloc((size_t)comm->nranks, sizeof(*all));
	if (!all)
		return hop_set_error(comm, HOP_ERR_NO_MEMORY,
				     "transport selection: out of memory");
	ret = hop_bootstrap_allgather(bs, &mine, all, sizeof(mine),
				      hop_comm_deadline(comm));
	if (ret)
		ret = hop_set_error(comm, ret,
				    "transport selection: allgather failed: %s",
				    hop_bootstrap_error(bs));
	else
		ret = sel_decide(comm, all, out);
	free(all);
	return ret;
}
