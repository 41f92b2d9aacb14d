/*
 * predict.c - hop-model predict: every algorithm's predicted time per
 * collective, rank count and size, and the one hop_model_choose() picks.
 */
#include "hop_model.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "model/model.h"

#define HM_MAX_RANKS (1L << 20)

struct popts {
	long nranks[HM_MAX_LIST];
	int nn;
	size_t sizes[HM_MAX_LIST];
	int ns;
	int kinds[HOP_COLL_KIND_COUNT];
	int nk;
	struct hop_model_link link;
	char src[512];
	int csv;
	long cores;             /* --cores: all ranks on a host of this many */
};

/* The link hop's collectives use with @n ranks on one host of
 * o->cores cores: adjusted as a communicator does when the ranks
 * outnumber the cores (coll_op.c), else as given. */
static struct hop_model_link link_for(const struct popts *o, int n)
{
	struct hop_model_link l = o->link;

	if (o->cores > 0)
		hop_model_link_oversubscribed(&l, n, (int)o->cores);
	return l;
}

/* The flat algorithms of @kind (the hierarchical form needs a
 * placement: --hosts, --ppn). */
static int flat_algos(int kind, int algos[16])
{
	int all[16], n = hop_model_algos(kind, all, 16), na = 0;

	for (int i = 0; i < n; i++)
		if (all[i] != HOP_ALGO_HIER)
			algos[na++] = all[i];
	return na;
}

static void table(const struct popts *o, int kind, int n)
{
	int algos[16], na = flat_algos(kind, algos);
	struct hop_model_link link = link_for(o, n);
	char tb[32];

	if (o->csv) {
		for (int si = 0; si < o->ns; si++) {
			size_t m = o->sizes[si];
			int pick;
			long pk;

			hop_model_choose(kind, m, n, &link, &pick, &pk, NULL);
			for (int i = 0; i < na; i++) {
				long k = hop_model_best_chunks(kind, algos[i], m, n,
							       &link);
				double t = hop_model_predict(kind, algos[i], m, n,
							     &link, k);

				printf("%s,%d,%zu,%s,%ld,%zu,%.9g,%d\n",
				       hop_model_kind_name(kind), n, m,
				       hop_model_algo_name(algos[i]), k,
				       hop_model_chunk_bytes(kind, algos[i], m,
							     n, k),
				       t, algos[i] == pick);
			}
		}
		return;
	}
	printf("\n# %s, N = %d%s\n", hop_model_kind_name(kind), n,
	       hop_model_per_rank(kind)
		       ? " (bytes: per-rank block; the vector is N times it)"
		       : "");
	if (o->cores > 0 && n > o->cores)
		printf("# %d ranks on %ld cores: alpha %.2f us, beta %.3f GB/s\n",
		       n, o->cores, link.alpha * 1e6, link.beta / 1e9);
	printf("%14s", "bytes");
	for (int i = 0; i < na; i++)
		printf(" %13s", hop_model_algo_name(algos[i]));
	printf("  pick\n");
	for (int si = 0; si < o->ns; si++) {
		size_t m = o->sizes[si];
		int pick;
		long pk;
		double pt;

		hop_model_choose(kind, m, n, &link, &pick, &pk, &pt);
		printf("%14zu", m);
		for (int i = 0; i < na; i++) {
			long k = hop_model_best_chunks(kind, algos[i], m, n,
						       &link);

			printf(" %13s",
			       hm_time(hop_model_predict(kind, algos[i], m, n,
							 &link, k),
				       tb, sizeof(tb)));
		}
		printf("  %s", hop_model_algo_name(pick));
		if (hop_model_pipelined(kind, pick))
			printf(" k=%ld (%zu B chunks)", pk,
			       hop_model_chunk_bytes(kind, pick, m, n, pk));
		printf("\n");
	}
}

static int parse_kinds(const char *spec, struct popts *o)
{
	char buf[256], *save = NULL, *tok;

	o->nk = 0;
	if (!strcmp(spec, "all")) {
		for (int k = 0; k < HOP_COLL_KIND_COUNT; k++)
			o->kinds[o->nk++] = k;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int k = hop_model_kind_lookup(tok);

		if (k < 0 || o->nk == HOP_COLL_KIND_COUNT) {
			fprintf(stderr, "hop-model: --collective '%s': expected "
				"all or a list of broadcast, reduce, allreduce, "
				"allgather, reducescatter, barrier, gather, "
				"scatter, allgatherv, reducescatterv, alltoall, "
				"alltoallv\n", tok);
			return -1;
		}
		o->kinds[o->nk++] = k;
	}
	return o->nk ? 0 : -1;
}

/* predict for a placement: --nranks, if given, must be its rank count. */
static int predict_place(struct popts *o, const struct hm_place_opts *po,
			 const struct hm_link_opts *lo, int have_n)
{
	struct hm_place p;
	int ret;

	if ((ret = hm_place_build("predict", po, lo, &p, o->src,
				  sizeof(o->src))))
		return ret;
	if (have_n && (o->nn != 1 || o->nranks[0] != p.pl.nranks)) {
		fprintf(stderr, "hop-model predict: --nranks does not match the "
			"placement's %d ranks\n", p.pl.nranks);
		free(p.host_of);
		return 2;
	}
	if (!o->csv)
		hm_print_place(&p, o->src);
	ret = hm_predict_place(&p, o->kinds, o->nk, o->sizes, o->ns, o->csv);
	free(p.host_of);
	return ret;
}

int hm_predict(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "nranks", required_argument, NULL, 'n' },
		{ "sizes", required_argument, NULL, 's' },
		{ "collective", required_argument, NULL, 'c' },
		{ "csv", no_argument, NULL, 'C' },
		{ "cores", required_argument, NULL, 'k' },
		HM_LINK_LONGOPTS,
		HM_PLACE_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	static struct popts o;
	struct hm_link_opts lo = { 0 };
	struct hm_place_opts po = { 0 };
	const char *nspec = NULL, *sspec = NULL, *cspec = "allreduce";
	const char *kspec = NULL;
	int c, ret;

	memset(&o, 0, sizeof(o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 'n': nspec = optarg; break;
		case 's': sspec = optarg; break;
		case 'c': cspec = optarg; break;
		case 'C': o.csv = 1; break;
		case 'k': kspec = optarg; break;
		default:
			ret = hm_link_opt(&lo, c, optarg);
			if (ret == 0)
				ret = hm_place_opt(&po, c, optarg);
			if (ret < 0)
				return 2;
			if (ret == 0) {
				fprintf(stderr, "hop-model predict: see hop-model "
					"--help\n");
				return 2;
			}
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hop-model predict: unexpected '%s'\n",
			argv[optind]);
		return 2;
	}
	if ((!nspec && !po.given) || !sspec) {
		fprintf(stderr, "hop-model predict: --sizes and --nranks (or a "
			"placement: --hosts, --ppn) are required\n");
		return 2;
	}
	if ((nspec && hm_parse_ints("--nranks", nspec, 1, HM_MAX_RANKS,
				    o.nranks, HM_MAX_LIST, &o.nn)) ||
	    hm_parse_sizes("--sizes", sspec, o.sizes, HM_MAX_LIST, &o.ns) ||
	    parse_kinds(cspec, &o))
		return 2;
	if (po.given)
		return predict_place(&o, &po, &lo, nspec != NULL);
	if (kspec) {
		int nk;

		if (hm_parse_ints("--cores", kspec, 1, 1L << 20, &o.cores, 1,
				  &nk))
			return 2;
	}
	if ((ret = hm_link_load("predict", &lo, &o.link, o.src, sizeof(o.src))))
		return ret;
	if (o.csv)
		printf("collective,nranks,bytes,algo,chunks,chunk_bytes,"
		       "seconds,picked\n");
	else
		hm_print_link(&o.link, o.src);
	for (int ki = 0; ki < o.nk; ki++)
		for (int ni = 0; ni < o.nn; ni++)
			table(&o, o.kinds[ki], (int)o.nranks[ni]);
	return 0;
}
