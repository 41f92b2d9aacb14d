/*
 * hop-relay-bench - measured multi-hop transfer times beside the model.
 *
 * On the path 0 -> 1 -> ... -> H (H hops), for each size m it sweeps the
 * chunk count k of hop_relay() and prints the measured time T(k) beside
 * the model's T(m, H, k) = (H + k - 1)(alpha + m/(k beta)), with alpha and
 * beta fitted in the same run from one-hop transfers (0 -> 1) of sizes
 * 4 KiB .. the largest m (least squares on relative error): medians beside
 * the line through the one-hop medians, minima (the samples least
 * disturbed by other processes) beside the line through the minima. Then, per
 * size: the measured-best k beside the model's k* (exact integer optimum,
 * clamped to m / min_chunk), the store-and-forward time beside
 * H (alpha + m/beta), and hop's own default k (hop_relay_plan()).
 *
 * Timing of one transfer: all ranks meet in a barrier; the time runs from
 * the source's start to the destination's end of hop_relay(), both read
 * from CLOCK_MONOTONIC (local ranks share it; the bench is for one host). Medians of --iters samples after --warmup. The
 * destination checks the data of the last sample of every row byte for
 * byte (column "wrong").
 *
 * Run: hop-run -n H+1 hop-relay-bench --hops H [--sizes 1M,4M,16M]
 *      [--ks 1,2,4,...] [--iters N] [--warmup N]
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/hop.h>

#include "tool_util.h"

#include "model/fit.h"
#include "model/model.h"
#include "transport/provider.h"

#define TAG_ACK 11
#define TAG_WRONG 12
#define MAX_SIZES 16
#define MAX_KS 64
#define MAX_ITERS 1000

struct opts {
	int hops, iters, warmup, nsizes, nks, per_hop;
	size_t fit_from;
	size_t sizes[MAX_SIZES];
	long ks[MAX_KS];
};

static hop_comm_t *comm;
static int rank, nranks;

static void die(const char *what, int ret)
{
	fprintf(stderr, "hop-relay-bench rank %d: %s: %s: %s\n", rank, what,
		hop_err_name(ret), hop_comm_last_error(comm));
	exit(1);
}

#define CALL(x)                                                               \
	do {                                                                  \
		int r_ = (x);                                                 \
		if (r_)                                                       \
			die(#x, r_);                                          \
	} while (0)

/* Sizes 1 B .. 2 GiB. */
static int parse_size(const char *s, size_t *out)
{
	return tool_parse_size(s, out) && *out && *out <= (size_t)1 << 31;
}

/* Comma-separated list into @sizes (is_size) or @ks; count or -1. */
static int parse_list(char *s, int is_size, size_t *sizes, long *ks, int max)
{
	int n = 0;

	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		if (n == max)
			return -1;
		if (is_size ? !parse_size(tok, &sizes[n])
			    : !tool_parse_long(tok, 1, 1 << 20, &ks[n]))
			return -1;
		n++;
	}
	return n;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: hop-run -n H+1 hop-relay-bench --hops H [options]\n"
"  --hops H        hops of the path 0 -> 1 -> ... -> H (2..63; default 3)\n"
"  --sizes LIST    message sizes (default 1M,4M,16M; K, M, G suffixes)\n"
"  --ks LIST       chunk counts to sweep (default 1,2,3,4,6,8,...,256 up\n"
"                  to m / 4K, plus the model's k* and hop's default)\n"
"  --iters N       timed transfers per row (default 7)\n"
"  --warmup N      untimed transfers per row (default 2)\n"
"  --per-hop       fit every hop i -> i+1 on its own (links that differ,\n"
"                  e.g. a slower uplink) and model the path hop by hop\n"
"  --fit-from SIZE smallest one-hop size of the beta fits (default 4K; on\n"
"                  shaped links, above what the shaper's burst lets through;\n"
"                  alpha then comes from 4K transfers)\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "hops", required_argument, NULL, 'H' },
		{ "sizes", required_argument, NULL, 's' },
		{ "ks", required_argument, NULL, 'k' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "per-hop", no_argument, NULL, 'P' },
		{ "fit-from", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, li = 0;

	*o = (struct opts){ .hops = 3, .iters = 7, .warmup = 2, .nsizes = 3,
			    .fit_from = 4096,
			    .sizes = { 1u << 20, 4u << 20, 16u << 20 } };
	while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
		int ok = 1;

		switch (c) {
		case 'H': ok = tool_parse_int(optarg, 2, 63, &o->hops); break;
		case 's':
			o->nsizes = parse_list(optarg, 1, o->sizes, NULL,
					       MAX_SIZES);
			ok = o->nsizes > 0;
			break;
		case 'k':
			o->nks = parse_list(optarg, 0, NULL, o->ks, MAX_KS - 3);
			ok = o->nks > 0;
			break;
		case 'n': ok = tool_parse_int(optarg, 1, MAX_ITERS, &o->iters); break;
		case 'w': ok = tool_parse_int(optarg, 0, MAX_ITERS, &o->warmup); break;
		case 'P': o->per_hop = 1; break;
		case 'F': ok = parse_size(optarg, &o->fit_from); break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
		if (!ok) {
			fprintf(stderr, "hop-relay-bench: bad value '%s' for "
				"--%s\n", optarg, lo[li].name);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "hop-relay-bench: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

static uint8_t pat(size_t m, long k, size_t i)
{
	return (uint8_t)(((uint32_t)i * 2654435761u) >> 24 ^ (uint32_t)k ^
			 (uint32_t)(m % 251));
}

/*
 * One timed transfer along @path; the source's result in us (0 elsewhere):
 * from the source's start to the destination's end, both read from
 * CLOCK_MONOTONIC, which every process of one host shares (hop-run starts
 * local ranks), so no message latency enters the time; the destination
 * sends its end time back.
 */
static double timed_relay(void *buf, size_t m, const int *path, int npath,
			  const hop_relay_opts_t *o)
{
	int src = path[0], dst = path[npath - 1];
	double t0, t1 = 0;

	CALL(hop_barrier(comm));
	t0 = tool_now_us();
	CALL(hop_relay(comm, buf, m, src, dst, path, npath, o));
	if (rank == dst) {
		t1 = tool_now_us();
		CALL(hop_send(comm, &t1, sizeof(t1), src, TAG_ACK));
	}
	if (rank == src) {
		CALL(hop_recv(comm, &t1, sizeof(t1), dst, TAG_ACK, NULL));
		t1 -= t0;
		if (src != 0)   /* rank 0 keeps the samples */
			CALL(hop_send(comm, &t1, sizeof(t1), 0, TAG_ACK));
	} else if (rank == 0) {
		CALL(hop_recv(comm, &t1, sizeof(t1), src, TAG_ACK, NULL));
	}
	return rank == 0 ? t1 : 0;
}

/*
 * A row: @warmup + @iters transfers of @m bytes in @k chunks (mode @mode);
 * the median (us) and minimum at rank 0; the destination checks the last
 * one and rank 0 learns its count of wrong bytes.
 */
static double run_row(const struct opts *o, uint8_t *buf, size_t m,
		      const int *path, int mode, long k,
		      double *tmin, long *wrong)
{
	hop_relay_opts_t ro = { .mode = mode, .chunks = k, .tag = 1 };
	int dst = path[o->hops];
	double s[MAX_ITERS];
	struct hop_stats st = { 0 };
	long bad = 0;

	for (int i = -o->warmup; i < o->iters; i++) {
		double t;

		if (i == o->iters - 1 && rank == dst)
			memset(buf, 0, m);      /* the checked sample */
		t = timed_relay(buf, m, path, o->hops + 1, &ro);
		if (i >= 0)
			s[i] = t;
	}
	if (rank == dst) {
		for (size_t i = 0; i < m; i++)
			bad += buf[i] != pat(m, 0, i);
		CALL(hop_send(comm, &bad, sizeof(bad), 0, TAG_WRONG));
	}
	if (rank != 0)
		return 0;
	CALL(hop_recv(comm, wrong, sizeof(*wrong), dst, TAG_WRONG, NULL));
	hop_stats_compute(s, (size_t)o->iters, &st);
	*tmin = st.min;
	return st.median;
}

/* Fit @ts (us) against @ms at rank 0 into @ab (us, B/us); 0 when no
 * bandwidth can be read. A load spike can tilt the line below 0: then
 * alpha is what the smallest size leaves beside its bandwidth term. */
static void fit_one(const char *what, int src, const double *ms,
		    const double *ts, size_t n, double *ab)
{
	struct hop_fit f = { 0 };

	if (hop_fit_linear(ms, ts, n, HOP_FIT_RELATIVE, &f) || f.beta <= 0)
		return;
	ab[0] = f.alpha > 0 ? f.alpha : fmax(ts[0] - ms[0] / f.beta, 0.1);
	ab[1] = f.beta;
	printf("# one-hop fit %d -> %d of the %s, %zu sizes %.0fK..%.0fK: alpha "
	       "%.2f us%s, beta %.3f GB/s, r2 %.4f\n", src, src + 1, what, n,
	       ms[0] / 1024, ms[n - 1] / 1024, ab[0],
	       f.alpha > 0 ? "" : " (intercept <= 0; from the smallest size)", f.beta / 1e3,
	       f.r2);
}

/* --fit-from above 4 KiB: the slopes come from the large sizes, where a
 * shaper's burst no longer shows, and alpha from what a 4 KiB transfer
 * (@t4k medians, @t4k_min minima, us) leaves beside its bandwidth term. */
static void small_alpha(double t4k, double t4k_min, double *ab)
{
	if (ab[1] > 0)
		ab[0] = fmax(t4k - 4096 / ab[1], 0.1);
	if (ab[3] > 0)
		ab[2] = fmax(t4k_min - 4096 / ab[3], 0.1);
	printf("# alpha from 4K transfers: %.2f us (medians), %.2f us "
	       "(minima)\n", ab[0], ab[2]);
}

/*
 * Two lines through one-hop transfers @src -> @src + 1, 4 KiB .. @max:
 * through the medians (@med: compared with the medians, and gives k*) and
 * through the minima (@min: the least disturbed samples, compared with the
 * minima). Fitted at rank 0 and broadcast, so every rank derives the same
 * k* and sweeps the same chunk counts.
 */
static void fit_link(const struct opts *o, uint8_t *buf, size_t max, int src,
		     struct hop_model_hop *med, struct hop_model_hop *min)
{
	const int one[] = { src, src + 1 };
	struct opts o1 = *o;
	double ms[33], ts[33], tm[33], ab[4] = { 0, 0, 0, 0 };
	long wrong;
	size_t n = 0;

	o1.hops = 1;
	for (size_t m = o->fit_from; m <= max && n < 32; m *= 4, n++) {
		ms[n] = (double)m;
		ts[n] = run_row(&o1, buf, m, one, HOP_RELAY_STORE_FORWARD, 1,
				&tm[n], &wrong);
	}
	if (o->fit_from > 4096)         /* alpha from a 4 KiB transfer */
		ts[n] = run_row(&o1, buf, 4096, one, HOP_RELAY_STORE_FORWARD, 1,
				&tm[n], &wrong);
	if (rank == 0) {
		fit_one("medians", src, ms, ts, n, ab);
		fit_one("minima", src, ms, tm, n, ab + 2);
		if (o->fit_from > 4096)
			small_alpha(ts[n], tm[n], ab);
	}
	CALL(hop_broadcast(comm, ab, 4, HOP_FLOAT64, 0));
	if (!(ab[1] > 0) || !(ab[3] > 0)) {
		if (rank == 0)
			fprintf(stderr, "hop-relay-bench: the one-hop fit found "
				"no bandwidth\n");
		exit(1);
	}
	*med = (struct hop_model_hop){ ab[0] * 1e-6, ab[1] * 1e6 };
	*min = (struct hop_model_hop){ ab[2] * 1e-6, ab[3] * 1e6 };
}

/* Every hop's link: fitted hop by hop with --per-hop, else all as 0 -> 1
 * (the model's uniform path). */
static void fit_path(const struct opts *o, uint8_t *buf, size_t max,
		     struct hop_model_hop *med, struct hop_model_hop *min)
{
	for (int i = 0; i < o->hops; i++) {
		if (i == 0 || o->per_hop) {
			fit_link(o, buf, max, i, &med[i], &min[i]);
		} else {
			med[i] = med[0];
			min[i] = min[0];
		}
	}
	if (o->per_hop && rank == 0) {
		double inv = 0;

		for (int i = 0; i < o->hops; i++)
			inv += 1 / med[i].beta;
		printf("# path of %d hops: harmonic beta_eff %.3f GB/s (the "
		       "store-and-forward model is h (alpha + m / beta_eff) "
		       "with the mean alpha)\n", o->hops, o->hops / inv / 1e9);
	}
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* The sweep of one size: --ks or the default ladder up to m / 4K, plus
 * @extra (k*, hop's default); sorted, unique. */
static int sweep_ks(const struct opts *o, size_t m, const long *extra,
		    int nextra, long *ks)
{
	static const long ladder[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48,
				       64, 96, 128, 192, 256 };
	int n = 0, u = 0;

	if (o->nks)
		for (int i = 0; i < o->nks; i++)
			ks[n++] = o->ks[i];
	else
		for (size_t i = 0; i < sizeof(ladder) / sizeof(ladder[0]); i++)
			if (ladder[i] == 1 || (size_t)ladder[i] * 4096 <= m)
				ks[n++] = ladder[i];
	for (int i = 0; i < nextra; i++)
		ks[n++] = extra[i];
	qsort(ks, (size_t)n, sizeof(*ks), cmp_long);
	for (int i = 0; i < n; i++)
		if (!u || ks[u - 1] != ks[i])
			ks[u++] = ks[i];
	return u;
}

struct size_result {
	long best_k, kopt, kdef;
	double best_t, t_kopt, t_kdef, err_kopt, err_max, err_max_min;
};

static double err_pct(double model, double meas)
{
	return 100 * (model - meas) / meas;
}

/* One table row at rank 0: measured median and minimum, each beside the
 * model of the matching fit. */
static void print_row(size_t m, const char *mode, long k, double t,
		      double tmin, double tm, double tm_min, long wrong,
		      const char *note)
{
	printf("%9zu %5s %5ld %9zu %10.1f %10.1f %+7.1f %10.1f %10.1f %+7.1f "
	       "%5ld%s\n", m, mode, k, (m + (size_t)k - 1) / (size_t)k, t, tm,
	       err_pct(tm, t), tmin, tm_min, err_pct(tm_min, tmin), wrong,
	       note);
}

static void bench_size(const struct opts *o, uint8_t *buf, size_t m,
		       const int *path, const struct hop_model_hop *med,
		       const struct hop_model_hop *min, double min_chunk)
{
	int h = o->hops, n;
	long ks[MAX_KS], wrong = 0;
	hop_relay_plan_t plan;
	struct size_result r = { .best_t = INFINITY };
	double dm = (double)m, tmin, t, tm, tmm;

	CALL(hop_relay_plan(comm, m, 0, h, path, h + 1, NULL, &plan));
	r.kopt = hop_model_path_kopt(med, h, dm, min_chunk);
	r.kdef = plan.chunks;
	n = sweep_ks(o, m, (long[]){ r.kopt, r.kdef }, 2, ks);
	if (rank == 0) {
		for (size_t i = 0; i < m; i++)
			buf[i] = pat(m, 0, i);
		printf("%9s %5s %5s %9s %10s %10s %7s %10s %10s %7s %5s\n",
		       "bytes", "mode", "k", "chunk", "T_med_us", "model_us",
		       "err%", "T_min_us", "model_us", "err%", "wrong");
	}
	t = run_row(o, buf, m, path, HOP_RELAY_STORE_FORWARD, 1, &tmin,
		    &wrong);
	if (rank == 0)
		print_row(m, "saf", 1, t, tmin,
			  hop_model_path_saf(med, h, dm) * 1e6,
			  hop_model_path_saf(min, h, dm) * 1e6, wrong, "");
	for (int i = 0; i < n; i++) {
		t = run_row(o, buf, m, path, HOP_RELAY_PIPELINED, ks[i],
			    &tmin, &wrong);
		if (rank != 0)
			continue;
		tm = hop_model_path_pipe(med, h, dm, ks[i]) * 1e6;
		tmm = hop_model_path_pipe(min, h, dm, ks[i]) * 1e6;
		print_row(m, "pipe", ks[i], t, tmin, tm, tmm, wrong,
			  ks[i] == r.kopt ? "  <- k*" : "");
		if (t < r.best_t)
			r.best_t = t, r.best_k = ks[i];
		if (ks[i] == r.kopt)
			r.t_kopt = t, r.err_kopt = err_pct(tm, t);
		if (ks[i] == r.kdef)
			r.t_kdef = t;
		r.err_max = fmax(r.err_max, fabs(err_pct(tm, t)));
		r.err_max_min = fmax(r.err_max_min, fabs(err_pct(tmm, tmin)));
	}
	if (rank != 0)
		return;
	printf("# %zu B, %d hops: measured best k %ld (%.1f us); model k* %ld "
	       "(real %.1f) measured %.1f us (%+.1f%% vs best), model error at "
	       "k* %+.1f%%; largest |error| %.1f%% (medians), %.1f%% (minima); "
	       "hop's default k %ld (%s) measured %.1f us\n", m, h, r.best_k,
	       r.best_t, r.kopt, hop_model_pipe_kreal(med->alpha, med->beta,
						      dm, h),
	       r.t_kopt, 100 * (r.t_kopt - r.best_t) / r.best_t, r.err_kopt,
	       r.err_max, r.err_max_min, r.kdef, plan.model, r.t_kdef);
}

int main(int argc, char **argv)
{
	struct hop_model_link def;
	struct opts o;
	int path[64], ret;
	size_t max = 0;
	struct hop_model_hop med[64], min[64];
	uint8_t *buf;

	if ((ret = parse(argc, argv, &o)))
		return ret;
	CALL(hop_comm_init_env(&comm));
	rank = hop_comm_rank(comm);
	nranks = hop_comm_size(comm);
	if (nranks < o.hops + 1) {
		fprintf(stderr, "hop-relay-bench: --hops %d needs %d ranks, "
			"have %d\n", o.hops, o.hops + 1, nranks);
		return 2;
	}
	for (int i = 0; i < o.nsizes; i++)
		max = o.sizes[i] > max ? o.sizes[i] : max;
	for (int i = 0; i <= o.hops; i++)
		path[i] = i;
	if (!(buf = malloc(max)))
		die("malloc", HOP_ERR_NO_MEMORY);
	if (hop_model_link_default(hop_prov_caps_of(hop_prov_find(
					   hop_comm_transport(comm))), &def))
		hop_model_link_generic(&def);
	memset(buf, 0, max);
	if (rank == 0)
		printf("# hop-relay-bench: %s, %d ranks, path 0..%d (%d hops), "
		       "%d iters + %d warmup\n",
		       hop_comm_transport(comm), nranks, o.hops, o.hops,
		       o.iters, o.warmup);
	fit_path(&o, buf, max, med, min);
	for (int i = 0; i < o.nsizes; i++)
		bench_size(&o, buf, o.sizes[i], path, med, min,
			   def.min_chunk);
	free(buf);
	CALL(hop_barrier(comm));
	CALL(hop_comm_destroy(comm));
	return 0;
}
