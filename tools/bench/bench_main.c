/*
 * bench_main.c - the benchmark loop shared by hop-bench and its MPI peers:
 * nccl-tests' columns (size, count, type, op, root, time, algbw, busbw,
 * #wrong) and bus-bandwidth factors, the same warm-up, iteration count and
 * timing (mean over iterations, max over ranks) for every backend.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tool_util.h"
#include "bench.h"
#include "bench_data.h"

static const char *const coll_names[BENCH_COLL_COUNT] = {
	"allreduce", "broadcast", "reduce", "allgather", "reducescatter",
	"alltoall", "gather", "scatter", "allgatherv", "reducescatterv"
};
static const char *const type_names[BT_COUNT] = {
	"int8", "uint8", "int32", "uint32", "int64", "uint64",
	"half", "bfloat16", "float", "double"
};
static const char *const op_names[BO_COUNT] = {
	"sum", "prod", "min", "max", "avg"
};

struct bench_opts {
	enum bench_coll coll;
	size_t min_bytes, max_bytes;
	double factor;
	enum bench_type type;
	enum bench_op op;
	int root, inplace, check, iters, warmup, first, plan;
	double budget_ms;
	const char *algo, *json;
};

static int lookup(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s allreduce|broadcast|reduce|allgather|reducescatter|alltoall\n"
		"         [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-t TYPE] [-o OP]\n"
		"         [--root R] [--algo X] [--inplace] [--check]\n"
		"         [--iters N] [--warmup N] [--first N] [--json FILE]\n"
		"         [--budget-ms MS] [--plan]\n"
		"sizes accept K/M/G; TYPE: int8 uint8 int32 uint32 int64 uint64\n"
		"half bfloat16 float double; OP: sum prod min max avg.\n"
		"For allgather and reducescatter the size is the whole gathered\n"
		"buffer (N blocks), for alltoall a rank's whole send buffer (N\n"
		"blocks, one per peer), as in nccl-tests. --first N prints the\n"
		"times of the first N calls of the first size, one by one.\n"
		"--budget-ms MS: at most --iters timed calls per size (and\n"
		"--warmup warm-up calls), fewer when they would take longer\n"
		"than MS; the first warm-up call, timed, decides.\n"
		"--plan: a line '# plan BYTES ...' before each size with what\n"
		"the library runs (algorithm, phases, chunk, predicted us).\n", prog);
}

static int parse_args(int argc, char **argv, struct bench_opts *o,
		      const char **why)
{
	static const struct option longopts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "algo", required_argument, NULL, 'a' },
		{ "inplace", no_argument, NULL, 'I' },
		{ "check", no_argument, NULL, 'c' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "json", required_argument, NULL, 'J' },
		{ "first", required_argument, NULL, 'F' },
		{ "budget-ms", required_argument, NULL, 'B' },
		{ "plan", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (struct bench_opts){ .min_bytes = 8, .max_bytes = 64u << 20,
		.factor = 2, .type = BT_FLOAT, .op = BO_SUM, .iters = 20,
		.warmup = 5 };
	while ((c = getopt_long(argc, argv, "b:e:f:t:o:r:a:n:w:ch", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'b': if (!tool_parse_size(optarg, &o->min_bytes)) return *why = "bad -b size", -1; break;
		case 'e': if (!tool_parse_size(optarg, &o->max_bytes)) return *why = "bad -e size", -1; break;
		case 'f': o->factor = atof(optarg); if (o->factor <= 1) return *why = "-f must be > 1", -1; break;
		case 't': if ((c = lookup(optarg, type_names, BT_COUNT)) < 0) return *why = "unknown -t type", -1; o->type = c; break;
		case 'o': if ((c = lookup(optarg, op_names, BO_COUNT)) < 0) return *why = "unknown -o op", -1; o->op = c; break;
		case 'r': o->root = atoi(optarg); if (o->root < 0) return *why = "--root must be >= 0", -1; break;
		case 'a': o->algo = optarg; break;
		case 'I': o->inplace = 1; break;
		case 'c': o->check = 1; break;
		case 'n': o->iters = atoi(optarg); if (o->iters < 1) return *why = "--iters must be >= 1", -1; break;
		case 'w': o->warmup = atoi(optarg); if (o->warmup < 0) return *why = "--warmup must be >= 0", -1; break;
		case 'J': o->json = optarg; break;
		case 'F': o->first = atoi(optarg); if (o->first < 0 || o->first > 1000) return *why = "--first must be 0..1000", -1; break;
		case 'B': o->budget_ms = atof(optarg); if (!(o->budget_ms > 0)) return *why = "--budget-ms must be > 0", -1; break;
		case 'P': o->plan = 1; break;
		case 'h': usage(stdout, argv[0]); exit(0);
		default: return *why = "unknown option", -1;
		}
	}
	if (optind >= argc)
		return *why = "missing collective name", -1;
	if ((c = lookup(argv[optind], coll_names, BENCH_COLL_COUNT)) < 0)
		return *why = "unknown collective", -1;
	o->coll = c;
	if (o->min_bytes > o->max_bytes)
		return *why = "-b larger than -e", -1;
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* nccl-tests' bus bandwidth factors */
static double bus_factor(enum bench_coll c, int n)
{
	switch (c) {
	case BENCH_ALLREDUCE: return 2.0 * (n - 1) / n;
	case BENCH_ALLGATHER: case BENCH_REDUCESCATTER: case BENCH_ALLTOALL:
	case BENCH_GATHER: case BENCH_SCATTER:
	case BENCH_ALLGATHERV: case BENCH_REDUCESCATTERV: return (double)(n - 1) / n;
	default: return 1.0;
	}
}

/* Gathers: each rank's block goes to N blocks (allgather, gather,
 * allgatherv); scatters the reverse (reducescatter, scatter,
 * reducescatterv). */
static int gathers(enum bench_coll c)
{
	return c == BENCH_ALLGATHER || c == BENCH_GATHER || c == BENCH_ALLGATHERV;
}

static int scatters(enum bench_coll c)
{
	return c == BENCH_REDUCESCATTER || c == BENCH_SCATTER ||
	       c == BENCH_REDUCESCATTERV;
}

static int rooted(enum bench_coll c)
{
	return c == BENCH_BROADCAST || c == BENCH_REDUCE || c == BENCH_GATHER ||
	       c == BENCH_SCATTER;
}

/* per-rank element counts: @count is the column nccl-tests prints */
struct sizes { size_t count, send, recv; };

static struct sizes sizes_for(enum bench_coll c, size_t bytes, size_t ts, int n)
{
	size_t count = bytes / ts, block = count / (size_t)n;

	if (c == BENCH_ALLTOALL)
		return (struct sizes){ block * n, block * n, block * n };
	if (gathers(c))
		return (struct sizes){ block * n, block, block * n };
	if (scatters(c))
		return (struct sizes){ block * n, block * n, block };
	return (struct sizes){ count, count, count };
}

struct bufs { char *sbuf, *rbuf, *send, *recv; };

static void place(const struct bench_opts *o, struct bufs *b, size_t ts,
		  struct sizes sz, int rank)
{
	b->send = b->sbuf;
	b->recv = b->rbuf;
	if (o->coll == BENCH_BROADCAST) /* one buffer: in place by nature */
		b->send = b->rbuf;
	if (!o->inplace)
		return;
	if (gathers(o->coll))
		b->send = b->rbuf + (size_t)rank * sz.send * ts;
	else if (scatters(o->coll))
		b->recv = b->sbuf + (size_t)rank * sz.recv * ts;
	else
		b->send = b->recv = b->rbuf;
}

static void fill(const struct bench_opts *o, const struct bufs *b,
		 struct sizes sz, int rank, int n)
{
	enum bench_type t = o->type;
	size_t ts = bench_type_size(t);

	memset(b->rbuf, 0xa5, sz.recv * ts);
	for (size_t i = 0; i < sz.send; i++) {
		double v = bench_input(o->op, n, rank, i);
		if (o->coll == BENCH_BROADCAST)
			v = rank == o->root ? bench_input(o->op, n, o->root, i) : 0;
		else if (o->coll == BENCH_SCATTER) /* only the root's is sent */
			v = bench_input(o->op, n, o->root, i);
		bench_set(t, b->send, i, v);
	}
}

static long count_wrong(const struct bench_opts *o, const struct bufs *b,
			struct sizes sz, int rank, int n)
{
	enum bench_type t = o->type;
	long wrong = 0;

	if ((o->coll == BENCH_REDUCE || o->coll == BENCH_GATHER) &&
	    rank != o->root)
		return 0;
	for (size_t i = 0; i < sz.recv; i++) {
		double want;
		switch (o->coll) {
		case BENCH_BROADCAST: want = bench_input(o->op, n, o->root, i); break;
		case BENCH_ALLGATHER: case BENCH_GATHER: case BENCH_ALLGATHERV:
			want = bench_input(o->op, n, (int)(i / sz.send), i % sz.send); break;
		case BENCH_REDUCESCATTER: case BENCH_REDUCESCATTERV:
			want = bench_expected(t, o->op, n, (size_t)rank * sz.recv + i); break;
		case BENCH_SCATTER:
			want = bench_input(o->op, n, o->root, (size_t)rank * sz.recv + i); break;
		case BENCH_ALLTOALL: { /* block q: rank q's elements for this rank */
			size_t blk = sz.count / (size_t)n;
			want = bench_input(o->op, n, (int)(i / blk), (size_t)rank * blk + i % blk);
			break;
		}
		default: want = bench_expected(t, o->op, n, i); break;
		}
		wrong += !bench_matches(t, o->op, bench_get(t, b->recv, i), want);
	}
	return wrong;
}

static int bench_nranks = 1; /* alltoall's count: per peer */

/* The count argument of the collective call at these sizes. */
static size_t call_count(const struct bench_opts *o, struct sizes sz)
{
	return gathers(o->coll) ? sz.send :
	       scatters(o->coll) ? sz.recv :
	       o->coll == BENCH_ALLTOALL ? sz.count / (size_t)bench_nranks : sz.count;
}

static const char *run_once(const struct bench_backend *be,
			    const struct bench_opts *o, const struct bufs *b,
			    struct sizes sz)
{
	return be->run(o->coll, b->send, b->recv, call_count(o, sz), o->type,
		       o->op, o->root, o->inplace);
}

struct row { size_t bytes, count; double us, algbw, busbw; long wrong; };

static void print_row(const struct bench_opts *o, const struct row *r)
{
	int root = rooted(o->coll) ? o->root : -1;
	const char *op = o->coll == BENCH_ALLREDUCE || o->coll == BENCH_REDUCE ||
			 o->coll == BENCH_REDUCESCATTER ||
			 o->coll == BENCH_REDUCESCATTERV ? op_names[o->op] : "none";

	printf("%12zu %12zu %8s %6s %5d %11.2f %12.3f %12.3f %7ld\n", r->bytes,
	       r->count, type_names[o->type], op, root, r->us, r->algbw,
	       r->busbw, r->wrong);
	fflush(stdout);
}

/* @s as the body of a JSON string: a library's version text may hold
 * tabs or quotes (MPICH's does). */
static void json_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\t')
			fputc(' ', f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
}

static void write_json(const struct bench_opts *o, const char *label,
		       int n, const struct row *rows, int nrows)
{
	FILE *f = fopen(o->json, "w");

	if (!f) {
		fprintf(stderr, "hop-bench: cannot write %s: %s\n", o->json, strerror(errno));
		return;
	}
	fprintf(f, "{\n  \"collective\": \"%s\", \"backend\": \"",
		coll_names[o->coll]);
	json_escaped(f, label);
	fprintf(f, "\", \"nranks\": %d,\n"
		"  \"type\": \"%s\", \"op\": \"%s\", \"root\": %d, \"inplace\": %d,\n"
		"  \"iters\": %d, \"warmup\": %d,\n  \"results\": [\n",
		n, type_names[o->type], op_names[o->op],
		o->root, o->inplace, o->iters, o->warmup);
	for (int i = 0; i < nrows; i++)
		fprintf(f, "    {\"size\": %zu, \"count\": %zu, \"time_us\": %.3f, "
			"\"algbw\": %.4f, \"busbw\": %.4f, \"wrong\": %ld}%s\n",
			rows[i].bytes, rows[i].count, rows[i].us, rows[i].algbw,
			rows[i].busbw, rows[i].wrong, i + 1 < nrows ? "," : "");
	fprintf(f, "  ]\n}\n");
	fclose(f);
}

static int fail(const struct bench_backend *be, int rank, const char *what,
		const char *msg)
{
	fprintf(stderr, "%s: rank %d: %s: %s\n", be->name, rank, what, msg);
	be->fini();
	return 1;
}

/* The first @o->first calls after init, each timed alone (max over
 * ranks): what a program that calls a collective a few times sees. */
static const char *time_first(const struct bench_backend *be,
			      const struct bench_opts *o, const struct bufs *b,
			      struct sizes sz, int rank)
{
	const char *err;

	if ((err = be->barrier()))
		return err;
	if (rank == 0)
		printf("# first %d calls (us):", o->first);
	for (int i = 0; i < o->first; i++) {
		double t0 = now_us();
		if ((err = run_once(be, o, b, sz)))
			return err;
		double us = be->max_double(now_us() - t0);
		if (rank == 0)
			printf(" %.2f", us);
	}
	if (rank == 0)
		printf("\n");
	return NULL;
}

/* --plan: what the library runs at this size, before its row. */
static const char *print_plan(const struct bench_backend *be,
			      const struct bench_opts *o, struct sizes sz)
{
	char buf[256];
	const char *err = be->plan(o->coll, call_count(o, sz), o->type, buf,
				   sizeof(buf));

	if (err)
		return err;
	printf("# plan %zu %s\n", sz.count * bench_type_size(o->type), buf);
	return NULL;
}

/* Calls that fit in --budget-ms at this size: one call is timed (its
 * slowest rank, so every rank counts alike); at least 1, at most @most. */
static const char *fit_budget(const struct bench_backend *be,
			      const struct bench_opts *o, const struct bufs *b,
			      struct sizes sz, int most, int *n)
{
	const char *err;
	double t0, one, budget_us = o->budget_ms * 1e3;

	if ((err = be->barrier()))
		return err;
	t0 = now_us();
	if ((err = run_once(be, o, b, sz)))
		return err;
	one = be->max_double(now_us() - t0);
	*n = one * most <= budget_us ? most
	     : one >= budget_us ? 1 : (int)(budget_us / one);
	return NULL;
}

/* Time one size: warm-up, then the mean of the calls, max over ranks.
 * With --budget-ms, the first warm-up call sizes both the rest of the
 * warm-up and the timed calls, so a 64 MiB call is not run 25 times. */
static const char *time_size(const struct bench_backend *be,
			     const struct bench_opts *o, const struct bufs *b,
			     struct sizes sz, double *us)
{
	const char *err;
	int warmup = o->warmup, iters = o->iters;

	if (o->budget_ms > 0) {
		if ((err = fit_budget(be, o, b, sz, iters, &iters)))
			return err;
		warmup = warmup > 1 ? (warmup - 1 < iters ? warmup - 1 : iters)
				    : 0;
	}
	for (int i = 0; i < warmup; i++)
		if ((err = run_once(be, o, b, sz)))
			return err;
	if ((err = be->barrier()))
		return err;
	double t0 = now_us();
	for (int i = 0; i < iters; i++)
		if ((err = run_once(be, o, b, sz)))
			return err;
	*us = be->max_double((now_us() - t0) / iters);
	return NULL;
}

int bench_main(const struct bench_backend *be, int argc, char **argv)
{
	struct bench_opts o;
	struct bufs b = { 0 };
	struct row rows[64];
	int rank, n, nrows = 0;
	const char *err;

	/* arguments first: an algorithm choice must be known before init */
	if (parse_args(argc, argv, &o, &err)) {
		fprintf(stderr, "%s: %s\n", be->name, err);
		usage(stderr, argv[0]);
		return 2;
	}
	if (o.algo && (err = be->set_algo(o.coll, o.algo))) {
		fprintf(stderr, "%s: --algo %s: %s\n", be->name, o.algo, err);
		return 2;
	}
	if ((err = be->init(&argc, &argv, &rank, &n))) {
		fprintf(stderr, "%s: %s\n", be->name, err);
		return 1;
	}
	bench_nranks = n;
	if (o.root >= n)
		return fail(be, rank, "--root", "out of range for this number of ranks");
	if (o.plan && !be->plan)
		return fail(be, rank, "--plan", "this backend cannot say what it runs");
	if ((err = be->supports(o.coll, o.type, o.op, o.inplace)))
		return fail(be, rank, "unsupported", err);

	size_t ts = bench_type_size(o.type);
	struct sizes big = sizes_for(o.coll, o.max_bytes, ts, n);
	b.sbuf = malloc(big.send * ts + 64);
	b.rbuf = malloc(big.recv * ts + 64);
	if (!b.sbuf || !b.rbuf)
		return fail(be, rank, "malloc", "out of memory for the buffers");
	if (rank == 0) {
		printf("# %s %s: %d ranks, %s, type %s, op %s, root %d, iters %d, warmup %d, in-place %d\n",
		       be->name, coll_names[o.coll], n, be->label(), type_names[o.type],
		       op_names[o.op], o.root, o.iters, o.warmup, o.inplace);
		printf("# %10s %12s %8s %6s %5s %11s %12s %12s %7s\n", "size", "count",
		       "type", "redop", "root", "time(us)", "algbw(GB/s)",
		       "busbw(GB/s)", "#wrong");
	}
	double bw_sum = 0;
	long wrong_total = 0;
	for (size_t bytes = o.min_bytes; bytes <= o.max_bytes && nrows < 64;) {
		struct sizes sz = sizes_for(o.coll, bytes, ts, n);
		struct row r = { .bytes = sz.count * ts, .count = sz.count };
		place(&o, &b, ts, sz, rank);
		fill(&o, &b, sz, rank, n);
		if (o.plan && rank == 0 && (err = print_plan(be, &o, sz)))
			return fail(be, rank, "--plan", err);
		if (!nrows && o.first && (err = time_first(be, &o, &b, sz, rank)))
			return fail(be, rank, "first calls", err);
		if ((err = time_size(be, &o, &b, sz, &r.us)))
			return fail(be, rank, "collective", err);
		if (o.check) {
			fill(&o, &b, sz, rank, n);
			if ((err = run_once(be, &o, &b, sz)))
				return fail(be, rank, "check run", err);
			r.wrong = be->sum_long(count_wrong(&o, &b, sz, rank, n));
			wrong_total += r.wrong;
		} else {
			r.wrong = -1;
		}
		r.algbw = r.us > 0 ? r.bytes / r.us / 1e3 : 0;
		r.busbw = r.algbw * bus_factor(o.coll, n);
		bw_sum += r.busbw;
		rows[nrows++] = r;
		if (rank == 0)
			print_row(&o, &r);
		size_t next = (size_t)(bytes * o.factor);
		bytes = next > bytes ? next : bytes + 1;
	}
	if (rank == 0) {
		printf("# Out of bounds values : %ld %s\n", o.check ? wrong_total : 0,
		       o.check ? (wrong_total ? "FAILED" : "OK") : "(not checked)");
		printf("# Avg bus bandwidth    : %.3f GB/s\n", nrows ? bw_sum / nrows : 0);
		if (o.json)
			write_json(&o, be->label(), n, rows, nrows);
	}
	free(b.sbuf);
	free(b.rbuf);
	be->fini();
	return wrong_total ? 1 : 0;
}
