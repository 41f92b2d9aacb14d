/*
 * relay.c - hop_relay(): the chunk engine of a multi-hop transfer.
 *
 * Every rank on the path runs the same loop over the k chunks of the plan
 * with a window of RELAY_WINDOW slots. A slot holds one chunk from the
 * moment its receive is posted until it has been sent on:
 *
 *   FREE --irecv--> RECV --done--> FULL --isend--> SEND --done--> FREE
 *
 * The source has no receive (its chunks are FULL at once), the destination
 * no send (a received chunk is finished). Receives are posted as soon as a
 * slot is free, so a relay receives chunk i+1 (and up to the window ahead)
 * while it forwards chunk i: that is the overlap the pipelined model
 * assumes. Sends and receives are posted in chunk order, which the channel
 * layer preserves per pair and tag. Store-and-forward is the same loop
 * with one chunk.
 *
 * Chunks land in the caller's buffer when there is one (source,
 * destination, a relay given a buffer), else in a ring of window slots of
 * one chunk each. Chunk requests carry the plan's signature, so ranks that
 * planned differently fail with HOP_ERR_MISMATCH. Every wait goes through
 * the progress engine's deadline (HOP_TIMEOUT).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p/p2p_priv.h"
#include "relay/relay.h"

enum slot_state { SL_FREE = 0, SL_RECV, SL_FULL, SL_SEND };

struct relay_slot {
	int st;
	long chunk;
	struct hop_p2p_req rq;
};

struct relay_run {
	struct hop_comm *comm;
	const struct relay_plan *pl;
	unsigned char *base;    /* chunk j at base + off(j), or NULL */
	unsigned char *ring;    /* else slot s at ring + s * slot_bytes */
	size_t slot_bytes;
	int prev, next;         /* neighbours on the path, -1 at the ends */
	uint64_t tag;
	int nslots;
	long next_recv;         /* next chunk to receive (or take, at src) */
	long next_send;         /* next chunk to send on */
	long finished;          /* chunks done with at this rank */
	struct relay_slot slot[RELAY_WINDOW];
};

static unsigned char *chunk_ptr(const struct relay_run *x, long j)
{
	if (x->base)
		return x->base + relay_chunk_off(x->pl->len, x->pl->k, j);
	return x->ring ? x->ring + (size_t)(j % x->nslots) * x->slot_bytes
		       : NULL;
}

static size_t chunk_len(const struct relay_run *x, long j)
{
	return relay_chunk_off(x->pl->len, x->pl->k, j + 1) -
	       relay_chunk_off(x->pl->len, x->pl->k, j);
}

/* A completed chunk request: check it, move its slot on. */
static int retire(struct relay_run *x, struct relay_slot *s)
{
	size_t want = chunk_len(x, s->chunk);

	if (s->rq.status)
		return s->rq.status;
	if (s->st == SL_SEND) {
		s->st = SL_FREE;
		x->finished++;
		return 0;
	}
	if (s->rq.bytes != want)
		return hop_comm_fail(x->comm, HOP_ERR_MISMATCH, "hop_relay: "
				     "rank %d received %zu B as chunk %ld of %ld "
				     "from rank %d, expected %zu B", x->comm->rank,
				     s->rq.bytes, s->chunk, x->pl->k, x->prev,
				     want);
	if (x->next < 0) {
		s->st = SL_FREE;
		x->finished++;
	} else {
		s->st = SL_FULL;
	}
	return 0;
}

/* A start call that failed did not link its request (unless it also
 * completed it): the slot holds nothing in flight. */
static int unposted(struct relay_slot *s, int ret)
{
	if (!s->rq.done)
		s->st = SL_FREE;
	return ret;
}

/* Retire what completed, then post receives and sends in chunk order. */
static int pump(struct relay_run *x)
{
	const struct relay_plan *pl = x->pl;
	int ret;

	for (int i = 0; i < x->nslots; i++) {
		struct relay_slot *s = &x->slot[i];

		if ((s->st == SL_RECV || s->st == SL_SEND) && s->rq.done &&
		    (ret = retire(x, s)))
			return ret;
	}
	while (x->next_recv < pl->k &&
	       x->slot[x->next_recv % x->nslots].st == SL_FREE) {
		struct relay_slot *s = &x->slot[x->next_recv % x->nslots];

		s->chunk = x->next_recv++;
		if (x->prev < 0) {
			s->st = SL_FULL;        /* the source's own data */
			continue;
		}
		s->rq.cb = NULL;
		s->rq.cb_arg = NULL;
		s->st = SL_RECV;
		if ((ret = hop_p2p_irecv(x->comm, &s->rq, x->prev, x->tag,
					 chunk_ptr(x, s->chunk),
					 chunk_len(x, s->chunk), pl->sig)))
			return unposted(s, ret);
	}
	while (x->next_send < x->next_recv &&
	       x->slot[x->next_send % x->nslots].st == SL_FULL) {
		struct relay_slot *s = &x->slot[x->next_send % x->nslots];

		x->next_send++;
		s->rq.cb = NULL;
		s->rq.cb_arg = NULL;
		s->st = SL_SEND;
		if ((ret = hop_p2p_isend(x->comm, &s->rq, x->next, x->tag,
					 chunk_ptr(x, s->chunk),
					 chunk_len(x, s->chunk), pl->sig)))
			return unposted(s, ret);
	}
	return 0;
}

/* Wait predicate: some posted chunk request completed. */
static int any_done(void *arg)
{
	const struct relay_run *x = arg;

	for (int i = 0; i < x->nslots; i++)
		if ((x->slot[i].st == SL_RECV || x->slot[i].st == SL_SEND) &&
		    x->slot[i].rq.done)
			return 1;
	return 0;
}

/* What a timed-out wait was waiting for: the oldest chunk in flight. */
static void describe(void *arg, char *buf, size_t len)
{
	const struct relay_run *x = arg;
	const struct relay_slot *oldest = NULL;
	char req[160] = "nothing";

	for (int i = 0; i < x->nslots; i++) {
		const struct relay_slot *s = &x->slot[i];

		if ((s->st == SL_RECV || s->st == SL_SEND) && !s->rq.done &&
		    (!oldest || s->chunk < oldest->chunk))
			oldest = s;
	}
	if (oldest)
		p2p_describe_req(&oldest->rq, req, sizeof(req));
	snprintf(buf, len, "hop_relay (position %d of %d ranks, %zu B in %ld "
		 "chunks): chunk %ld, %s", x->pl->pos, x->pl->npath,
		 x->pl->len, x->pl->k, oldest ? oldest->chunk : x->finished,
		 req);
}

static int outstanding(const struct relay_run *x)
{
	for (int i = 0; i < x->nslots; i++)
		if ((x->slot[i].st == SL_RECV || x->slot[i].st == SL_SEND) &&
		    !x->slot[i].rq.done)
			return 1;
	return 0;
}

/*
 * After an error nothing may stay linked to our slots: fail the comm (a
 * transfer torn in the middle leaves the peers' chunk streams out of
 * step, so the comm cannot be used for relays again) and let the progress
 * engine complete every outstanding request with the failure.
 */
static int abandon(struct relay_run *x, int code)
{
	struct hop_comm *comm = x->comm;
	char why[HOP_MSG_LEN];

	if (!p2p_failed(comm)) {
		snprintf(why, sizeof(why), "%s", comm->last_error);
		hop_comm_fail(comm, code, "hop_relay: rank %d stopped after %ld "
			      "of %ld chunks: %s", comm->rank, x->finished,
			      x->pl->k, why[0] ? why : hop_strerror(code));
	}
	for (int i = 0; i < 1000 && outstanding(x); i++)
		hop_p2p_progress(comm);
	if (outstanding(x))     /* the engine broke its promise: keep memory */
		HOP_WARN("hop_relay: requests still linked after failure");
	return code;
}

static int run_loop(struct relay_run *x)
{
	int ret;

	for (;;) {
		if ((ret = pump(x)))
			return ret;
		if (x->finished == x->pl->k)
			return 0;
		if ((ret = p2p_wait_loop(x->comm, any_done, x, describe, x)))
			return ret;
	}
}

int relay_run(struct hop_comm *comm, const struct relay_plan *pl, void *buf,
	      int tag)
{
	struct relay_run x;
	int ret;

	memset(&x, 0, sizeof(x));
	x.comm = comm;
	x.pl = pl;
	x.base = buf;
	x.prev = pl->pos > 0 ? pl->path[pl->pos - 1] : -1;
	x.next = pl->pos + 1 < pl->npath ? pl->path[pl->pos + 1] : -1;
	x.tag = HOP_TAG(HOP_CTX_INTERNAL, RELAY_TAG_HI, (uint32_t)tag);
	x.nslots = pl->k < RELAY_WINDOW ? (int)pl->k : RELAY_WINDOW;
	if (!buf && pl->len) {
		/* a relay without a buffer: a ring of whole chunks */
		x.slot_bytes = relay_chunk_off(pl->len, pl->k, 1) +
			       (pl->len % (size_t)pl->k ? 1 : 0);
		if (!(x.ring = malloc((size_t)x.nslots * x.slot_bytes)))
			return hop_set_error(comm, HOP_ERR_NO_MEMORY, "hop_relay:"
					     " no memory for %d chunks of %zu B",
					     x.nslots, x.slot_bytes);
	}
	if ((ret = run_loop(&x)))
		ret = abandon(&x, ret);
	free(x.ring);
	return ret;
}

static int relay_call(struct hop_comm *comm, void *buf, size_t len, int src,
		      int dst, const int *path, int npath,
		      const hop_relay_opts_t *opts)
{
	struct relay_plan pl;
	int ret;

	if ((ret = relay_plan_make(comm, "hop_relay", len, src, dst, path,
				   npath, opts, &pl)))
		return ret;
	if (pl.pos < 0)
		return 0;
	if (!buf && len && (pl.pos == 0 || pl.pos == pl.npath - 1))
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "hop_relay: buf "
				     "is NULL with len %zu at the %s (rank %d)",
				     len, pl.pos ? "destination" : "source",
				     comm->rank);
	HOP_TRACE("hop_relay: rank %d position %d of %d, %zu B, %s, %ld "
		  "chunks, predicted %.1f us (%s)", comm->rank, pl.pos,
		  pl.npath, len, pl.mode == HOP_RELAY_STORE_FORWARD
					 ? "store-and-forward" : "pipelined",
		  pl.k, pl.predicted * 1e6, pl.model);
	return relay_run(comm, &pl, buf, opts ? opts->tag : 0);
}

int hop_relay(hop_comm_t *comm, void *buf, size_t len, int src, int dst,
	      const int *path, int npath, const hop_relay_opts_t *opts)
{
	HOP_ENTERED(comm, "hop_relay",
		    hop_comm_derived(comm)
			    ? hop_comm_derived_refuse(comm, "hop_relay")
			    : relay_call(comm, buf, len, src, dst, path, npath,
					 opts));
}
