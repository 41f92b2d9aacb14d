/*
 * probe.c - hop-probe: what one link costs, split into the parts different
 * fixes attack (alpha_sw + alpha_dma + alpha_sync + alpha_wire), its
 * bandwidth beta, and the duplex / multi-link / store-and-forward effects.
 * Runs under hop-run, mpirun, Slurm or the SoftRoCE harness; see
 * man/hop-probe.1.md and docs/probe.md.
 */
#include "probe.h"

#include <getopt.h>
#include <sched.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hop/hop.h>

#include "core/core.h"
#include "transport/provider.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: hop-run -n 2 hop-probe [options]   (also mpirun, srun, softroce-cluster)\n"
"\n"
"Measures each rank pair's one-way time T(m) = alpha + m/beta and splits alpha\n"
"into alpha_sw + alpha_dma + alpha_sync + alpha_wire (docs/probe.md).\n"
"\n"
"  -t, --transport NAME   verbs, tcp, shm or auto (default: HOP_TRANSPORT, else auto)\n"
"  -p, --pair A,B         measure only ranks A -> B (default: every (r, r+1))\n"
"  -s, --sizes MIN:MAX    size sweep, powers of two (default 1:64M; K M G suffixes)\n"
"  -n, --iters N          samples per measurement (default 1000)\n"
"  -w, --warmup N         unrecorded rounds before each (default 100)\n"
"  -b, --budget MB        bytes moved per sweep size; large sizes take fewer\n"
"                         samples, at least 5 (default 256)\n"
"  -j, --json FILE        the profile as JSON (per pair: alpha parts, alpha, beta,\n"
"                         R^2, duplex factor, beta_mem, sweep)\n"
"  -c, --csv FILE         the sweep as CSV\n"
"  -g, --svg FILE         log-log plot of T(m), measured and fitted\n"
"  -P, --save-profile FILE  the link profile for HOP_PROFILE, one line per pair\n"
"                         (written atomically and read back with libhop's reader)\n"
"  -q, --quiet            no table\n"
"      --no-pin           do not pin rank r to the r-th allowed CPU (pinning keeps\n"
"                         two spinning ranks off one core)\n"
"  -h, --help             this text;  -V, --version\n"
"\n"
"example: tools/hop-run -n 2 tools/hop-probe --json probe.json --svg probe.svg\n");
}

static int parse_opts(int argc, char **argv, struct probe_opts *o)
{
	static const struct option lo[] = {
		{ "transport", required_argument, NULL, 't' },
		{ "pair", required_argument, NULL, 'p' },
		{ "sizes", required_argument, NULL, 's' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "budget", required_argument, NULL, 'b' },
		{ "json", required_argument, NULL, 'j' },
		{ "csv", required_argument, NULL, 'c' },
		{ "svg", required_argument, NULL, 'g' },
		{ "save-profile", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "no-pin", no_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char err[256], *colon, tmp[64];
	long v;
	int ch;

	*o = (struct probe_opts){ .pair_a = -1, .pair_b = -1, .min_size = 1,
				  .max_size = (size_t)64 << 20, .iters = 1000,
				  .warmup = 100, .budget_mb = 256 };
	while ((ch = getopt_long(argc, argv, "t:p:s:n:w:b:j:c:g:P:qNhV", lo, NULL)) != -1) {
		switch (ch) {
		case 't':
			if (strlen(optarg) >= sizeof(o->transport))
				goto bad;
			strcpy(o->transport, optarg);
			break;
		case 'p':
			if (sscanf(optarg, "%d,%d", &o->pair_a, &o->pair_b) != 2 ||
			    o->pair_a < 0 || o->pair_b < 0 || o->pair_a == o->pair_b) {
				fprintf(stderr, "hop-probe: --pair %s: want A,B with two "
					"different ranks >= 0\n", optarg);
				return 2;
			}
			break;
		case 's':
			if (strlen(optarg) >= sizeof(tmp) || !(colon = strchr(optarg, ':'))) {
				fprintf(stderr, "hop-probe: --sizes %s: want MIN:MAX, e.g. 1:64M\n",
					optarg);
				return 2;
			}
			snprintf(tmp, sizeof(tmp), "%.*s", (int)(colon - optarg), optarg);
			if (hop_parse_size("--sizes MIN", tmp, 1, PROBE_MAX_SIZE,
					   &o->min_size, err, sizeof(err)) ||
			    hop_parse_size("--sizes MAX", colon + 1, 2, PROBE_MAX_SIZE,
					   &o->max_size, err, sizeof(err))) {
				fprintf(stderr, "hop-probe: %s\n", err);
				return 2;
			}
			if (o->max_size < 2 * o->min_size) {
				fprintf(stderr, "hop-probe: --sizes %s: MAX must be at least "
					"2 x MIN (the fit needs two sizes)\n", optarg);
				return 2;
			}
			break;
		case 'n':
		case 'w':
			if (hop_parse_int(ch == 'n' ? "--iters" : "--warmup", optarg,
					  ch == 'n' ? 5 : 0, 10000000, &v, err, sizeof(err))) {
				fprintf(stderr, "hop-probe: %s\n", err);
				return 2;
			}
			*(ch == 'n' ? &o->iters : &o->warmup) = (int)v;
			break;
		case 'b':
			if (hop_parse_int("--budget", optarg, 1, 1 << 20, &v, err,
					  sizeof(err))) {
				fprintf(stderr, "hop-probe: %s\n", err);
				return 2;
			}
			o->budget_mb = (double)v;
			break;
		case 'j': o->json = optarg; break;
		case 'c': o->csv = optarg; break;
		case 'g': o->svg = optarg; break;
		case 'P': o->save_profile = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'N': o->no_pin = 1; break;
		case 'h': usage(stdout); return 1;
		case 'V': printf("hop-probe %s\n", hop_version()); return 1;
		default:
bad:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hop-probe: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return 0;
}

/*
 * Pin this rank to the (rank mod n)-th CPU it may run on: the probe times by
 * spinning, and two spinning ranks sharing a core measure the scheduler's
 * tick instead of the link. A launcher's binding (one allowed CPU) is kept.
 */
static void pin_rank(int rank)
{
	cpu_set_t set, one;
	int n, k = 0;

	if (sched_getaffinity(0, sizeof(set), &set) || (n = CPU_COUNT(&set)) <= 1)
		return;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set) || k++ != rank % n)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			HOP_INFO("hop-probe: cannot pin rank %d to cpu %d", rank, cpu);
		return;
	}
}

static int json_out(FILE *f, const struct hop_profile *p)
{
	return hop_profile_write(p, f);
}

/* rank 0: print and write everything; returns 0 or 1 */
static int outputs(const struct probe_opts *o, struct hop_profile *p)
{
	struct hop_profile back;
	char err[512];
	int bad = 0;

	if (!o->quiet)
		report_table(stdout, p);
	if (o->json && report_to_file(o->json, p, json_out))
		bad = 1;
	if (o->csv && report_to_file(o->csv, p, report_csv))
		bad = 1;
	if (o->svg && report_to_file(o->svg, p, report_svg))
		bad = 1;
	if (o->save_profile) {
		if (hop_profile_save_with(p, o->save_profile,
					  hop_profile_link_write, err,
					  sizeof(err))) {
			fprintf(stderr, "hop-probe: %s\n", err);
			bad = 1;
		} else if (hop_profile_link_load(o->save_profile, &back, err,
						 sizeof(err))) {
			fprintf(stderr, "hop-probe: the profile written does not read "
				"back: %s\n", err);
			bad = 1;
		} else {
			hop_profile_free(&back);
		}
	}
	if (!o->quiet && (o->json || o->csv || o->svg || o->save_profile))
		printf("\nwritten:%s%s%s%s%s%s%s%s\n", o->json ? " " : "",
		       o->json ? o->json : "", o->csv ? " " : "", o->csv ? o->csv : "",
		       o->svg ? " " : "", o->svg ? o->svg : "",
		       o->save_profile ? " " : "",
		       o->save_profile ? o->save_profile : "");
	return bad;
}

/* Every rank runs this same sequence; see probe.h. */
static int run(struct probe_ctx *c, struct hop_profile_pair *mine)
{
	const struct probe_opts *o = c->opt;
	int first = o->pair_a >= 0 ? o->pair_a : 0;
	int last = o->pair_a >= 0 ? o->pair_a : c->nranks - 2;
	struct hop_pstat ring = { NAN, NAN };
	struct hop_fit fit;
	struct hop_alpha_check chk;
	int ret;

	if ((ret = probe_ring_step(c, &ring)))
		return ret;
	for (int a = first; a <= last; a++) {
		int b = o->pair_a >= 0 ? o->pair_b : a + 1, me = c->rank;
		int d = probe_saf_dest(c, a, b);

		if ((ret = probe_barrier(c)))
			return ret;
		if (me == a) {
			hop_profile_pair_init(mine);
			mine->a = a;
			mine->b = b;
			snprintf(mine->provider, sizeof(mine->provider), "%s",
				 c->ops->name);
			/* what the cost model prices this pair as */
			mine->link_class = hop_comm_host(c->comm, a) ==
					   hop_comm_host(c->comm, b)
					   ? HOP_LINK_INTRA : HOP_LINK_INTER;
			mine->beta_mem_gbps = probe_beta_mem(c);
		}
		if ((me == a || me == b) &&
		    ((ret = probe_pair_latency(c, a, b, mine)) ||
		     (ret = probe_sweep(c, a, b, mine))))
			return ret;
		if (me == a) {
			probe_finish_pair(mine, &fit, &chk);
			mine->ring_ranks = c->nranks;
			mine->sync_step.median_us =
				fmax(0, ring.median_us - mine->oneway_mem.median_us);
			mine->sync_step.p99_us =
				fmax(0, ring.p99_us - mine->oneway_mem.median_us);
		}
		if ((me == a || me == b) && (ret = probe_duplex(c, a, b, mine)))
			return ret;
		/* d joins only now: its waits must not start before a's, b's */
		if ((ret = probe_barrier(c)))
			return ret;
		if ((me == a || me == b || me == d) &&
		    (ret = probe_store_forward(c, a, b, mine)))
			return ret;
		if (a == first && (ret = probe_aggregate(c, a, mine)))
			return ret;
	}
	return probe_barrier(c);
}

int main(int argc, char **argv)
{
	struct probe_opts o;
	struct probe_ctx c;
	struct hop_profile_pair *mine = NULL, *all = NULL;
	struct hop_profile p = { .version = HOP_PROFILE_VERSION };
	hop_comm_t *comm = NULL;
	int ret, status = 1;

	if ((ret = parse_opts(argc, argv, &o)))
		return ret == 1 ? 0 : 2;
	if (o.transport[0] && setenv("HOP_TRANSPORT", o.transport, 1))
		return 1;
	if ((ret = hop_comm_init_env_flags(&comm, HOP_INIT_KEEP_BOOTSTRAP))) {
		fprintf(stderr, "hop-probe: cannot join the job: %s (%s)\n",
			hop_last_init_error(), hop_err_name(ret));
		return 1;
	}
	if (comm->nranks < 2 || (o.pair_a >= comm->nranks || o.pair_b >= comm->nranks)) {
		if (comm->rank == 0)
			fprintf(stderr, "hop-probe: %s (run it with 2 or more ranks, "
				"e.g. hop-run -n 2 hop-probe)\n", comm->nranks < 2 ?
				"needs 2 ranks at least" : "--pair names a rank "
				"outside the job");
		goto out;
	}
	if (!o.no_pin)
		pin_rank(comm->rank);
	if ((ret = probe_ctx_open(&c, comm, &o))) {
		fprintf(stderr, "hop-probe: rank %d: %s\n", comm->rank, c.err);
		goto out;
	}
	mine = calloc(1, sizeof(*mine));
	all = calloc((size_t)comm->nranks, sizeof(*all));
	if (!mine || !all) {
		fprintf(stderr, "hop-probe: rank %d: out of memory\n", comm->rank);
		goto out_ctx;
	}
	hop_profile_pair_init(mine);
	if ((ret = run(&c, mine)) ||
	    (ret = probe_allgather(&c, mine, all, sizeof(*mine)))) {
		fprintf(stderr, "hop-probe: rank %d: %s (%s)\n", comm->rank,
			c.err[0] ? c.err : hop_comm_last_error(comm), hop_err_name(ret));
		goto out_ctx;
	}
	status = 0;
	if (comm->rank == 0) {
		p.nranks = comm->nranks;
		p.pairs = all;
		snprintf(p.provider, sizeof(p.provider), "%s", c.ops->name);
		snprintf(p.hop_version, sizeof(p.hop_version), "%s", hop_version());
		if (gethostname(p.host, sizeof(p.host) - 1))
			p.host[0] = '\0';
		for (int r = 0; r < comm->nranks; r++)
			if (all[r].a == r) {
				if (p.npairs != r)
					all[p.npairs] = all[r];
				p.npairs++;
			}
		if (c.foreign)
			fprintf(stderr, "hop-probe: note: %llu completions were not the "
				"probe's and were ignored\n", (unsigned long long)c.foreign);
		status = outputs(&o, &p);
	}
out_ctx:
	probe_ctx_close(&c);
out:
	free(mine);
	free(all);
	hop_comm_destroy(comm);
	return status;
}
