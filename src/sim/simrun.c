/*
 * simrun.c - one simulated collective with real data (see simrun.h).
 *
 * Buffers follow the public API's conventions (what coll_api.c passes to
 * the schedule): broadcast works in one buffer; reduce's non-roots have
 * no receive buffer; in place, allgather's input is the rank's block of
 * the output and reducescatter's output the rank's block of the input.
 * Gather and scatter are the rooted forms of these (gather's non-roots
 * have no receive buffer); the v-variants run with even blocks.
 */
#include "sim/simrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/common.h>

#include "sim/simnet.h"

struct bufs {
	float *send, *recv, *scratch;   /* owned; any may be NULL */
};

/* Input element @i of rank @r: a small integer, so sums are exact. */
static int in_val(int r, size_t i)
{
	uint64_t h = (uint64_t)r * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)i + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;

	h ^= h >> 31;
	h *= 0xd6e8feb86659fd93ull;
	h ^= h >> 32;
	return (int)(h % 17) - 8;
}

static void fill(float *p, int r, size_t first, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (float)in_val(r, first + i);
}

static int check_args(struct hop_simrun *r)
{
	char lerr[128] = "";

	if (!hop_model_kind_name(r->kind))
		snprintf(r->err, sizeof(r->err), "collective %d: unknown", r->kind);
	else if (r->algo != HOP_ALGO_AUTO && !hop_model_algo_valid(r->kind, r->algo))
		snprintf(r->err, sizeof(r->err), "algorithm %d is not one of %s",
			 r->algo, hop_model_kind_name(r->kind));
	else if (r->nranks < 1 || r->nranks > (1 << 20))
		snprintf(r->err, sizeof(r->err), "nranks %d: must be in [1, "
			 "1048576]", r->nranks);
	else if (r->root < 0 || r->root >= r->nranks)
		snprintf(r->err, sizeof(r->err), "root %d: must be in [0, %d)",
			 r->root, r->nranks);
	else if (r->kind != HOP_COLL_BARRIER && r->bytes % sizeof(float))
		snprintf(r->err, sizeof(r->err), "bytes %zu: must be a multiple "
			 "of 4 (float32 elements)", r->bytes);
	else if (r->chunks < 0 || r->chunks > HOP_MODEL_MAX_CHUNKS)
		snprintf(r->err, sizeof(r->err), "chunks %ld: must be in [0, "
			 "%ld]", r->chunks, HOP_MODEL_MAX_CHUNKS);
	else if (r->depth < 0 || r->depth > HOP_SCHED_MAX_DEPTH)
		snprintf(r->err, sizeof(r->err), "depth %d: must be in [0, %d]",
			 r->depth, HOP_SCHED_MAX_DEPTH);
	else if (hop_model_link_check(&r->link, lerr, sizeof(lerr)))
		snprintf(r->err, sizeof(r->err), "%s", lerr);
	else if (r->host_of && (r->topo || r->rotate ||
				hop_model_link_check(&r->links[0], lerr,
						     sizeof(lerr)) ||
				hop_model_link_check(&r->links[1], lerr,
						     sizeof(lerr))))
		snprintf(r->err, sizeof(r->err), "link classes: %s", lerr[0]
			 ? lerr : "not with a topology or a rotated run");
	else if (r->rotate && (r->verify || r->topo || r->trace))
		snprintf(r->err, sizeof(r->err), "a rotated run moves no data "
			 "and needs uniform links: no verify, topology or trace");
	else
		return 0;
	return HOP_ERR_INVALID_ARG;
}

/* plan() on link classes: the placement's choice (flat on the inter
 * link when it spans hosts, or the hierarchical form). */
static int plan_place(struct hop_simrun *r)
{
	struct hop_model_place pl;
	struct hop_model_choice ch;
	int ret;

	if ((ret = hop_model_place_of(r->host_of, r->nranks, r->nranks, &pl)) ||
	    (ret = hop_model_choose_place(r->kind, r->bytes, &pl, r->links,
					  r->algo, &ch))) {
		snprintf(r->err, sizeof(r->err), "placement: %s",
			 ret == HOP_ERR_NO_MEMORY ? "out of memory"
			 : "a host id out of [0, nranks) or an algorithm the "
			   "collective has not");
		return ret;
	}
	r->link = r->links[pl.nhosts > 1 ? HOP_MODEL_INTER : HOP_MODEL_INTRA];
	/* as a communicator does: flat where no hierarchical schedule is
	 * built (no HIER row in the model's table) */
	if (ch.algo == HOP_ALGO_HIER &&
	    !hop_model_algo_valid(r->kind, HOP_ALGO_HIER))
		hop_model_choose_flat(r->kind, r->bytes, r->nranks,
				      HOP_ALGO_AUTO, &r->link, &ch);
	r->algo = ch.algo;
	r->sub_algo[0] = ch.sub_algo[0];
	r->sub_algo[1] = ch.sub_algo[1];
	r->leaders = ch.algo == HOP_ALGO_HIER && ch.hier_leaders;
	r->chunks_used = ch.algo == HOP_ALGO_HIER ||
			 !hop_model_pipelined(r->kind, r->algo) ? ch.chunks
			 : r->chunks ? r->chunks : ch.chunks;
	r->chunk_bytes = r->chunks && ch.algo != HOP_ALGO_HIER
		? hop_model_sched_chunk(r->kind, r->algo, r->bytes, r->nranks,
					r->chunks_used)
		: ch.chunk_bytes;
	r->predicted = ch.algo == HOP_ALGO_HIER ? ch.hier
		: hop_model_predict_flat_hosts(r->kind, r->algo, r->bytes, &pl,
					       r->links, r->chunks_used,
					       r->inplace);
	if (isnan(r->predicted))        /* every edge on the inter link */
		r->predicted = hop_model_predict_inplace(r->kind, r->algo,
							 r->bytes, r->nranks,
							 &r->link,
							 r->chunks_used,
							 r->inplace);
	return 0;
}

/* The model's algorithm and chunk count unless the caller fixed them. */
static int plan(struct hop_simrun *r)
{
	long best = 1;

	if (r->host_of)
		return plan_place(r);
	if (r->algo == HOP_ALGO_AUTO)
		hop_model_choose(r->kind, r->bytes, r->nranks, &r->link, &r->algo,
				 &best, NULL);
	else
		best = hop_model_best_chunks(r->kind, r->algo, r->bytes,
					     r->nranks, &r->link);
	r->chunks_used = !hop_model_pipelined(r->kind, r->algo) ? 1
			 : r->chunks ? r->chunks : best;
	r->chunk_bytes = hop_model_sched_chunk(r->kind, r->algo, r->bytes,
					       r->nranks, r->chunks_used);
	r->predicted = hop_model_predict_inplace(r->kind, r->algo, r->bytes,
						 r->nranks, &r->link,
						 r->chunks_used, r->inplace);
	return 0;
}

/* Rank @rk's input (output) holds all N blocks: reducescatter(v) and
 * the scatter root (allgather(v) and the gather root). The v-variants run
 * here with even blocks. */
static int whole_in(const struct hop_simrun *r, int rk)
{
	return r->kind == HOP_COLL_REDUCESCATTER ||
	       r->kind == HOP_COLL_REDUCESCATTERV ||
	       (r->kind == HOP_COLL_SCATTER && rk == r->root);
}

static int whole_out(const struct hop_simrun *r, int rk)
{
	return r->kind == HOP_COLL_ALLGATHER || r->kind == HOP_COLL_ALLGATHERV ||
	       (r->kind == HOP_COLL_GATHER && rk == r->root);
}

/* Allocate and fill rank @rk's buffers; point @base at them. */
static int rank_bufs(const struct hop_simrun *r, int rk, struct bufs *b,
		     void *base[HOP_BUF_COUNT], int *inplace)
{
	size_t cnt = r->bytes / sizeof(float), n = (size_t)r->nranks;
	int a2a = r->kind == HOP_COLL_ALLTOALL || r->kind == HOP_COLL_ALLTOALLV;
	size_t in_el = whole_in(r, rk) || a2a ? cnt * n : cnt;
	size_t out_el = whole_out(r, rk) || a2a ? cnt * n : cnt;
	int has_out = !(r->kind == HOP_COLL_REDUCE && rk != r->root) &&
		      !(r->kind == HOP_COLL_GATHER && rk != r->root);

	*inplace = r->inplace && has_out &&
		   !(r->kind == HOP_COLL_SCATTER && rk != r->root);
	if (r->kind == HOP_COLL_BARRIER || !r->verify)
		return 0;
	if (r->kind == HOP_COLL_BROADCAST) {
		if (!(b->recv = malloc(cnt * sizeof(float) + 1)))
			return HOP_ERR_NO_MEMORY;
		if (rk == r->root)
			fill(b->recv, rk, 0, cnt);
		base[HOP_BUF_SEND] = base[HOP_BUF_RECV] = b->recv;
		return 0;
	}
	if (*inplace && whole_in(r, rk)) {
		if (!(b->send = malloc(in_el * sizeof(float) + 1)))
			return HOP_ERR_NO_MEMORY;
		fill(b->send, rk, 0, in_el);
		base[HOP_BUF_SEND] = b->send;
		base[HOP_BUF_RECV] = b->send + (size_t)rk * cnt;
		return 0;
	}
	if (has_out && !(b->recv = malloc(out_el * sizeof(float) + 1)))
		return HOP_ERR_NO_MEMORY;
	if (*inplace) {
		size_t at = whole_out(r, rk) ? (size_t)rk * cnt : 0;

		fill(b->recv + at, rk, 0, in_el);
		base[HOP_BUF_SEND] = b->recv + at;
		base[HOP_BUF_RECV] = b->recv;
		return 0;
	}
	if (!(b->send = malloc(in_el * sizeof(float) + 1)))
		return HOP_ERR_NO_MEMORY;
	fill(b->send, rk, 0, in_el); /* scatter: only the root's is read */
	base[HOP_BUF_SEND] = b->send;
	base[HOP_BUF_RECV] = b->recv;
	return 0;
}

/* @host_of renumbered as the collectives number hosts (by their lowest
 * rank), or NULL when every rank is on one host. */
static int *hosts_of(const struct hop_simrun *r, int *err)
{
	int n = r->nranks, H, *out;

	*err = 0;
	if (!r->host_of)
		return NULL;
	if (!(out = malloc((size_t)n * sizeof(int)))) {
		*err = HOP_ERR_NO_MEMORY;
		return NULL;
	}
	memcpy(out, r->host_of, (size_t)n * sizeof(int));
	if ((H = hop_hosts_renumber(out, n)) <= 1) {
		*err = H < 0 ? H : 0;
		free(out);
		return NULL;
	}
	return out;
}

static int build_rank(struct hop_simrun *r, int rk, struct hop_sched *s,
		      struct bufs *b, const int *hosts)
{
	void *base[HOP_BUF_COUNT] = { NULL };
	struct hop_coll_args a = {
		.kind = r->kind, .algo = r->algo, .rank = rk,
		.nranks = r->nranks, .root = r->root,
		.count = r->kind == HOP_COLL_BARRIER ? 0 : r->bytes / sizeof(float),
		.dtype = r->kind == HOP_COLL_BARRIER ? HOP_UINT8 : HOP_FLOAT32,
		.op = HOP_SUM, .chunk_bytes = r->chunk_bytes,
		.depth = r->depth ? r->depth : 4,
		.timing_only = !r->verify,
		.sub_algo = { r->sub_algo[0], r->sub_algo[1] },
		.leaders = r->leaders,
		.hosts = hosts, .hsig = hop_hosts_sig(hosts, r->nranks),
	};
	int ret;

	if ((ret = rank_bufs(r, rk, b, base, &a.inplace)))
		return ret;
	if ((ret = hop_sched_build(s, &a))) {
		snprintf(r->err, sizeof(r->err), "rank %d: building the "
			 "schedule: %s", rk, hop_strerror(ret));
		return ret;
	}
	if (r->verify && s->scratch_bytes &&
	    !(b->scratch = malloc(s->scratch_bytes)))
		return HOP_ERR_NO_MEMORY;
	base[HOP_BUF_SCRATCH] = b->scratch;
	hop_sched_start(s, base);
	r->steps += (uint64_t)s->nsteps;
	return 0;
}

/* Is rank @rk's schedule rank 0's @s0 with every peer shifted by @rk? */
static int rotation_of(const struct hop_sched *s0, const struct hop_sched *sr,
		       int rk, int n)
{
	if (s0->nsteps != sr->nsteps)
		return 0;
	for (int i = 0; i < s0->nsteps; i++) {
		struct hop_step a = s0->steps[i], b = sr->steps[i];
		int comm = a.kind == HOP_STEP_SEND || a.kind == HOP_STEP_RECV;

		if (comm)
			a.peer = (a.peer + rk) % n;
		if (memcmp(a.deps, b.deps, sizeof(a.deps)) || a.kind != b.kind ||
		    a.flags != b.flags || a.dbuf != b.dbuf || a.sbuf != b.sbuf ||
		    a.tag != b.tag || a.len != b.len || (comm && a.peer != b.peer))
			return 0;
	}
	return 1;
}

/* Rotated run: are the schedules of a few ranks rotations of rank 0's? */
static int check_rotation(struct hop_simrun *r, const struct hop_sched *s0)
{
	int n = r->nranks, probe[3] = { 1, n / 2, n - 1 }, ret = 0;

	for (int i = 0; i < 3 && !ret && n > 1; i++) {
		struct hop_sched s;
		struct bufs b = { 0 };

		hop_sched_init(&s);
		if (!(ret = build_rank(r, probe[i], &s, &b, NULL)) &&
		    !rotation_of(s0, &s, probe[i], n)) {
			snprintf(r->err, sizeof(r->err), "rotated run: rank %d's "
				 "schedule is not rank 0's shifted by %d (the "
				 "ring with the count a multiple of n is)",
				 probe[i], probe[i]);
			ret = HOP_ERR_INVALID_ARG;
		}
		r->steps -= (uint64_t)s.nsteps;
		hop_sched_free(&s);
	}
	return ret;
}

/* Reference element @i of the whole result vector (for reducescatter the
 * vector of all N blocks; for alltoall rank @rk's), from the inputs
 * alone. */
static float ref_at(const struct hop_simrun *r, int rk, size_t cnt, size_t i)
{
	long sum = 0;

	switch (r->kind) {
	case HOP_COLL_ALLTOALL: /* block q: rank q's block for rk */
	case HOP_COLL_ALLTOALLV:
		return (float)in_val((int)(i / cnt), (size_t)rk * cnt + i % cnt);
	case HOP_COLL_BROADCAST:
	case HOP_COLL_SCATTER:
		return (float)in_val(r->root, i);
	case HOP_COLL_ALLGATHER:
	case HOP_COLL_ALLGATHERV:
	case HOP_COLL_GATHER:
		return (float)in_val((int)(i / cnt), i % cnt);
	default:
		for (int q = 0; q < r->nranks; q++)
			sum += in_val(q, i);
		return (float)sum;
	}
}

/* Count elements of every rank's result that differ from the reference
 * (bit for bit). */
static size_t verify(const struct hop_simrun *r, const struct hop_sched *s)
{
	size_t cnt = r->bytes / sizeof(float), n = (size_t)r->nranks;
	int per_rank = r->kind == HOP_COLL_REDUCESCATTER ||
		       r->kind == HOP_COLL_REDUCESCATTERV ||
		       r->kind == HOP_COLL_SCATTER; /* rank r's block of ref */
	int a2a = r->kind == HOP_COLL_ALLTOALL || r->kind == HOP_COLL_ALLTOALLV;
	size_t out_el = whole_out(r, r->root) || a2a ? cnt * n : cnt;
	size_t ref_el = per_rank || out_el > cnt ? cnt * n : cnt;
	size_t wrong = 0;
	float *ref;

	if (r->kind == HOP_COLL_BARRIER)
		return 0;
	if (!(ref = malloc(ref_el * sizeof(float) + 1)))
		return (size_t)-1;
	for (int rk = 0; rk < r->nranks; rk++) {
		const float *got = s[rk].base[HOP_BUF_RECV];

		/* alltoall: every rank's result is its own */
		for (size_t i = 0; (rk == 0 || a2a) && i < ref_el; i++)
			ref[i] = ref_at(r, rk, cnt, i);
		const float *want = ref + (per_rank ? (size_t)rk * cnt : 0);

		if ((r->kind == HOP_COLL_REDUCE || r->kind == HOP_COLL_GATHER) &&
		    rk != r->root)
			continue;
		for (size_t i = 0; i < out_el; i++)
			wrong += memcmp(&got[i], &want[i], sizeof(float)) != 0;
	}
	free(ref);
	return wrong;
}

/* alltoallv runs with alltoall's blocks: @bytes to every peer, at p *
 * bytes (its per-pair counts take no part in the timing). */
static int a2av_uniform(const struct hop_simrun *r, size_t **vcd)
{
	size_t n = (size_t)r->nranks, cnt = r->bytes / sizeof(float);

	if (!(*vcd = malloc(2 * n * sizeof(size_t))))
		return HOP_ERR_NO_MEMORY;
	for (size_t p = 0; p < n; p++) {
		(*vcd)[p] = cnt;
		(*vcd)[n + p] = p * cnt;
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int hop_simrun(struct hop_simrun *r)
{
	struct hop_simnet net = { 0 };
	struct hop_sched *s = NULL;
	struct bufs *b = NULL;
	size_t *vcd = NULL;     /* alltoallv: counts, then displacements */
	int *hosts = NULL;
	double t0 = now_s();
	int ret, n;

	r->err[0] = 0;
	r->steps = r->messages = r->moved = r->events = 0;
	r->wrong = 0;
	r->sub_algo[0] = r->sub_algo[1] = HOP_ALGO_AUTO;
	r->leaders = 0;
	if ((ret = check_args(r)) || (ret = plan(r)))
		return ret;
	n = r->nranks;
	hosts = hosts_of(r, &ret);
	s = calloc((size_t)n, sizeof(*s));
	b = calloc((size_t)n, sizeof(*b));
	ret = ret ? ret : s && b ? 0 : HOP_ERR_NO_MEMORY;
	if (!ret && r->kind == HOP_COLL_ALLTOALLV)
		ret = a2av_uniform(r, &vcd);
	for (int rk = 0; !ret && rk < (r->rotate ? 1 : n); rk++) {
		for (int i = 0; i < 4; i++)
			s[rk].v[i] = vcd ? vcd + (i % 2) * (size_t)n : NULL;
		ret = build_rank(r, rk, &s[rk], &b[rk], hosts);
	}
	if (!ret && r->rotate)
		ret = check_rotation(r, &s[0]);
	if (ret)
		goto out;
	net.nranks = n;
	net.s = s;
	net.alpha = r->link.alpha;
	net.beta = r->link.beta;
	net.gamma = r->link.gamma;
	net.eager = r->link.eager;
	net.topo = r->topo;
	net.host_of = r->host_of;
	for (int c = 0; c < HOP_MODEL_CLASSES; c++) {
		net.class_alpha[c] = r->links[c].alpha;
		net.class_beta[c] = r->links[c].beta;
	}
	net.trace = r->trace;
	net.rotate = r->rotate;
	if ((ret = hop_simnet_run(&net))) {
		snprintf(r->err, sizeof(r->err), "simulation: %s", net.err);
		goto out;
	}
	r->sim_time = net.time;
	r->messages = net.messages;
	r->moved = net.bytes;
	r->events = net.events_run;
	if (r->rotate) { /* rank 0 stood for every rank */
		r->messages *= (uint64_t)n;
		r->moved *= (uint64_t)n;
		r->steps *= (uint64_t)n;
	}
	if (r->verify && (r->wrong = verify(r, s)) == (size_t)-1)
		ret = HOP_ERR_NO_MEMORY;
out:
	if (ret == HOP_ERR_NO_MEMORY && !r->err[0])
		snprintf(r->err, sizeof(r->err), "out of memory (%d ranks, %zu "
			 "B each)", n, r->bytes);
	hop_simnet_free(&net);
	for (int rk = 0; s && b && rk < n; rk++) {
		hop_sched_free(&s[rk]);
		free(b[rk].send);
		free(b[rk].recv);
		free(b[rk].scratch);
	}
	free(s);
	free(b);
	free(vcd);
	free(hosts);
	r->wall = now_s() - t0;
	return ret;
}
