/*
 * traffic.c - the data phase: on every connection each process sends
 * o.msgs messages and receives as many, with random sizes (0 B up to
 * o.max_size) and tags, many requests in flight, grouped receives of 1 to
 * maxRecvs buffers, a retry whenever the plugin hands back a NULL request,
 * and test() polled until done, as NCCL's proxy does.
 *
 * Both processes derive every message's size, tag and contents from the
 * seed, the sender's rank, the connection and the message index, so the
 * receiver checks each byte and each reported size against its own
 * computation, and that nothing was written past the size it expected.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#define WINDOW 320          /* harness slots: more than the plugin's pool */
#define FLOOD 300           /* first messages: small, posted untested */
#define CANARY 0xa5

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct msg {
	int size, tag, slack;
	uint64_t key;          /* of the contents */
};

static struct msg msg_of(const struct opts *o, int sender, int conn, int i)
{
	uint64_t k = mix(o->seed ^ ((uint64_t)sender << 56) ^
			 ((uint64_t)conn << 48) ^ (uint64_t)i);
	uint64_t r1 = mix(k ^ 1), r2 = mix(k ^ 2), r3 = mix(k ^ 3);
	struct msg m = { .key = k };
	int e = (int)(r1 % 24);

	if (i < FLOOD)
		m.size = (int)(r2 % 4097);
	else if (r1 % 16 == 0)
		m.size = (r1 >> 8) % 2 ? 0 : o->max_size;
	else /* log-uniform: most small, some up to max_size */
		m.size = (int)(r2 % ((1ull << e) + 1));
	if (m.size > o->max_size)
		m.size = o->max_size;
	m.tag = r3 % 9 == 8 ? 0x7ffffffe : (int)(r3 % 8); /* max is reserved */
	m.slack = (int)((r3 >> 8) % 17);
	return m;
}

/* The 8 bytes at word @w of a message with contents @key, little-endian. */
static void word_at(uint8_t out[8], uint64_t key, size_t w)
{
	uint64_t v = mix(key ^ (w * 0x2545f4914f6cdd1dull));

	for (int b = 0; b < 8; b++)
		out[b] = (uint8_t)(v >> (8 * b));
}

static void fill(uint8_t *p, size_t len, uint64_t key)
{
	uint8_t word[8];

	for (size_t w = 0; w * 8 < len; w++) {
		size_t n = len - w * 8 < 8 ? len - w * 8 : 8;

		word_at(word, key, w);
		memcpy(p + w * 8, word, n);
	}
}

/* Offset of the first wrong byte, or -1. */
static long check(const uint8_t *p, size_t len, uint64_t key)
{
	uint8_t word[8];

	for (size_t w = 0; w * 8 < len; w++) {
		size_t n = len - w * 8 < 8 ? len - w * 8 : 8;

		word_at(word, key, w);
		if (memcmp(p + w * 8, word, n) == 0)
			continue;
		for (size_t b = 0; b < n; b++)
			if (p[w * 8 + b] != word[b])
				return (long)(w * 8 + b);
	}
	return -1;
}

struct slot {
	void *req;
	int first, n;           /* message index, buffers */
	uint8_t *buf[MAX_GROUP];
	void *mh[MAX_GROUP];
	int cap[MAX_GROUP];
};

struct side {
	int next, done;         /* messages posted, completed */
	long bytes;             /* in flight */
	int nfl;
	struct slot fl[WINDOW];
	struct slot staged;     /* prepared, refused with a NULL request */
	int have_staged;
};

struct conn_state {
	struct side out, in;
	int null_sends, null_recvs;
};

static int slot_alloc(struct harness *h, void *comm, struct slot *s, int j,
		      int cap)
{
	if (!(s->buf[j] = malloc(cap ? (size_t)cap : 1)))
		FAIL("out of memory for a %d B buffer", cap);
	s->cap[j] = cap;
	CHECK_RES(h->net->regMr(comm, s->buf[j], (size_t)cap, NCCL_PTR_HOST,
				&s->mh[j]));
	return 0;
}

static int slot_free(struct harness *h, void *comm, struct slot *s)
{
	int rc = 0;

	for (int j = 0; j < s->n; j++) {
		if (h->net->deregMr(comm, s->mh[j]) != ncclSuccess)
			rc = -1;
		free(s->buf[j]);
	}
	if (rc)
		FAIL("deregMr of message %d failed", s->first);
	return 0;
}

/* Prepare the next send (or receive group) of connection @k. */
static int stage(struct harness *h, int k, struct side *sd, int send)
{
	struct slot *s = &sd->staged;
	void *comm = send ? h->send[k] : h->recv[k];
	int sender = send ? h->o.rank : 1 - h->o.rank;
	int n = 1;

	if (!send) {
		uint64_t r = mix(h->o.seed ^ 0x9e3779b9ull ^ (uint64_t)k << 40 ^
				 (uint64_t)sd->next);

		n = 1 + (int)(r % (uint64_t)h->props.maxRecvs);
		if (n > 8)
			n = 8;
		if (n > h->o.msgs - sd->next)
			n = h->o.msgs - sd->next;
	}
	memset(s, 0, sizeof(*s));
	s->first = sd->next;
	s->n = n;
	for (int j = 0; j < n; j++) {
		struct msg m = msg_of(&h->o, sender, k, s->first + j);
		int cap = send ? m.size : m.size + m.slack;

		if (slot_alloc(h, comm, s, j, cap))
			return -1;
		if (send)
			fill(s->buf[j], (size_t)m.size, m.key);
		else
			memset(s->buf[j], CANARY, (size_t)cap);
	}
	sd->have_staged = 1;
	return 0;
}

static long slot_bytes(const struct slot *s)
{
	long b = 0;

	for (int j = 0; j < s->n; j++)
		b += s->cap[j];
	return b;
}

/*
 * Bytes in flight per connection and side: 8 of the largest messages (the
 * SoftRoCE VMs have 512 MiB), like NCCL's fixed buffers per connection,
 * and at least the whole flood.
 */
static long bytes_cap(const struct harness *h)
{
	long cap = 8l * h->o.max_size, flood = FLOOD * 4097l;

	return cap < flood ? flood : cap; /* the flood's small ones fit */
}

/* Post what may be posted on one side; stops at a NULL request. */
static int post_side(struct harness *h, int k, struct conn_state *cs,
		     int send, int limit)
{
	struct side *sd = send ? &cs->out : &cs->in;

	while (sd->next < limit && sd->nfl < WINDOW) {
		struct slot *s = &sd->staged;
		int tags[8];
		void *data[8];

		if (!sd->have_staged && stage(h, k, sd, send))
			return -1;
		if (sd->nfl && sd->bytes + slot_bytes(s) > bytes_cap(h))
			return 0;
		for (int j = 0; j < s->n; j++) {
			tags[j] = msg_of(&h->o, send ? h->o.rank : 1 - h->o.rank,
					 k, s->first + j).tag;
			data[j] = s->buf[j];
		}
		if (send)
			CHECK_RES(h->net->isend(h->send[k], s->buf[0], s->cap[0],
						tags[0], s->mh[0], &s->req));
		else
			CHECK_RES(h->net->irecv(h->recv[k], s->n, data, s->cap,
						tags, s->mh, &s->req));
		if (!s->req) { /* the plugin is full: retry later */
			(send ? &cs->null_sends : &cs->null_recvs)[0]++;
			return 0;
		}
		sd->fl[sd->nfl++] = *s;
		sd->bytes += slot_bytes(s);
		sd->next += s->n;
		sd->have_staged = 0;
	}
	return 0;
}

/* A completed receive group: sizes, contents, nothing past the end. */
static int verify(struct harness *h, int k, const struct slot *s,
		  const int *sizes)
{
	for (int j = 0; j < s->n; j++) {
		struct msg m = msg_of(&h->o, 1 - h->o.rank, k, s->first + j);
		long bad;

		if (sizes[j] != m.size)
			FAIL("conn %d message %d: test() reported %d B, the "
			     "peer sent %d B", k, s->first + j, sizes[j], m.size);
		if ((bad = check(s->buf[j], (size_t)m.size, m.key)) >= 0)
			FAIL("conn %d message %d (%d B, tag %d): byte %ld is "
			     "wrong", k, s->first + j, m.size, m.tag, bad);
		for (int b = m.size; b < s->cap[j]; b++)
			if (s->buf[j][b] != CANARY)
				FAIL("conn %d message %d: byte %d written past "
				     "the %d B message", k, s->first + j, b,
				     m.size);
	}
	return 0;
}

/* test() every request in flight on one side; 1 when one completed. */
static int test_side(struct harness *h, int k, struct side *sd, int send)
{
	void *comm = send ? h->send[k] : h->recv[k];
	int progressed = 0;

	for (int i = 0; i < sd->nfl;) {
		struct slot *s = &sd->fl[i];
		int done = 0, sizes[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };

		CHECK_RES(h->net->test(s->req, &done, sizes));
		if (!done) {
			i++;
			continue;
		}
		if (send && sizes[0] != s->cap[0])
			FAIL("conn %d message %d: test() reported %d B sent, "
			     "not %d", k, s->first, sizes[0], s->cap[0]);
		if (!send && verify(h, k, s, sizes))
			return -1;
		sd->bytes -= slot_bytes(s);
		sd->done += s->n;
		if (slot_free(h, comm, s))
			return -1;
		*s = sd->fl[--sd->nfl];
		progressed = 1;
	}
	return progressed;
}

/*
 * Conn 0's first messages, posted with no test(): NCCL's ext-net README
 * has a send comm take maxRecvs x NCCL_NET_MAX_REQUESTS (256) sends.
 */
static int flood(struct harness *h, struct conn_state *cs)
{
	int limit = h->o.msgs < FLOOD ? h->o.msgs : FLOOD;
	int want = h->props.maxRecvs * NCCL_NET_MAX_REQUESTS;

	if (want > limit)
		want = limit;
	if (post_side(h, 0, cs, 1, limit))
		return -1;
	if (cs->out.nfl < want)
		FAIL("the plugin took only %d sends before a NULL request; "
		     "NCCL may have %d in flight", cs->out.nfl, want);
	printf("nccl_net_test r%d: %d sends in flight untested (%s)\n",
	       h->o.rank, cs->out.nfl, cs->null_sends ?
	       "then a NULL request: pool full" : "no NULL request");
	return 0;
}

/* After a failure, once the comms are closed (registrations with them). */
static void side_free(struct side *sd)
{
	for (int i = 0; i < sd->nfl; i++)
		for (int j = 0; j < sd->fl[i].n; j++)
			free(sd->fl[i].buf[j]);
	for (int j = 0; sd->have_staged && j < sd->staged.n; j++)
		free(sd->staged.buf[j]);
}

/* --die-after: rank 1 vanishes as a crashed process would, comms open. */
static void maybe_die(struct harness *h, const struct conn_state *cs)
{
	int got = 0;

	if (!h->o.die_after || h->o.rank != 1)
		return;
	for (int k = 0; k < h->o.nconns; k++)
		got += cs[k].in.done;
	if (got < h->o.die_after)
		return;
	printf("nccl_net_test r1: exiting after %d receives, comms open\n",
	       got);
	fflush(NULL);
	_exit(0);
}

static int loop(struct harness *h, struct conn_state *cs, long *rx)
{
	int n = h->o.nconns, M = h->o.msgs;
	/* a rank 1 that will die sends no more than it receives before it
	 * does: rank 0 then cannot finish, whatever the timing, and must
	 * see the death as an error */
	int sends = h->o.die_after && h->o.rank == 1 && h->o.die_after < M
			    ? h->o.die_after : M;

	for (;;) {
		int all = 1, moved = 0, r;

		maybe_die(h, cs);
		for (int k = 0; k < n; k++) {
			if (post_side(h, k, &cs[k], 1, sends) ||
			    post_side(h, k, &cs[k], 0, M))
				return -1;
			if ((r = test_side(h, k, &cs[k].out, 1)) < 0 ||
			    (moved |= r, r = test_side(h, k, &cs[k].in, 0)) < 0)
				return -1;
			moved |= r;
			all &= cs[k].out.done == M && cs[k].in.done == M;
		}
		if (all)
			break;
		if (deadline_passed(h))
			FAIL("deadline passed: conn 0 sent %d/%d, received "
			     "%d/%d", cs[0].out.done, M, cs[0].in.done, M);
		if (!moved)
			sched_yield(); /* 2 processes may share 1 core */
	}
	for (int k = 0; k < n; k++)
		for (int i = 0; i < M; i++)
			*rx += msg_of(&h->o, 1 - h->o.rank, k, i).size;
	return 0;
}

int run_traffic(struct harness *h)
{
	struct conn_state *cs = calloc((size_t)h->o.nconns, sizeof(*cs));
	uint64_t t0 = now_ns();
	long rx = 0;
	int rc, nulls = 0;

	if (!cs)
		FAIL("out of memory");
	rc = flood(h, &cs[0]);
	if (rc == 0)
		rc = loop(h, cs, &rx);
	if (rc) /* requests still out may touch their buffers until then */
		close_all(h, 1);
	for (int k = 0; k < h->o.nconns; k++) {
		if (rc) {
			side_free(&cs[k].out);
			side_free(&cs[k].in);
		}
		nulls += cs[k].null_sends + cs[k].null_recvs;
	}
	free(cs);
	if (rc == 0) {
		double s = (double)(now_ns() - t0) / 1e9;

		printf("nccl_net_test r%d: %d x %d messages each way verified, "
		       "%.1f MB received in %.2f s (%.0f MB/s), %d NULL "
		       "requests retried\n", h->o.rank, h->o.nconns, h->o.msgs,
		       (double)rx / 1e6, s, (double)rx / 1e6 / s, nulls);
	}
	return rc;
}
