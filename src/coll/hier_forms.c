/*
 * hier_forms.c - the phases of each hierarchical collective
 * (docs/hierarchical.md; the cost model prices the same shapes).
 *
 * Uniform placement (L ranks on every host) uses the rails, the ranks of
 * one local index across the hosts, so all L ranks of a host use the
 * network at once; any other placement goes through one leader per host
 * (its lowest rank; for a rooted collective, the root on its host). A
 * block of rank r is at r * count in the caller's buffers, while a host's
 * blocks are contiguous only when its ranks are consecutive
 * (p->sorted); otherwise the inter-host phase works on a copy in host
 * order (scratch), put back in rank order by COPY steps.
 *
 * Phase numbers (tag regions) are fixed per form, so a rank that takes
 * no part in a phase still tags the next one as its peers do.
 */
#include "coll/hier.h"
#include "model/model.h"

enum { INTRA = 0, INTER = 1 };

static struct hier_buf at(int buf, size_t off)
{
	return (struct hier_buf){ buf, off };
}

/* p->vc/vd = block k of @n: @per[k] elements (NULL: @each) at @first[k]
 * (NULL: packed in order) times @unit. */
static void vblocks(struct hier_place *p, int n, const int *per, size_t each,
		    const int *first, size_t unit)
{
	size_t o = 0;

	for (int k = 0; k < n; k++) {
		p->vc[k] = per ? (size_t)per[k] * each : each;
		p->vd[k] = first ? (size_t)first[k] * unit : o;
		o += p->vc[k];
	}
}

/* A phase of a v-collective over the blocks in p->vc/vd. */
static int vphase(struct hier_ctx *c, int ph, int kind, int cls, int rank,
		  int n, const int *members, int inplace, struct hier_buf send,
		  struct hier_buf recv)
{
	struct hop_coll_args a = hier_args(c, kind, cls, rank, n, 0);

	a.counts = c->p.vc;
	a.displs = c->p.vd;
	a.inplace = inplace;
	return hier_phase(c, ph, &a, members, send, recv);
}

/* A rooted phase (bcast, reduce, gather, scatter) in this rank's host,
 * rooted at local rank @root. */
static int host_phase(struct hier_ctx *c, int ph, int kind, size_t count,
		      int root, int inplace, struct hier_buf send,
		      struct hier_buf recv)
{
	struct hier_place *p = &c->p;
	struct hop_coll_args a = hier_args(c, kind, INTRA, p->me_i,
					   p->cnt[p->me_h], count);

	a.root = root;
	a.inplace = inplace;
	return hier_phase(c, ph, &a, hier_members(p, p->me_h), send, recv);
}

/* A phase among the leaders (root: the host of @root, -1 none). */
static int leader_phase(struct hier_ctx *c, int ph, int kind, size_t count,
			int root, int inplace, struct hier_buf send,
			struct hier_buf recv)
{
	struct hier_place *p = &c->p;
	struct hop_coll_args a = hier_args(c, kind, INTER, p->me_h, p->H,
					   count);

	a.root = root >= 0 ? p->host[root] : 0;
	a.inplace = inplace;
	return hier_phase(c, ph, &a, hier_leaders(p, root), send, recv);
}

static int is_leader(const struct hier_ctx *c, int root)
{
	return hier_leader(&c->p, c->p.me_h, root) == c->s->args.rank;
}

static void avg_over(struct hop_sched *s, size_t count)
{
	s->avg_buf = HOP_BUF_RECV;
	s->avg_off = 0;
	s->avg_count = count;
}

/* One piece of the rail-parallel AllReduce, elements @first .. + @count
 * (phases 3q .. 3q + 2): ReduceScatter in the host (slice i to local
 * rank i), AllReduce of slice i along rail i, AllGather in the host.
 * @lane[j]: the end of the previous piece's phase j, which this piece's
 * phase j waits for too; set to this piece's. */
static int rails_piece(struct hier_ctx *c, int q, size_t first, size_t count,
		       int lane[3])
{
	struct hier_place *p = &c->p;
	const struct hop_coll_args *m = &c->s->args;
	int L = p->L, i = p->me_i, ret;
	size_t es = c->s->esize;
	const int *host = hier_members(p, p->me_h);

	for (int j = 0; j < L; j++) {
		p->vc[j] = hop_blk_count(count, L, j);
		p->vd[j] = first + hop_blk_start(count, L, j);
	}
	struct hier_buf mine = at(HOP_BUF_RECV, p->vd[i] * es);
	size_t slice = p->vc[i];
	c->join = -1;
	c->after = lane[0];
	if ((ret = vphase(c, 3 * q, HOP_COLL_REDUCESCATTERV, INTRA, i, L, host,
			  m->inplace, at(HOP_BUF_SEND, 0), mine)))
		return ret;
	lane[0] = c->join;
	struct hop_coll_args a = hier_args(c, HOP_COLL_ALLREDUCE, INTER,
					   p->me_h, p->H, slice);
	a.inplace = 1;
	c->after = lane[1];
	if ((ret = hier_phase(c, 3 * q + 1, &a, hier_rail(p, i), mine, mine)))
		return ret;
	lane[1] = c->join;
	/* hier_rail() used grp only: vc/vd still hold the slices */
	c->after = lane[2];
	ret = vphase(c, 3 * q + 2, HOP_COLL_ALLGATHERV, INTRA, i, L, host, 1,
		     mine, at(HOP_BUF_RECV, 0));
	lane[2] = c->join;
	return ret;
}

/* Rail-parallel, in pieces: piece q + 1's phase inside the host runs
 * while piece q's crosses between hosts, so the host's link does not
 * wait for the reductions and copies inside the host. Pieces run at once
 * and so each has its own scratch. */
static int allreduce_rails(struct hier_ctx *c)
{
	const struct hop_coll_args *m = &c->s->args;
	int pieces = hop_model_hier_pieces(m->count * c->s->esize, c->p.L);
	int lane[3] = { -1, -1, -1 }, ret = 0;

	for (int q = 0; q < pieces && !ret; q++) {
		c->scr_at = c->scr_max;
		ret = rails_piece(c, q, hop_blk_start(m->count, pieces, q),
				  hop_blk_count(m->count, pieces, q), lane);
	}
	c->after = -1;
	return ret;
}

/* Leaders: Reduce to the leader, AllReduce among the leaders,
 * Broadcast from the leader. */
static int allreduce_leaders(struct hier_ctx *c)
{
	const struct hop_coll_args *m = &c->s->args;
	struct hier_buf recv = at(HOP_BUF_RECV, 0);
	int lead = is_leader(c, -1), ret;

	if ((ret = host_phase(c, 0, HOP_COLL_REDUCE, m->count, 0,
			      lead && m->inplace, at(HOP_BUF_SEND, 0), recv)))
		return ret;
	if (lead && (ret = leader_phase(c, 1, HOP_COLL_ALLREDUCE, m->count, -1,
					1, recv, recv)))
		return ret;
	return host_phase(c, 2, HOP_COLL_BROADCAST, m->count, 0, 0, recv,
			  recv);
}

int hier_allreduce(struct hier_ctx *c)
{
	avg_over(c->s, c->s->args.count);
	if (!c->s->args.count)
		return 0;
	if (c->p.uniform && c->p.L > 1 && !c->s->args.leaders)
		return allreduce_rails(c);
	return allreduce_leaders(c);
}

/* Among the leaders (the root on its host), then in each host. */
int hier_bcast(struct hier_ctx *c)
{
	const struct hop_coll_args *m = &c->s->args;
	struct hier_place *p = &c->p;
	struct hier_buf recv = at(HOP_BUF_RECV, 0);
	int lead = hier_leader(p, p->me_h, m->root), ret;

	if (!m->count)
		return 0;
	if (lead == m->rank && (ret = leader_phase(c, 0, HOP_COLL_BROADCAST,
						   m->count, m->root, 0, recv,
						   recv)))
		return ret;
	return host_phase(c, 1, HOP_COLL_BROADCAST, m->count, p->lidx[lead], 0,
			  recv, recv);
}

/* In each host to its leader, then among the leaders to the root. A
 * leader other than the root keeps its host's partial in scratch. */
int hier_reduce(struct hier_ctx *c)
{
	struct hop_sched *s = c->s;
	const struct hop_coll_args *m = &s->args;
	struct hier_place *p = &c->p;
	int lead = hier_leader(p, p->me_h, m->root), root = m->rank == m->root;
	struct hier_buf part = at(HOP_BUF_RECV, 0);
	int ret;

	if (root)
		avg_over(s, m->count);
	if (!m->count)
		return 0;
	if (lead == m->rank && !root)
		part = at(HOP_BUF_SCRATCH,
			  hop_sched_scratch(s, m->count * s->esize));
	if ((ret = host_phase(c, 0, HOP_COLL_REDUCE, m->count, p->lidx[lead],
			      root && m->inplace, at(HOP_BUF_SEND, 0), part)))
		return ret;
	if (lead != m->rank)
		return 0;
	return leader_phase(c, 1, HOP_COLL_REDUCE, m->count, m->root, root,
			    part, at(HOP_BUF_RECV, 0));
}

/* Where the blocks in host order are: the caller's receive buffer when
 * that is rank order, else scratch of all n blocks (reserved before any
 * phase: hier_phase() puts the phases' scratch after it). */
static struct hier_buf host_order(struct hier_ctx *c, size_t bytes)
{
	if (c->p.sorted)
		return at(HOP_BUF_RECV, 0);
	return at(HOP_BUF_SCRATCH, hop_sched_scratch(c->s, bytes));
}

static struct hier_buf plus(struct hier_buf b, size_t off)
{
	return at(b.buf, b.off + off);
}

/* Uniform: AllGather in the host, then along rail i the host's L blocks;
 * any other: Gather to the leader, AllGatherv among the leaders,
 * Broadcast of all n blocks in the host. */
int hier_allgather(struct hier_ctx *c)
{
	const struct hop_coll_args *m = &c->s->args;
	struct hier_place *p = &c->p;
	size_t per = m->count * c->s->esize;
	int h = p->me_h, rails = p->uniform && p->L > 1;
	int lead = is_leader(c, -1), ret;

	if (!per)
		return 0;
	/* only the leaders of the leader form hold all blocks in host order */
	struct hier_buf st = rails || lead ? host_order(c, per * (size_t)p->n)
					   : at(HOP_BUF_RECV, 0);
	struct hier_buf mine = plus(st, (size_t)p->start[h] * per);
	int inplace = p->sorted && m->inplace;
	if (rails) {
		/* the host's blocks at their places in st */
		vblocks(p, p->L, NULL, m->count, NULL, 0);
		for (int j = 0; j < p->L; j++)
			p->vd[j] += (size_t)p->start[h] * m->count;
		if ((ret = vphase(c, 0, HOP_COLL_ALLGATHERV, INTRA, p->me_i,
				  p->L, hier_members(p, h), inplace,
				  at(HOP_BUF_SEND, 0), st)))
			return ret;
		struct hop_coll_args a = hier_args(c, HOP_COLL_ALLGATHER, INTER,
						   h, p->H, m->count * p->L);
		a.inplace = 1;
		if ((ret = hier_phase(c, 1, &a, hier_rail(p, p->me_i), mine,
				      st)))
			return ret;
	} else {
		if ((ret = host_phase(c, 0, HOP_COLL_GATHER, m->count, 0,
				      lead && inplace, at(HOP_BUF_SEND, 0),
				      mine)))
			return ret;
		if (lead) {
			vblocks(p, p->H, p->cnt, m->count, p->start, m->count);
			if ((ret = vphase(c, 1, HOP_COLL_ALLGATHERV, INTER, h,
					  p->H, hier_leaders(p, -1), 1, mine,
					  st)))
				return ret;
		}
	}
	if (!p->sorted && (rails || lead) &&
	    (ret = hier_copy_blocks(c, at(HOP_BUF_RECV, 0), p->byhost, st,
				    NULL, p->n, per)))
		return ret;
	if (rails)
		return 0;
	return host_phase(c, 3, HOP_COLL_BROADCAST, m->count * (size_t)p->n,
			  0, 0, at(HOP_BUF_RECV, 0), at(HOP_BUF_RECV, 0));
}

/* Uniform: the blocks copied rail by rail (rail i's H blocks together),
 * ReduceScatter in the host so local rank i holds its host's partial of
 * rail i's blocks, then ReduceScatter along rail i. Any other: Reduce
 * of all blocks to the leader, ReduceScatterv among the leaders of each
 * host's blocks, Scatter in the host. */
int hier_reducescatter(struct hier_ctx *c)
{
	struct hop_sched *s = c->s;
	const struct hop_coll_args *m = &s->args;
	struct hier_place *p = &c->p;
	size_t per = m->count * s->esize, all = per * (size_t)p->n;
	int h = p->me_h, i = p->me_i, lead = is_leader(c, -1), ret;

	avg_over(s, m->count);
	if (!per)
		return 0;
	if (p->uniform && p->L > 1) {
		struct hier_buf pk = at(HOP_BUF_SCRATCH, hop_sched_scratch(s, all));
		/* rail-major: block of rank (host g, index j) at j * H + g */
		for (int j = 0; j < p->L; j++)
			for (int g = 0; g < p->H; g++)
				p->grp[j * p->H + g] = hier_members(p, g)[j];
		if ((ret = hier_copy_blocks(c, pk, NULL, at(HOP_BUF_SEND, 0),
					    p->grp, p->n, per)))
			return ret;
		struct hier_buf rail = plus(pk, (size_t)i * p->H * per);
		struct hop_coll_args a = hier_args(c, HOP_COLL_REDUCESCATTER,
						   INTRA, i, p->L,
						   m->count * p->H);
		a.inplace = 1;
		if ((ret = hier_phase(c, 1, &a, hier_members(p, h), pk, rail)))
			return ret;
		a = hier_args(c, HOP_COLL_REDUCESCATTER, INTER, h, p->H,
			      m->count);
		return hier_phase(c, 2, &a, hier_rail(p, i), rail,
				  at(HOP_BUF_RECV, 0));
	}
	struct hier_buf red = { HOP_BUF_NONE, 0 }, st = red;
	if (lead) {
		red = at(HOP_BUF_SCRATCH, hop_sched_scratch(s, all));
		st = p->sorted ? red
			       : at(HOP_BUF_SCRATCH, hop_sched_scratch(s, all));
	}
	struct hier_buf mine = plus(st, (size_t)p->start[h] * per);
	if ((ret = host_phase(c, 0, HOP_COLL_REDUCE, m->count * (size_t)p->n,
			      0, 0, at(HOP_BUF_SEND, 0), red)))
		return ret;
	if (lead) {
		if (!p->sorted && (ret = hier_copy_blocks(c, st, NULL, red,
							  p->byhost, p->n,
							  per)))
			return ret;
		vblocks(p, p->H, p->cnt, m->count, p->start, m->count);
		if ((ret = vphase(c, 1, HOP_COLL_REDUCESCATTERV, INTER, h,
				  p->H, hier_leaders(p, -1), 1, st, mine)))
			return ret;
	}
	return host_phase(c, 2, HOP_COLL_SCATTER, m->count, 0, 0, mine,
			  at(HOP_BUF_RECV, 0));
}

/* Every rank of a host tells its leader it entered (phase @ph), or the
 * leader tells every rank to leave: empty messages, after c->join. */
static int fan(struct hier_ctx *c, int ph, int up)
{
	struct hop_sched *s = c->s;
	struct hier_place *p = &c->p;
	const int *host = hier_members(p, p->me_h);
	uint32_t tag = (uint32_t)ph << HIER_TAG_BITS;
	int first = s->nsteps, lead = host[0] == s->args.rank;

	/* up: the leader receives, the others send; down the other way */
	for (int j = lead ? 1 : 0; j < (lead ? p->cnt[p->me_h] : 1); j++)
		hop_sched_add(s, lead == up ? HOP_STEP_RECV : HOP_STEP_SEND, 0,
			      HOP_BUF_NONE, 0, HOP_BUF_NONE, 0, 0, host[j], tag,
			      c->join, -1, -1);
	hier_join_from(c, first);
	return s->err;
}

/* Gather-style in the host, a barrier among the leaders, release in the
 * host: a rank leaves only after its leader heard from every leader,
 * each of which heard from every rank of its host. */
int hier_barrier(struct hier_ctx *c)
{
	int ret;

	if ((ret = fan(c, 0, 1)))
		return ret;
	if (is_leader(c, -1) &&
	    (ret = leader_phase(c, 1, HOP_COLL_BARRIER, 0, -1, 0,
				at(HOP_BUF_NONE, 0), at(HOP_BUF_NONE, 0))))
		return ret;
	return fan(c, 2, 0);
}
