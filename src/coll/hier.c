/*
 * hier.c - hierarchical collectives (HOP_ALGO_HIER) as one schedule per
 * rank: the placement of the ranks on hosts, and phases composed from
 * the flat builders (hier_forms.c says which phases each collective has).
 *
 * A phase is built alone, as the flat schedule of a sub-group (the ranks
 * of one host, a rail, the hosts' leaders) in which this rank is sub-rank
 * i, then appended: its peers become comm ranks, its tags move to the
 * phase's own region, its SEND/RECV become places in the whole
 * schedule's buffers and its scratch moves into a region every phase
 * shares. Its first steps wait for the previous phase's end (a join of
 * NOP steps), so a phase starts only once this rank's part of the one
 * before is done: that is what makes reusing buffers and scratch safe.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/hier.h"
#include "model/model.h"

uint64_t hop_hosts_sig(const int *hosts, int n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	if (!hosts)
		return 0;
	for (int r = 0; r < n; r++) {
		h = (h ^ (uint64_t)(unsigned)hosts[r]) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 29;
	}
	return h | 1;
}

int hop_hosts_renumber(int *hosts, int n)
{
	int maxh = 0, H = 0, *map;

	for (int r = 0; r < n; r++)
		if (hosts[r] > maxh)
			maxh = hosts[r];
	if (!(map = malloc((size_t)(maxh + 1) * sizeof(int))))
		return HOP_ERR_NO_MEMORY;
	for (int h = 0; h <= maxh; h++)
		map[h] = -1;
	for (int r = 0; r < n; r++) {
		int *g = &map[hosts[r]];

		if (*g < 0)
			*g = H++;
		hosts[r] = *g;
	}
	free(map);
	return H;
}

void hier_place_free(struct hier_place *p)
{
	free(p->cnt);
	free(p->vc);
	memset(p, 0, sizeof(*p));
}

/* One allocation of ints (cnt, start: H; byhost, lidx, grp: n each) and
 * one of size_t (vc, vd: n each; H <= n). */
static int place_alloc(struct hier_place *p)
{
	size_t n = (size_t)p->n, H = (size_t)p->H;

	p->cnt = calloc(2 * H + 3 * n, sizeof(int));
	p->vc = calloc(2 * n, sizeof(size_t));
	if (!p->cnt || !p->vc)
		return HOP_ERR_NO_MEMORY;
	p->start = p->cnt + H;
	p->byhost = p->start + H;
	p->lidx = p->byhost + n;
	p->grp = p->lidx + n;
	p->vd = p->vc + n;
	return 0;
}

int hier_place_init(struct hier_place *p, const struct hop_coll_args *a)
{
	int n = a->nranks, ret;

	memset(p, 0, sizeof(*p));
	p->n = n;
	p->H = 1;
	if (a->hosts) {
		/* hosts are numbered by their lowest rank: a new one is H */
		p->H = 0;
		for (int r = 0; r < n; r++) {
			if (a->hosts[r] < 0 || a->hosts[r] > p->H)
				return HOP_ERR_INTERNAL;
			p->H += a->hosts[r] == p->H;
		}
	}
	p->host = a->hosts;
	if ((ret = place_alloc(p)))
		return ret;
	for (int r = 0; r < n; r++)
		p->cnt[a->hosts ? a->hosts[r] : 0]++;
	for (int h = 1; h < p->H; h++)
		p->start[h] = p->start[h - 1] + p->cnt[h - 1];
	/* byhost by counting sort; lidx from it (grp as the cursor) */
	memcpy(p->grp, p->start, (size_t)p->H * sizeof(int));
	for (int r = 0; r < n; r++) {
		int h = a->hosts ? a->hosts[r] : 0;
		p->lidx[r] = p->grp[h] - p->start[h];
		p->byhost[p->grp[h]++] = r;
	}
	p->me_h = a->hosts ? a->hosts[a->rank] : 0;
	p->me_i = p->lidx[a->rank];
	p->L = p->cnt[0];
	p->uniform = p->sorted = 1;
	for (int h = 0; h < p->H; h++)
		p->uniform &= p->cnt[h] == p->L;
	for (int k = 0; k < n; k++)
		p->sorted &= p->byhost[k] == k;
	return 0;
}

int hier_leader(const struct hier_place *p, int h, int root)
{
	if (root >= 0 && (p->host ? p->host[root] : 0) == h)
		return root;
	return hier_members(p, h)[0];
}

const int *hier_leaders(struct hier_place *p, int root)
{
	for (int h = 0; h < p->H; h++)
		p->grp[h] = hier_leader(p, h, root);
	return p->grp;
}

const int *hier_rail(struct hier_place *p, int i)
{
	for (int h = 0; h < p->H; h++)
		p->grp[h] = hier_members(p, h)[i];
	return p->grp;
}

/* Host of rank @r as a counting-sort key below @n. */
static int host_key(const struct hop_coll_args *a, int r)
{
	int h = a->hosts[r];

	return h >= 0 && h < a->nranks ? h : 0;
}

const int *hop_sched_ring(struct hop_sched *s, int *pos)
{
	const struct hop_coll_args *a = &s->args;
	int n = a->nranks, *cur, *ord;

	if (n > (1 << 28) || !(cur = hop_sched_ord(s, 2 * (size_t)n + 1)))
		return NULL;
	ord = cur + n + 1;
	*pos = a->rank;
	if (!a->hosts) {
		for (int r = 0; r < n; r++)
			ord[r] = r;
		return ord;
	}
	/* counting sort by host, stable in rank order */
	memset(cur, 0, (size_t)(n + 1) * sizeof(int));
	for (int r = 0; r < n; r++)
		cur[host_key(a, r) + 1]++;
	for (int h = 1; h <= n; h++)
		cur[h] += cur[h - 1];
	for (int r = 0; r < n; r++) {
		int h = host_key(a, r);
		if (r == a->rank)
			*pos = cur[h];
		ord[cur[h]++] = r;
	}
	return ord;
}

/* ---- phases ---- */

/* A phase of @kind on link class @cls: the algorithm asked for in
 * sub_algo[cls] if the phase's collective has it, else its default. */
static int phase_algo(const struct hop_coll_args *a, int kind, int cls)
{
	int want = a->sub_algo[cls];

	if (want != HOP_ALGO_AUTO && want != HOP_ALGO_HIER &&
	    hop_model_algo_valid(kind, want))
		return want;
	switch (kind) {
	case HOP_COLL_BROADCAST:
	case HOP_COLL_REDUCE:
	case HOP_COLL_GATHER:
	case HOP_COLL_SCATTER:
		return HOP_ALGO_TREE;
	case HOP_COLL_BARRIER:
		return HOP_ALGO_DISSEMINATION;
	}
	return HOP_ALGO_RING;
}

struct hop_coll_args hier_args(const struct hier_ctx *c, int kind, int cls,
			       int rank, int n, size_t count)
{
	const struct hop_coll_args *m = &c->s->args;
	struct hop_coll_args a = {
		.kind = kind, .algo = phase_algo(m, kind, cls),
		.rank = rank, .nranks = n, .count = count,
		.dtype = m->dtype, .op = m->op == HOP_AVG ? HOP_SUM : m->op,
		.chunk_bytes = m->chunk_bytes, .depth = m->depth,
		.timing_only = m->timing_only,
	};

	return a;
}

static void remap(int *buf, size_t *off, struct hier_buf send,
		  struct hier_buf recv, size_t scr)
{
	if (*buf == HOP_BUF_SCRATCH) {
		*off += scr;
	} else if (*buf == HOP_BUF_SEND || *buf == HOP_BUF_RECV) {
		struct hier_buf b = *buf == HOP_BUF_SEND ? send : recv;
		*buf = b.buf;
		*off += b.off;
	}
}

void hier_join_from(struct hier_ctx *c, int first)
{
	struct hop_sched *s = c->s;
	int end = s->nsteps, k = 0, pend[HOP_SCHED_MAXDEPS];

	if (end <= first || s->err)
		return;
	char *waited = calloc((size_t)(end - first), 1);
	if (!waited) {
		s->err = HOP_ERR_NO_MEMORY;
		return;
	}
	for (int i = first; i < end; i++)
		for (int d = 0; d < HOP_SCHED_MAXDEPS; d++)
			if (s->steps[i].deps[d] >= first)
				waited[s->steps[i].deps[d] - first] = 1;
	for (int i = first; i < end; i++) {
		if (waited[i - first])
			continue;
		if (k == HOP_SCHED_MAXDEPS) {
			pend[0] = hop_s_nop(s, pend[0], pend[1], pend[2]);
			k = 1;
		}
		pend[k++] = i;
	}
	free(waited);
	c->join = k == 1 ? pend[0]
		: hop_s_nop(s, pend[0], pend[1], k > 2 ? pend[2] : -1);
}

int hier_phase(struct hier_ctx *c, int ph, const struct hop_coll_args *a,
	       const int *members, struct hier_buf send, struct hier_buf recv)
{
	struct hop_sched *s = c->s, *sub = &c->sub;
	int base = s->nsteps, ret;

	if (ph >= HIER_MAX_PHASES)
		return HOP_ERR_INTERNAL;
	if (!c->started) /* after what the form reserved for itself */
		c->scr0 = s->scratch_bytes;
	c->started = 1;
	if ((ret = hop_sched_build(sub, a)))
		return ret;
	if (c->scr_at + sub->scratch_bytes > c->scr_max)
		c->scr_max = c->scr_at + sub->scratch_bytes;
	for (int k = 0; k < sub->nsteps; k++) {
		const struct hop_step *st = &sub->steps[k];
		int dbuf = st->dbuf, sbuf = st->sbuf, d[HOP_SCHED_MAXDEPS];
		size_t doff = sub->offs ? sub->offs[k].doff : 0;
		size_t soff = sub->offs ? sub->offs[k].soff : 0;
		int io = st->kind == HOP_STEP_SEND || st->kind == HOP_STEP_RECV;

		if (io && st->tag >> HIER_TAG_BITS)
			return HOP_ERR_INTERNAL; /* the phase's chunking */
		remap(&dbuf, &doff, send, recv, c->scr0 + c->scr_at);
		remap(&sbuf, &soff, send, recv, c->scr0 + c->scr_at);
		for (int i = 0; i < HOP_SCHED_MAXDEPS; i++)
			d[i] = st->deps[i] >= 0 ? st->deps[i] + base : -1;
		if (d[0] < 0 && d[1] < 0 && d[2] < 0) {
			d[0] = c->join; /* a first step of the phase */
			d[1] = c->after;
		}
		hop_sched_add(s, st->kind, st->flags, dbuf, doff, sbuf, soff,
			      st->len, io ? members[st->peer] : -1,
			      io ? (uint32_t)ph << HIER_TAG_BITS | st->tag : 0,
			      d[0], d[1], d[2]);
	}
	hier_join_from(c, base);
	return s->err;
}

int hier_copy_blocks(struct hier_ctx *c, struct hier_buf dst,
		     const int *to, struct hier_buf src, const int *from,
		     int n, size_t bytes)
{
	struct hop_sched *s = c->s;
	int first = s->nsteps;

	for (int k = 0; bytes && k < n; k++)
		hop_s_copy(s, dst.buf, dst.off + (size_t)(to ? to[k] : k) * bytes,
			   src.buf, src.off +
			   (size_t)(from ? from[k] : k) * bytes, bytes,
			   c->join, -1, -1);
	hier_join_from(c, first);
	return s->err;
}

/* ---- the builder ---- */

/* One host, or one rank per host: the phase algorithm on the whole comm. */
static int build_flat(struct hop_sched *s, const struct hier_place *p)
{
	int cls = p->H == 1 ? 0 : 1, keep = s->args.algo, ret;

	s->args.algo = phase_algo(&s->args, s->args.kind, cls);
	ret = hop_sched_dispatch(s);
	s->args.algo = keep;
	return ret;
}

static int build_forms(struct hier_ctx *c)
{
	switch (c->s->args.kind) {
	case HOP_COLL_ALLREDUCE:
		return hier_allreduce(c);
	case HOP_COLL_BROADCAST:
		return hier_bcast(c);
	case HOP_COLL_REDUCE:
		return hier_reduce(c);
	case HOP_COLL_ALLGATHER:
		return hier_allgather(c);
	case HOP_COLL_REDUCESCATTER:
		return hier_reducescatter(c);
	case HOP_COLL_BARRIER:
		return hier_barrier(c);
	}
	return HOP_ERR_NOT_SUPPORTED;
}

int hop_build_hier(struct hop_sched *s)
{
	struct hier_ctx c = { .s = s, .join = -1, .after = -1 };
	int ret, k = s->args.kind;

	if (k != HOP_COLL_ALLREDUCE && k != HOP_COLL_BROADCAST &&
	    k != HOP_COLL_REDUCE && k != HOP_COLL_ALLGATHER &&
	    k != HOP_COLL_REDUCESCATTER && k != HOP_COLL_BARRIER)
		return HOP_ERR_NOT_SUPPORTED;
	if ((ret = hier_place_init(&c.p, &s->args)))
		goto out;
	if (c.p.H == 1 || c.p.H == c.p.n) {
		ret = build_flat(s, &c.p);
		goto out;
	}
	hop_sched_init(&c.sub);
	c.sub.tag_bits = HIER_TAG_BITS;
	ret = build_forms(&c);
	/* the phases' scratch after everything the form reserved */
	if (!ret && c.started && c.scr_max)
		s->scratch_bytes = c.scr0 + c.scr_max;
	hop_sched_free(&c.sub);
out:
	hier_place_free(&c.p);
	return ret;
}
