/*
 * hop-p2p-bench - point-to-point latency and streaming bandwidth between
 * two ranks, the baseline the collective benchmarks are compared with.
 *
 * Latency: ping-pong (rank 0 sends, rank 1 answers with the same size);
 * each sample is half a round trip; min / median / p99 over --iters
 * samples after --warmup untimed round trips.
 * Bandwidth (streaming, ib_write_bw's method): rank 0 keeps W
 * hop_isend()s in flight and posts the next one as soon as the oldest
 * completes, rank 1 does the same with hop_irecv()s, until M messages went;
 * then rank 1 answers with a 0-byte ack. Bandwidth = M x bytes / (time from
 * the first timed isend to the ack), after 2 untimed messages (which also
 * register both buffers, as perftest does before it starts its clock).
 * The window never drains between messages, so the link never idles on
 * a handshake.
 * Put (--put, ib_write_bw's method with one-sided writes): both ranks
 * register their whole buffer with hop_mem_register() before any clock
 * starts (rank 1's for HOP_ACCESS_REMOTE_WRITE, its key sent to rank 0);
 * rank 0 keeps W hop_iput()s of immediate i (the message number) into
 * rank 1's region in flight, starting the next as the oldest completes,
 * until M went; rank 1 takes the M immediates with hop_wait_imm(), checks
 * their order, then answers with a 0-byte ack that stops rank 0's clock.
 * Same M and W as the bandwidth column; 2 untimed puts first.
 *
 * Run: hop-run -n 2 hop-p2p-bench [--min B] [--max B] [--iters N]
 *      [--warmup N] [--window W] [--bw-msgs M] [--json FILE]
 *      [--samples FILE] [--put]
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/hop.h>

#include "tool_util.h"

#define TAG_LAT 1
#define TAG_BW 2
#define TAG_ACK 3
#define TAG_KEY 4
#define WINDOW_MAX 1024

struct opts {
	size_t min, max;
	int iters, warmup, window, bw_msgs;
	const char *json, *samples;
	int lat, bw, put;
};

struct row {
	size_t bytes;
	int lat_iters, bw_msgs, window;
	double lat_min, lat_med, lat_p99, bw_mbps, put_mbps;
};

/* --put: this rank's registered buffer (sbuf on rank 0, rbuf on rank 1)
 * and rank 1's key. */
struct put_ctx {
	hop_mr_t *mr;
	hop_rkey_t rkey;
};

static hop_comm_t *comm;
static int rank;
static FILE *samples_out;       /* --samples, rank 0 */

static void die(const char *what, int ret)
{
	fprintf(stderr, "hop-p2p-bench rank %d: %s: %s: %s\n", rank, what,
		hop_err_name(ret), hop_comm_last_error(comm));
	exit(1);
}

#define CALL(x)                                                               \
	do {                                                                  \
		int r_ = (x);                                                 \
		if (r_)                                                       \
			die(#x, r_);                                          \
	} while (0)

static void usage(FILE *f)
{
	fprintf(f,
"usage: hop-run -n 2 hop-p2p-bench [options]\n"
"  --min BYTES     smallest size (default 1; K, M, G suffixes)\n"
"  --max BYTES     largest size (default 64M); sizes double from --min\n"
"  --iters N       timed ping-pongs per size (default 1000; fewer above 64K)\n"
"  --warmup N      untimed ping-pongs per size (default 100)\n"
"  --window W      isends in flight for bandwidth (default 64)\n"
"  --bw-msgs M     messages per bandwidth size (default: 64 MiB / size,\n"
"                  at most iters / 10 windows, at least 3)\n"
"  --no-lat        bandwidth only      --no-bw   latency only\n"
"  --put           also stream hop_iput()s into rank 1's registered buffer\n"
"                  (same window and message count as the bandwidth)\n"
"  --json FILE     also write the table as JSON (rank 0)\n"
"  --samples FILE  also write every timed half round trip, one \"bytes us\"\n"
"                  line each in the order measured (rank 0)\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "min", required_argument, NULL, 'b' },
		{ "max", required_argument, NULL, 'e' },
		{ "iters", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "window", required_argument, NULL, 'W' },
		{ "bw-msgs", required_argument, NULL, 'M' },
		{ "json", required_argument, NULL, 'j' },
		{ "samples", required_argument, NULL, 's' },
		{ "no-lat", no_argument, NULL, 'L' },
		{ "no-bw", no_argument, NULL, 'B' },
		{ "put", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, li = 0;

	*o = (struct opts){ 1, 64u << 20, 1000, 100, 64, 0, NULL, NULL, 1, 1, 0 };
	while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
		int ok = 1;

		switch (c) {
		case 'b': ok = tool_parse_size(optarg, &o->min); break;
		case 'e': ok = tool_parse_size(optarg, &o->max); break;
		case 'n': ok = tool_parse_int(optarg, 1, 100000000, &o->iters); break;
		case 'w': ok = tool_parse_int(optarg, 0, 100000000, &o->warmup); break;
		case 'W': ok = tool_parse_int(optarg, 1, WINDOW_MAX, &o->window); break;
		case 'M': ok = tool_parse_int(optarg, 1, 100000000, &o->bw_msgs); break;
		case 'j': o->json = optarg; break;
		case 's': o->samples = optarg; break;
		case 'L': o->lat = 0; break;
		case 'B': o->bw = 0; break;
		case 'P': o->put = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
		if (!ok) {
			fprintf(stderr, "hop-p2p-bench: bad value '%s' for "
				"--%s\n", optarg, lo[li].name);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "hop-p2p-bench: unexpected argument '%s'\n",
			argv[optind]);
		return 2;
	}
	if (o->max < o->min || o->max > (1ull << 32)) {
		fprintf(stderr, "hop-p2p-bench: need --min <= --max <= 4G\n");
		return 2;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Fewer round trips for big messages: about the time of 64 KiB x iters. */
static int scaled(int iters, size_t bytes, int floor)
{
	double f = bytes > 65536 ? 65536.0 / (double)bytes : 1.0;
	int n = (int)(iters * f);

	return n < floor ? floor : n;
}

static void latency(const struct opts *o, size_t n, void *sbuf, void *rbuf,
		    double *samples, struct row *row)
{
	int iters = scaled(o->iters, n, 20), warm = scaled(o->warmup, n, 2);
	int peer = 1 - rank;

	for (int i = -warm; i < iters; i++) {
		double t0 = tool_now_us();

		if (rank == 0) {
			CALL(hop_send(comm, sbuf, n, peer, TAG_LAT));
			CALL(hop_recv(comm, rbuf, n, peer, TAG_LAT, NULL));
		} else {
			CALL(hop_recv(comm, rbuf, n, peer, TAG_LAT, NULL));
			CALL(hop_send(comm, sbuf, n, peer, TAG_LAT));
		}
		if (i >= 0)
			samples[i] = (tool_now_us() - t0) / 2;
	}
	for (int i = 0; samples_out && i < iters; i++)
		fprintf(samples_out, "%zu %.3f\n", n, samples[i]);
	qsort(samples, (size_t)iters, sizeof(double), cmp_double);
	row->lat_iters = iters;
	row->lat_min = samples[0];
	row->lat_med = samples[iters / 2];
	row->lat_p99 = samples[(int)((iters - 1) * 0.99)];
}

/* Post the next message of the stream (rank 0 sends, rank 1 receives). */
static void bw_post(size_t n, void *sbuf, void *rbuf, hop_request_t **req)
{
	int peer = 1 - rank;

	if (rank == 0)
		CALL(hop_isend(comm, sbuf, n, peer, TAG_BW, req));
	else
		CALL(hop_irecv(comm, rbuf, n, peer, TAG_BW, req));
}

/* @msgs messages of @n bytes, @w in flight, refilled as each completes;
 * ends with rank 1's ack, so both ranks leave it together. */
static void bw_stream(size_t n, void *sbuf, void *rbuf, int msgs, int w)
{
	hop_request_t *req[WINDOW_MAX];
	int peer = 1 - rank, posted = 0;

	if (w > msgs)
		w = msgs;
	for (; posted < w; posted++)
		bw_post(n, sbuf, rbuf, &req[posted]);
	for (int done = 0; done < msgs; done++) {
		int k = done % w;

		CALL(hop_wait(&req[k], NULL));
		if (posted < msgs) {
			bw_post(n, sbuf, rbuf, &req[k]);
			posted++;
		}
	}
	if (rank == 0)
		CALL(hop_recv(comm, NULL, 0, peer, TAG_ACK, NULL));
	else
		CALL(hop_send(comm, NULL, 0, peer, TAG_ACK));
}

/* Messages per streamed size: --bw-msgs, else about 64 MiB, at most
 * iters / 10 windows' worth, at least 3. */
static int stream_msgs(const struct opts *o, size_t n)
{
	size_t m = (64u << 20) / (n ? n : 1);
	size_t cap = (size_t)(o->iters / 10 > 10 ? o->iters / 10 : 10) *
		     (size_t)o->window;

	if (o->bw_msgs)
		return o->bw_msgs;
	m = m > cap ? cap : m;
	return m < 3 ? 3 : (int)m;
}

static void bandwidth(const struct opts *o, size_t n, void *sbuf, void *rbuf,
		      struct row *row)
{
	int w = o->window, msgs = stream_msgs(o, n);
	double t0;

	if (w > msgs)
		w = msgs;
	bw_stream(n, sbuf, rbuf, 2, 2);         /* untimed: registration */
	t0 = tool_now_us();
	bw_stream(n, sbuf, rbuf, msgs, w);
	row->window = w;
	row->bw_msgs = msgs;
	row->bw_mbps = (double)n * msgs / (tool_now_us() - t0);
}

/* Register this rank's buffer; rank 1 sends its key to rank 0. */
static void put_setup(size_t len, void *sbuf, void *rbuf, struct put_ctx *pc)
{
	int peer = 1 - rank;

	memset(pc, 0, sizeof(*pc));
	if (rank == 0) {
		CALL(hop_mem_register(comm, sbuf, len, HOP_ACCESS_LOCAL,
				      &pc->mr));
		CALL(hop_recv(comm, &pc->rkey, sizeof(pc->rkey), peer, TAG_KEY,
			      NULL));
	} else {
		CALL(hop_mem_register(comm, rbuf, len, HOP_ACCESS_REMOTE_WRITE,
				      &pc->mr));
		CALL(hop_mr_rkey(pc->mr, &pc->rkey));
		CALL(hop_send(comm, &pc->rkey, sizeof(pc->rkey), peer,
			      TAG_KEY));
	}
}

/* @msgs puts of @n bytes, @w in flight; rank 1 takes the immediates (in
 * order: 0, 1, ...) and acks the last. */
static void put_stream(size_t n, void *sbuf, struct put_ctx *pc, int msgs,
		       int w)
{
	hop_request_t *req[WINDOW_MAX];
	int peer = 1 - rank, posted = 0;
	uint32_t imm;

	if (rank == 1) {
		for (int i = 0; i < msgs; i++) {
			CALL(hop_wait_imm(comm, peer, &imm, NULL, NULL));
			if (imm != (uint32_t)i) {
				fprintf(stderr, "hop-p2p-bench rank 1: put %d "
					"delivered immediate %u\n", i, imm);
				exit(1);
			}
		}
		CALL(hop_send(comm, NULL, 0, peer, TAG_ACK));
		return;
	}
	if (w > msgs)
		w = msgs;
	for (; posted < w; posted++)
		CALL(hop_iput(comm, pc->mr, sbuf, n, &pc->rkey, 0,
			      (uint32_t)posted, &req[posted]));
	for (int done = 0; done < msgs; done++) {
		int k = done % w;

		CALL(hop_wait(&req[k], NULL));
		if (posted < msgs) {
			CALL(hop_iput(comm, pc->mr, sbuf, n, &pc->rkey, 0,
				      (uint32_t)posted, &req[k]));
			posted++;
		}
	}
	CALL(hop_recv(comm, NULL, 0, peer, TAG_ACK, NULL));
}

static void put_bandwidth(const struct opts *o, size_t n, void *sbuf,
			  struct put_ctx *pc, struct row *row)
{
	int w = o->window, msgs = stream_msgs(o, n);
	double t0;

	if (w > msgs)
		w = msgs;
	put_stream(n, sbuf, pc, 2, 2);          /* untimed */
	t0 = tool_now_us();
	put_stream(n, sbuf, pc, msgs, w);
	row->window = w;
	row->bw_msgs = msgs;
	row->put_mbps = (double)n * msgs / (tool_now_us() - t0);
}

static void print_row(const struct opts *o, const struct row *r)
{
	printf("%12zu", r->bytes);
	if (o->lat)
		printf(" %12.2f %12.2f %12.2f", r->lat_min, r->lat_med,
		       r->lat_p99);
	if (o->bw)
		printf(" %12.1f", r->bw_mbps);
	if (o->put)
		printf(" %12.1f", r->put_mbps);
	printf("\n");
	fflush(stdout);
}

static int write_json(const struct opts *o, const struct row *rows, int n)
{
	FILE *f = fopen(o->json, "w");

	if (!f) {
		fprintf(stderr, "hop-p2p-bench: cannot write %s: %s\n",
			o->json, strerror(errno));
		return 1;
	}
	fprintf(f, "{\n  \"tool\": \"hop-p2p-bench\",\n  \"version\": \"%s\",\n"
		"  \"provider\": \"%s\",\n  \"ranks\": 2,\n  \"results\": [\n",
		hop_version(), hop_comm_transport(comm));
	for (int i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(f, "    {\"bytes\": %zu", r->bytes);
		if (o->lat)
			fprintf(f, ", \"lat_iters\": %d, \"lat_min_us\": %.3f, "
				"\"lat_median_us\": %.3f, \"lat_p99_us\": %.3f",
				r->lat_iters, r->lat_min, r->lat_med,
				r->lat_p99);
		if (o->bw || o->put)
			fprintf(f, ", \"bw_window\": %d, \"bw_msgs\": %d",
				r->window, r->bw_msgs);
		if (o->bw)
			fprintf(f, ", \"bw_MBps\": %.1f", r->bw_mbps);
		if (o->put)
			fprintf(f, ", \"put_MBps\": %.1f", r->put_mbps);
		fprintf(f, "}%s\n", i + 1 < n ? "," : "");
	}
	fprintf(f, "  ]\n}\n");
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct row rows[64];
	struct put_ctx pc = { NULL, { 0 } };
	struct opts o;
	double *samples;
	void *sbuf, *rbuf;
	int ret, nrows = 0, status = 0;

	if ((ret = parse(argc, argv, &o)))
		return ret;
	if ((ret = hop_comm_init_env(&comm))) {
		fprintf(stderr, "hop-p2p-bench: hop_comm_init_env: %s: %s\n",
			hop_err_name(ret), hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	if (hop_comm_size(comm) != 2) {
		if (rank == 0)
			fprintf(stderr, "hop-p2p-bench: needs exactly 2 ranks "
				"(hop-run -n 2), got %d\n",
				hop_comm_size(comm));
		hop_comm_destroy(comm);
		return 2;
	}
	sbuf = malloc(o.max ? o.max : 1);
	rbuf = malloc(o.max ? o.max : 1);
	/* latency() times at least 20 round trips (scaled()'s floor) */
	samples = malloc(sizeof(double) * (size_t)(o.iters > 20 ? o.iters : 20));
	if (!sbuf || !rbuf || !samples) {
		fprintf(stderr, "hop-p2p-bench: out of memory\n");
		return 1;
	}
	memset(sbuf, rank + 1, o.max);
	memset(rbuf, 0, o.max);
	if (rank == 0 && o.samples && !(samples_out = fopen(o.samples, "w"))) {
		/* the peer's next wait fails when this rank is gone */
		fprintf(stderr, "hop-p2p-bench: cannot write %s: %s\n",
			o.samples, strerror(errno));
		exit(1);
	}
	if (rank == 0) {
		printf("# hop-p2p-bench %s: 2 ranks on %s; latency = half round "
		       "trip (us), bandwidth (put) = window of %d isends "
		       "(iputs) (MB/s = "
		       "1e6 B/s)\n", hop_version(), hop_comm_transport(comm),
		       o.window);
		printf("%12s", "bytes");
		if (o.lat)
			printf(" %12s %12s %12s", "lat_min_us", "lat_med_us",
			       "lat_p99_us");
		if (o.bw)
			printf(" %12s", "bw_MBps");
		if (o.put)
			printf(" %12s", "put_MBps");
		printf("\n");
	}
	if (o.put)
		put_setup(o.max ? o.max : 1, sbuf, rbuf, &pc);
	for (size_t n = o.min; n <= o.max && nrows < 64; n = n ? n * 2 : 1) {
		struct row *r = &rows[nrows++];

		memset(r, 0, sizeof(*r));
		r->bytes = n;
		if (o.lat)
			latency(&o, n, sbuf, rbuf, samples, r);
		if (o.bw)
			bandwidth(&o, n, sbuf, rbuf, r);
		if (o.put)
			put_bandwidth(&o, n, sbuf, &pc, r);
		if (rank == 0)
			print_row(&o, r);
	}
	if (rank == 0 && o.json)
		status = write_json(&o, rows, nrows);
	if (samples_out && fclose(samples_out)) {
		fprintf(stderr, "hop-p2p-bench: cannot write %s: %s\n",
			o.samples, strerror(errno));
		status = 1;
	}
	if (pc.mr)
		CALL(hop_mem_deregister(comm, pc.mr));
	free(samples);
	free(sbuf);
	free(rbuf);
	hop_comm_destroy(comm);
	return status;
}
