/*
 * simnet.c - discrete-event simulation of schedules over a network of
 * ports (see simnet.h).
 *
 * Events, in virtual-time order (ties in the order they were made, so a
 * run is deterministic): POST, a SEND or RECV step became ready on its
 * rank (the shared driver computed when); DONE, a message finished, which
 * completes its two steps and frees its two ports. Posted steps without a
 * partner wait, FIFO per (source, destination, tag): the p2p layer's
 * matching rule (sim_match.c). A matched message waits in the
 * queues of its two ports; ports touched at an instant are arbitrated
 * once every event of that instant is processed, so a message that
 * becomes eligible at the same time as others competes with them.
 */
#include "sim/simnet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim_match.h"
#include "model/model.h"
#include "model/topo.h"

/* Heap entry: an event (key = time, a = rank or message, b = step or -1;
 * a POST carries what matching needs of its step, read when the step
 * became ready, so that the post does not miss the cache on it again) or
 * a port's waiting message (key = its step index, a = message, seq = the
 * message's generation). */
struct ent {
	double key;
	uint64_t seq;
	int a, b;
	int peer, is_send;
	uint32_t tag;
};

struct hop_simnet_heap {
	struct ent *e;
	size_t n, cap;
};

struct hop_simnet_port {
	struct hop_simnet_heap q;       /* eligible messages waiting */
	int busy;
	int dirty;                      /* in net->dirty */
};

struct hop_simnet_msg {
	int srank, sstep, rrank, rstep;
	int started;
	int next_free;                  /* free list */
	uint64_t gen;                   /* port entries of a reused slot's
					 * earlier message carry an older one */
};

struct hop_simnet_route {
	int valid, src, dst;
	size_t len;
	double t;
};

/* ---- binary min-heap on (key, seq) ---- */

static int ent_less(const struct ent *x, const struct ent *y)
{
	return x->key < y->key || (x->key == y->key && x->seq < y->seq);
}

static int heap_push(struct hop_simnet_heap *h, struct ent e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t ncap = h->cap ? h->cap * 2 : 16;
		void *p = realloc(h->e, ncap * sizeof(*h->e));

		if (!p)
			return HOP_ERR_NO_MEMORY;
		h->e = p;
		h->cap = ncap;
	}
	for (i = h->n++; i > 0 && ent_less(&e, &h->e[(i - 1) / 2]);
	     i = (i - 1) / 2)
		h->e[i] = h->e[(i - 1) / 2];
	h->e[i] = e;
	return 0;
}

static struct ent heap_pop(struct hop_simnet_heap *h)
{
	struct ent top = h->e[0], last = h->e[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && ent_less(&h->e[c + 1], &h->e[c]))
			c++;
		if (!ent_less(&h->e[c], &last))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	if (h->n)
		h->e[i] = last;
	return top;
}

/* Driver callback: a SEND or RECV is ready; POST it at that time. */
static int net_start(void *ctx, struct hop_sched *s, int idx)
{
	struct hop_simnet *net = ctx;
	const struct hop_step *st = &s->steps[idx];

	return heap_push(net->events, (struct ent){
		hop_sim_tready(&net->clock, s, idx), net->seq++, s->args.rank, idx,
		st->peer, st->kind == HOP_STEP_SEND, st->tag });
}

/* ---- ports ---- */

static int mark_dirty(struct hop_simnet *net, int rank, int is_rx)
{
	struct hop_simnet_port *p = is_rx ? &net->rx[rank] : &net->tx[rank];

	if (p->dirty)
		return 0;
	if (net->ndirty == net->dirty_cap) {
		int ncap = net->dirty_cap ? net->dirty_cap * 2 : 1024;
		void *q = realloc(net->dirty, (size_t)ncap * sizeof(int));

		if (!q)
			return HOP_ERR_NO_MEMORY;
		net->dirty = q;
		net->dirty_cap = ncap;
	}
	p->dirty = 1;
	net->dirty[net->ndirty++] = 2 * rank + is_rx;
	return 0;
}

/* Store-and-forward time of @len bytes from @src to @dst over the
 * topology's best route (ranks without a direct link), remembered per
 * (src, dst, len) in a direct-mapped cache. */
static int routed_time(struct hop_simnet *net, int src, int dst, size_t len,
		       double *t)
{
	uint64_t h = ((uint64_t)(uint32_t)src << 32 | (uint32_t)dst) ^
		     (uint64_t)len * 0x9e3779b97f4a7c15ull;
	struct hop_simnet_route *c;
	struct hop_route r;
	char err[160];

	h = (h ^ h >> 31) * 0xbf58476d1ce4e5b9ull;
	if (!net->routes &&
	    !(net->routes = calloc(HOP_SIMNET_ROUTES, sizeof(*net->routes))))
		return HOP_ERR_NO_MEMORY;
	c = &net->routes[(h >> 20) % HOP_SIMNET_ROUTES];
	if (c->valid && c->src == src && c->dst == dst && c->len == len) {
		*t = c->t;
		return 0;
	}
	if (hop_topo_route(net->topo, src, dst, (double)len, HOP_ROUTE_SAF, 1,
			   &r, err, sizeof(err))) {
		snprintf(net->err, sizeof(net->err), "topology: no route for "
			 "a message from rank %d to rank %d: %s", src, dst, err);
		return HOP_ERR_INVALID_ARG;
	}
	*t = r.t_saf;
	hop_route_free(&r);
	*c = (struct hop_simnet_route){ 1, src, dst, len, *t };
	return 0;
}

/* Seconds a message of @len bytes holds its ports: its link's alpha (a
 * rendezvous above the eager size also pays its RTS and CTS, as the
 * forms count) + len / beta (uniform, or the topology's direct link), or the
 * store-and-forward time of the best route when there is no direct link
 * (the relays' ports are not simulated). */
static int msg_time(struct hop_simnet *net, int src, int dst, size_t len,
		    double *t)
{
	const struct hop_topo_link *l;

	if (!net->topo && net->host_of) {
		int c = net->host_of[src] != net->host_of[dst];

		*t = hop_model_rndv_alpha(net->class_alpha[c], net->eager,
					  (double)len) +
		     (double)len / net->class_beta[c];
		return 0;
	}
	if (!net->topo) {
		*t = hop_model_rndv_alpha(net->alpha, net->eager, (double)len) +
		     (double)len / net->beta;
		return 0;
	}
	if (!(l = hop_topo_find(net->topo, src, dst)))
		return routed_time(net, src, dst, len, t);
	*t = hop_model_rndv_alpha(l->alpha, net->eager, (double)len) +
	     (double)len / l->beta;
	return 0;
}

/* Start message @m at @now: move the bytes, hold both ports. */
static int msg_start(struct hop_simnet *net, double now, int m)
{
	struct hop_simnet_msg *g = &net->msg[m];
	struct hop_sched *ss = &net->s[g->srank], *rs = &net->s[g->rrank];
	const struct hop_step *sd = &ss->steps[g->sstep];
	void *dst = hop_step_dst(rs, g->rstep);
	const void *src = hop_step_src(ss, g->sstep);
	double t;
	int ret;

	if ((ret = msg_time(net, g->srank, g->rrank, sd->len, &t)))
		return ret;
	if (dst && src && sd->len)
		memcpy(dst, src, sd->len);
	g->started = 1;
	net->tx[g->srank].busy = net->rx[g->rrank].busy = 1;
	if (net->trace)
		fprintf(net->trace, "%.9f %.9f %d -> %d tag %u %zu B\n", now,
			now + t, g->srank, g->rrank, sd->tag, sd->len);
	net->messages++;
	net->bytes += sd->len;
	return heap_push(net->events, (struct ent){ now + t, net->seq++, m, -1,
						    0, 0, 0 });
}

/* Is port entry @e still a message waiting to start? (A message waits in
 * both its ports' queues; the one that starts it leaves the other's entry
 * behind, and a finished message's slot may hold a newer one.) */
static int port_ent_live(const struct hop_simnet *net, const struct ent *e)
{
	const struct hop_simnet_msg *g = &net->msg[e->a];

	return !g->started && g->gen == e->seq;
}

/* A free port takes its first waiting message whose other port is free
 * too; entries of started messages are dropped on the way, and from the
 * top of a busy port's queue too: a receiver's port is busy again by the
 * time it is arbitrated whenever the sender's port started the next
 * message first, and its queue would otherwise keep an entry for every
 * message it ever received (33 million at 4096 ranks of ring). */
static int arbitrate(struct hop_simnet *net, double now, int code)
{
	int rank = code / 2, is_rx = code % 2, ret = 0;
	struct hop_simnet_port *p = is_rx ? &net->rx[rank] : &net->tx[rank];
	struct ent keep[64];
	int nkeep = 0;

	p->dirty = 0;
	while (p->q.n && !port_ent_live(net, &p->q.e[0]))
		heap_pop(&p->q);
	while (!p->busy && p->q.n && nkeep < 64) {
		struct ent e = heap_pop(&p->q);
		struct hop_simnet_msg *g = &net->msg[e.a];
		int other_busy = is_rx ? net->tx[g->srank].busy
				       : net->rx[g->rrank].busy;

		if (!port_ent_live(net, &e))
			continue;
		if (other_busy)
			keep[nkeep++] = e;
		else if ((ret = msg_start(net, now, e.a)))
			break;
	}
	for (int i = 0; i < nkeep; i++) /* cannot fail: popped room */
		heap_push(&p->q, keep[i]);
	return ret;
}

static int arbitrate_dirty(struct hop_simnet *net, double now)
{
	int ret = 0;

	/* starting a message dirties nothing: only DONE frees ports */
	for (int i = 0; !ret && i < net->ndirty; i++)
		ret = arbitrate(net, now, net->dirty[i]);
	net->ndirty = 0;
	return ret;
}

/* ---- matching ---- */

/* A SEND met its RECV: queue the message at both ports. */
static int matched(struct hop_simnet *net, int srank, int sstep, int rrank,
		   int rstep)
{
	const struct hop_step *sd = &net->s[srank].steps[sstep];
	const struct hop_step *rv = &net->s[rrank].steps[rstep];
	int m, ret;

	if (sd->len != rv->len) {
		snprintf(net->err, sizeof(net->err), "rank %d step %d sends %zu "
			 "bytes (tag %u) but rank %d step %d receives %zu",
			 srank, sstep, sd->len, sd->tag, rrank, rstep, rv->len);
		return HOP_ERR_INTERNAL;
	}
	m = hop_sim_slot_new((void **)&net->msg, &net->nmsg, &net->msg_cap,
				&net->msg_free, sizeof(*net->msg),
				offsetof(struct hop_simnet_msg, next_free));
	if (m < 0)
		return HOP_ERR_NO_MEMORY;
	net->msg[m] = (struct hop_simnet_msg){ srank, sstep, rrank, rstep, 0,
					       -1, net->seq++ };
	if ((ret = heap_push(&net->tx[srank].q,
			     (struct ent){ sstep, net->msg[m].gen, m, 0, 0, 0, 0 })) ||
	    (ret = heap_push(&net->rx[rrank].q,
			     (struct ent){ rstep, net->msg[m].gen, m, 0, 0, 0, 0 })) ||
	    (ret = mark_dirty(net, srank, 0)))
		return ret;
	return mark_dirty(net, rrank, 1);
}

/* POST event @e: match a waiting partner or wait for one. */
static int post(struct hop_simnet *net, const struct ent *e)
{
	int me = e->a, idx = e->b, is_send = e->is_send;
	int src = is_send ? me : e->peer, dst = is_send ? e->peer : me;

	if (net->rotate) { /* key by the offset from sender to receiver */
		src = 0;
		dst = is_send ? e->peer : (net->nranks - e->peer) % net->nranks;
	}

	if (e->peer < 0 || e->peer >= net->nranks || e->peer == me) {
		snprintf(net->err, sizeof(net->err), "rank %d step %d: bad "
			 "peer %d", me, idx, e->peer);
		return HOP_ERR_INTERNAL;
	}
	int prank, pstep;
	int ret = hop_sim_match_post(&net->match, src, dst, e->tag, is_send,
				     me, idx, &prank, &pstep);

	if (ret <= 0)
		return ret;
	return is_send ? matched(net, me, idx, prank, pstep)
		       : matched(net, prank, pstep, me, idx);
}

/* ---- the run ---- */

/* Schedules (and port pairs) simulated: one when rotated. */
static int nsched(const struct hop_simnet *net)
{
	return net->rotate ? 1 : net->nranks;
}

static int setup(struct hop_simnet *net)
{
	int n = net->nranks;

	if (n < 1 || !net->s || (!net->topo && !(net->beta > 0)) ||
	    !(net->alpha >= 0)) {
		snprintf(net->err, sizeof(net->err), "simnet: nranks %d, beta "
			 "%g, alpha %g: need nranks >= 1, beta > 0, alpha >= 0",
			 n, net->beta, net->alpha);
		return HOP_ERR_INVALID_ARG;
	}
	if (net->host_of && !net->topo &&
	    !(net->class_beta[0] > 0 && net->class_beta[1] > 0 &&
	      net->class_alpha[0] >= 0 && net->class_alpha[1] >= 0)) {
		snprintf(net->err, sizeof(net->err), "simnet: link classes "
			 "need beta > 0 and alpha >= 0 (intra %g B/s, inter "
			 "%g B/s)", net->class_beta[0], net->class_beta[1]);
		return HOP_ERR_INVALID_ARG;
	}
	if (net->rotate && (net->topo || net->trace || net->host_of)) {
		snprintf(net->err, sizeof(net->err), "simnet: a rotated run "
			 "needs uniform links and no trace");
		return HOP_ERR_INVALID_ARG;
	}
	hop_simnet_free(net);
	n = nsched(net);
	net->tx = calloc((size_t)n, sizeof(*net->tx));
	net->rx = calloc((size_t)n, sizeof(*net->rx));
	net->events = calloc(1, sizeof(*net->events));
	if (!net->tx || !net->rx || !net->events)
		return HOP_ERR_NO_MEMORY;
	net->msg_free = -1;
	net->time = 0;
	net->messages = net->bytes = net->events_run = 0;
	net->seq = 0;
	net->err[0] = 0;
	return hop_sim_clock_init(&net->clock, net->s, n, net->gamma);
}

/* Driver hook: a reduce, copy or join ran; the clock times it. */
static void net_ran(void *ctx, struct hop_sched *s, int idx)
{
	struct hop_simnet *net = ctx;

	hop_sim_clock_inline(&net->clock, s, idx);
}

static int advance(struct hop_simnet *net, int r)
{
	int ret = hop_sched_advance_hook(&net->s[r], net_start, net_ran, net);

	if (ret && !net->err[0])
		snprintf(net->err, sizeof(net->err), "rank %d: %s", r,
			 hop_strerror(ret));
	return ret;
}

/* DONE: both steps complete, both ports free. */
static int done(struct hop_simnet *net, double now, int m)
{
	struct hop_simnet_msg g = net->msg[m];
	int ret;

	net->msg[m].next_free = net->msg_free;
	net->msg_free = m;
	net->tx[g.srank].busy = net->rx[g.rrank].busy = 0;
	*hop_sim_tdone(&net->clock, &net->s[g.srank], g.sstep) = now;
	*hop_sim_tdone(&net->clock, &net->s[g.rrank], g.rstep) = now;
	hop_sched_complete(&net->s[g.srank], g.sstep);
	hop_sched_complete(&net->s[g.rrank], g.rstep);
	if ((ret = mark_dirty(net, g.srank, 0)) ||
	    (ret = mark_dirty(net, g.rrank, 1)) ||
	    (ret = advance(net, g.srank)))
		return ret;
	return advance(net, g.rrank);
}

int hop_simnet_run(struct hop_simnet *net)
{
	int ret = setup(net);
	double now = 0;

	for (int r = 0; !ret && r < nsched(net); r++)
		ret = advance(net, r);
	while (!ret && (net->events->n || net->ndirty)) {
		/* an instant is over: its freed ports pick their next message */
		if (!net->events->n || net->events->e[0].key > now) {
			ret = arbitrate_dirty(net, now);
			if (ret || !net->events->n)
				continue;
		}
		struct ent e = heap_pop(net->events);

		now = e.key;
		net->events_run++;
		ret = e.b >= 0 ? post(net, &e) : done(net, now, e.a);
	}
	if (ret)
		return ret;
	for (int r = 0; r < nsched(net); r++) {
		const struct hop_sched *s = &net->s[r];

		if (!s->finished) {
			hop_sim_match_report_stuck(&net->match, s, r, net->err,
						   sizeof(net->err));
			return HOP_ERR_INTERNAL;
		}
	}
	net->time = hop_sim_clock_last(&net->clock); /* inline steps too */
	return 0;
}

void hop_simnet_free(struct hop_simnet *net)
{
	for (int r = 0; r < nsched(net); r++) {
		if (net->tx)
			free(net->tx[r].q.e);
		if (net->rx)
			free(net->rx[r].q.e);
	}
	if (net->events)
		free(net->events->e);
	free(net->events);
	free(net->tx);
	free(net->rx);
	free(net->msg);
	free(net->dirty);
	hop_sim_match_free(&net->match);
	hop_sim_clock_free(&net->clock);
	free(net->routes);
	net->routes = NULL;
	net->tx = net->rx = NULL;
	net->events = NULL;
	net->msg = NULL;
	net->dirty = NULL;
	net->nmsg = net->msg_cap = net->ndirty = net->dirty_cap = 0;
}
