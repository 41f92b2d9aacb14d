/*
 * p2p_advert.c - receives posted before their messages (adverts,
 * docs/p2p.md "Receives posted first"), 2 ranks; rank 0 sends, rank 1
 * receives, every byte checked.
 *
 *   posted     rank 1 posts 4 KiB..4 MiB receives on two tags and 32 of
 *              64 KiB on one tag, then says so; rank 0 sends them all.
 *   eagersize  rank 1 posts 16 receives of 4-8 KiB (within the eager
 *              size), then says so; rank 0 sends them (on tcp and shm they
 *              go eager, without adverts; on verbs they are written
 *              straight in).
 *   sendfirst  rank 0 sends 64 KiB..1 MiB before rank 1 posts anything
 *              (unexpected: the RTS and eager paths).
 *   mixed      receives on three tags, one from any source ahead of one
 *              naming rank 0, a 4-byte message on an advertised tag, one
 *              message sent before the adverts: each takes the receive
 *              posting order gives it.
 *   trunc      an advertised 64 KiB receive, a 128 KiB message: both
 *              ends fail with HOP_ERR_TRUNCATED, the next message works.
 *   timeout    (HOP_TIMEOUT short) rank 1's advertised receive times out;
 *              rank 0 sends into it afterwards; the buffer, returned to
 *              rank 1, must not change.
 *
 * Usage (under hop-run, 2 ranks): p2p_advert CASE
 * Prints "p2p_advert CASE: rank R passed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hop/hop.h>

#define TEST_NAME "p2p_advert"
static hop_comm_t *comm;
static int rank;
#include "rank_check.h"

#define TAG_READY 999
#define MAXMSG 48

struct msg {
	int tag;
	size_t len;             /* sent */
	size_t cap;             /* receive buffer */
	int any;                /* receive from any source */
};

static unsigned char byte_of(int msg, size_t i)
{
	return (unsigned char)(msg * 151 + i * 13 + (i >> 12) + 1);
}

static unsigned char *filled(size_t len, int msg)
{
	unsigned char *b = malloc(len ? len : 1);

	if (!b)
		FAIL("out of memory (%zu B)", len);
	for (size_t i = 0; i < len; i++)
		b[i] = byte_of(msg, i);
	return b;
}

static void check(const unsigned char *b, size_t len, int msg)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != byte_of(msg, i))
			FAIL("message %d byte %zu of %zu: %u, want %u", msg, i,
			     len, b[i], byte_of(msg, i));
}

/* A 0-byte message that orders the two ranks' steps. */
static void note(void)
{
	OK(hop_send(comm, NULL, 0, 1 - rank, TAG_READY));
}

static void await_note(void)
{
	OK(hop_recv(comm, NULL, 0, 1 - rank, TAG_READY, NULL));
}

/* Rank 0: send @m[0..n) from @first on, in order, nonblocking. */
static void send_msgs(const struct msg *m, int first, int n,
		      hop_request_t **reqs, unsigned char **bufs)
{
	for (int i = first; i < n; i++) {
		bufs[i] = filled(m[i].len, i);
		OK(hop_isend(comm, bufs[i], m[i].len, 1, m[i].tag, &reqs[i]));
	}
}

/* Rank 1: post receives for @m[0..n) in order. */
static void post_msgs(const struct msg *m, int n, hop_request_t **reqs,
		      unsigned char **bufs)
{
	for (int i = 0; i < n; i++) {
		if (!(bufs[i] = malloc(m[i].cap)))
			FAIL("out of memory");
		memset(bufs[i], 0xee, m[i].cap);
		OK(hop_irecv(comm, bufs[i], m[i].cap,
			     m[i].any ? HOP_ANY_SOURCE : 0, m[i].tag,
			     &reqs[i]));
	}
}

static void wait_checked(const struct msg *m, int n, hop_request_t **reqs,
			 unsigned char **bufs)
{
	hop_status_t st[MAXMSG];

	OK(hop_waitall(n, reqs, st));
	for (int i = 0; rank == 1 && i < n; i++) {
		if (st[i].bytes != m[i].len || st[i].source != 0 ||
		    st[i].tag != m[i].tag)
			FAIL("receive %d: %zu B from %d tag %d, want %zu B "
			     "from 0 tag %d", i, st[i].bytes, st[i].source,
			     st[i].tag, m[i].len, m[i].tag);
		check(bufs[i], m[i].len, i);
		for (size_t k = m[i].len; k < m[i].cap; k++)
			if (bufs[i][k] != 0xee)
				FAIL("receive %d: byte %zu past the message "
				     "written", i, k);
	}
	for (int i = 0; i < n; i++)
		free(bufs[i]);
}

/* Rank 1 posts, says so, rank 0 sends @m[@early..n) (those before @early
 * go before rank 1 says so). */
static void run(const struct msg *m, int n, int early)
{
	hop_request_t *reqs[MAXMSG];
	unsigned char *bufs[MAXMSG];

	if (rank == 0) {
		send_msgs(m, 0, early, reqs, bufs);
		await_note();
		send_msgs(m, early, n, reqs, bufs);
	} else {
		post_msgs(m, n, reqs, bufs);
		note();
	}
	wait_checked(m, n, reqs, bufs);
}

static void case_posted(void)
{
	struct msg m[MAXMSG];
	int n = 0;

	for (size_t len = 4096; len <= (4u << 20); len *= 4) {
		m[n++] = (struct msg){ 1, len, len, 0 };
		m[n++] = (struct msg){ 2, len - 1, len + 100, 0 };
	}
	while (n < 44)
		m[n++] = (struct msg){ 3, 65536, 65536, 0 };
	run(m, n, 0);
}

static void case_eagersize(void)
{
	struct msg m[16];

	for (int i = 0; i < 16; i++)
		m[i] = (struct msg){ 11, 4096 + (size_t)i * 256,
				     4096 + (size_t)i * 256, 0 };
	run(m, 16, 0);
}

static void case_sendfirst(void)
{
	hop_request_t *reqs[MAXMSG];
	unsigned char *bufs[MAXMSG];
	struct msg m[8];

	for (int i = 0; i < 8; i++)
		m[i] = (struct msg){ 5 + i % 2, (size_t)65536 << (i / 2),
				     (size_t)65536 << (i / 2), 0 };
	if (rank == 0) {
		send_msgs(m, 0, 8, reqs, bufs);
		note();
	} else {
		await_note();
		usleep(100000);         /* the messages arrive unexpected */
		post_msgs(m, 8, reqs, bufs);
	}
	wait_checked(m, 8, reqs, bufs);
}

static void case_mixed(void)
{
	const struct msg m[] = {
		{ 7, 40000, 65536, 0 },   /* sent before the adverts */
		/* receives above every software eager size (tcp's 32 KiB)
		 * advertise on every provider */
		{ 8, 50000, 65536, 0 },
		{ 7, 4, 40000, 0 },       /* eager, takes an advertised one */
		{ 7, 8192, 8192, 0 },
		{ 8, 100000, 100000, 0 },
		{ 9, 65536, 65536, 1 },   /* any source ahead ... */
		{ 9, 65536, 65536, 0 },   /* ... of this one: no advert */
		{ 7, 4096, 1 << 20, 0 },
	};

	run(m, (int)(sizeof(m) / sizeof(m[0])), 1);
}

static void case_trunc(void)
{
	unsigned char *b = filled(131072, 1), *r = NULL;
	hop_status_t st;
	int rc;

	if (rank == 1) {
		hop_request_t *req;

		if (!(r = malloc(65536)))
			FAIL("out of memory");
		OK(hop_irecv(comm, r, 65536, 0, 11, &req));
		note();
		rc = hop_wait(&req, &st);
	} else {
		await_note();
		rc = hop_send(comm, b, 131072, 1, 11);
	}
	if (rc != HOP_ERR_TRUNCATED)
		FAIL("128 KiB into an advertised 64 KiB receive: %s, want "
		     "HOP_ERR_TRUNCATED", hop_err_name(rc));
	free(r);
	free(b);
	case_posted();  /* and the communicator still works */
}

/* HOP_TIMEOUT, which the run sets short (1 s; more where the ranks
 * start far apart) */
static double timeout_s(void)
{
	const char *t = getenv("HOP_TIMEOUT");

	return t && atof(t) > 0 ? atof(t) : 60;
}

static void case_timeout(void)
{
	const size_t len = 65536;
	unsigned char *b;
	int rc;

	if (rank == 1) {
		hop_request_t *req;

		if (!(b = malloc(len)))
			FAIL("out of memory");
		memset(b, 0xee, len);
		OK(hop_irecv(comm, b, len, 0, 12, &req));
		note();
		rc = hop_wait(&req, NULL);
		if (rc != HOP_ERR_TIMEOUT)
			FAIL("unanswered advertised receive: %s, want "
			     "HOP_ERR_TIMEOUT", hop_err_name(rc));
		sleep(2);       /* rank 0 writes meanwhile */
		for (size_t i = 0; i < len; i++)
			if (b[i] != 0xee)
				FAIL("byte %zu of the timed-out receive's "
				     "buffer changed after it returned", i);
		free(b);
		return;
	}
	await_note();
	/* past rank 1's deadline */
	usleep((useconds_t)((timeout_s() + 0.5) * 1e6));
	b = filled(len, 0);
	rc = hop_send(comm, b, len, 1, 12);
	printf("p2p_advert timeout: rank 0's late send: %s\n",
	       hop_err_name(rc));
	free(b);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} cases[] = {
		{ "posted", case_posted },   { "sendfirst", case_sendfirst },
		{ "eagersize", case_eagersize },
		{ "mixed", case_mixed },     { "trunc", case_trunc },
		{ "timeout", case_timeout },
	};
	const char *name = argc > 1 ? argv[1] : "";
	int ret, i, n = (int)(sizeof(cases) / sizeof(cases[0]));

	for (i = 0; i < n && strcmp(cases[i].name, name); i++)
		;
	if (i == n) {
		fprintf(stderr, "usage: p2p_advert posted|sendfirst|mixed|"
			"trunc|timeout\n");
		return 2;
	}
	if ((ret = hop_comm_init_env(&comm))) {
		fprintf(stderr, "p2p_advert: init: %s\n", hop_err_name(ret));
		return 1;
	}
	rank = hop_comm_rank(comm);
	if (hop_comm_size(comm) != 2)
		FAIL("needs 2 ranks, has %d", hop_comm_size(comm));
	/* the pair talks first: a receive from a peer nothing was exchanged
	 * with yet does not advertise (it would dial it) */
	if (rank == 0) {
		note();
		await_note();
	} else {
		await_note();
		note();
	}
	cases[i].fn();
	printf("p2p_advert %s: rank %d passed\n", name, rank);
	fflush(stdout);
	hop_comm_destroy(comm);
	return 0;
}
