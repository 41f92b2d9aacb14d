/*
 * coll_api_v.c - the public Gather, Scatter, AllGatherv and
 * ReduceScatterv: argument checks (naming rank, count, block, root),
 * then one schedule through hop_coll_launch() (coll_api.c).
 *
 * The per-rank counts of a v-variant must be equal on every rank: their
 * hash is part of the collective's signature, so ranks that disagree fail
 * with HOP_ERR_MISMATCH instead of writing a block of the wrong size.
 * Displacements are each rank's own layout and are not compared.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_int.h"

struct vcall {
	const char *fn;
	int kind;
	const void *sendbuf;
	void *recvbuf;
	size_t count;                   /* gather/scatter, allgatherv's send */
	const size_t *counts, *displs;  /* the v-variants' blocks */
	hop_dtype_t dtype;
	hop_op_t op;
	int root;
};

__attribute__((format(printf, 4, 5)))
static int vcall_err(struct hop_comm *comm, const struct vcall *c, int code,
		     const char *fmt, ...)
{
	char what[256], where[128];
	va_list ap;
	int o;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	o = snprintf(where, sizeof(where), "%s(rank %d", c->fn, comm->rank);
	if (c->kind == HOP_COLL_GATHER || c->kind == HOP_COLL_SCATTER ||
	    c->kind == HOP_COLL_ALLGATHERV)
		o += snprintf(where + o, sizeof(where) - (size_t)o, ", count %zu",
			      c->count);
	o += snprintf(where + o, sizeof(where) - (size_t)o, ", dtype %s",
		      hop_dtype_name(c->dtype));
	if (c->kind == HOP_COLL_REDUCESCATTERV)
		o += snprintf(where + o, sizeof(where) - (size_t)o, ", op %s",
			      hop_op_name(c->op));
	if (c->kind == HOP_COLL_GATHER || c->kind == HOP_COLL_SCATTER)
		snprintf(where + o, sizeof(where) - (size_t)o, ", root %d)",
			 c->root);
	else
		snprintf(where + o, sizeof(where) - (size_t)o, ")");
	return hop_set_error(comm, code, "%s: %s", where, what);
}

/* @elems of @es bytes, as bytes within the largest collective; else
 * HOP_ERR_INVALID_ARG naming @what. */
static int vbytes(struct hop_comm *comm, const struct vcall *c, size_t elems,
		  size_t es, const char *what, size_t *out)
{
	if (elems > HOP_COLL_MAX_BYTES / es)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "%s: %zu elements "
				 "of %zu B: more than the largest collective "
				 "(2^56 B)", what, elems, es);
	*out = elems * es;
	return 0;
}

/* Gather and scatter: the root's side holds N blocks of @count. */
static int check_rooted(struct hop_comm *comm, const struct vcall *c,
			struct hop_coll_launch *l)
{
	int n = comm->nranks, r = comm->rank;
	int gather = c->kind == HOP_COLL_GATHER;
	size_t es = hop_dtype_size(c->dtype), per, total = 0;
	const void *own, *all;
	int ret;

	if (c->root < 0 || c->root >= n)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "root %d out of "
				 "range (comm has %d ranks)", c->root, n);
	if (c->count > SIZE_MAX / es / (size_t)n)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "count %zu of "
				 "dtype %s (%zu B) times %d ranks overflows "
				 "size_t", c->count, hop_dtype_name(c->dtype),
				 es, n);
	if ((ret = vbytes(comm, c, c->count * (size_t)n, es, "count times "
			  "ranks", &total)))
		return ret;
	per = c->count * es;
	l->a.count = c->count;
	l->a.root = c->root;
	l->bytes = per;
	if (!per)
		return 0;
	/* the rank's own block, and on the root the buffer of N blocks */
	own = gather ? c->sendbuf : c->recvbuf;
	all = gather ? c->recvbuf : c->sendbuf;
	if (!own)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "%s is NULL with "
				 "count %zu > 0", gather ? "sendbuf" : "recvbuf",
				 c->count);
	if (r != c->root)
		return 0; /* the other buffer is the root's only */
	if (!all)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "%s is NULL on "
				 "the root with count %zu > 0",
				 gather ? "recvbuf" : "sendbuf", c->count);
	l->a.inplace = own == (const char *)all + (size_t)r * per;
	if (!l->a.inplace && hop_coll_overlap(own, per, all, total))
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "%s %p overlaps "
				 "%s %p (%zu B) but is not %s + root * count * "
				 "size (in place)", gather ? "sendbuf" : "recvbuf",
				 own, gather ? "recvbuf" : "sendbuf", all, total,
				 gather ? "recvbuf" : "sendbuf");
	return 0;
}

/* Hash of the counts every rank must agree on (the signature's part). */
static uint64_t counts_hash(const size_t *counts, int n)
{
	uint64_t h = 0x243f6a8885a308d3ull;

	for (int b = 0; b < n; b++) {
		h = (h ^ (uint64_t)counts[b]) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	return h;
}

struct blk {
	size_t at, count;
	int b;
};

static int cmp_blk(const void *x, const void *y)
{
	const struct blk *p = x, *q = y;

	return p->at < q->at ? -1 : p->at > q->at;
}

/* Non-empty blocks of the receive layout must not share an element.
 * Returns 1 when they do not, 0 with *@x, *@y two that do, or
 * HOP_ERR_NO_MEMORY. */
static int blocks_disjoint(const size_t *counts, const size_t *displs, int n,
			   int *x, int *y)
{
	struct blk *v;
	int m = 0, ok = 1, prev = -1;

	for (int b = 0; b < n; b++) { /* in order: nothing to sort */
		if (!counts[b])
			continue;
		if (prev >= 0 && displs[b] < displs[prev] + counts[prev])
			ok = 0;
		prev = b;
	}
	if (ok)
		return 1;
	if (!(v = malloc((size_t)n * sizeof(*v))))
		return HOP_ERR_NO_MEMORY;
	for (int b = 0; b < n; b++)
		if (counts[b])
			v[m++] = (struct blk){ displs[b], counts[b], b };
	qsort(v, (size_t)m, sizeof(*v), cmp_blk);
	ok = 1;
	for (int i = 1; i < m && ok; i++)
		if (v[i].at < v[i - 1].at + v[i - 1].count) {
			*x = v[i - 1].b;
			*y = v[i].b;
			ok = 0;
		}
	free(v);
	return ok;
}

/* Every block's count and end, and their sum, within 2^56 B; *@span:
 * elements up to the end of the last block, *@maxc: the largest block. */
static int check_blocks(struct hop_comm *comm, const struct vcall *c,
			const size_t *displs, size_t *span, size_t *maxc)
{
	size_t es = hop_dtype_size(c->dtype), lim = HOP_COLL_MAX_BYTES / es;
	size_t sum = 0;

	*span = *maxc = 0;
	for (int b = 0; b < comm->nranks; b++) {
		size_t cnt = c->counts[b];

		if (cnt > lim || displs[b] > lim - cnt || cnt > lim - sum)
			return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "block %d "
					 "(count %zu at displacement %zu, %zu "
					 "elements before it) ends past the "
					 "largest collective (2^56 B)", b, cnt,
					 displs[b], sum);
		sum += cnt;
		if (cnt && displs[b] + cnt > *span)
			*span = displs[b] + cnt;
		if (cnt > *maxc)
			*maxc = cnt;
	}
	return 0;
}

static int check_allgatherv(struct hop_comm *comm, const struct vcall *c,
			    struct hop_coll_launch *l)
{
	int n = comm->nranks, r = comm->rank, x = 0, y = 0;
	size_t es = hop_dtype_size(c->dtype), span, maxc, own;
	int ret;

	if (!c->counts || !c->displs)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "%s is NULL",
				 c->counts ? "displs" : "recvcounts");
	if ((ret = check_blocks(comm, c, c->displs, &span, &maxc)))
		return ret;
	if (c->count != c->counts[r])
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "sendcount %zu "
				 "differs from recvcounts[%d] = %zu", c->count,
				 r, c->counts[r]);
	ret = blocks_disjoint(c->counts, c->displs, n, &x, &y);
	if (ret < 0)
		return vcall_err(comm, c, ret, "out of memory for the order of "
				 "%d blocks", n);
	if (!ret)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "blocks %d (at "
				 "%zu, count %zu) and %d (at %zu) of recvbuf "
				 "overlap", x, c->displs[x], c->counts[x], y,
				 c->displs[y]);
	own = c->count * es;
	if (span && !c->recvbuf)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "recvbuf is NULL "
				 "with %zu elements to receive", span);
	if (own && !c->sendbuf)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf is NULL "
				 "with sendcount %zu > 0", c->count);
	l->a.inplace = own && c->sendbuf ==
		       (const char *)c->recvbuf + c->displs[r] * es;
	if (!l->a.inplace &&
	    hop_coll_overlap(c->sendbuf, own, c->recvbuf, span * es))
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf %p "
				 "overlaps recvbuf %p (%zu B) but is not recvbuf "
				 "+ displs[rank] * size (in place)", c->sendbuf,
				 c->recvbuf, span * es);
	l->a.count = maxc;
	l->a.counts = c->counts;
	l->a.displs = c->displs;
	l->a.vsig = counts_hash(c->counts, n);
	l->bytes = maxc * es;
	return 0;
}

/* @displs: N elements, filled with the blocks' offsets in sendbuf. */
static int check_reducescatterv(struct hop_comm *comm, const struct vcall *c,
				struct hop_coll_launch *l, size_t *displs)
{
	int n = comm->nranks, r = comm->rank;
	size_t es = hop_dtype_size(c->dtype), span, maxc, total = 0;
	int ret;

	if ((unsigned)c->op >= HOP_OP_COUNT)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "invalid op %d",
				 (int)c->op);
	if (!c->counts)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "recvcounts is "
				 "NULL");
	for (int b = 0; b < n; b++) {
		displs[b] = total;
		/* a sum past 2^56 B fails check_blocks() before it wraps */
		total += c->counts[b] < HOP_COLL_MAX_BYTES ? c->counts[b]
							   : HOP_COLL_MAX_BYTES;
		if (total > HOP_COLL_MAX_BYTES)
			total = HOP_COLL_MAX_BYTES;
	}
	if ((ret = check_blocks(comm, c, displs, &span, &maxc)))
		return ret;
	size_t own = c->counts[r] * es;
	if (span && !c->sendbuf)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf is NULL "
				 "with %zu elements to reduce", span);
	if (own && !c->recvbuf)
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "recvbuf is NULL "
				 "with recvcounts[%d] = %zu > 0", r,
				 c->counts[r]);
	l->a.inplace = own && c->recvbuf ==
		       (const char *)c->sendbuf + displs[r] * es;
	if (!l->a.inplace &&
	    hop_coll_overlap(c->sendbuf, span * es, c->recvbuf, own))
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "recvbuf %p "
				 "overlaps sendbuf %p (%zu B) but is not sendbuf "
				 "+ (recvcounts[0] + .. + recvcounts[rank-1]) * "
				 "size (in place)", c->recvbuf, c->sendbuf,
				 span * es);
	l->a.count = maxc;
	l->a.counts = c->counts;
	l->a.displs = displs;
	l->a.op = c->op;
	l->a.vsig = counts_hash(c->counts, n);
	l->bytes = maxc * es;
	return 0;
}

/* The call on a claimed comm with collectives. */
static int vcall_run(struct hop_comm *comm, void *ctx, hop_request_t **reqp)
{
	const struct vcall *c = ctx;
	struct hop_coll_launch l;
	size_t *displs = NULL;
	int ret;

	if (!hop_dtype_size(c->dtype))
		return vcall_err(comm, c, HOP_ERR_INVALID_ARG, "invalid dtype "
				 "%d", (int)c->dtype);
	memset(&l, 0, sizeof(l));
	l.fn = c->fn;
	l.sendbuf = c->sendbuf;
	l.recvbuf = c->recvbuf;
	l.a.kind = c->kind;
	l.a.dtype = c->dtype;
	l.a.op = HOP_SUM;
	switch (c->kind) {
	case HOP_COLL_GATHER:
	case HOP_COLL_SCATTER:
		ret = check_rooted(comm, c, &l);
		break;
	case HOP_COLL_ALLGATHERV:
		ret = check_allgatherv(comm, c, &l);
		break;
	default:
		if (!(displs = malloc((size_t)comm->nranks * sizeof(*displs))))
			return vcall_err(comm, c, HOP_ERR_NO_MEMORY, "out of "
					 "memory for %d block offsets",
					 comm->nranks);
		ret = check_reducescatterv(comm, c, &l, displs);
		break;
	}
	if (!ret)
		ret = hop_coll_launch(comm, &l, reqp);
	free(displs); /* read only while the schedule was built */
	return ret;
}

static int vcall(hop_comm_t *comm, const struct vcall *c,
		 hop_request_t **req, int icall)
{
	return hop_coll_enter_run(comm, c->fn, req, icall, vcall_run,
				  (void *)(uintptr_t)c);
}

#define ROOTED(fnname, k)                                                     \
	const struct vcall c = { .fn = fnname, .kind = k, .sendbuf = sendbuf, \
				 .recvbuf = recvbuf, .count = count,          \
				 .dtype = dtype, .root = root }

int hop_gather(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
	       size_t count, hop_dtype_t dtype, int root)
{
	ROOTED("hop_gather", HOP_COLL_GATHER);
	return vcall(comm, &c, NULL, 0);
}

int hop_igather(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		size_t count, hop_dtype_t dtype, int root, hop_request_t **req)
{
	ROOTED("hop_igather", HOP_COLL_GATHER);
	return vcall(comm, &c, req, 1);
}

int hop_scatter(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		size_t count, hop_dtype_t dtype, int root)
{
	ROOTED("hop_scatter", HOP_COLL_SCATTER);
	return vcall(comm, &c, NULL, 0);
}

int hop_iscatter(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		 size_t count, hop_dtype_t dtype, int root, hop_request_t **req)
{
	ROOTED("hop_iscatter", HOP_COLL_SCATTER);
	return vcall(comm, &c, req, 1);
}

#define AGV(fnname)                                                           \
	const struct vcall c = { .fn = fnname, .kind = HOP_COLL_ALLGATHERV,   \
				 .sendbuf = sendbuf, .recvbuf = recvbuf,      \
				 .count = sendcount, .counts = recvcounts,    \
				 .displs = displs, .dtype = dtype }

int hop_allgatherv(hop_comm_t *comm, const void *sendbuf, size_t sendcount,
		   void *recvbuf, const size_t *recvcounts,
		   const size_t *displs, hop_dtype_t dtype)
{
	AGV("hop_allgatherv");
	return vcall(comm, &c, NULL, 0);
}

int hop_iallgatherv(hop_comm_t *comm, const void *sendbuf, size_t sendcount,
		    void *recvbuf, const size_t *recvcounts,
		    const size_t *displs, hop_dtype_t dtype,
		    hop_request_t **req)
{
	AGV("hop_iallgatherv");
	return vcall(comm, &c, req, 1);
}

#define RSV(fnname)                                                           \
	const struct vcall c = { .fn = fnname, .kind = HOP_COLL_REDUCESCATTERV,\
				 .sendbuf = sendbuf, .recvbuf = recvbuf,      \
				 .counts = recvcounts, .dtype = dtype,        \
				 .op = op }

int hop_reducescatterv(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		       const size_t *recvcounts, hop_dtype_t dtype, hop_op_t op)
{
	RSV("hop_reducescatterv");
	return vcall(comm, &c, NULL, 0);
}

int hop_ireducescatterv(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
			const size_t *recvcounts, hop_dtype_t dtype,
			hop_op_t op, hop_request_t **req)
{
	RSV("hop_ireducescatterv");
	return vcall(comm, &c, req, 1);
}
