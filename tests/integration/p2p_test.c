/*
 * p2p_test.c - point-to-point end to end, run by p2p.sh through hop-run on
 * every provider with 2..8 ranks. Each rank checks what it received byte
 * for byte (the pattern depends on sender, receiver, size and index) and
 * exits non-zero on the first problem, naming it.
 *
 *   sizes      0 B, 1 B, odd sizes around the eager limit, 1000003 B, all
 *              pairs at once (isend/irecv + hop_wait); 64 MiB in a ring
 *   blocking   hop_send/hop_recv ping-pong, status checked
 *   tags       many tags interleaved, receives posted in another order
 *              and late (unexpected eager and rendezvous messages)
 *   order      eager and rendezvous messages alternating on one tag,
 *              receives posted first: none overtakes another
 *   test       hop_test polling loops
 *   put        hop_put + hop_wait_imm into registered regions (inline,
 *              staged, chunked sizes, to self), data and immediates checked
 *   errors     bad arguments, truncation, put out of bounds
 *              (p2p_test_errors.c)
 *
 * Options: --quick (skip 64 MiB), --big BYTES (size of the ring test).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "p2p_test.h"

hop_comm_t *comm;
int rank, size;
static size_t big = 64u << 20;

static uint8_t pat(int src, int dst, size_t n, int idx, size_t i)
{
	uint32_t x = (uint32_t)i * 2654435761u;

	return (uint8_t)((x >> 24) ^ (uint32_t)(src * 29 + dst * 7 + idx * 3) ^
			 (uint32_t)(n % 251) ^ (uint32_t)(i >> 16));
}

void fill(uint8_t *b, int src, int dst, size_t n, int idx)
{
	for (size_t i = 0; i < n; i++)
		b[i] = pat(src, dst, n, idx, i);
}

void verify(const uint8_t *b, int src, int dst, size_t n, int idx,
		   const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != pat(src, dst, n, idx, i))
			FAIL("%s: %zu B from rank %d (index %d): byte %zu is "
			     "0x%02x, expected 0x%02x", what, n, src, idx, i,
			     b[i], pat(src, dst, n, idx, i));
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		FAIL("out of memory (%zu B)", n);
	return p;
}

/* A barrier made of point-to-point messages (tag 0x7ffffff0). */
static void p2p_barrier(void)
{
	const int tag = 0x7ffffff0;

	if (rank == 0) {
		for (int r = 1; r < size; r++)
			OK(hop_recv(comm, NULL, 0, r, tag, NULL));
		for (int r = 1; r < size; r++)
			OK(hop_send(comm, NULL, 0, r, tag));
	} else {
		OK(hop_send(comm, NULL, 0, 0, tag));
		OK(hop_recv(comm, NULL, 0, 0, tag, NULL));
	}
}

/* Every pair exchanges one message of each size, all at once. */
static void test_all_pairs(void)
{
	static const size_t sizes[] = { 0, 1, 7, 64, 255, 4097, 8191, 8192,
					8193, 65536, 1000003 };
	const int ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
	int n = ns * (size - 1);
	hop_request_t **sreq = calloc((size_t)n, sizeof(*sreq));
	hop_request_t **rreq = calloc((size_t)n, sizeof(*rreq));
	uint8_t **sbuf = calloc((size_t)n, sizeof(*sbuf));
	uint8_t **rbuf = calloc((size_t)n, sizeof(*rbuf));
	int k = 0;

	if (!sreq || !rreq || !sbuf || !rbuf)
		FAIL("out of memory");
	for (int d = 1; d < size; d++) {
		int to = (rank + d) % size, from = (rank - d + size) % size;

		for (int s = 0; s < ns; s++, k++) {
			sbuf[k] = xmalloc(sizes[s]);
			rbuf[k] = xmalloc(sizes[s] + 16);
			memset(rbuf[k], 0xee, sizes[s] + 16);
			fill(sbuf[k], rank, to, sizes[s], s);
			OK(hop_irecv(comm, sizes[s] ? rbuf[k] : NULL,
				     sizes[s] ? sizes[s] + 16 : 0, from, s,
				     &rreq[k]));
			OK(hop_isend(comm, sizes[s] ? sbuf[k] : NULL, sizes[s],
				     to, s, &sreq[k]));
		}
	}
	k = 0;
	for (int d = 1; d < size; d++) {
		int from = (rank - d + size) % size;

		for (int s = 0; s < ns; s++, k++) {
			hop_status_t st;

			OK(hop_wait(&sreq[k], NULL));
			if (sreq[k])
				FAIL("hop_wait left the send request set");
			OK(hop_wait(&rreq[k], &st));
			if (st.source != from || st.tag != s ||
			    st.bytes != sizes[s])
				FAIL("status {%d, %d, %zu}, expected {%d, %d, "
				     "%zu}", st.source, st.tag, st.bytes, from,
				     s, sizes[s]);
			verify(rbuf[k], from, rank, sizes[s], s, "all pairs");
			for (size_t i = sizes[s]; i < sizes[s] + 16; i++)
				if (rbuf[k][i] != 0xee)
					FAIL("byte %zu past a %zu B message "
					     "was written", i, sizes[s]);
			free(sbuf[k]);
			free(rbuf[k]);
		}
	}
	free(sreq);
	free(rreq);
	free(sbuf);
	free(rbuf);
}

/* A large message around the ring, blocking calls ordered to not deadlock. */
static void test_big_ring(void)
{
	int to = (rank + 1) % size, from = (rank - 1 + size) % size;
	uint8_t *s = xmalloc(big), *r = xmalloc(big);
	hop_request_t *rq;
	hop_status_t st;

	fill(s, rank, to, big, 99);
	memset(r, 0, big);
	OK(hop_irecv(comm, r, big, from, 99, &rq));
	OK(hop_send(comm, s, big, to, 99));
	OK(hop_wait(&rq, &st));
	if (st.bytes != big)
		FAIL("received %zu B, expected %zu", st.bytes, big);
	verify(r, from, rank, big, 99, "ring");
	/* again: the registration cache makes the second one cheaper */
	memset(r, 0, big);
	OK(hop_irecv(comm, r, big, from, 98, &rq));
	OK(hop_send(comm, s, big, to, 98));
	OK(hop_wait(&rq, NULL));
	verify(r, from, rank, big, 99, "ring (second)");
	free(s);
	free(r);
}

/* Ranks 0 and 1 ping-pong with blocking calls. */
static void test_blocking(void)
{
	uint8_t buf[20000], exp[20000];
	hop_status_t st;

	if (rank > 1)
		return;
	for (int i = 0; i < 50; i++) {
		size_t n = (size_t)(i * 397) % sizeof(buf);

		if (rank == 0) {
			fill(buf, 0, 1, n, i);
			OK(hop_send(comm, buf, n, 1, 5));
			OK(hop_recv(comm, buf, sizeof(buf), 1, 6, &st));
			fill(exp, 1, 0, n, i);
		} else {
			OK(hop_recv(comm, buf, sizeof(buf), 0, 5, &st));
			if (st.bytes != n || st.source != 0 || st.tag != 5)
				FAIL("status {%d, %d, %zu}, expected {0, 5, "
				     "%zu}", st.source, st.tag, st.bytes, n);
			verify(buf, 0, 1, n, i, "ping");
			fill(buf, 1, 0, n, i);
			OK(hop_send(comm, buf, n, 0, 6));
			continue;
		}
		if (st.bytes != n)
			FAIL("pong of %zu B, expected %zu", st.bytes, n);
		if (memcmp(buf, exp, n))
			FAIL("pong data differs");
	}
}

/* Rank 1 pauses until what rank 0 sent has landed (verbs writes land
 * without the receiver; with LL on they wait in the slots, a rendezvous
 * request in the CQ), then takes @want bytes on @tag with hop_recv. */
static void recv_after_pause(void *b, size_t cap, int tag, size_t want,
			     int idx)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	hop_status_t st;

	nanosleep(&pause, NULL);
	OK(hop_recv(comm, b, cap, 0, tag, &st));
	if (st.bytes != want)
		FAIL("tag %d: got %zu B, expected %zu", tag, st.bytes, want);
	verify(b, 0, 1, want, idx, "blocking receive after a pause");
}

/* Right after test_blocking ranks 0 and 1 are LL peers: a rendezvous
 * message sent before a small one on the same tag, a small message for a
 * later receive, and one for a receive posted before a blocking one, must
 * each go to their own receive. */
static void test_blocking_order(void)
{
	enum { BIG = 100000 };
	uint8_t *b = xmalloc(BIG), s[16];
	hop_request_t *req;

	if (rank == 0) {
		fill(b, 0, 1, BIG, 7);
		OK(hop_isend(comm, b, BIG, 1, 9, &req));
		for (int k = 0; k < 3; k++) {   /* tags 9, 11, 12 */
			if (k == 1)     /* rank 1 took the ones on tag 9 */
				OK(hop_recv(comm, NULL, 0, 1, 20, NULL));
			fill(s, 0, 1, 4 + (size_t)k, 8 + k);
			OK(hop_send(comm, s, 4 + (size_t)k, 1, k ? 10 + k : 9));
		}
		OK(hop_wait(&req, NULL));
	} else if (rank == 1) {
		recv_after_pause(b, BIG, 9, BIG, 7);
		recv_after_pause(s, sizeof(s), 9, 4, 8);
		OK(hop_send(comm, NULL, 0, 0, 20));
		recv_after_pause(s, sizeof(s), 12, 6, 10);
		recv_after_pause(s, sizeof(s), 11, 5, 9);
	}
	/* a receive posted before a blocking one on the same tag takes the
	 * first message: the blocking one (eager_direct.c) must not go
	 * around it */
	if (rank == 0) {
		OK(hop_recv(comm, NULL, 0, 1, 21, NULL));
		for (int k = 0; k < 2; k++) {
			fill(s, 0, 1, 6, 20 + k);
			OK(hop_send(comm, s, 6, 1, 13));
		}
	} else if (rank == 1) {
		uint8_t first[16];
		hop_status_t st;

		OK(hop_irecv(comm, first, sizeof(first), 0, 13, &req));
		OK(hop_send(comm, NULL, 0, 0, 21));
		recv_after_pause(s, sizeof(s), 13, 6, 21);
		OK(hop_wait(&req, &st));
		if (st.bytes != 6)
			FAIL("posted receive took %zu B, expected 6", st.bytes);
		verify(first, 0, 1, 6, 20, "receive posted first");
	}
	free(b);
}

/*
 * Each rank streams M messages to the next, tags k % T with sizes that
 * alternate eager/rendezvous; the receiver posts late (after a barrier, so
 * the messages are unexpected) and by descending tag. Within one tag the
 * order must be kept.
 */
static void test_tags(void)
{
	enum { M = 96, T = 8 };
	int to = (rank + 1) % size, from = (rank - 1 + size) % size;
	hop_request_t *sreq[M], *rreq[M];
	uint8_t *sb[M], *rb[M];
	size_t len[M];

	for (int k = 0; k < M; k++) {
		len[k] = (k % 3 == 0) ? 20000 + (size_t)k : (size_t)(k * 37);
		sb[k] = xmalloc(len[k]);
		rb[k] = xmalloc(len[k]);
		fill(sb[k], rank, to, len[k], k);
		memset(rb[k], 0, len[k]);
	}
	for (int k = 0; k < M; k++)
		OK(hop_isend(comm, sb[k], len[k], to, k % T, &sreq[k]));
	/* let the eager ones arrive unexpected; rendezvous sends wait */
	usleep(20000);
	for (int t = T - 1; t >= 0; t--)
		for (int k = t; k < M; k += T)
			OK(hop_irecv(comm, rb[k], len[k], from, t, &rreq[k]));
	for (int k = M - 1; k >= 0; k--) {
		hop_status_t st;

		OK(hop_wait(&rreq[k], &st));
		if (st.bytes != len[k] || st.tag != k % T)
			FAIL("message %d: %zu B tag %d, expected %zu B tag %d",
			     k, st.bytes, st.tag, len[k], k % T);
		verify(rb[k], from, rank, len[k], k, "tags");
	}
	for (int k = 0; k < M; k++) {
		OK(hop_wait(&sreq[k], NULL));
		free(sb[k]);
		free(rb[k]);
	}
}

/*
 * Small and rendezvous messages alternating on one tag, to both neighbours
 * and from both, receives posted first: each receive must take the message
 * sent in its place (MPI's non-overtaking rule). With HOP_EAGER_POLL=1 the
 * small ones land memory-polled while the rendezvous requests come through
 * the CQ, so this is where the two paths must keep their order.
 */
static void test_order(void)
{
	enum { K = 24, ROUNDS = 4, N = 2 * K };
	int peers[2] = { (rank + 1) % size, (rank - 1 + size) % size };
	int np = peers[0] == peers[1] ? 1 : 2;
	hop_request_t *sreq[2][N], *rreq[2][N];
	uint8_t *sb[2][N], *rb[2][N];
	size_t len[N];

	for (int k = 0; k < N; k++)
		len[k] = k % 2 ? 9000 + (size_t)k * 331 : (size_t)(k * 7 % 150);
	for (int round = 0; round < ROUNDS; round++) {
		for (int j = 0; j < np; j++)
			for (int k = 0; k < N; k++) {
				sb[j][k] = xmalloc(len[k]);
				rb[j][k] = xmalloc(len[k]);
				fill(sb[j][k], rank, peers[j], len[k], k + round);
				OK(hop_irecv(comm, rb[j][k], len[k], peers[j], 5,
					     &rreq[j][k]));
			}
		for (int k = 0; k < N; k++)
			for (int j = 0; j < np; j++)
				OK(hop_isend(comm, sb[j][k], len[k], peers[j], 5,
					     &sreq[j][k]));
		for (int j = 0; j < np; j++)
			for (int k = 0; k < N; k++) {
				hop_status_t st;

				OK(hop_wait(&rreq[j][k], &st));
				if (st.bytes != len[k])
					FAIL("round %d: receive %d from rank %d "
					     "took %zu B, expected %zu B", round,
					     k, peers[j], st.bytes, len[k]);
				verify(rb[j][k], peers[j], rank, len[k],
				       k + round, "order");
			}
		for (int j = 0; j < np; j++)
			for (int k = 0; k < N; k++) {
				OK(hop_wait(&sreq[j][k], NULL));
				free(sb[j][k]);
				free(rb[j][k]);
			}
	}
}

/* hop_test polling to completion, with a counter of polls. */
static void test_hop_test(void)
{
	int to = (rank + 1) % size, from = (rank - 1 + size) % size;
	size_t n = 300000;
	uint8_t *s = xmalloc(n), *r = xmalloc(n);
	hop_request_t *rs, *rr;
	int ds = 0, dr = 0;
	long polls = 0;
	hop_status_t st = { -1, -1, 0, 0 };

	fill(s, rank, to, n, 7);
	OK(hop_irecv(comm, r, n, from, 77, &rr));
	OK(hop_isend(comm, s, n, to, 77, &rs));
	while (!ds || !dr) {
		if (!ds)
			OK(hop_test(&rs, &ds, NULL));
		if (!dr)
			OK(hop_test(&rr, &dr, &st));
		if (++polls > 100000000L)
			FAIL("hop_test never completed");
	}
	if (rs || rr)
		FAIL("completed requests not set to NULL");
	if (st.bytes != n || st.source != from || st.tag != 77)
		FAIL("status {%d, %d, %zu}", st.source, st.tag, st.bytes);
	verify(r, from, rank, n, 7, "hop_test");
	free(s);
	free(r);
}

/* Every rank puts a block into every rank's region (itself included). */
static void test_put(void)
{
	static const size_t sizes[] = { 0, 8, 200, 5000, 300000, 3000000 };
	const int ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
	size_t blk = 3000000, region = blk * (size_t)size;
	uint8_t *mem = xmalloc(region), *src = xmalloc(blk);
	hop_rkey_t *keys = calloc((size_t)size, sizeof(*keys));
	hop_mr_t *mr, *smr;
	int *seen = calloc((size_t)size * ns, sizeof(int));

	if (!keys || !seen)
		FAIL("out of memory");
	memset(mem, 0, region);
	OK(hop_mem_register(comm, mem, region, HOP_ACCESS_REMOTE_WRITE, &mr));
	OK(hop_mem_register(comm, src, blk, HOP_ACCESS_LOCAL, &smr));
	OK(hop_mr_rkey(mr, &keys[rank]));
	if (keys[rank].owner != (uint32_t)rank || keys[rank].len != region)
		FAIL("rkey owner %u len %llu", keys[rank].owner,
		     (unsigned long long)keys[rank].len);
	for (int r = 0; r < size; r++) {       /* exchange keys */
		if (r == rank)
			continue;
		hop_request_t *q;

		OK(hop_irecv(comm, &keys[r], sizeof(keys[r]), r, 300, &q));
		OK(hop_send(comm, &keys[rank], sizeof(keys[rank]), r, 300));
		OK(hop_wait(&q, NULL));
	}
	for (int s = 0; s < ns; s++) {
		for (int d = 0; d < size; d++) {
			int to = (rank + d) % size;

			fill(src, rank, to, sizes[s], s);
			/* odd sizes use the cache (local_mr NULL) */
			OK(hop_put(comm, (s & 1) ? NULL : smr, src, sizes[s],
				   &keys[to], (uint64_t)rank * blk,
				   ((uint32_t)rank << 16) | (uint32_t)s));
		}
		/* collect one immediate per writer; data must be in place */
		for (int i = 0; i < size; i++) {
			uint32_t imm;
			int from;
			size_t bytes;

			OK(hop_wait_imm(comm, -1, &imm, &from, &bytes));
			if ((int)(imm >> 16) != from || (imm & 0xffff) != (uint32_t)s ||
			    bytes != sizes[s])
				FAIL("immediate 0x%08x from rank %d (%zu B), "
				     "expected writer %d round %d (%zu B)",
				     imm, from, bytes, from, s, sizes[s]);
			if (seen[from * ns + s]++)
				FAIL("second immediate from rank %d round %d",
				     from, s);
			verify(mem + (size_t)from * blk, from, rank, sizes[s],
			       s, "put");
		}
		p2p_barrier();  /* nobody overwrites before all checked */
	}
	/* hop_wait_imm for one peer */
	if (size > 1) {
		int to = (rank + 1) % size, from = (rank - 1 + size) % size;
		uint32_t imm;
		int who;

		OK(hop_put(comm, NULL, src, 16, &keys[to], 0, 0xabc00000u | (uint32_t)rank));
		OK(hop_wait_imm(comm, from, &imm, &who, NULL));
		if (who != from || imm != (0xabc00000u | (uint32_t)from))
			FAIL("hop_wait_imm(%d): imm 0x%08x from %d", from, imm,
			     who);
	}
	p2p_barrier();
	OK(hop_mem_deregister(comm, smr));
	OK(hop_mem_deregister(comm, mr));
	free(keys);
	free(seen);
	free(mem);
	free(src);
}

int main(int argc, char **argv)
{
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			big = 0;
		else if (!strcmp(argv[i], "--big") && i + 1 < argc)
			big = strtoull(argv[++i], NULL, 0);
	}
	if ((ret = hop_comm_init_env(&comm))) {
		fprintf(stderr, "p2p_test: hop_comm_init_env: %s: %s\n",
			hop_err_name(ret), hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	size = hop_comm_size(comm);
	if (size < 2) {
		fprintf(stderr, "p2p_test: needs at least 2 ranks\n");
		hop_comm_destroy(comm);
		return 1;
	}
	test_all_pairs();
	p2p_barrier();
	if (big)
		test_big_ring();
	p2p_barrier();
	test_blocking();
	test_blocking_order();
	test_tags();
	p2p_barrier();
	test_order();
	p2p_barrier();
	test_hop_test();
	test_put();
	test_errors();
	p2p_barrier();
	if (rank == 0)
		printf("p2p_test: %d ranks on %s: all checks passed\n", size,
		       hop_comm_transport(comm));
	hop_comm_destroy(comm);
	return 0;
}
