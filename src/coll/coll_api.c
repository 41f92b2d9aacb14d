/*
 * coll_api.c - the public collectives: argument checks (naming rank,
 * count, dtype, op and root), algorithm choice, then one schedule run by
 * the p2p executor (coll_op.c): blocking calls start and wait, i-calls
 * return a request completed by hop_test()/hop_wait().
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll_int.h"
#include "coll/fbox.h"
#include "p2p/request.h"

__attribute__((format(printf, 4, 5)))
static int call_err(struct hop_comm *comm, const struct hop_coll_call *c,
		    int code, const char *fmt, ...)
{
	char what[256], where[160];
	va_list ap;
	int o;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	o = snprintf(where, sizeof(where), "%s(rank %d, count %zu", c->fn,
		     comm->rank, c->count);
	if (c->kind != HOP_COLL_BARRIER)
		o += snprintf(where + o, sizeof(where) - (size_t)o, ", dtype %s",
			      hop_dtype_name(c->dtype));
	if (c->kind == HOP_COLL_REDUCE || c->kind == HOP_COLL_ALLREDUCE ||
	    c->kind == HOP_COLL_REDUCESCATTER)
		o += snprintf(where + o, sizeof(where) - (size_t)o, ", op %s",
			      hop_op_name(c->op));
	if (c->kind == HOP_COLL_REDUCE || c->kind == HOP_COLL_BROADCAST)
		snprintf(where + o, sizeof(where) - (size_t)o, ", root %d)",
			 c->root);
	else
		snprintf(where + o, sizeof(where) - (size_t)o, ")");
	return hop_set_error(comm, code, "%s: %s", where, what);
}

/* Checks every argument; fills *@inplace and *@per, the bytes of the
 * count (0 for a barrier). */
static int check_args(struct hop_comm *comm, const struct hop_coll_call *c,
		      int *inplace, size_t *per_out)
{
	int n = comm->nranks, r = comm->rank, rooted;
	size_t es, per, total;

	*inplace = 0;
	*per_out = 0;
	if (c->kind == HOP_COLL_BARRIER)
		return 0;
	if (!(es = hop_dtype_size(c->dtype)))
		return call_err(comm, c, HOP_ERR_INVALID_ARG, "invalid dtype "
				"%d", (int)c->dtype);
	rooted = c->kind == HOP_COLL_REDUCE || c->kind == HOP_COLL_BROADCAST;
	if ((c->kind == HOP_COLL_REDUCE || c->kind == HOP_COLL_ALLREDUCE ||
	     c->kind == HOP_COLL_REDUCESCATTER) &&
	    (unsigned)c->op >= HOP_OP_COUNT)
		return call_err(comm, c, HOP_ERR_INVALID_ARG, "invalid op %d",
				(int)c->op);
	if (rooted && (c->root < 0 || c->root >= n))
		return call_err(comm, c, HOP_ERR_INVALID_ARG, "root %d out of "
				"range (comm has %d ranks)", c->root, n);
	/* multiplied, not divided: two divisions cost a small call's time */
	if (__builtin_mul_overflow(c->count, es, &per) ||
	    __builtin_mul_overflow(per, (size_t)n, &total))
		return call_err(comm, c, HOP_ERR_INVALID_ARG, "count %zu of "
				"dtype %s (%zu B) times %d ranks overflows "
				"size_t", c->count, hop_dtype_name(c->dtype),
				es, n);
	if ((uint64_t)total > HOP_COLL_MAX_BYTES)
		return call_err(comm, c, HOP_ERR_INVALID_ARG, "count %zu of "
				"dtype %s (%zu B) times %d ranks is %zu B, more "
				"than the largest collective (2^56 B)",
				c->count, hop_dtype_name(c->dtype), es, n,
				total);
	*per_out = per;
	if (!c->count)
		return 0;
	switch (c->kind) {
	case HOP_COLL_BROADCAST:
		if (!c->recvbuf)
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "buf is "
					"NULL with count %zu > 0", c->count);
		return 0;
	case HOP_COLL_REDUCE:
	case HOP_COLL_ALLREDUCE:
		if (!c->sendbuf)
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf "
					"is NULL with count %zu > 0", c->count);
		if (c->kind == HOP_COLL_REDUCE && r != c->root)
			return 0; /* recvbuf ignored off the root */
		if (!c->recvbuf)
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "recvbuf "
					"is NULL with count %zu > 0", c->count);
		*inplace = c->sendbuf == c->recvbuf;
		if (!*inplace &&
		    hop_coll_overlap(c->sendbuf, per, c->recvbuf, per))
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf "
					"%p and recvbuf %p overlap partially "
					"(%zu B each); pass the same pointer "
					"for in place", c->sendbuf, c->recvbuf,
					per);
		return 0;
	case HOP_COLL_ALLGATHER:
		if (!c->sendbuf || !c->recvbuf)
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "%s is "
					"NULL with count %zu > 0",
					c->sendbuf ? "recvbuf" : "sendbuf",
					c->count);
		*inplace = c->sendbuf ==
			   (const char *)c->recvbuf + (size_t)r * per;
		if (!*inplace &&
		    hop_coll_overlap(c->sendbuf, per, c->recvbuf, total))
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf "
					"%p overlaps recvbuf %p (%zu B) but is "
					"not recvbuf + rank * count * size "
					"(in place)", c->sendbuf, c->recvbuf,
					total);
		return 0;
	case HOP_COLL_REDUCESCATTER:
		if (!c->sendbuf || !c->recvbuf)
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "%s is "
					"NULL with count %zu > 0",
					c->sendbuf ? "recvbuf" : "sendbuf",
					c->count);
		*inplace = c->recvbuf ==
			   (const char *)c->sendbuf + (size_t)r * per;
		if (!*inplace &&
		    hop_coll_overlap(c->sendbuf, total, c->recvbuf, per))
			return call_err(comm, c, HOP_ERR_INVALID_ARG, "recvbuf "
					"%p overlaps sendbuf %p (%zu B) but is "
					"not sendbuf + rank * count * size "
					"(in place)", c->recvbuf, c->sendbuf,
					total);
		return 0;
	}
	return 0;
}

/* HOP_DEBUG=info: say which algorithm (@algo, named @name) runs, once per
 * change; the fast boxes log here too, so every path reads alike. */
static void log_choice(struct hop_comm *comm, const char *fn, int kind,
		       int algo, const char *name, size_t chunk, int depth,
		       size_t bytes)
{
	static _Thread_local int last[HOP_COLL_KIND_COUNT];
	static _Thread_local size_t last_chunk[HOP_COLL_KIND_COUNT];

	if (hop_log_level() < HOP_LOG_INFO)
		return;
	if (last[kind] == algo + 1 && last_chunk[kind] == chunk)
		return;
	last[kind] = algo + 1;
	last_chunk[kind] = chunk;
	HOP_INFO("%s: %s algorithm %s (%zu B, %d ranks, chunk %zu B, depth "
		 "%d)%s", fn, hop_coll_kind_name(kind), name, bytes,
		 comm->nranks, chunk, depth,
		 comm->coll->tune.forced[kind] ? " forced by HOP_ALGO" : "");
}

/* hop_test()/hop_wait() of an i-collective's request (p2p/request.c)
 * come back here through these, so p2p does not call up into coll. */
static int coll_req_test(struct hop_comm *comm, void *op, int *done)
{
	return hop_coll_test(comm, op, done);
}

static int coll_req_wait(struct hop_comm *comm, void *op)
{
	return hop_coll_wait(comm, op);
}

static void coll_req_release(struct hop_comm *comm, void *op)
{
	hop_coll_release(comm, op);
}

static const struct hop_req_ops coll_req_ops = {
	.test = coll_req_test,
	.wait = coll_req_wait,
	.release = coll_req_release,
};

/*
 * In a Broadcast, Reduce, Gather or Scatter some ranks only send: they
 * finish each call as soon as their messages are out (eager messages
 * free their slot once copied out at the receiver), so a loop of them
 * outruns a slower receiver, whose unexpected messages grow until
 * HOP_UNEXPECTED_MAX fails the comm. Every HOP_ROOTED_SYNC calls, or once
 * the calls could have left a quarter of HOP_UNEXPECTED_MAX at one rank,
 * the call ends with a barrier: no rank finishes it before every rank
 * started it. Every rank counts the same calls and bytes, so all agree
 * on which call it is (its signature includes it).
 */
static int rooted_sync_due(struct hop_comm *comm, const struct hop_coll_launch *l)
{
	struct hop_coll *c = comm->coll;
	int k = l->a.kind, every = comm->cfg.rooted_sync;
	uint64_t held;

	if (!every || comm->nranks < 2 ||
	    (k != HOP_COLL_BROADCAST && k != HOP_COLL_REDUCE &&
	     k != HOP_COLL_GATHER && k != HOP_COLL_SCATTER))
		return 0;
	/* a Reduce's or Gather's root may hold a message from every rank, a
	 * tree Scatter's inner rank its subtree's blocks */
	held = (uint64_t)l->bytes *
	       (k == HOP_COLL_BROADCAST ? 1 : (uint64_t)comm->nranks - 1);
	c->rooted_bytes += held;
	if (++c->rooted_calls < every &&
	    c->rooted_bytes < comm->cfg.unexpected_max / 4)
		return 0;
	c->rooted_calls = 0;
	c->rooted_bytes = 0;
	return 1;
}

/* A blocking call the fast boxes take runs there, without a schedule:
 * its result, or 1 when they do not take it. */
static int run_fbox(struct hop_comm *comm, const struct hop_coll_launch *l)
{
	const struct hop_coll_args *a = &l->a;
	size_t bytes = hop_fbox_payload(a->kind, l->bytes, comm->nranks);
	int form = hop_fbox_takes(comm, a->kind, bytes);

	if (!form)
		return 1;
	struct hop_coll_call c = { .fn = l->fn, .kind = a->kind,
				   .count = a->count, .dtype = a->dtype,
				   .op = a->op, .root = a->root,
				   .sendbuf = l->sendbuf,
				   .recvbuf = l->recvbuf };

	/* the chunk is the slot's payload (an AllToAll's N blocks) */
	log_choice(comm, l->fn, a->kind, HOP_COLL_ALGO_FBOX,
		   hop_fbox_form(form), bytes, 1, l->bytes);
	return hop_fbox_run(comm, &c, bytes, form);
}

int hop_coll_launch(struct hop_comm *comm, struct hop_coll_launch *l,
		    hop_request_t **reqp)
{
	struct hop_coll_args *a = &l->a;
	struct hop_coll_choice ch;
	struct hop_request *r = NULL;
	struct hop_coll_op *op;
	int ret;

	if (!reqp && comm->coll->fbox && (ret = run_fbox(comm, l)) != 1)
		return ret;
	hop_coll_choose_bytes(comm, a->kind, l->bytes, &ch);
	log_choice(comm, l->fn, a->kind, ch.algo, hop_coll_algo_name(ch.algo),
		   ch.chunk_bytes, ch.depth, l->bytes);
	a->algo = ch.algo;
	a->sub_algo[0] = ch.sub_algo[0];
	a->sub_algo[1] = ch.sub_algo[1];
	a->leaders = ch.leaders;
	a->rank = comm->rank;
	a->nranks = comm->nranks;
	a->hosts = comm->coll->hosts;
	a->hsig = comm->coll->hsig;
	a->chunk_bytes = ch.chunk_bytes;
	a->depth = ch.depth;
	a->sync = rooted_sync_due(comm, l);

	if (reqp && !(r = hop_request_get(comm, HOP_REQ_OP)))
		return comm->last_error[0] ? HOP_ERR_NO_MEMORY
			: hop_set_error(comm, HOP_ERR_NO_MEMORY, "%s: out of "
					"memory for a request", l->fn);
	if (!(op = hop_coll_op_get(comm, a))) {
		hop_request_put(r);
		return HOP_ERR_NO_MEMORY;
	}
	memcpy(op->sched.v, l->v, sizeof(op->sched.v));
	if ((ret = hop_coll_op_start(op, a, l->sendbuf, l->recvbuf))) {
		hop_request_put(r);
		return ret;
	}
	if (r) {
		r->ops = &coll_req_ops;
		r->op = op;
		*reqp = r;
		return 0;
	}
	ret = hop_coll_wait(comm, op);
	hop_coll_release(comm, op);
	return ret;
}

/* The call on a claimed comm; @reqp NULL for the blocking forms. */
static int coll_run(struct hop_comm *comm, void *ctx, hop_request_t **reqp)
{
	const struct hop_coll_call *c = ctx;
	struct hop_coll_launch l;
	size_t bytes;
	int ret, inplace;

	if ((ret = check_args(comm, c, &inplace, &bytes)))
		return ret;
	memset(&l, 0, sizeof(l));
	l.fn = c->fn;
	l.bytes = bytes;
	l.sendbuf = c->sendbuf;
	l.recvbuf = c->recvbuf;
	l.a.kind = c->kind;
	l.a.root = c->kind == HOP_COLL_REDUCE || c->kind == HOP_COLL_BROADCAST
			   ? c->root : 0;
	l.a.count = c->kind == HOP_COLL_BARRIER ? 0 : c->count;
	l.a.dtype = c->kind == HOP_COLL_BARRIER ? HOP_UINT8 : c->dtype;
	l.a.op = c->kind == HOP_COLL_REDUCE || c->kind == HOP_COLL_ALLREDUCE ||
				 c->kind == HOP_COLL_REDUCESCATTER
			 ? c->op : HOP_SUM;
	l.a.inplace = inplace;
	return hop_coll_launch(comm, &l, reqp);
}

int hop_coll_enter_run(struct hop_comm *comm, const char *fn,
		       hop_request_t **reqp, int icall, hop_coll_run_fn run,
		       void *ctx)
{
	int ret;

	if (reqp)
		*reqp = NULL;
	if ((ret = hop_comm_enter(comm, fn)))
		return ret;
	if (icall && !reqp)
		ret = hop_set_error(comm, HOP_ERR_INVALID_ARG, "%s: req is NULL",
				    fn);
	else if (!comm->coll)
		ret = hop_set_error(comm, HOP_ERR_INVALID_HANDLE, "%s: "
				    "collectives not initialised", fn);
	else
		ret = run(comm, ctx, reqp);
	hop_comm_leave(comm);
	return ret;
}

/* Every collective: claim the comm (hop_comm_enter()), check @reqp of an
 * i-form (@icall), run, release. */
static int coll_call(struct hop_comm *comm, struct hop_coll_call *c,
		     hop_request_t **reqp, int icall)
{
	return hop_coll_enter_run(comm, c->fn, reqp, icall, coll_run, c);
}

#define CALL(fnname, k, cnt, dt, o, rt, sb, rb)                               \
	struct hop_coll_call c = { fnname, k, cnt, dt, o, rt, sb, rb }

int hop_allreduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		  size_t count, hop_dtype_t dtype, hop_op_t op)
{
	CALL("hop_allreduce", HOP_COLL_ALLREDUCE, count, dtype, op, 0, sendbuf,
	     recvbuf);
	return coll_call(comm, &c, NULL, 0);
}

int hop_broadcast(hop_comm_t *comm, void *buf, size_t count,
		  hop_dtype_t dtype, int root)
{
	CALL("hop_broadcast", HOP_COLL_BROADCAST, count, dtype, HOP_SUM, root,
	     buf, buf);
	return coll_call(comm, &c, NULL, 0);
}

int hop_reduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
	       size_t count, hop_dtype_t dtype, hop_op_t op, int root)
{
	CALL("hop_reduce", HOP_COLL_REDUCE, count, dtype, op, root, sendbuf,
	     recvbuf);
	return coll_call(comm, &c, NULL, 0);
}

int hop_allgather(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		  size_t count, hop_dtype_t dtype)
{
	CALL("hop_allgather", HOP_COLL_ALLGATHER, count, dtype, HOP_SUM, 0,
	     sendbuf, recvbuf);
	return coll_call(comm, &c, NULL, 0);
}

int hop_reducescatter(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		      size_t recvcount, hop_dtype_t dtype, hop_op_t op)
{
	CALL("hop_reducescatter", HOP_COLL_REDUCESCATTER, recvcount, dtype, op,
	     0, sendbuf, recvbuf);
	return coll_call(comm, &c, NULL, 0);
}

int hop_barrier(hop_comm_t *comm)
{
	CALL("hop_barrier", HOP_COLL_BARRIER, 0, HOP_UINT8, HOP_SUM, 0, NULL,
	     NULL);
	return coll_call(comm, &c, NULL, 0);
}

int hop_iallreduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		   size_t count, hop_dtype_t dtype, hop_op_t op,
		   hop_request_t **req)
{
	CALL("hop_iallreduce", HOP_COLL_ALLREDUCE, count, dtype, op, 0, sendbuf,
	     recvbuf);
	return coll_call(comm, &c, req, 1);
}

int hop_ibroadcast(hop_comm_t *comm, void *buf, size_t count,
		   hop_dtype_t dtype, int root, hop_request_t **req)
{
	CALL("hop_ibroadcast", HOP_COLL_BROADCAST, count, dtype, HOP_SUM, root,
	     buf, buf);
	return coll_call(comm, &c, req, 1);
}

int hop_ireduce(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		size_t count, hop_dtype_t dtype, hop_op_t op, int root,
		hop_request_t **req)
{
	CALL("hop_ireduce", HOP_COLL_REDUCE, count, dtype, op, root, sendbuf,
	     recvbuf);
	return coll_call(comm, &c, req, 1);
}

int hop_iallgather(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		   size_t count, hop_dtype_t dtype, hop_request_t **req)
{
	CALL("hop_iallgather", HOP_COLL_ALLGATHER, count, dtype, HOP_SUM, 0,
	     sendbuf, recvbuf);
	return coll_call(comm, &c, req, 1);
}

int hop_ireducescatter(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		       size_t recvcount, hop_dtype_t dtype, hop_op_t op,
		       hop_request_t **req)
{
	CALL("hop_ireducescatter", HOP_COLL_REDUCESCATTER, recvcount, dtype, op,
	     0, sendbuf, recvbuf);
	return coll_call(comm, &c, req, 1);
}

int hop_ibarrier(hop_comm_t *comm, hop_request_t **req)
{
	CALL("hop_ibarrier", HOP_COLL_BARRIER, 0, HOP_UINT8, HOP_SUM, 0, NULL,
	     NULL);
	return coll_call(comm, &c, req, 1);
}
