/*
 * place_opts.c - the placement options of hop-model predict and sim: how
 * many hosts, how many ranks on each, block or cyclic, and the link of
 * each class (intra: ranks of one host, inter: hosts).
 *
 *   --hosts H --ppn L      H hosts of L ranks
 *   --ppn 3,1,2            uneven: the ranks of each host
 *   --map block|cyclic     rank r on host r / L (block) or round robin
 *   --intra-provider P, --inter-provider P   (default shm, tcp)
 *   --intra-alpha-us X, --intra-beta-GBps X, --inter-... (per class)
 * A --profile gives each class its pairs (hop_model_links_load()); the
 * plain link overrides (--alpha-us ...) apply to both classes first.
 */
#include "hop_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/provider.h"

#define HM_MAX_PLACE_RANKS (1L << 20)

int hm_place_opt(struct hm_place_opts *po, int c, const char *arg)
{
	int n, cls = c == HM_OPT_INTER_PROV || c == HM_OPT_INTER_ALPHA ||
		     c == HM_OPT_INTER_BETA;

	switch (c) {
	case HM_OPT_HOSTS:
		po->given = 1;
		return hm_parse_ints("--hosts", arg, 1, HM_MAX_PLACE_RANKS,
				     &po->hosts, 1, &n) ? -1 : 1;
	case HM_OPT_PPN:
		po->given = 1;
		return hm_parse_ints("--ppn", arg, 1, HM_MAX_PLACE_RANKS,
				     po->ppn, HM_MAX_LIST, &po->nppn) ? -1 : 1;
	case HM_OPT_MAP:
		if (strcmp(arg, "block") && strcmp(arg, "cyclic")) {
			fprintf(stderr, "hop-model: --map '%s': expected block "
				"or cyclic\n", arg);
			return -1;
		}
		po->cyclic = !strcmp(arg, "cyclic");
		return 1;
	case HM_OPT_INTRA_PROV:
	case HM_OPT_INTER_PROV:
		po->prov[cls] = arg;
		return 1;
	case HM_OPT_INTRA_ALPHA:
	case HM_OPT_INTER_ALPHA:
		po->have_alpha[cls] = 1;
		return hm_parse_double(cls ? "--inter-alpha-us"
					   : "--intra-alpha-us", arg, 0, 0,
				       &po->alpha_us[cls]) ? -1 : 1;
	case HM_OPT_INTRA_BETA:
	case HM_OPT_INTER_BETA:
		po->have_beta[cls] = 1;
		return hm_parse_double(cls ? "--inter-beta-GBps"
					   : "--intra-beta-GBps", arg, 0, 1,
				       &po->beta_gbps[cls]) ? -1 : 1;
	}
	return 0;
}

/* Host of every rank: block fills host 0 first; cyclic deals ranks round
 * robin over the hosts that still have room. */
static void place_ranks(const struct hm_place_opts *po, const long *ppn,
			int h, int *host_of)
{
	long *room = calloc((size_t)h, sizeof(*room));
	int r = 0;

	if (!po->cyclic || !room) {     /* no memory: block is still valid */
		for (int i = 0; i < h; i++)
			for (long j = 0; j < ppn[i]; j++)
				host_of[r++] = i;
		free(room);
		return;
	}
	memcpy(room, ppn, (size_t)h * sizeof(*room));
	for (int left = 1; left;) {
		left = 0;
		for (int i = 0; i < h; i++)
			if (room[i]) {
				host_of[r++] = i;
				left |= --room[i] > 0;
			}
	}
	free(room);
}

/* The link of each class: profile or providers, then the overrides. */
static int class_links(const char *cmd, const struct hm_place_opts *po,
		       const struct hm_link_opts *lo,
		       struct hop_model_link links[2], char *src, size_t srclen)
{
	static const char *const dflt[2] = { "shm", "tcp" };
	const struct hop_prov_caps *caps[2];
	const char *prov[2];
	char err[512];

	for (int c = 0; c < 2; c++) {
		prov[c] = po->prov[c] ? po->prov[c] : dflt[c];
		caps[c] = hop_prov_caps_of(hop_prov_find(prov[c]));
		if (!caps[c]) {
			fprintf(stderr, "hop-model %s: --%s-provider '%s': "
				"expected shm, tcp or verbs\n", cmd,
				c ? "inter" : "intra", prov[c]);
			return 2;
		}
	}
	if (hop_model_links_load(lo->profile, prov, caps, links, src, srclen,
				 err, sizeof(err))) {
		fprintf(stderr, "hop-model %s: %s\n", cmd, err);
		return 1;
	}
	for (int c = 0; c < 2; c++) {
		hm_link_overrides(cmd, lo, &links[c]);
		if (po->have_alpha[c])
			links[c].alpha = po->alpha_us[c] * 1e-6;
		if (po->have_beta[c])
			links[c].beta = po->beta_gbps[c] * 1e9;
		if (hop_model_link_check(&links[c], err, sizeof(err))) {
			fprintf(stderr, "hop-model %s: %s link: %s\n", cmd,
				c ? "inter" : "intra", err);
			return 2;
		}
	}
	return 0;
}

int hm_place_build(const char *cmd, const struct hm_place_opts *po,
		   const struct hm_link_opts *lo, struct hm_place *out,
		   char *src, size_t srclen)
{
	long ppn[HM_MAX_LIST], n = 0;
	int h = po->nppn > 1 ? po->nppn : (int)po->hosts, ret;

	if (lo->provider) {
		fprintf(stderr, "hop-model %s: with a placement give "
			"--intra-provider and --inter-provider, not "
			"--provider\n", cmd);
		return 2;
	}
	if (!po->nppn || (po->nppn == 1 && !po->hosts) ||
	    (po->nppn > 1 && po->hosts && po->hosts != po->nppn)) {
		fprintf(stderr, "hop-model %s: a placement is --hosts H --ppn L "
			"or --ppn L1,L2,... (one per host)\n", cmd);
		return 2;
	}
	if (h > HM_MAX_LIST) {
		fprintf(stderr, "hop-model %s: --hosts %d: at most %d\n", cmd,
			h, HM_MAX_LIST);
		return 2;
	}
	for (int i = 0; i < h; i++)
		n += ppn[i] = po->nppn > 1 ? po->ppn[i] : po->ppn[0];
	if (n > HM_MAX_PLACE_RANKS) {
		fprintf(stderr, "hop-model %s: %ld ranks: at most %ld\n", cmd, n,
			HM_MAX_PLACE_RANKS);
		return 2;
	}
	if ((ret = class_links(cmd, po, lo, out->links, src, srclen)))
		return ret;
	if (!(out->host_of = malloc((size_t)n * sizeof(*out->host_of)))) {
		fprintf(stderr, "hop-model %s: out of memory\n", cmd);
		return 1;
	}
	place_ranks(po, ppn, h, out->host_of);
	if (hop_model_place_of(out->host_of, (int)n, h, &out->pl)) {
		free(out->host_of);
		out->host_of = NULL;
		return 1;
	}
	out->cyclic = po->cyclic;
	return 0;
}

void hm_print_place(const struct hm_place *p, const char *src)
{
	printf("# placement: %d ranks on %d hosts (%s%d per host, %s)\n",
	       p->pl.nranks, p->pl.nhosts, p->pl.uniform ? "" : "up to ",
	       p->pl.lmax, p->cyclic ? "cyclic" : "block");
	hm_print_link(&p->links[0], "intra");
	hm_print_link(&p->links[1], "inter");
	printf("# links from: %s\n", src);
}
