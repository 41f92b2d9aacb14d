/*
 * sim.c - hop-model sim: hop's real schedules over the discrete-event
 * network simulator (src/sim/simnet.h), data checked bit for bit, the
 * simulated time beside the closed form's.
 *
 *   hop-model sim --coll allreduce --algo ring -n 4096 --bytes 1M
 *                 [--algo all] [--chunks K] [--depth D] [--root R]
 *                 [--inplace] [--no-verify [--rotate]] [--topo FILE] [--csv]
 *                 [--trace]  (every message on stderr)
 *                 [--profile FILE | --provider P] [--alpha-us ...]
 *                 [--hosts H --ppn L | --ppn L1,L2,..] [--map block|cyclic]
 *                 [--intra-... | --inter-... link of each class]
 */
#include "hop_model.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "coll/sched.h" /* HOP_SCHED_MAX_DEPTH */
#include "sim/simrun.h"
#include "model/topo.h"

struct sopts {
	int kind, all, csv;
	struct hop_simrun tmpl;
	struct hm_place_opts po;        /* --hosts, --ppn: link classes */
	char src[512];
};

static void print_csv_head(void)
{
	printf("collective,algo,nranks,bytes,chunks,chunk_bytes,sim_seconds,"
	       "model_seconds,diff_pct,messages,steps,wall_seconds,data,"
	       "wrong\n");
}

/* One run; prints its line. Returns 0, or 1 (failed or wrong data). */
static int run_one(const struct sopts *o, int algo)
{
	struct hop_simrun r = o->tmpl;
	char t1[32], t2[32];
	int ret;

	r.algo = algo;
	ret = hop_simrun(&r);
	if (ret) {
		fprintf(stderr, "hop-model sim: %s/%s N=%d %zu B: %s\n",
			hop_model_kind_name(r.kind),
			algo ? hop_model_algo_name(algo) : "auto", r.nranks,
			r.bytes, r.err);
		return 1;
	}
	double dev = r.predicted > 0 ? (r.sim_time / r.predicted - 1) * 100 : 0;
	const char *data = r.rotate ? "not checked (rotated)" : !r.verify ?
			   "not checked" : r.wrong ? "WRONG" : "exact";

	if (o->csv) {
		printf("%s,%s,%d,%zu,%ld,%zu,%.9g,%.9g,%.3f,%llu,%llu,%.3f,%s,%zu\n",
		       hop_model_kind_name(r.kind), hop_model_algo_name(r.algo),
		       r.nranks, r.bytes, r.chunks_used, r.chunk_bytes,
		       r.sim_time, r.predicted, dev,
		       (unsigned long long)r.messages,
		       (unsigned long long)r.steps, r.wall, data, r.wrong);
	} else {
		printf("%-14s %-13s N=%-6d %12zu B  k=%-6ld simulated %12s  "
		       "closed form %12s  %+7.2f %%  %9llu msgs  %10llu steps  "
		       "wall %7.2f s  data %s", hop_model_kind_name(r.kind),
		       hop_model_algo_name(r.algo), r.nranks, r.bytes,
		       r.chunks_used, hm_time(r.sim_time, t1, sizeof(t1)),
		       hm_time(r.predicted, t2, sizeof(t2)), dev,
		       (unsigned long long)r.messages,
		       (unsigned long long)r.steps, r.wall, data);
		if (r.wrong)
			printf(" (%zu elements differ)", r.wrong);
		printf("\n");
	}
	return r.verify && r.wrong ? 1 : 0;
}

static int parse(int argc, char **argv, struct sopts *o,
		 struct hm_link_opts *lo, const char **topo)
{
	static const struct option lopts[] = {
		{ "coll", required_argument, NULL, 'c' },
		{ "collective", required_argument, NULL, 'c' },
		{ "algo", required_argument, NULL, 'a' },
		{ "nranks", required_argument, NULL, 'n' },
		{ "bytes", required_argument, NULL, 'b' },
		{ "chunks", required_argument, NULL, 'k' },
		{ "depth", required_argument, NULL, 'd' },
		{ "root", required_argument, NULL, 'r' },
		{ "inplace", no_argument, NULL, 'i' },
		{ "no-verify", no_argument, NULL, 'V' },
		{ "rotate", no_argument, NULL, 'R' },
		{ "topo", required_argument, NULL, 't' },
		{ "csv", no_argument, NULL, 'C' },
		{ "trace", no_argument, NULL, 'T' },
		HM_LINK_LONGOPTS,
		HM_PLACE_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	const char *aspec = "auto", *nspec = NULL, *bspec = NULL;
	long v[3] = { 0, 0, 0 };
	int c, n, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:", lopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if ((o->kind = hop_model_kind_lookup(optarg)) < 0) {
				fprintf(stderr, "hop-model sim: --coll '%s': expected "
					"broadcast, reduce, allreduce, allgather, "
					"reducescatter, barrier, gather, scatter, "
					"allgatherv, reducescatterv or alltoall\n",
					optarg);
				return 2;
			}
			break;
		case 'a': aspec = optarg; break;
		case 'n': nspec = optarg; break;
		case 'b': bspec = optarg; break;
		case 'i': o->tmpl.inplace = 1; break;
		case 'V': o->tmpl.verify = 0; break;
		case 'R': o->tmpl.rotate = 1; break;
		case 't': *topo = optarg; break;
		case 'C': o->csv = 1; break;
		case 'T': o->tmpl.trace = stderr; break;
		case 'k':
		case 'd':
		case 'r': {
			static const char *const nm[] = { "--chunks", "--depth",
							  "--root" };
			static const long hi[] = { HOP_MODEL_MAX_CHUNKS,
						   HOP_SCHED_MAX_DEPTH, 1 << 20 };
			int i = c == 'k' ? 0 : c == 'd' ? 1 : 2;

			if (hm_parse_ints(nm[i], optarg, i == 2 ? 0 : 1, hi[i],
					  &v[i], 1, &n))
				return 2;
			break;
		}
		default:
			ret = hm_link_opt(lo, c, optarg);
			if (ret == 0)
				ret = hm_place_opt(&o->po, c, optarg);
			if (ret <= 0) {
				if (ret == 0)
					fprintf(stderr, "hop-model sim: see "
						"hop-model --help\n");
				return 2;
			}
		}
	}
	if (optind < argc || (!nspec && !o->po.given) ||
	    (!bspec && o->kind != HOP_COLL_BARRIER)) {
		fprintf(stderr, "hop-model sim: %s%s\n", optind < argc
			? "unexpected " : "-n N (or a placement: --hosts, --ppn) "
			"and --bytes SIZE are required",
			optind < argc ? argv[optind] : "");
		return 2;
	}
	long nr = 0;
	size_t bytes = 0;
	if ((nspec && hm_parse_ints("-n", nspec, 1, 1 << 20, &nr, 1, &n)) ||
	    (bspec && hm_parse_sizes("--bytes", bspec, &bytes, 1, &n)))
		return 2;
	o->all = !strcmp(aspec, "all");
	o->tmpl.algo = HOP_ALGO_AUTO;
	if (!o->all && strcmp(aspec, "auto") &&
	    (o->tmpl.algo = hop_model_algo_lookup(o->kind, aspec)) < 0) {
		fprintf(stderr, "hop-model sim: --algo '%s' is not an algorithm "
			"of %s (or auto, all)\n", aspec,
			hop_model_kind_name(o->kind));
		return 2;
	}
	o->tmpl.kind = o->kind;
	o->tmpl.nranks = (int)nr;
	o->tmpl.bytes = bytes;
	o->tmpl.chunks = v[0];
	o->tmpl.depth = (int)v[1];
	o->tmpl.root = (int)v[2];
	return 0;
}

/* The runs of @o, every algorithm with --algo all. */
static int run_all(const struct sopts *o)
{
	int algos[16], na, fail = 0;

	if (!o->all)
		return run_one(o, o->tmpl.algo);
	na = hop_model_algos(o->kind, algos, 16);
	for (int i = 0; i < na; i++)   /* hier needs hosts: a placement */
		if (algos[i] != HOP_ALGO_HIER || o->tmpl.host_of)
			fail |= run_one(o, algos[i]);
	return fail;
}

/* sim on link classes: the placement's hosts and the link of each class;
 * -n, if given, must be its rank count. */
static int sim_place(struct sopts *o, const struct hm_link_opts *lo,
		     const char *tpath)
{
	struct hm_place p;
	int ret;

	if (tpath) {
		fprintf(stderr, "hop-model sim: --topo or a placement, not "
			"both\n");
		return 2;
	}
	if ((ret = hm_place_build("sim", &o->po, lo, &p, o->src,
				  sizeof(o->src))))
		return ret;
	if (o->tmpl.nranks && o->tmpl.nranks != p.pl.nranks) {
		fprintf(stderr, "hop-model sim: -n %d does not match the "
			"placement's %d ranks\n", o->tmpl.nranks, p.pl.nranks);
		free(p.host_of);
		return 2;
	}
	o->tmpl.nranks = p.pl.nranks;
	o->tmpl.host_of = p.host_of;
	o->tmpl.links[0] = p.links[0];
	o->tmpl.links[1] = p.links[1];
	o->tmpl.link = p.links[p.pl.nhosts > 1];
	if (o->csv)
		print_csv_head();
	else
		hm_print_place(&p, o->src);
	ret = run_all(o);
	free(p.host_of);
	return ret;
}

int hm_sim(int argc, char **argv)
{
	static struct sopts o;
	struct hm_link_opts lo = { 0 };
	struct hop_topo topo;
	const char *tpath = NULL;
	char err[512];
	int ret, fail = 0;

	memset(&o, 0, sizeof(o));
	o.kind = HOP_COLL_ALLREDUCE;
	o.tmpl.verify = 1;
	if ((ret = parse(argc, argv, &o, &lo, &tpath)))
		return ret;
	if (o.po.given)
		return sim_place(&o, &lo, tpath);
	if ((ret = hm_link_load("sim", &lo, &o.tmpl.link, o.src, sizeof(o.src))))
		return ret;
	if (tpath) {
		if (hop_topo_load(tpath, &topo, err, sizeof(err))) {
			fprintf(stderr, "hop-model sim: %s\n", err);
			return 1;
		}
		if (topo.nranks < o.tmpl.nranks) {
			fprintf(stderr, "hop-model sim: %s has %d ranks, fewer than "
				"-n %d\n", tpath, topo.nranks, o.tmpl.nranks);
			hop_topo_free(&topo);
			return 1;
		}
		o.tmpl.topo = &topo;
	}
	if (o.csv) {
		print_csv_head();
	} else {
		hm_print_link(&o.tmpl.link, o.src);
		if (o.tmpl.link.duplex != 1)
			printf("# note: the simulator is full duplex; the closed "
			       "forms use duplex %.2f\n", o.tmpl.link.duplex);
		if (tpath)
			printf("# per-link alpha/beta from %s (the closed forms "
			       "use the link above)\n", tpath);
	}
	fail = run_all(&o);
	if (tpath)
		hop_topo_free(&topo);
	return fail;
}
