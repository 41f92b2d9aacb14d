/*
 * mux_ops.c - the mux provider (mux.h): opening its children on their
 * groups, and the data path, which routes each post to the child of the
 * peer's class and polls every child.
 */
#include "hop_autoconf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/mux/mux_priv.h"

/* A child's wait() slice while the other may have traffic: short enough
 * that the other's completions are not held up much. */
#define MUX_WAIT_SLICE_US 50

static int mux_usable(const struct hop_prov_ctx *ctx, char *why, size_t len)
{
	(void)ctx, (void)why, (void)len;
	return 1;
}

/* Rank @r's class and number in its child, for every rank. */
static int mux_routes(struct hop_prov *m)
{
	const int *host = m->d->host_of, me = host[m->rank];
	int n = m->nranks, local = 0;

	m->route = malloc((size_t)n * sizeof(int));
	m->cpeer = malloc((size_t)n * sizeof(int));
	for (int c = 0; c < HOP_MUX_NCLS; c++)
		m->ch[c].g = malloc((size_t)n * sizeof(int));
	if (!m->route || !m->cpeer || !m->ch[0].g || !m->ch[1].g)
		return m->ctx->error(m->ctx, HOP_ERR_NO_MEMORY, "mux: rank %d: "
				     "out of memory for the routes of %d "
				     "ranks", m->rank, n);
	for (int r = 0; r < n; r++)
		local += host[r] == me;
	for (int r = 0; r < n; r++) {
		struct mux_child *in = &m->ch[HOP_MUX_INTRA];

		/* every rank is in the inter group, numbered as here */
		m->ch[HOP_MUX_INTER].g[r] = r;
		m->cpeer[r] = r;
		m->route[r] = HOP_MUX_INTER;
		if (local < 2 || host[r] != me)
			continue;
		if (r == m->rank)
			in->ctx.rank = in->n;
		m->route[r] = HOP_MUX_INTRA;
		m->cpeer[r] = in->n;
		in->g[in->n++] = r;
	}
	m->ch[HOP_MUX_INTER].n = n;
	m->ch[HOP_MUX_INTER].ctx.rank = m->rank;
	m->ch[HOP_MUX_INTRA].group = 1 + (uint32_t)me;
	m->ch[HOP_MUX_INTER].group = 0;
	return 0;
}

static int open_child(struct hop_prov *m, struct mux_child *c)
{
	int ret;

	c->ctx.nranks = c->n;
	c->soft = (m->d->soft >> c->cls) & 1;
	mux_child_ctx_init(m, c);
	ret = c->ops->open(&c->ctx, &c->prov);
	if (!ret && c->prov)
		return 0;
	if (c->prov)
		c->ops->close(c->prov);
	c->prov = NULL;
	if (!m->err_code) {
		m->err_code = ret < 0 ? ret : HOP_ERR_INTERNAL;
		m->err_primary = 1;
		snprintf(m->err, sizeof(m->err), "%s: open() failed (%d)%s",
			 c->ops->name, ret, c->map);
	}
	return m->err_code;
}

static void mux_close(struct hop_prov *m)
{
	if (!m)
		return;
	if (m->ch[HOP_MUX_INTER].prov)
		HOP_PROV_INFO(m->ctx, "rank %d sent %llu posts (%llu B) to "
			      "ranks of its host on %s, %llu posts (%llu B) "
			      "across hosts on %s", m->rank,
			      (unsigned long long)m->posts[HOP_MUX_INTRA],
			      (unsigned long long)m->bytes[HOP_MUX_INTRA],
			      m->ch[HOP_MUX_INTRA].ops->name,
			      (unsigned long long)m->posts[HOP_MUX_INTER],
			      (unsigned long long)m->bytes[HOP_MUX_INTER],
			      m->ch[HOP_MUX_INTER].ops->name);
	for (int c = HOP_MUX_NCLS - 1; c >= 0; c--) {
		if (m->ch[c].prov)
			m->ch[c].ops->close(m->ch[c].prov);
		free(m->ch[c].g);
	}
	free(m->route);
	free(m->cpeer);
	free(m);
}

static int mux_open(const struct hop_prov_ctx *ctx, struct hop_prov **out)
{
	const struct hop_prov_ops *ops = hop_prov_ctx_ops(ctx);
	struct hop_prov *m;
	int ret;

	if (!hop_mux_is(ops) ||
	    ((const struct mux_desc *)ops)->nranks != ctx->nranks)
		return ctx->error(ctx, HOP_ERR_INTERNAL, "mux: rank %d: opened "
				  "without its table of %d ranks", ctx->rank,
				  ctx->nranks);
	if (!(m = calloc(1, sizeof(*m))))
		return ctx->error(ctx, HOP_ERR_NO_MEMORY, "mux: rank %d: out "
				  "of memory", ctx->rank);
	m->ctx = ctx;
	m->d = (const struct mux_desc *)ops;
	m->rank = ctx->rank;
	m->nranks = ctx->nranks;
	for (int c = 0; c < HOP_MUX_NCLS; c++) {
		m->ch[c].ops = m->d->cls[c];
		m->ch[c].cls = c;
	}
	if ((ret = mux_routes(m))) {
		m->err_code = ret;
		m->err_primary = 1;
		snprintf(m->err, sizeof(m->err), "mux: out of memory");
	}
	/* intra groups first (side by side on every host), then inter; a rank
	 * that failed joins the rounds as inactive so no one waits for it */
	for (int c = 0; c < HOP_MUX_NCLS; c++) {
		int broken;

		if (!ret && m->ch[c].n > 0)
			ret = open_child(m, &m->ch[c]);
		if ((broken = mux_drain(m))) {
			/* the bootstrap failed (and said so): no agreeing */
			mux_close(m);
			return broken;
		}
	}
	if ((ret = mux_agree(m))) {
		mux_close(m);
		return ret;
	}
	*out = m;
	return 0;
}

/* The child that carries @peer, or NULL after failing the comm. */
static struct mux_child *route(struct hop_prov *m, int peer)
{
	struct mux_child *c;

	if (peer < 0 || peer >= m->nranks) {
		m->ctx->fail_comm(m->ctx, HOP_ERR_INVALID_ARG, "mux: rank %d: "
				  "peer %d is not a rank of %d", m->rank, peer,
				  m->nranks);
		return NULL;
	}
	c = &m->ch[m->route[peer]];
	if (!c->prov) {
		m->ctx->fail_comm(m->ctx, HOP_ERR_INTERNAL, "mux: rank %d: no "
				  "%s provider to rank %d", m->rank,
				  c->ops->name, peer);
		return NULL;
	}
	return c;
}

/* @ret of a post of @len bytes through @c, counted when it was taken. */
static int counted(struct hop_prov *m, const struct mux_child *c, size_t len,
		   int ret)
{
	if (!ret) {
		m->posts[c->cls]++;
		m->bytes[c->cls] += len;
	}
	return ret;
}

static int mux_mr_reg(struct hop_prov *m, void *addr, size_t len,
		      unsigned access, struct hop_prov_mr **out)
{
	struct mux_mr *mr = calloc(1, sizeof(*mr));
	uint32_t part[HOP_MUX_NCLS] = { 0, 0 };
	int ret = 0;

	if (!mr)
		return m->ctx->error(m->ctx, HOP_ERR_NO_MEMORY, "mux: rank %d: "
				     "out of memory registering %zu B",
				     m->rank, len);
	for (int c = 0; c < HOP_MUX_NCLS && !ret; c++) {
		struct mux_child *ch = &m->ch[c];
		uint64_t key;

		if (!ch->prov)
			continue;
		if ((ret = ch->ops->mr_reg(ch->prov, addr, len, access,
					   &mr->c[c])))
			break;
		key = mr->c[c]->key;
		part[c] = hop_mux_key_pack(key, ch->soft);
		if (hop_mux_key_unpack(part[c], ch->soft) != key)
			ret = m->ctx->error(m->ctx, HOP_ERR_NOT_SUPPORTED,
					    "mux: rank %d: %s key 0x%llx of "
					    "%zu B does not fit 32 bits",
					    m->rank, ch->ops->name,
					    (unsigned long long)key, len);
	}
	if (ret) {
		for (int c = 0; c < HOP_MUX_NCLS; c++)
			if (mr->c[c])
				m->ch[c].ops->mr_dereg(m->ch[c].prov, mr->c[c]);
		free(mr);
		return ret;
	}
	mr->pub = (struct hop_prov_mr){ addr, len, 0, access };
	mr->pub.key = hop_mux_key_join(part[HOP_MUX_INTRA],
				       part[HOP_MUX_INTER]);
	*out = &mr->pub;
	return 0;
}

static int mux_mr_dereg(struct hop_prov *m, struct hop_prov_mr *pub)
{
	struct mux_mr *mr = (struct mux_mr *)pub;
	int ret = 0;

	if (!pub)
		return m->ctx->error(m->ctx, HOP_ERR_INVALID_HANDLE, "mux: "
				     "rank %d: deregistering no region",
				     m->rank);
	for (int c = 0; c < HOP_MUX_NCLS; c++) {
		int r = mr->c[c] ? m->ch[c].ops->mr_dereg(m->ch[c].prov,
							   mr->c[c])
				 : 0;

		ret = ret ? ret : r;
	}
	free(mr);
	return ret;
}

static int mux_post_write(struct hop_prov *m, int peer,
			  struct hop_prov_mr *lmr, const void *laddr,
			  size_t len, uint64_t raddr, uint64_t rkey,
			  uint32_t imm, unsigned flags, uint64_t wr_id)
{
	struct mux_child *c = route(m, peer);
	struct hop_prov_mr *clmr;
	uint64_t ckey;

	if (!c)
		return HOP_ERR_INVALID_ARG;
	clmr = lmr ? ((struct mux_mr *)lmr)->c[c->cls] : NULL;
	ckey = hop_mux_key_unpack(hop_mux_key_part(rkey, c->cls), c->soft);
	return counted(m, c, len,
		       c->ops->post_write(c->prov, m->cpeer[peer], clmr, laddr,
					  len, raddr, ckey, imm, flags,
					  wr_id));
}

static int mux_post_send(struct hop_prov *m, int peer, const void *buf,
			 size_t len, unsigned flags, uint64_t wr_id)
{
	struct mux_child *c = route(m, peer);

	if (!c)
		return HOP_ERR_INVALID_ARG;
	return counted(m, c, len, c->ops->post_send(c->prov, m->cpeer[peer],
						    buf, len, flags, wr_id));
}

/* Every child, the first one asked taking turns so neither starves. */
static int mux_poll(struct hop_prov *m, struct hop_cqe *cqe, int max)
{
	int n = 0;

	for (int i = 0; i < HOP_MUX_NCLS && n < max; i++) {
		struct mux_child *c = &m->ch[(m->first + i) % HOP_MUX_NCLS];
		int got;

		if (!c->prov)
			continue;
		if ((got = c->ops->poll(c->prov, cqe + n, max - n)) < 0)
			return got;
		for (int k = n; k < n + got; k++)
			if (cqe[k].peer >= 0 && cqe[k].peer < c->n)
				cqe[k].peer = c->g[cqe[k].peer];
		n += got;
	}
	m->first ^= 1;
	return n;
}

static void mux_wait(struct hop_prov *m, int timeout_us)
{
	int both = m->ch[0].prov && m->ch[1].prov;
	int slice = both && timeout_us > MUX_WAIT_SLICE_US ? MUX_WAIT_SLICE_US
							   : timeout_us;

	for (int c = 0; c < HOP_MUX_NCLS; c++)
		if (m->ch[c].prov)
			m->ch[c].ops->wait(m->ch[c].prov, slice);
}

static size_t mux_max_inline(const struct hop_prov *m)
{
	size_t best = SIZE_MAX;

	for (int c = 0; c < HOP_MUX_NCLS; c++)
		if (m->ch[c].prov) {
			size_t k = m->ch[c].ops->max_inline(m->ch[c].prov);

			best = k < best ? k : best;
		}
	return best == SIZE_MAX ? 0 : best;
}

static int has_alloc(const struct hop_prov_ops *o)
{
	return o->size >= offsetof(struct hop_prov_ops, mem_free) +
			  sizeof(o->mem_free) && o->mem_alloc && o->mem_free;
}

/* The child whose memory peers write most cheaply: intra (shm) first. */
static const struct mux_child *alloc_child(const struct hop_prov *m)
{
	for (int c = 0; c < HOP_MUX_NCLS; c++)
		if (m->ch[c].prov && has_alloc(m->ch[c].ops))
			return &m->ch[c];
	return NULL;
}

static void *mux_mem_alloc(struct hop_prov *m, size_t len)
{
	const struct mux_child *c = alloc_child(m);

	return c ? c->ops->mem_alloc(c->prov, len) : NULL;
}

static void mux_mem_free(struct hop_prov *m, void *addr, size_t len)
{
	const struct mux_child *c = alloc_child(m);

	if (c)
		c->ops->mem_free(c->prov, addr, len);
}

static int mux_peer_closed(struct hop_prov *m, int peer)
{
	const struct mux_child *c;

	if (peer < 0 || peer >= m->nranks)
		return 0;
	c = &m->ch[m->route[peer]];
	return c->prov && c->ops->size >= offsetof(struct hop_prov_ops,
						   peer_closed) +
						  sizeof(c->ops->peer_closed) &&
	       c->ops->peer_closed &&
	       c->ops->peer_closed(c->prov, m->cpeer[peer]);
}

static int mux_connect(struct hop_prov *m, int peer)
{
	const struct mux_child *c;

	if (peer < 0 || peer >= m->nranks)
		return 0;
	c = &m->ch[m->route[peer]];
	return c->prov ? hop_prov_connect(c->ops, c->prov, m->cpeer[peer]) : 0;
}

static const struct hop_prov_ops mux_template = {
	.size = sizeof(struct hop_prov_ops),
	.usable = mux_usable,
	.open = mux_open,
	.close = mux_close,
	.mr_reg = mux_mr_reg,
	.mr_dereg = mux_mr_dereg,
	.post_write = mux_post_write,
	.post_send = mux_post_send,
	.poll = mux_poll,
	.wait = mux_wait,
	.max_inline = mux_max_inline,
	.mem_alloc = mux_mem_alloc,
	.mem_free = mux_mem_free,
	.peer_closed = mux_peer_closed,
	.connect = mux_connect,
};

int hop_mux_is(const struct hop_prov_ops *ops)
{
	return ops && ops->open == mux_open;
}

void hop_mux_free(const struct hop_prov_ops *ops)
{
	if (hop_mux_is(ops))
		free((void *)(uintptr_t)ops);
}

/* A child's eager size, 0 ("no opinion") being hop's 8 KiB. */
static size_t eager_of(const struct hop_prov_caps *c)
{
	return c && c->eager_size ? c->eager_size : 8192;
}

static void merge_caps(struct hop_prov_caps *out,
		       const struct hop_prov_ops *intra,
		       const struct hop_prov_ops *inter)
{
	const struct hop_prov_caps *a = hop_prov_caps_of(intra);
	const struct hop_prov_caps *e = hop_prov_caps_of(inter);
	size_t ea = eager_of(a), ee = eager_of(e);

	out->size = sizeof(*out);
	out->flags = a && e ? a->flags & e->flags : 0;
	out->eager_size = ea < ee ? ea : ee;
	if (e) {
		out->alpha = e->alpha;
		out->beta = e->beta;
		out->duplex = e->duplex;
		out->min_chunk = e->min_chunk;
	}
}

const struct hop_prov_ops *hop_mux_new(const struct hop_prov_ops *intra,
				       const struct hop_prov_ops *inter,
				       unsigned soft, const int *host_of,
				       int nranks)
{
	struct mux_desc *d;

	if (!intra || !inter || !host_of || nranks < 1)
		return NULL;
	d = calloc(1, sizeof(*d) + (size_t)nranks * sizeof(int));
	if (!d)
		return NULL;
	d->ops = mux_template;
	snprintf(d->name, sizeof(d->name), "%s+%s", intra->name, inter->name);
	d->ops.name = d->name;
	merge_caps(&d->caps, intra, inter);
	d->ops.caps = &d->caps;
	d->cls[HOP_MUX_INTRA] = intra;
	d->cls[HOP_MUX_INTER] = inter;
	d->soft = soft;
	d->nranks = nranks;
	memcpy(d->host_of, host_of, (size_t)nranks * sizeof(int));
	return &d->ops;
}
