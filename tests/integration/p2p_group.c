/*
 * p2p_group.c - grouped point-to-point, request sets and wildcard
 * receives end to end, run by p2p_group.sh through hop-run on shm and tcp.
 * Every byte received is checked against the pattern of its sender,
 * receiver, size and message index; each rank exits non-zero on the first
 * problem, naming it.
 *
 *   group     seeded rounds of random messages between random pairs, self
 *             included, eager and rendezvous sizes, each rank queueing its
 *             sends and receives in a random order of its own (nested
 *             groups too); statuses checked
 *   gerror    a truncating receive inside a group: hop_group_end() names
 *             it and the other operations still complete
 *   waitall   isend/irecv to and from every rank, a NULL entry and one
 *             truncating receive: the code, the index, each status
 *   testany   completions polled one at a time while senders trickle in;
 *             hop_waitany likewise; collectives' requests in the sets
 *   wild      HOP_ANY_SOURCE/HOP_ANY_TAG receives while every other rank
 *             races to send (eager and rendezvous, many unexpected):
 *             per sender in order; a wildcard posted before a specific
 *             receive matches first; wildcards beside collectives
 *   errors    bad arguments: specific codes, messages naming them
 *             (p2p_group_errors.c)
 *
 * Options: --seed N (default 1), --rounds N (default 20); --timeout-case
 * runs only a group that waits for a message nobody sends (run it with a
 * short HOP_TIMEOUT): hop_group_end() must time out naming it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hop/hop.h>

#include "p2p_group.h"

hop_comm_t *comm;
int rank, size;
static unsigned long long seed = 1;
static int rounds = 20;

static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static uint8_t pat(int src, int dst, size_t n, int idx, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u;

	return (uint8_t)((x >> 24) ^ (uint32_t)(src * 29 + dst * 7 + idx * 3) ^
			 (uint32_t)(n % 251) ^ (uint32_t)(i >> 16));
}

static void fill(uint8_t *b, int src, int dst, size_t n, int idx)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(src, dst, n, idx, i);
}

static void verify(const uint8_t *b, int src, int dst, size_t n, int idx,
		   const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(src, dst, n, idx, i))
			FAIL("%s: %zu B from rank %d (message %d): byte %zu "
			     "is 0x%02x, expected 0x%02x", what, n, src, idx,
			     i, b[i], pat(src, dst, n, idx, i));
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		FAIL("out of memory (%zu B)", n);
	return p;
}

void check_status(const hop_status_t *st, int src, int tag,
			 size_t bytes, int error, const char *what)
{
	if (st->source != src || st->tag != tag || st->bytes != bytes ||
	    st->error != error)
		FAIL("%s: status {source %d, tag %d, bytes %zu, error %s}, "
		     "expected {%d, %d, %zu, %s}", what, st->source, st->tag,
		     st->bytes, hop_err_name(st->error), src, tag, bytes,
		     hop_err_name(error));
}

/* Sizes: empty, small, around and beyond the 8 KiB eager size, large. */
static const size_t sizes[] = { 0, 1, 13, 4096, 8192, 8193, 70001, 300007 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct msg {
	int src, dst, idx;
	size_t len;
	uint8_t *buf, *sbuf;    /* receive, send */
	hop_status_t st;
};

/* One round: the same plan on every rank (seeded), each rank's part
 * queued in an order of its own, in one group with a nested one. */
static void group_round(int round)
{
	uint64_t s = seed * 1000003u + (uint64_t)round + 1;
	uint64_t mine = s ^ ((uint64_t)rank + 1) * 0x9e3779b97f4a7c15ull;
	int n = 2 + (int)(rng_next(&s) % (uint64_t)(4 * size)), k = 0, nest;
	struct msg *m = calloc((size_t)n, sizeof(*m));
	int *ord = xmalloc(sizeof(int) * 2 * (size_t)n);

	if (!m)
		FAIL("out of memory");
	for (int i = 0; i < n; i++) {
		m[i].src = (int)(rng_next(&s) % (uint64_t)size);
		m[i].dst = (int)(rng_next(&s) % (uint64_t)size);
		m[i].len = sizes[rng_next(&s) % NSIZES];
		m[i].idx = round * 1000 + i;
	}
	/* entries 2i (send of i) and 2i+1 (receive of i) that are this
	 * rank's, shuffled */
	for (int i = 0; i < 2 * n; i++)
		if ((i % 2 ? m[i / 2].dst : m[i / 2].src) == rank)
			ord[k++] = i;
	for (int i = k - 1; i > 0; i--) {
		int j = (int)(rng_next(&mine) % (uint64_t)(i + 1)), t = ord[i];

		ord[i] = ord[j];
		ord[j] = t;
	}
	nest = k ? (int)(rng_next(&mine) % (uint64_t)k) : 0;
	OK(hop_group_start(comm));
	for (int e = 0; e < k; e++) {
		struct msg *x = &m[ord[e] / 2];

		if (e == nest)
			OK(hop_group_start(comm));
		if (ord[e] % 2 == 0) {
			x->sbuf = xmalloc(x->len);
			fill(x->sbuf, x->src, x->dst, x->len, x->idx);
			OK(hop_send(comm, x->sbuf, x->len, x->dst, x->idx));
		} else {
			/* tags are unique in a round: a receive from any
			 * source takes the same message */
			int from = rng_next(&mine) % 4 ? x->src
						       : HOP_ANY_SOURCE;

			x->buf = xmalloc(x->len);
			memset(x->buf, 0xee, x->len);
			OK(hop_recv(comm, x->buf, x->len, from, x->idx,
				    &x->st));
		}
		if (e == nest)
			OK(hop_group_end(comm));        /* inner: queues only */
	}
	OK(hop_group_end(comm));
	for (int i = 0; i < n; i++) {
		if (m[i].dst == rank) {
			verify(m[i].buf, m[i].src, rank, m[i].len, m[i].idx,
			       "group");
			check_status(&m[i].st, m[i].src, m[i].idx, m[i].len, 0,
				     "group receive");
		}
		free(m[i].buf);
		free(m[i].sbuf);
	}
	free(m);
	free(ord);
}

/* A receive too small for its message inside a group. */
static void test_group_error(void)
{
	int to = (rank + 1) % size, from = (rank - 1 + size) % size;
	uint8_t out[100], in[40], self[3000], selfin[3000];
	hop_status_t st, sst;
	const char *e;

	fill(out, rank, to, sizeof(out), 7);
	fill(self, rank, rank, sizeof(self), 8);
	OK(hop_group_start(comm));
	OK(hop_recv(comm, in, sizeof(in), from, 7, &st));
	OK(hop_send(comm, self, sizeof(self), rank, 8));
	OK(hop_send(comm, out, sizeof(out), to, 7));
	OK(hop_recv(comm, selfin, sizeof(selfin), rank, 8, &sst));
	CHECK_RC(hop_group_end(comm), HOP_ERR_TRUNCATED);
	e = hop_comm_last_error(comm);
	if (!strstr(e, "operation 0") || !strstr(e, "recv from"))
		FAIL("group error message does not name operation 0: %s", e);
	check_status(&st, from, 7, 0, HOP_ERR_TRUNCATED, "truncated");
	verify(selfin, rank, rank, sizeof(selfin), 8, "group self");
	check_status(&sst, rank, 8, sizeof(selfin), 0, "group self");
	OK(hop_barrier(comm));
}

static void test_waitall(void)
{
	int n = 2 * size + 2, bad = 1 % size;
	hop_request_t **req = calloc((size_t)n, sizeof(*req));
	hop_status_t *st = calloc((size_t)n, sizeof(*st));
	uint8_t **buf = calloc((size_t)n, sizeof(*buf));
	size_t len;
	const char *e;
	int trunc_at = -1;

	if (!req || !st || !buf)
		FAIL("out of memory");
	/* entries 0..size-1 receive from rank q, size..2 size-1 send to q,
	 * 2 size stays NULL, 2 size + 1 is a second self receive */
	for (int q = 0; q < size; q++) {
		len = sizes[(size_t)(q + rank) % NSIZES];
		buf[q] = xmalloc(len + 100);
		/* rank bad's receive from rank 0 is 1 byte short */
		if (rank == bad && q == 0 && len) {
			trunc_at = q;
			OK(hop_irecv(comm, buf[q], len - 1, q, 3, &req[q]));
		} else {
			OK(hop_irecv(comm, buf[q], len + 100, q, 3, &req[q]));
		}
	}
	for (int q = 0; q < size; q++) {
		len = sizes[(size_t)(rank + q) % NSIZES];
		buf[size + q] = xmalloc(len);
		fill(buf[size + q], rank, q, len, 3);
		OK(hop_isend(comm, buf[size + q], len, q, 3, &req[size + q]));
	}
	buf[2 * size + 1] = xmalloc(10);
	OK(hop_isend(comm, "0123456789", 10, rank, 4, &req[2 * size]));
	OK(hop_waitall(1, &req[2 * size], NULL));
	if (req[2 * size])
		FAIL("hop_waitall left its request");
	OK(hop_irecv(comm, buf[2 * size + 1], 10, rank, 4, &req[2 * size + 1]));
	CHECK_RC(hop_waitall(n, req, st),
		 trunc_at >= 0 ? HOP_ERR_TRUNCATED : HOP_SUCCESS);
	for (int i = 0; i < n; i++)
		if (req[i])
			FAIL("hop_waitall left request %d", i);
	if (trunc_at >= 0) {
		e = hop_comm_last_error(comm);
		if (!strstr(e, "request 0 failed"))
			FAIL("waitall message does not name request 0: %s", e);
	}
	for (int q = 0; q < size; q++) {
		len = sizes[(size_t)(q + rank) % NSIZES];
		if (q == trunc_at) {
			check_status(&st[q], q, 3, 0, HOP_ERR_TRUNCATED,
				     "waitall truncated");
			continue;
		}
		check_status(&st[q], q, 3, len, 0, "waitall receive");
		verify(buf[q], q, rank, len, 3, "waitall");
		if (st[size + q].error)
			FAIL("send to %d: %s", q, hop_err_name(st[size + q].error));
	}
	check_status(&st[2 * size], -1, -1, 0, 0, "waitall NULL entry");
	if (memcmp(buf[2 * size + 1], "0123456789", 10))
		FAIL("self message after waitall differs");
	for (int i = 0; i < n; i++)
		free(buf[i]);
	free(buf);
	free(st);
	free(req);
	OK(hop_barrier(comm));
}

/* Rank 0 completes one receive per other rank, each sent after a pause of
 * its own, with hop_testany (then hop_waitany); the others send. */
static void test_any(int wait)
{
	int n = size, got = 0, idx, done, last = -1;
	hop_request_t **req = calloc((size_t)n, sizeof(*req));
	uint8_t *buf = xmalloc((size_t)n * 9000);
	hop_status_t st;

	if (!req)
		FAIL("out of memory");
	if (rank == 0) {
		for (int q = 1; q < size; q++)
			OK(hop_irecv(comm, buf + (size_t)q * 9000, 9000, q, 11,
				     &req[q]));
		while (got < size - 1) {
			if (wait) {
				OK(hop_waitany(n, req, &idx, &st));
				done = idx >= 0;
			} else {
				OK(hop_testany(n, req, &idx, &done, &st));
			}
			if (!done)
				continue;
			if (idx < 1 || idx >= size || req[idx] || idx == last)
				FAIL("completed index %d", idx);
			check_status(&st, idx, 11, 8000 + (size_t)idx, 0,
				     "testany");
			verify(buf + (size_t)idx * 9000, idx, 0,
			       8000 + (size_t)idx, 11, "testany");
			last = idx;
			got++;
		}
		/* all NULL: done at once with index -1 */
		OK(hop_testany(n, req, &idx, &done, &st));
		if (!done || idx != -1)
			FAIL("testany on NULL entries: done %d index %d",
			     done, idx);
		OK(hop_waitany(n, req, &idx, &st));
		if (idx != -1)
			FAIL("waitany on NULL entries: index %d", idx);
	} else {
		usleep((useconds_t)(1000 * (size - rank)));
		fill(buf, rank, 0, 8000 + (size_t)rank, 11);
		OK(hop_send(comm, buf, 8000 + (size_t)rank, 0, 11));
	}
	free(req);
	free(buf);
	OK(hop_barrier(comm));
}

/* Collectives' requests in the sets: a NULL gap, testany until both
 * finished, then waitany; their statuses name no source or tag. */
static void test_op_requests(void)
{
	double x = rank + 1, y = 2.0 * (rank + 1), sx = 0, sy = 0;
	double want = (double)size * (size + 1) / 2;
	hop_request_t *r[3] = { NULL, NULL, NULL };
	hop_status_t st;
	int idx, done, got = 0;

	OK(hop_iallreduce(comm, &x, &sx, 1, HOP_FLOAT64, HOP_SUM, &r[0]));
	OK(hop_iallreduce(comm, &y, &sy, 1, HOP_FLOAT64, HOP_SUM, &r[2]));
	while (got < 2) {
		OK(hop_testany(3, r, &idx, &done, &st));
		if (done && (idx != 0 && idx != 2))
			FAIL("testany completed index %d", idx);
		got += done;
	}
	OK(hop_iallreduce(comm, &x, &sy, 1, HOP_FLOAT64, HOP_MAX, &r[1]));
	OK(hop_waitany(3, r, &idx, &st));
	check_status(&st, -1, -1, 0, 0, "collective request");
	if (idx != 1 || r[1] || sx != want || sy != size)
		FAIL("collectives through request sets: index %d, %g and %g",
		     idx, sx, sy);
}

#define WILD_PER 12
static size_t wild_len(int src, int k)
{
	return sizes[(size_t)(src * 3 + k) % NSIZES];
}

/* Every rank but 0 races to send WILD_PER messages (tags 0, 1, ...) to
 * rank 0, which takes them all with wildcards: half posted before the
 * senders start, the rest after they finished (unexpected). */
static void test_wild_race(void)
{
	int total = (size - 1) * WILD_PER, pre = total / 2;
	int *next = calloc((size_t)size, sizeof(int));
	uint8_t *buf = xmalloc((size_t)total * 300007);
	hop_request_t **req = calloc((size_t)total, sizeof(*req));
	hop_status_t *st = calloc((size_t)total, sizeof(*st));

	if (!next || !req || !st)
		FAIL("out of memory");
	if (rank == 0) {
		for (int i = 0; i < pre; i++)
			OK(hop_irecv(comm, buf + (size_t)i * 300007, 300007,
				     HOP_ANY_SOURCE, HOP_ANY_TAG, &req[i]));
		OK(hop_barrier(comm));
		OK(hop_barrier(comm));  /* senders are done: the rest wait */
		for (int i = pre; i < total; i++)
			OK(hop_recv(comm, buf + (size_t)i * 300007, 300007,
				    HOP_ANY_SOURCE, HOP_ANY_TAG, &st[i]));
		OK(hop_waitall(pre, req, st));
		for (int i = 0; i < total; i++) {
			int q = st[i].source, k = st[i].tag;

			if (q < 1 || q >= size || k != next[q])
				FAIL("message %d: from rank %d tag %d, next "
				     "from it expected tag %d (overtaken)", i,
				     q, k, q >= 1 && q < size ? next[q] : -1);
			next[q]++;
			if (st[i].bytes != wild_len(q, k))
				FAIL("message %d: %zu B", i, st[i].bytes);
			verify(buf + (size_t)i * 300007, q, 0, st[i].bytes,
			       k, "wildcard");
		}
	} else {
		/* nonblocking: a rendezvous send completes only once rank 0
		 * posts its receive, after the second barrier */
		OK(hop_barrier(comm));
		for (int k = 0; k < WILD_PER; k++) {
			size_t len = wild_len(rank, k);
			uint8_t *b = buf + (size_t)k * 300007;

			fill(b, rank, 0, len, k);
			OK(hop_isend(comm, b, len, 0, k, &req[k]));
		}
		OK(hop_barrier(comm));
		OK(hop_waitall(WILD_PER, req, NULL));
	}
	free(next);
	free(buf);
	free(req);
	free(st);
	OK(hop_barrier(comm));
}

/* A wildcard posted before a specific receive matches first; wildcards
 * posted around collectives take none of their traffic. */
static void test_wild_order(void)
{
	uint8_t a[9000], b[9000], big[70001];
	hop_request_t *r[3];
	hop_status_t st[3];
	double x = rank + 1, sum = 0;

	if (rank == 1) {
		fill(a, 1, 0, 9000, 1);
		fill(b, 1, 0, 100, 2);
		OK(hop_send(comm, a, 9000, 0, 5));      /* rendezvous */
		OK(hop_send(comm, b, 100, 0, 5));
	} else if (rank == 0) {
		OK(hop_irecv(comm, a, sizeof(a), HOP_ANY_SOURCE, 5, &r[0]));
		OK(hop_irecv(comm, b, sizeof(b), 1, 5, &r[1]));
		OK(hop_waitall(2, r, st));
		check_status(&st[0], 1, 5, 9000, 0, "earlier wildcard");
		check_status(&st[1], 1, 5, 100, 0, "later specific");
		verify(a, 1, 0, 9000, 1, "earlier wildcard");
		verify(b, 1, 0, 100, 2, "later specific");
		/* the same with the later receive blocking (it may take
		 * messages straight from the slot, but not this one) */
		OK(hop_irecv(comm, a, sizeof(a), HOP_ANY_SOURCE, HOP_ANY_TAG,
			     &r[0]));
		OK(hop_barrier(comm));
		OK(hop_recv(comm, b, sizeof(b), 1, 6, &st[1]));
		OK(hop_wait(&r[0], &st[0]));
		check_status(&st[0], 1, 6, 10, 0, "earlier wildcard (2)");
		check_status(&st[1], 1, 6, 20, 0, "later blocking");
		verify(a, 1, 0, 10, 3, "earlier wildcard (2)");
		verify(b, 1, 0, 20, 4, "later blocking");
	}
	if (rank == 1) {
		OK(hop_barrier(comm));
		fill(a, 1, 0, 10, 3);
		fill(b, 1, 0, 20, 4);
		OK(hop_send(comm, a, 10, 0, 6));
		OK(hop_send(comm, b, 20, 0, 6));
	} else if (rank > 1) {
		OK(hop_barrier(comm));
	}
	/* every rank: a receive of anything from anyone stays posted
	 * through collectives, then takes the one user message */
	OK(hop_irecv(comm, big, sizeof(big), HOP_ANY_SOURCE, HOP_ANY_TAG,
		     &r[2]));
	OK(hop_allreduce(comm, &x, &sum, 1, HOP_FLOAT64, HOP_SUM));
	if (sum != (double)size * (size + 1) / 2)
		FAIL("allreduce beside a wildcard: %g", sum);
	OK(hop_barrier(comm));
	if (r[2] == NULL)
		FAIL("wildcard request vanished");
	fill(a, rank, (rank + 1) % size, 5000, 9);
	OK(hop_send(comm, a, 5000, (rank + 1) % size, 77));
	OK(hop_wait(&r[2], &st[2]));
	check_status(&st[2], (rank - 1 + size) % size, 77, 5000, 0,
		     "wildcard beside collectives");
	verify(big, (rank - 1 + size) % size, rank, 5000, 9, "wildcard");
	OK(hop_barrier(comm));
}

int main(int argc, char **argv)
{
	int ret, timeout_case = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--timeout-case"))
			timeout_case = 1;
	}
	if ((ret = hop_comm_init_env(&comm))) {
		fprintf(stderr, "p2p_group: hop_comm_init_env: %s: %s\n",
			hop_err_name(ret), hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	size = hop_comm_size(comm);
	if (timeout_case) {
		test_timeout();
		/* stay past the peer's deadline too: a rank that closed first
		 * ends the other's wait with HOP_ERR_PEER_FAILED (it left),
		 * not the timeout under test, when their deadlines differ by
		 * their start */
		sleep(2);
		hop_comm_destroy(comm);
		return 0;
	}
	for (int r = 0; r < rounds; r++)
		group_round(r);
	OK(hop_barrier(comm));
	test_group_error();
	test_waitall();
	test_any(0);
	test_any(1);
	test_op_requests();
	if (size >= 2) {
		test_wild_race();
		test_wild_order();
	}
	test_errors();
	/* a group left open at destroy is discarded */
	OK(hop_group_start(comm));
	OK(hop_send(comm, "x", 1, (rank + 1) % size, 1234));
	if (rank == 0)
		printf("p2p_group: %d ranks on %s, seed %llu, %d rounds: all "
		       "checks passed\n", size, hop_comm_transport(comm), seed,
		       rounds);
	hop_comm_destroy(comm);
	return 0;
}
