/*
 * mux_ctx.c - what a child provider of the mux sees of hop: a struct
 * hop_prov_ctx over its group of ranks, numbered 0..n-1.
 *
 * A child's allgather()/barrier() is one exchange round that every rank of
 * the communicator joins: a bootstrap allgather of a fixed header {active,
 * group, len} from each rank, then (when any rank is active) one of the
 * payloads, each padded to the largest. Members of a group call the same
 * sequence of exchanges, so a round holds at most one exchange per group
 * and groups on different hosts run side by side; ranks with nothing to
 * exchange (outside every group, or done with their open()) take part as
 * inactive until no rank is active (mux_drain()). A member that left early
 * (its open() failed) is seen in the header, so the rest of its group
 * fails instead of waiting for it.
 */
#include "hop_autoconf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "transport/mux/mux_priv.h"

struct round_hdr {
	uint32_t active;
	uint32_t group;
	uint64_t len;
};

static struct mux_child *child_of(const struct hop_prov_ctx *ctx)
{
	return (struct mux_child *)((char *)(uintptr_t)ctx -
				    offsetof(struct mux_child, ctx));
}

/* Keep @msg as this rank's cause of a failed open, the first one only;
 * @primary: the child's own error, not a peer that left. */
static void note_error(struct hop_prov *m, int code, int primary,
		       const char *msg)
{
	if (m->err_code && (m->err_primary || !primary))
		return;
	m->err_code = code;
	m->err_primary = primary;
	snprintf(m->err, sizeof(m->err), "%s", msg);
}

/* Group member @i (rank @r) is not in this round's exchange. */
static int member_left(struct mux_child *c, int i, int r)
{
	char msg[HOP_PROV_MSG_LEN];

	snprintf(msg, sizeof(msg), "%s: rank %d (%s's rank %d) left the "
		 "address exchange of its group: its open() failed",
		 c->ops->name, r, c->ops->name, i);
	note_error(c->m, HOP_ERR_PEER_FAILED, 0, msg);
	return c->m->ctx->error(c->m->ctx, HOP_ERR_PEER_FAILED, "%s", msg);
}

/* This group's payloads of one round, from @buf (@stride per rank). */
static int round_collect(struct mux_child *c, const struct round_hdr *h,
			 const uint8_t *buf, size_t stride, uint8_t *all,
			 size_t len)
{
	for (int i = 0; i < c->n; i++) {
		int r = c->g[i];

		if (!h[r].active || h[r].group != c->group)
			return member_left(c, i, r);
		if (h[r].len != len)
			return c->m->ctx->error(c->m->ctx, HOP_ERR_MISMATCH,
						"%s: rank %d exchanges %llu B, "
						"rank %d %zu B", c->ops->name,
						r, (unsigned long long)h[r].len,
						c->m->rank, len);
		memcpy(all + (size_t)i * len, buf + (size_t)r * stride, len);
	}
	return 0;
}

/*
 * One round: @c's exchange of @len bytes (@c NULL: inactive). *@any: some
 * rank was active.
 */
static int round_once(struct hop_prov *m, struct mux_child *c,
		      const void *mine, void *all, size_t len, int *any)
{
	const struct hop_prov_ctx *ctx = m->ctx;
	struct round_hdr me = { 0 }, *h;
	uint8_t *pad = NULL, *buf = NULL;
	uint64_t stride = 0;
	int ret;

	*any = 0;
	if (!(h = calloc((size_t)m->nranks, sizeof(*h))))
		return ctx->error(ctx, HOP_ERR_NO_MEMORY, "mux: rank %d: out "
				  "of memory for an exchange round", m->rank);
	if (c)
		me = (struct round_hdr){ 1, c->group, len };
	if ((ret = ctx->allgather(ctx, &me, h, sizeof(me))))
		goto out;
	for (int r = 0; r < m->nranks; r++)
		if (h[r].active) {
			*any = 1;
			stride = h[r].len > stride ? h[r].len : stride;
		}
	if (!stride)
		goto out;
	if (stride > HOP_PROV_ALLGATHER_MAX / (uint64_t)m->nranks) {
		ret = ctx->error(ctx, HOP_ERR_INVALID_ARG, "mux: an exchange "
				 "of %llu B per rank over %d ranks is more than "
				 "%u B", (unsigned long long)stride, m->nranks,
				 HOP_PROV_ALLGATHER_MAX);
		goto out;
	}
	pad = calloc(1, (size_t)stride);
	buf = malloc((size_t)stride * (size_t)m->nranks);
	if (!pad || !buf) {
		ret = ctx->error(ctx, HOP_ERR_NO_MEMORY, "mux: rank %d: out "
				 "of memory for %llu B of exchange", m->rank,
				 (unsigned long long)stride * m->nranks);
		goto out;
	}
	if (c)
		memcpy(pad, mine, len);
	ret = ctx->allgather(ctx, pad, buf, (size_t)stride);
	if (!ret && c)
		ret = round_collect(c, h, buf, (size_t)stride, all, len);
out:
	free(buf);
	free(pad);
	free(h);
	return ret;
}

int mux_drain(struct hop_prov *m)
{
	int any = 1, ret = 0;

	while (any && !ret)
		ret = round_once(m, NULL, NULL, NULL, 0, &any);
	return ret;
}

static int c_allgather(const struct hop_prov_ctx *ctx, const void *mine,
		       void *all, size_t len)
{
	struct mux_child *c = child_of(ctx);
	int any;

	if (!mine || !all || !len)
		return c->m->ctx->error(c->m->ctx, HOP_ERR_INVALID_ARG,
					"%s: allgather of %zu bytes from %p "
					"to %p", c->ops->name, len, mine, all);
	return round_once(c->m, c, mine, all, len, &any);
}

static int c_barrier(const struct hop_prov_ctx *ctx)
{
	struct mux_child *c = child_of(ctx);
	uint8_t one = 1, *all = malloc((size_t)c->n);
	int ret, any;

	if (!all)
		return c->m->ctx->error(c->m->ctx, HOP_ERR_NO_MEMORY, "%s: "
					"out of memory for a barrier",
					c->ops->name);
	ret = round_once(c->m, c, &one, all, 1, &any);
	free(all);
	return ret;
}

/* fail_comm() and error(): the child's message, with its numbering. */
static int c_report(const struct hop_prov_ctx *ctx, int fail, int code,
		    const char *fmt, va_list ap)
{
	struct mux_child *c = child_of(ctx);
	const struct hop_prov_ctx *p = c->m->ctx;
	char msg[HOP_PROV_MSG_LEN];
	size_t n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	snprintf(msg + n, sizeof(msg) - n, "%s", c->map);
	if (code >= 0)
		code = HOP_ERR_TRANSPORT;
	note_error(c->m, code, 1, msg);
	return fail ? p->fail_comm(p, code, "%s", msg)
		    : p->error(p, code, "%s", msg);
}

HOP_PROV_REPORTERS(c_fail, c_error, c_report)

static int c_failed(const struct hop_prov_ctx *ctx)
{
	const struct hop_prov_ctx *p = child_of(ctx)->m->ctx;

	return p->failed(p);
}

static void c_log(const struct hop_prov_ctx *ctx, int level, const char *fmt,
		  ...)
{
	struct mux_child *c = child_of(ctx);
	char msg[HOP_PROV_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->m->ctx->log(c->m->ctx, level, "%s: %s", c->ops->name, msg);
}

static const char *c_config(const struct hop_prov_ctx *ctx, const char *key)
{
	return hop_prov_config_env(child_of(ctx)->ops->name, key);
}

static int c_setting(const struct hop_prov_ctx *ctx, const char *var,
		     long long *num, char *str, size_t len)
{
	const struct hop_prov_ctx *p = child_of(ctx)->m->ctx;

	if (!HOP_PROV_CTX_HAS(p, setting) || !p->setting)
		return HOP_ERR_CONFIG;
	return p->setting(p, var, num, str, len);
}

/* " (shm's ranks 0..1 are ranks 4,6)"; empty when the numbering is the
 * communicator's. */
static void child_map(struct mux_child *c, int nranks)
{
	size_t n, cap = sizeof(c->map);
	int same = c->n == nranks;

	for (int i = 0; i < c->n; i++)
		same = same && c->g[i] == i;
	c->map[0] = '\0';
	if (same)
		return;
	n = (size_t)snprintf(c->map, cap, " (%s's ranks 0..%d are ranks",
			     c->ops->name, c->n - 1);
	for (int i = 0; i < c->n && n < cap; i++)
		n += (size_t)snprintf(c->map + n, cap - n, "%s%d",
				      i ? "," : " ", c->g[i]);
	if (n + 2 > cap)
		memcpy(c->map + cap - 6, "...)", 5);
	else
		memcpy(c->map + n, ")", 2);
}

/* The group's own secret: a connection hello of one group is refused by
 * another group's listener. */
static void child_secret(struct mux_child *c, const uint8_t *parent)
{
	uint64_t h = hop_fnv1a64(HOP_FNV1A64_INIT, "hop-mux-group", 13);

	h = hop_fnv1a64(h, parent, HOP_PROV_SECRET_LEN);
	for (int half = 0; half < 2; half++) {
		h = hop_fnv1a64(h, &c->group, sizeof(c->group));
		h = hop_fnv1a64(h, parent, HOP_PROV_SECRET_LEN);
		memcpy(c->secret + 8 * half, &h, 8);
	}
}

void mux_child_ctx_init(struct hop_prov *m, struct mux_child *c)
{
	const struct hop_prov_ctx *p = m->ctx;
	struct hop_prov_ctx *x = &c->ctx;

	c->m = m;
	child_map(c, m->nranks);
	child_secret(c, p->secret);
	x->size = sizeof(*x);
	x->timeout_ms = p->timeout_ms;
	x->name = c->ops->name;
	x->allgather = c_allgather;
	x->fail_comm = c_fail;
	x->error = c_error;
	x->failed = c_failed;
	x->log = c_log;
	x->config = c_config;
	x->setting = c_setting;
	x->barrier = c_barrier;
	x->host_id = p->host_id;
	x->local_addr = p->local_addr;
	x->secret = c->secret;
}

struct agree_rec {
	int32_t code;
	int32_t primary;
	char msg[HOP_PROV_MSG_LEN / 2];
};

int mux_agree(struct hop_prov *m)
{
	const struct hop_prov_ctx *ctx = m->ctx;
	struct agree_rec mine = { m->err_code, m->err_primary, "" }, *all;
	int pick = -1, ret;

	/* cut to fit the record; the failing rank keeps its whole message */
	memcpy(mine.msg, m->err, sizeof(mine.msg) - 1);
	if (!(all = calloc((size_t)m->nranks, sizeof(*all))))
		return ctx->error(ctx, HOP_ERR_NO_MEMORY, "mux: rank %d: out "
				  "of memory", m->rank);
	if ((ret = ctx->allgather(ctx, &mine, all, sizeof(mine))))
		goto out;
	/* the first rank whose child failed by itself, else the first that
	 * failed at all */
	for (int r = 0; r < m->nranks; r++)
		if (all[r].code && (pick < 0 || (all[r].primary &&
						 !all[pick].primary)))
			pick = r;
	if (pick < 0)
		goto out;
	all[pick].msg[sizeof(all[pick].msg) - 1] = '\0';
	ret = all[pick].code < 0 ? all[pick].code : HOP_ERR_TRANSPORT;
	if (pick != m->rank || !m->err_primary)
		ret = ctx->error(ctx, ret, "on rank %d: %s", pick,
				 all[pick].msg);
out:
	free(all);
	return ret;
}
