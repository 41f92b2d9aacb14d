/*
 * duplex_xchg.c - 2 ranks: one direction alone vs both at once.
 *
 *   duplex_xchg MIB ITERS
 *
 * Times, alternately, rank 0 sending MIB MiB to rank 1 ("one way") and
 * both ranks sending MIB MiB to each other at once ("both ways"), ITERS
 * times each after one untimed round, and prints (rank 0)
 *
 *   duplex: one way MED ms, both ways MED ms
 *
 * with the medians. On a full-duplex link both take the same time.
 * In "both ways" rank 1 posts its receive, then its send 2 ms later while
 * it keeps polling: rank 1's clear-to-send reaches rank 0 before rank 1's
 * own request to send, so rank 0 is already writing when it answers
 * rank 1. That answer must not wait behind rank 0's whole message (a
 * rank that is a little late is the common case of a real exchange).
 * Every received byte is checked; a wrong one fails the run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/hop.h>

#define MAX_ITERS 64
#define LATE_NS 2000000ull     /* rank 1's send in "both ways" lags 2 ms */

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static unsigned char pattern(int rank, size_t i, int round)
{
	return (unsigned char)(i * 131u + (size_t)rank * 17u + (size_t)round);
}

static int fail(const char *what, int ret)
{
	fprintf(stderr, "duplex_xchg: %s: %s\n", what, hop_strerror(ret));
	return 1;
}

/* Poll @req for LATE_NS without completing it (it may complete). */
static int poll_for_late(hop_request_t **req)
{
	double until = now_ns() + (double)LATE_NS;
	int done = 0, ret;

	while (now_ns() < until && !done && *req) {
		hop_status_t st;

		if ((ret = hop_test(req, &done, &st)) < 0)
			return ret;
	}
	return 0;
}

/* One exchange; @both: both directions. Returns 0 or a hop error. */
static int exchange(hop_comm_t *c, int rank, unsigned char *sbuf,
		    unsigned char *rbuf, size_t len, int both)
{
	hop_request_t *req[2] = { NULL, NULL };
	int peer = 1 - rank, ret, n = 0;

	if (both || rank == 1)
		if ((ret = hop_irecv(c, rbuf, len, peer, 7, &req[n++])))
			return ret;
	if (both && rank == 1 && (ret = poll_for_late(&req[0])))
		return ret;
	if (both || rank == 0)
		if ((ret = hop_isend(c, sbuf, len, peer, 7, &req[n++])))
			return ret;
	return hop_waitall(n, req, NULL);
}

static int check(const unsigned char *rbuf, size_t len, int peer, int round)
{
	for (size_t i = 0; i < len; i++)
		if (rbuf[i] != pattern(peer, i, round)) {
			fprintf(stderr, "duplex_xchg: byte %zu from rank %d "
				"is 0x%02x, expected 0x%02x (round %d)\n", i,
				peer, rbuf[i], pattern(peer, i, round), round);
			return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	double t[2][MAX_ITERS];
	unsigned char *sbuf = NULL, *rbuf = NULL;
	hop_comm_t *c = NULL;
	int rank, iters, ret, bad = 1;
	size_t len;

	if (argc != 3 || atoi(argv[1]) < 1 || atoi(argv[1]) > 1024 ||
	    (iters = atoi(argv[2])) < 1 || iters > MAX_ITERS) {
		fprintf(stderr, "usage: duplex_xchg MIB(1..1024) "
			"ITERS(1..%d)\n", MAX_ITERS);
		return 2;
	}
	len = (size_t)atoi(argv[1]) << 20;
	if (hop_comm_init_env(&c)) {
		fprintf(stderr, "duplex_xchg: init: %s\n",
			hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(c);
	if (hop_comm_size(c) != 2) {
		fprintf(stderr, "duplex_xchg: needs 2 ranks, not %d\n",
			hop_comm_size(c));
		goto out;
	}
	if (!(sbuf = malloc(len)) || !(rbuf = malloc(len))) {
		fprintf(stderr, "duplex_xchg: out of memory (%zu B)\n", len);
		goto out;
	}
	for (int round = 0; round <= 2 * iters + 1; round++) {
		int both = round % 2, it = round / 2 - 1;
		double t0;

		for (size_t i = 0; i < len; i++)
			sbuf[i] = pattern(rank, i, round);
		memset(rbuf, 0, len);
		if ((ret = hop_barrier(c))) {
			fail("barrier", ret);
			goto out;
		}
		t0 = now_ns();
		if ((ret = exchange(c, rank, sbuf, rbuf, len, both)) ||
		    (ret = hop_barrier(c))) {
			fail(both ? "exchange both ways" : "one way", ret);
			goto out;
		}
		if (it >= 0)
			t[both][it] = (now_ns() - t0) / 1e6;
		if ((both || rank == 1) && check(rbuf, len, 1 - rank, round))
			goto out;
	}
	qsort(t[0], (size_t)iters, sizeof(double), cmp_double);
	qsort(t[1], (size_t)iters, sizeof(double), cmp_double);
	if (rank == 0)
		printf("duplex: one way %.1f ms, both ways %.1f ms\n",
		       t[0][iters / 2], t[1][iters / 2]);
	bad = 0;
out:
	free(sbuf);
	free(rbuf);
	ret = hop_comm_destroy(c);
	return bad || ret ? 1 : 0;
}
