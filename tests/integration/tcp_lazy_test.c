/*
 * tcp_lazy_test.c - pairs connected on first use (HOP_CONNECT=lazy) on
 * tcp or shm, through hop-run. Each mode checks its data byte for byte and
 * then that this rank opened exactly one socket (tcp) or mapped one peer
 * segment (shm) per peer it talked to (in /proc/self/fd and maps after
 * the traffic, less those right after init), which an eager mesh (every
 * peer connected at init) fails.
 *
 *   tcp_lazy_test pairs SEED  random perfect matchings, both ends sending
 *                             at once (simultaneous dials), 0 B..300 KiB
 *   tcp_lazy_test all         every rank sends to every other at once
 *   tcp_lazy_test rndv        the first message of each pair (1 MiB) is a
 *                             rendezvous, around a ring
 *   tcp_lazy_test ring        one 8 B allreduce (HOP_ALGO=allreduce:ring):
 *                             two neighbours' sockets
 *   tcp_lazy_test last        rank 0 sends to every other rank and
 *                             destroys its comm at once: its sends were
 *                             complete, so they must still arrive
 *   tcp_lazy_test rss         init takes less private memory than the
 *                             eager slots of every peer would (run with
 *                             HOP_EAGER_SLOTS=1024: 8 MiB per peer), then
 *                             a ring exchange through them
 *   tcp_lazy_test dead        the last rank exits after init; rank 0's
 *                             first send to it fails naming it within
 *                             HOP_TIMEOUT
 *   tcp_lazy_test deadrecv    the last rank exits after init; rank 0
 *                             receives from it (it never sent to it):
 *                             the receive fails naming it, well within
 *                             HOP_TIMEOUT
 *   tcp_lazy_test deadcoll    the last rank exits after init; the others
 *                             run a ring allreduce: each fails with
 *                             HOP_ERR_PEER_FAILED within HOP_TIMEOUT, the
 *                             dead rank's successor naming it
 *
 * $TCP_LAZY_DIR: an empty folder for file_barrier(). Prints
 * "tcp_lazy_test: rank R passed" on success.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hop/hop.h>

#define TEST_NAME "tcp_lazy_test"
static hop_comm_t *comm;
static int rank = -1, size;
#include "rank_check.h"

#define ROUNDS 6
#define BIG (1u << 20)

static int count_sockets(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[64];
	int n = 0;

	if (!d)
		FAIL("opendir /proc/self/fd");
	while ((e = readdir(d))) {
		ssize_t k;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0 && (link[k] = '\0', !strncmp(link, "socket:", 7)))
			n++;
	}
	closedir(d);
	return n;
}

/* shm segments mapped (each one once, though mapped in pieces). */
static int count_segments(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long inos[1024];
	char line[512];
	int n = 0;

	if (!f)
		FAIL("fopen /proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		unsigned long ino;
		int i, off = 0;

		if (!strstr(line, "/memfd:hop-shm") &&
		    !strstr(line, "/dev/shm/hop-"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %lu %n", &ino, &off) != 1)
			continue;
		for (i = 0; i < n && inos[i] != ino; i++)
			;
		if (i == n && n < 1024)
			inos[n++] = ino;
	}
	fclose(f);
	return n;
}

/* What a rank holds per connected peer: a socket (tcp) or a mapped
 * segment (shm); the provider not in use holds none. */
static int count_links(void)
{
	return count_sockets() + count_segments();
}

/* Private resident memory (RssAnon) in KiB. */
static long rss_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		FAIL("fopen /proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %ld", &kb) == 1)
			break;
	fclose(f);
	if (kb < 0)
		FAIL("no RssAnon in /proc/self/status");
	return kb;
}

static uint8_t pat(int src, int dst, int round, size_t i)
{
	return (uint8_t)(src * 131 + dst * 31 + round * 7 + (int)i * 13 +
			 (int)(i >> 8));
}

static void fill(uint8_t *b, size_t len, int src, int dst, int round)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pat(src, dst, round, i);
}

static void check(const uint8_t *b, size_t len, int src, int round)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != pat(src, rank, round, i))
			FAIL("round %d: byte %zu of %zu from rank %d is 0x%02x, "
			     "expected 0x%02x", round, i, len, src, b[i],
			     pat(src, rank, round, i));
}

/* Send @len bytes to @to and receive @len from @from, at once. */
static void exchange(int to, int from, size_t len, int round)
{
	uint8_t *out = malloc(len + 1), *in = malloc(len + 1);
	hop_request_t *req[2];

	if (!out || !in)
		FAIL("out of memory");
	fill(out, len, rank, to, round);
	OK(hop_irecv(comm, in, len, from, round, &req[0]));
	OK(hop_isend(comm, out, len, to, round, &req[1]));
	OK(hop_waitall(2, req, NULL));
	check(in, len, from, round);
	free(out);
	free(in);
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random matchings, the same on every rank; returns peers talked to. */
static int t_pairs(uint64_t seed)
{
	static const size_t sizes[] = { 0, 1, 100, 8192, 8193, 65543, 300000 };
	int *perm = malloc((size_t)size * sizeof(*perm));
	char *used = calloc((size_t)size, 1);
	int peers = 0;

	if (!perm || !used)
		FAIL("out of memory");
	seed = seed * 2654435761u + 1;
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < size; i++)
			perm[i] = i;
		for (int i = size - 1; i > 0; i--) {
			int j = (int)(rng_next(&seed) % (uint64_t)(i + 1)), t;

			t = perm[i], perm[i] = perm[j], perm[j] = t;
		}
		size_t len = sizes[rng_next(&seed) % 7];

		for (int i = 0; i + 1 < size; i += 2) {
			int a = perm[i], b = perm[i + 1];

			if (rank != a && rank != b)
				continue;
			int other = rank == a ? b : a;

			exchange(other, other, len, round);
			if (!used[other]++)
				peers++;
		}
	}
	free(perm);
	free(used);
	return peers;
}

static int t_all(void)
{
	size_t len = 1000;
	uint8_t *out = malloc(len * (size_t)size), *in = malloc(len * (size_t)size);
	hop_request_t **req = calloc(2 * (size_t)size, sizeof(*req));
	int nr = 0;

	if (!out || !in || !req)
		FAIL("out of memory");
	for (int q = 0; q < size; q++) {
		if (q == rank)
			continue;
		fill(out + (size_t)q * len, len, rank, q, 0);
		OK(hop_irecv(comm, in + (size_t)q * len, len, q, 0, &req[nr++]));
		OK(hop_isend(comm, out + (size_t)q * len, len, q, 0, &req[nr++]));
	}
	OK(hop_waitall(nr, req, NULL));
	for (int q = 0; q < size; q++)
		if (q != rank)
			check(in + (size_t)q * len, len, q, 0);
	free(out);
	free(in);
	free(req);
	return size - 1;
}

static int ring_peers(void)
{
	return size > 2 ? 2 : size - 1;
}

static int t_rndv(void)
{
	exchange((rank + 1) % size, (rank + size - 1) % size, BIG, 1);
	return ring_peers();
}

static int t_ring(void)
{
	/* one element per rank: no step of the ring is empty */
	uint64_t *v = malloc((size_t)size * sizeof(*v));

	if (!v)
		FAIL("out of memory");
	for (int i = 0; i < size; i++)
		v[i] = (uint64_t)(rank + 1) * (uint64_t)(i + 1);
	OK(hop_allreduce(comm, v, v, (size_t)size, HOP_UINT64, HOP_SUM));
	for (int i = 0; i < size; i++)
		if (v[i] != (uint64_t)size * (size + 1) / 2 * (uint64_t)(i + 1))
			FAIL("allreduce element %d is %llu", i,
			     (unsigned long long)v[i]);
	free(v);
	return ring_peers();
}

/* Rank 0's only messages, then its close at once; returns -1 (its
 * sockets are gone by the count). */
static int t_last(void)
{
	uint8_t buf[100];

	if (rank == 0) {
		for (int q = 1; q < size; q++) {
			fill(buf, sizeof(buf), 0, q, 3);
			OK(hop_send(comm, buf, sizeof(buf), q, 3));
		}
		return -1;
	}
	OK(hop_recv(comm, buf, sizeof(buf), 0, 3, NULL));
	check(buf, sizeof(buf), 0, 3);
	return -1;
}

/*
 * The eager slots are allocated for every peer but take memory only for
 * the peers that send: init must cost less than half of all of them.
 */
static int t_rss(long kb_before, long kb_after)
{
	const char *slots = getenv("HOP_EAGER_SLOTS");
	long all_kb = (long)size * (slots ? atol(slots) : 16) * 8;

	if (kb_after - kb_before > all_kb / 2)
		FAIL("init took %ld KiB of private memory; the eager slots of "
		     "all %d ranks take %ld KiB", kb_after - kb_before, size,
		     all_kb);
	printf("%s: rank %d: init took %ld KiB (all eager slots: %ld KiB)\n",
	       TEST_NAME, rank, kb_after - kb_before, all_kb);
	return t_rndv();
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The last rank leaves without a word; rank 0 then sends to it. */
static void t_dead(void)
{
	const char *to = getenv("HOP_TIMEOUT");
	double limit = (to ? atof(to) : 60) * 1e3, t0, dt;
	int dead = size - 1, ret;
	static char big[1 << 16];
	char name[32];

	if (rank == dead)
		_exit(0);
	if (rank != 0)
		return;
	usleep(300 * 1000); /* its listener is closed by now */
	t0 = now_ms();
	/* a rendezvous: complete only once the receiver answers */
	ret = hop_send(comm, big, sizeof(big), dead, 5);
	dt = now_ms() - t0;
	if (ret != HOP_ERR_PEER_FAILED)
		FAIL("send to the exited rank %d returned %s, expected "
		     "HOP_ERR_PEER_FAILED", dead, hop_err_name(ret));
	snprintf(name, sizeof(name), "rank %d ", dead);
	if (!strstr(hop_comm_last_error(comm), name))
		FAIL("the error does not name '%s'", name);
	if (dt >= limit)
		FAIL("the error came after %.0f ms, HOP_TIMEOUT is %.0f ms",
		     dt, limit);
	printf("tcp_lazy_test: rank 0 got the error after %.0f ms: %s\n", dt,
	       hop_comm_last_error(comm));
}

/* Is @ret a peer failure, named as @dead where @must, within @limit? */
static void check_dead_error(const char *what, int ret, int dead, int must,
			     double t0, double limit)
{
	double dt = now_ms() - t0;
	char name[32];

	if (ret != HOP_ERR_PEER_FAILED)
		FAIL("%s returned %s, expected HOP_ERR_PEER_FAILED (rank %d "
		     "exited): %s", what, hop_err_name(ret), dead,
		     hop_comm_last_error(comm));
	snprintf(name, sizeof(name), "rank %d ", dead);
	if (must && !strstr(hop_comm_last_error(comm), name))
		FAIL("the error does not name '%s': %s", name,
		     hop_comm_last_error(comm));
	if (dt >= limit)
		FAIL("the error came after %.0f ms, HOP_TIMEOUT is %.0f ms",
		     dt, limit);
	printf("tcp_lazy_test: rank %d got the error after %.0f ms: %s\n",
	       rank, dt, hop_comm_last_error(comm));
}

/* The last rank leaves without a word; the others wait on it (@coll: in
 * a ring allreduce, else rank 0 in a receive from it). */
static void t_dead_wait(int coll)
{
	const char *to = getenv("HOP_TIMEOUT");
	double limit = (to ? atof(to) : 60) * 1e3 / 2, t0;
	int dead = size - 1, ret;
	uint64_t v = 1, sum = 0;
	char c;

	if (rank == dead)
		_exit(0);
	usleep(300 * 1000); /* it is gone by now */
	t0 = now_ms();
	if (coll) {
		ret = hop_allreduce(comm, &v, &sum, 1, HOP_UINT64, HOP_SUM);
		check_dead_error("the allreduce", ret, dead, rank == 0, t0,
				 limit);
	} else if (rank == 0) {
		ret = hop_recv(comm, &c, 1, dead, 7, NULL);
		check_dead_error("a receive from the exited rank", ret, dead,
				 1, t0, limit);
	}
}

/*
 * Progress for a moment before counting: a dial that lost a simultaneous
 * connect may sit accepted, unread, until this rank's next progress pass
 * closes it (an irecv from this rank keeps hop_test() polling).
 */
static void settle(void)
{
	hop_request_t *req;
	double t0 = now_ms();
	int done = 0;
	char c;

	OK(hop_irecv(comm, &c, 1, rank, 999, &req));
	while (now_ms() - t0 < 100)
		OK(hop_test(&req, &done, NULL));
	OK(hop_send(comm, "s", 1, rank, 999));
	OK(hop_wait(&req, NULL));
}

/*
 * Wait until every rank has reached step @step, through files in
 * $TCP_LAZY_DIR (a barrier through hop would connect more peers, and a
 * rank that closed its comm would take its sockets off the others').
 */
static void file_barrier(const char *step)
{
	const char *dir = getenv("TCP_LAZY_DIR");
	char path[512];
	double t0 = now_ms();
	FILE *f;

	if (!dir)
		FAIL("TCP_LAZY_DIR is not set");
	snprintf(path, sizeof(path), "%s/%s.%d", dir, step, rank);
	if (!(f = fopen(path, "w")))
		FAIL("cannot create %s", path);
	fclose(f);
	for (int q = 0; q < size; q++) {
		snprintf(path, sizeof(path), "%s/%s.%d", dir, step, q);
		while (access(path, F_OK)) {
			if (now_ms() - t0 > 30000)
				FAIL("rank %d did not reach %s in 30 s", q, step);
			usleep(2000);
		}
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long kb0 = rss_anon_kb();
	int base, peers = -1, got;

	if (hop_comm_init_env(&comm)) {
		fprintf(stderr, "%s: init: %s\n", TEST_NAME,
			hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	size = hop_comm_size(comm);
	base = count_links();
	if (!strcmp(mode, "pairs"))
		peers = t_pairs(argc > 2 ? strtoull(argv[2], NULL, 0) : 1);
	else if (!strcmp(mode, "all"))
		peers = t_all();
	else if (!strcmp(mode, "rndv"))
		peers = t_rndv();
	else if (!strcmp(mode, "ring"))
		peers = t_ring();
	else if (!strcmp(mode, "rss"))
		peers = t_rss(kb0, rss_anon_kb());
	else if (!strcmp(mode, "last"))
		peers = t_last();
	else if (!strcmp(mode, "dead"))
		t_dead();
	else if (!strcmp(mode, "deadrecv"))
		t_dead_wait(0);
	else if (!strcmp(mode, "deadcoll"))
		t_dead_wait(1);
	else
		FAIL("usage: %s pairs SEED|all|rndv|ring|rss|last|dead|"
		     "deadrecv|deadcoll", argv[0]);
	if (peers >= 0) {
		file_barrier("done");
		settle();
		got = count_links() - base;
		if (got != peers)
			FAIL("%s: %d socket(s) or segment(s) opened since init, "
			     "expected one for each of the %d peer(s) this rank "
			     "talked to", mode, got, peers);
		file_barrier("counted");
	}
	hop_comm_destroy(comm);
	printf("tcp_lazy_test: rank %d passed\n", rank);
	return 0;
}
