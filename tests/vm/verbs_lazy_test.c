/*
 * verbs_lazy_test.c - verbs QPs made on first use (HOP_CONNECT=lazy), one
 * process per rank in the SoftRoCE VMs (tests/vm/guest-suite.sh, "lazy").
 * After its traffic, checked byte for byte, each rank counts the RC QPs its
 * process holds (`rdma res show qp`, lines of its pid): the QP to itself
 * plus one per peer it talked to under lazy, one per rank under eager.
 *
 *   verbs_lazy_test ring   one allreduce (run with HOP_ALGO=allreduce:ring:
 *                          the two neighbours), then with 4 or more ranks
 *                          rank 0 and rank size/2 send each other 256 KiB
 *                          at once: two first posts that dial each other
 *   verbs_lazy_test all    every rank sends to every other at once
 *   verbs_lazy_test dead   the last rank exits after init; rank 0's first
 *                          send to it must fail naming it within HOP_TIMEOUT
 *   verbs_lazy_test deadrecv  the last rank exits after init; rank 0 posts
 *                          a receive from it, which dials it (the provider's
 *                          connect op): the receive must fail with
 *                          HOP_ERR_PEER_FAILED naming it within 0.2 x
 *                          HOP_TIMEOUT; a quiet wait dials every rank only
 *                          after a quarter of HOP_TIMEOUT, and a refused
 *                          dial gives up after 2 s more, so with HOP_TIMEOUT
 *                          20 only a dial made by the receive itself is in
 *                          time
 *   verbs_lazy_test gone   rank 0 and the last rank exchange a message, then
 *                          the last rank exits without closing: rank 0's
 *                          receive from it must fail naming it within
 *                          HOP_TIMEOUT (a pair connected on first use is
 *                          watched as an eager one)
 *
 * The count expected is HOP_CONNECT's: an eager run holds one QP more than
 * the lazy count on every rank that did not use every peer (in a 4-rank
 * ring run, ranks 1 and 3), so the lazy check fails a provider that
 * connects at open.
 * $LAZY_DIR (default $SOFTROCE_RUN): a folder all ranks share, for the
 * barrier before the count (a barrier through hop would connect peers).
 * Prints "verbs_lazy_test: rank R passed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hop/hop.h>

#define TEST_NAME "verbs_lazy_test"
static hop_comm_t *comm;
static int rank = -1, size;
#include "../integration/rank_check.h"

#define P2P_LEN (256u << 10)

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Byte @i of what @src sends @dst. */
static uint8_t byte_of(int src, int dst, size_t i)
{
	return (uint8_t)(src * 37 + dst * 11 + (int)(i % 251) + (int)(i >> 10));
}

/* Send @len bytes to each of @peers[0..n) and receive as many from each,
 * all posted at once; check every byte. */
static void swap_with(const int *peers, int n, size_t len)
{
	uint8_t *out = malloc((size_t)n * len + 1), *in = malloc((size_t)n * len + 1);
	hop_request_t **req = calloc(2 * (size_t)n + 1, sizeof(*req));

	if (!out || !in || !req)
		FAIL("out of memory");
	for (int k = 0; k < n; k++) {
		for (size_t i = 0; i < len; i++)
			out[(size_t)k * len + i] = byte_of(rank, peers[k], i);
		OK(hop_irecv(comm, in + (size_t)k * len, len, peers[k], 7, &req[2 * k]));
		OK(hop_isend(comm, out + (size_t)k * len, len, peers[k], 7, &req[2 * k + 1]));
	}
	OK(hop_waitall(2 * n, req, NULL));
	for (int k = 0; k < n; k++)
		for (size_t i = 0; i < len; i++)
			if (in[(size_t)k * len + i] != byte_of(peers[k], rank, i))
				FAIL("byte %zu of %zu from rank %d is 0x%02x, expected 0x%02x",
				     i, len, peers[k], in[(size_t)k * len + i],
				     byte_of(peers[k], rank, i));
	free(out);
	free(in);
	free(req);
}

/* Ring allreduce, then rank 0 <-> size/2; marks the peers used. */
static void t_ring(char *used)
{
	uint64_t *v = malloc((size_t)size * 1000 * sizeof(*v));
	int far = size / 2, peer = rank == 0 ? far : 0;

	if (!v)
		FAIL("out of memory");
	for (size_t i = 0; i < (size_t)size * 1000; i++)
		v[i] = (uint64_t)(rank + 1) * (i + 1) ^ ((uint64_t)rank << 40);
	OK(hop_allreduce(comm, v, v, (size_t)size * 1000, HOP_UINT64, HOP_SUM));
	for (size_t i = 0; i < (size_t)size * 1000; i++) {
		uint64_t want = 0;

		for (int q = 0; q < size; q++)
			want += (uint64_t)(q + 1) * (i + 1) ^ ((uint64_t)q << 40);
		if (v[i] != want)
			FAIL("allreduce element %zu is 0x%llx, expected 0x%llx", i,
			     (unsigned long long)v[i], (unsigned long long)want);
	}
	free(v);
	if (size > 1) {
		used[(rank + 1) % size] = 1;
		used[(rank + size - 1) % size] = 1;
	}
	if (size >= 4 && (rank == 0 || rank == far)) {
		swap_with(&peer, 1, P2P_LEN);
		used[peer] = 1;
	}
}

static void t_all(char *used)
{
	int *peers = malloc((size_t)size * sizeof(*peers)), n = 0;

	if (!peers)
		FAIL("out of memory");
	for (int q = 0; q < size; q++)
		if (q != rank) {
			peers[n++] = q;
			used[q] = 1;
		}
	swap_with(peers, n, 4096);
	free(peers);
}

/* @ret of a call on rank 0 that began at @t0 must be an error naming the
 * exited last rank, within HOP_TIMEOUT. */
static void check_named(int ret, double t0, const char *what)
{
	const char *to = getenv("HOP_TIMEOUT");
	double limit = (to ? atof(to) : 60) * 1e3, dt = now_ms() - t0;
	int dead = size - 1;
	char name[32];

	if (ret != HOP_ERR_PEER_FAILED && ret != HOP_ERR_TIMEOUT)
		FAIL("%s the exited rank %d returned %s, expected "
		     "HOP_ERR_PEER_FAILED or HOP_ERR_TIMEOUT", what, dead,
		     hop_err_name(ret));
	snprintf(name, sizeof(name), "rank %d ", dead);
	if (!strstr(hop_comm_last_error(comm), name))
		FAIL("the error does not name '%s'", name);
	if (dt >= limit)
		FAIL("the error came after %.0f ms, HOP_TIMEOUT is %.0f ms", dt, limit);
	printf("%s: rank 0 got %s after %.0f ms: %s\n", TEST_NAME, hop_err_name(ret),
	       dt, hop_comm_last_error(comm));
}

/* The last rank leaves without a word; rank 0 then sends to it. */
static void t_dead(void)
{
	static char big[1 << 16];
	double t0;

	if (rank == size - 1)
		_exit(0);
	if (rank != 0)
		return;
	usleep(500 * 1000);     /* its listener is gone by now */
	t0 = now_ms();
	check_named(hop_send(comm, big, sizeof(big), size - 1, 5), t0, "send to");
}

/* The last rank leaves without a word; rank 0 then waits for it. */
static void t_deadrecv(void)
{
	const char *to = getenv("HOP_TIMEOUT");
	double limit = (to ? atof(to) : 60) * 1e3 * 0.2, t0, dt;
	char c;
	int ret;

	if (rank == size - 1)
		_exit(0);
	if (rank != 0)
		return;
	usleep(500 * 1000);
	t0 = now_ms();
	ret = hop_recv(comm, &c, 1, size - 1, 7, NULL);
	dt = now_ms() - t0;
	check_named(ret, t0, "receive from");
	if (ret != HOP_ERR_PEER_FAILED || dt >= limit)
		FAIL("the receive from the exited rank %d ended with %s after "
		     "%.0f ms: expected HOP_ERR_PEER_FAILED within %.0f ms, "
		     "which only a dial made by the receive reaches",
		     size - 1, hop_err_name(ret), dt, limit);
}

/* Rank 0 and the last rank connect; the last one then dies silently. */
static void t_gone(void)
{
	int last = size - 1, peer = rank == 0 ? last : 0;
	char c;
	double t0;

	if (rank != 0 && rank != last)
		return;
	swap_with(&peer, 1, 1000);
	if (rank == last)
		_exit(0);
	t0 = now_ms();
	check_named(hop_recv(comm, &c, 1, last, 6, NULL), t0, "receive from");
}

/* RC QPs of this process in `rdma res show qp`. */
static int count_qps(void)
{
	char line[512], pid[32];
	FILE *f = popen("rdma res show qp 2>&1", "r");
	int n = 0;

	if (!f)
		FAIL("popen(rdma res show qp)");
	snprintf(pid, sizeof(pid), " pid %d ", (int)getpid());
	while (fgets(line, sizeof(line), f))
		if (strstr(line, " type RC ") && strstr(line, pid)) {
			printf("%s: rank %d: %s", TEST_NAME, rank, line);
			n++;
		}
	if (pclose(f) != 0)
		FAIL("rdma res show qp failed");
	return n;
}

/* Every rank has reached @step: files in $LAZY_DIR named after the job's
 * bootstrap port, so that runs in one folder do not meet. */
static void file_barrier(const char *step)
{
	const char *dir = getenv("LAZY_DIR") ? getenv("LAZY_DIR") : getenv("SOFTROCE_RUN");
	const char *addr = getenv("HOP_ADDR") ? getenv("HOP_ADDR") : "";
	const char *port = strrchr(addr, ':') ? strrchr(addr, ':') + 1 : "0";
	char path[512];
	double t0 = now_ms();
	FILE *f;

	if (!dir)
		FAIL("neither LAZY_DIR nor SOFTROCE_RUN is set");
	snprintf(path, sizeof(path), "%s/lazy.%s.%s.%d", dir, port, step, rank);
	if (!(f = fopen(path, "w")))
		FAIL("cannot create %s", path);
	fclose(f);
	for (int q = 0; q < size; q++) {
		snprintf(path, sizeof(path), "%s/lazy.%s.%s.%d", dir, port, step, q);
		while (access(path, F_OK)) {
			if (now_ms() - t0 > 60000)
				FAIL("rank %d did not reach %s in 60 s", q, step);
			usleep(5000);
		}
	}
}

/* Count this rank's QPs against @expect; 1 when they do not match. */
static int check_qps(const char *mode, const char *expect, const char *used)
{
	char list[256] = "";
	int want = 1, got, bad, lazy = !strcmp(expect, "lazy");
	size_t at = 0;

	for (int q = 0; q < size; q++) {
		if (q == rank || !(lazy ? used[q] : 1))
			continue;
		want++;
		at += (size_t)snprintf(list + at, at < sizeof(list) ? sizeof(list) - at : 0,
				       "%s%d", want > 2 ? "," : "", q);
		if (at >= sizeof(list))
			at = sizeof(list) - 1;
	}
	file_barrier("done");
	got = count_qps();
	printf("%s: %s: rank %d holds %d RC QPs, expected %d (%s: itself + %s)\n",
	       TEST_NAME, mode, rank, got, want, expect, want > 1 ? list : "none");
	bad = got != want;
	if (bad)
		fprintf(stderr, "%s rank %d: FAIL %s: %d RC QPs, expected %d for "
			"HOP_CONNECT=%s\n", TEST_NAME, rank, mode, got, want, expect);
	/* the others count before anyone's close takes QPs down */
	file_barrier("counted");
	return bad;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	const char *expect = getenv("HOP_CONNECT") ? getenv("HOP_CONNECT") : "eager";
	char *used;
	int bad = 0;

	if (hop_comm_init_env(&comm)) {
		fprintf(stderr, "%s: init: %s\n", TEST_NAME, hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	size = hop_comm_size(comm);
	if (!(used = calloc((size_t)size, 1)))
		FAIL("out of memory");
	if (!strcmp(mode, "ring"))
		t_ring(used);
	else if (!strcmp(mode, "all"))
		t_all(used);
	else if (!strcmp(mode, "dead"))
		t_dead();
	else if (!strcmp(mode, "deadrecv"))
		t_deadrecv();
	else if (!strcmp(mode, "gone"))
		t_gone();
	else
		FAIL("usage: %s ring|all|dead|deadrecv|gone", argv[0]);
	if (!strcmp(mode, "ring") || !strcmp(mode, "all"))
		bad = check_qps(mode, expect, used);
	free(used);
	hop_comm_destroy(comm);
	if (bad)
		return 1;
	printf("%s: rank %d passed\n", TEST_NAME, rank);
	return 0;
}
