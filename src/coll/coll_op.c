/*
 * coll_op.c - the p2p executor of schedules and the life of a collective
 * operation: init/fini of the layer, op pool, start, progress of every
 * running collective, test/wait/release.
 *
 * SEND/RECV steps go to hop_p2p_isend/irecv with the op's request for that
 * step and a completion callback that only queues the step (the driver in
 * sched.c starts its successors on the next advance), so nothing re-enters
 * p2p from inside p2p. Every wait advances all running collectives of the
 * comm, so nonblocking collectives progress in any order of waits.
 *
 * A released op whose requests are still in flight (cancelled, or failed
 * mid-way) is parked as a zombie until p2p completes them (it always does:
 * a failed comm completes every request), and only then reused or freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_int.h"
#include "coll/fbox.h"

enum { OP_FREE = 0, OP_ACTIVE, OP_ZOMBIE };

/* c->hosts: the comm's placement, hosts renumbered in the order of their
 * lowest rank in this comm (a split's ranks may span few of the root's
 * hosts), so every rank builds from the same numbers; NULL on one host. */
static int coll_placement(struct hop_comm *comm, struct hop_coll *c)
{
	int n = comm->nranks, H;

	if (!(c->hosts = malloc((size_t)n * sizeof(int))))
		return HOP_ERR_NO_MEMORY;
	for (int r = 0; r < n; r++)
		c->hosts[r] = hop_comm_host(comm, r);
	if ((H = hop_hosts_renumber(c->hosts, n)) < 0) {
		free(c->hosts);
		c->hosts = NULL;
		return H;
	}
	HOP_INFO("collectives: %d ranks on %d hosts", n, H);
	if (H == 1) {
		free(c->hosts);
		c->hosts = NULL;
	}
	c->hsig = hop_hosts_sig(c->hosts, n);
	return 0;
}

int hop_coll_init(struct hop_comm *comm)
{
	const struct hop_prov_ops *inter = hop_comm_inter_ops(comm);
	struct hop_coll *c;
	char err[HOP_MSG_LEN];
	int ret;

	if (!(c = calloc(1, sizeof(*c))))
		return hop_set_error(comm, HOP_ERR_NO_MEMORY,
				     "collectives: out of memory");
	ret = hop_coll_parse_algo(comm->cfg.algo, c->tune.forced, err,
				  sizeof(err));
	if (ret) {
		free(c);
		return hop_set_error(comm, ret, "%s", err);
	}
	if (coll_placement(comm, c)) {
		free(c->hosts);
		free(c);
		return hop_set_error(comm, HOP_ERR_NO_MEMORY, "collectives: "
				     "out of memory for the placement of %d "
				     "ranks", comm->nranks);
	}
	c->tune.chunk_size = comm->cfg.chunk_size;
	c->tune.depth = comm->cfg.pipeline_depth;
	c->tune.hier_form = !strcmp(comm->cfg.hier_form, "rails")
		? HOP_MODEL_FORM_RAILS
		: !strcmp(comm->cfg.hier_form, "leaders")
		? HOP_MODEL_FORM_LEADERS : HOP_MODEL_FORM_AUTO;
	/* the cost model's link, once per comm: a bad HOP_PROFILE fails init */
	ret = hop_coll_tune_model(&c->tune, comm->cfg.profile,
				  inter ? inter->name : NULL,
				  hop_prov_caps_of(inter), err, sizeof(err));
	if (ret) {
		free(c->hosts);
		free(c);
		return hop_set_error(comm, ret, "%s", err);
	}
	/* larger messages go by rendezvous, which the model charges */
	c->tune.link.eager = (double)comm->cfg.eager_size;
	HOP_INFO("cost model: messages above %zu B go by rendezvous (%d "
		 "alphas)", comm->cfg.eager_size, 1 + HOP_MODEL_RNDV_ALPHAS);
	/* the ranks' agreed oversubscription, not this process's: every rank
	 * must price a collective alike to choose the same algorithm */
	if (comm->model_ranks > comm->model_cores) {
		hop_model_link_oversubscribed(&c->tune.link, comm->model_ranks,
					      comm->model_cores);
		HOP_INFO("cost model: %d ranks on %d cores: alpha %.2f us, "
			 "beta %.3f GB/s", comm->model_ranks,
			 comm->model_cores, c->tune.link.alpha * 1e6,
			 c->tune.link.beta / 1e9);
	}
	comm->coll = c;
	return hop_fbox_init(comm);
}

static void op_free(struct hop_coll_op *op)
{
	hop_sched_free(&op->sched);
	free(op->reqs);
	free(op->posted);
	free(op->scratch);
	free(op);
}

static void unlink_op(struct hop_coll_op **list, struct hop_coll_op *op)
{
	for (; *list; list = &(*list)->next)
		if (*list == op) {
			*list = op->next;
			op->next = NULL;
			return;
		}
}

/* Move zombies whose requests all completed to the free list. */
static void reap_zombies(struct hop_coll *c)
{
	struct hop_coll_op **z = &c->zombies;

	while (*z) {
		struct hop_coll_op *op = *z;
		if (op->outstanding > 0) {
			z = &op->next;
			continue;
		}
		*z = op->next;
		op->state = OP_FREE;
		op->next = c->free;
		c->free = op;
	}
}

/* Move the ops of @list with requests in flight to @to's zombies. */
static void adopt_busy(struct hop_coll *to, struct hop_coll_op **list)
{
	while (*list) {
		struct hop_coll_op *op = *list;

		if (op->outstanding <= 0) {
			list = &op->next;
			continue;
		}
		*list = op->next;
		op->state = OP_ZOMBIE;
		op->next = to->zombies;
		to->zombies = op;
	}
}

void hop_coll_fini(struct hop_comm *comm)
{
	struct hop_coll *c = comm ? comm->coll : NULL;
	struct hop_coll_op *op;

	if (!c)
		return;
	/* requests still in p2p point into our ops: fail the comm so p2p
	 * completes them all before the memory goes */
	int busy = 0;
	for (op = c->active; op; op = op->next)
		busy |= op->outstanding > 0;
	for (op = c->zombies; op; op = op->next)
		busy |= op->outstanding > 0;
	if (busy && comm->p2p) {
		hop_comm_fail(comm, HOP_ERR_ABORTED, "rank %d: communicator "
			      "destroyed with a collective in flight",
			      comm->rank);
		hop_p2p_progress(comm);
	}
	if (hop_comm_derived(comm) && comm->root->coll) {
		/* rendezvous transfers the cancel could not stop write into
		 * these ops: the root keeps them until they end (or it goes) */
		adopt_busy(comm->root->coll, &c->active);
		adopt_busy(comm->root->coll, &c->zombies);
	}
	while ((op = c->active)) {
		c->active = op->next;
		op_free(op);
	}
	while ((op = c->zombies)) {
		c->zombies = op->next;
		op_free(op);
	}
	while ((op = c->free)) {
		c->free = op->next;
		op_free(op);
	}
	hop_fbox_fini(comm);
	free(c->hosts);
	free(c);
	comm->coll = NULL;
}

struct hop_coll_op *hop_coll_op_get(struct hop_comm *comm,
				    const struct hop_coll_args *a)
{
	struct hop_coll *c = comm->coll;
	struct hop_coll_op **pick = NULL, *op;

	reap_zombies(c);
	for (struct hop_coll_op **p = &c->free; *p; p = &(*p)->next) {
		const struct hop_coll_args *b = &(*p)->sched.args;
		if (!pick)
			pick = p;
		if ((*p)->sched.built && b->kind == a->kind &&
		    b->algo == a->algo && b->count == a->count &&
		    b->dtype == a->dtype && b->sync == a->sync) {
			pick = p;
			break;
		}
	}
	if (pick) {
		op = *pick;
		*pick = op->next;
	} else if ((op = calloc(1, sizeof(*op)))) {
		hop_sched_init(&op->sched);
	} else {
		hop_set_error(comm, HOP_ERR_NO_MEMORY, "rank %d: out of memory "
			      "for a collective", comm->rank);
		return NULL;
	}
	op->comm = comm;
	op->status = 0;
	op->deferred = 0;
	op->why[0] = 0;
	op->outstanding = 0;
	op->state = OP_ACTIVE;
	op->next = c->active;
	c->active = op;
	return op;
}

void hop_coll_release(struct hop_comm *comm, struct hop_coll_op *op)
{
	struct hop_coll *c = comm ? comm->coll : NULL;

	if (!c || !op || op->state != OP_ACTIVE)
		return;
	unlink_op(&c->active, op);
	if (op->outstanding > 0) {
		op->state = OP_ZOMBIE;
		op->next = c->zombies;
		c->zombies = op;
		return;
	}
	op->state = OP_FREE;
	op->next = c->free;
	c->free = op;
}

/*
 * A transfer whose size the two ranks disagreed on: p2p fails one larger
 * than the receive buffer (HOP_ERR_TRUNCATED at both ends, its message
 * naming the peer: kept, as a later call would overwrite it) and
 * completes a shorter one, which only the step knows to be short
 * (alltoallv's per-pair counts). The step counts as done and the error
 * is reported when the schedule ends: the rest of the exchange goes on,
 * so the other ranks finish instead of waiting for steps never posted.
 */
static int op_size_error(struct hop_coll_op *op, struct hop_p2p_req *req,
			 const struct hop_step *st)
{
	if (req->status == HOP_ERR_TRUNCATED) {
		if (!op->deferred && op->comm->last_error[0])
			snprintf(op->why, sizeof(op->why), "%s",
				 op->comm->last_error);
	} else if (!req->status && st->kind == HOP_STEP_RECV &&
		   req->bytes != st->len) {
		if (!op->deferred)
			snprintf(op->why, sizeof(op->why), "rank %d sent %zu B "
				 "where rank %d expected %zu B", st->peer,
				 req->bytes, op->comm->rank, st->len);
	} else {
		return 0;
	}
	if (!op->deferred)
		op->deferred = HOP_ERR_TRUNCATED;
	return 1;
}

/* p2p completion callback: queue the step for the driver. */
static void op_req_done(struct hop_p2p_req *req, void *arg)
{
	struct hop_coll_op *op = arg;
	int idx = (int)(req - op->reqs);

	if (!op->posted[idx])
		return;
	op->posted[idx] = 0;
	op->outstanding--;
	if (!op_size_error(op, req, &op->sched.steps[idx]) && req->status &&
	    !op->status)
		op->status = req->status;
	if (op->state == OP_ACTIVE)
		hop_sched_complete(&op->sched, idx);
}

static int op_start_step(void *ctx, struct hop_sched *s, int idx)
{
	struct hop_coll_op *op = ctx;
	const struct hop_step *st = &s->steps[idx];
	struct hop_p2p_req *req = &op->reqs[idx];
	uint64_t tag = HOP_TAG_WITH_COMM(HOP_TAG(HOP_CTX_COLL, op->seq,
						 st->tag), op->comm->comm_id);
	int peer = hop_comm_peer(op->comm, st->peer);
	int ret;

	req->cb = op_req_done;
	req->cb_arg = op;
	op->posted[idx] = 1;
	op->outstanding++;
	if (st->kind == HOP_STEP_SEND)
		ret = hop_p2p_isend(op->comm, req, peer, tag,
				    hop_step_src(s, idx), st->len,
				    op->sig);
	else
		ret = hop_p2p_irecv(op->comm, req, peer, tag,
				    hop_step_dst(s, idx), st->len,
				    op->sig);
	if (ret && op->posted[idx]) {
		op->posted[idx] = 0;
		op->outstanding--;
	}
	return ret;
}

static void op_advance(struct hop_coll_op *op)
{
	if (op->status || op->sched.finished)
		return;
	int ret = hop_sched_advance(&op->sched, op_start_step, op);
	if (ret && !op->status)
		op->status = ret;
	if (op->sched.finished && op->deferred && !op->status)
		op->status = op->deferred;
}

static void advance_all(struct hop_comm *comm)
{
	for (struct hop_coll_op *op = comm->coll->active; op; op = op->next)
		op_advance(op);
}

/* Collective signature: ranks that disagree fail with HOP_ERR_MISMATCH.
 * A word-wise multiply-xorshift mix: it runs on every call, and a
 * byte-wise hash cost a third of a small collective's own instructions. */
uint32_t hop_coll_signature(const struct hop_coll_args *a)
{
	/* a hierarchical one's phases too: ranks forcing other ones
	 * would build schedules that do not match */
	const uint64_t v[] = { (uint64_t)a->kind, (uint64_t)a->algo,
				 a->count, (uint64_t)a->dtype, (uint64_t)a->op,
				 (uint64_t)a->root, (uint64_t)a->nranks,
				 a->chunk_bytes, a->vsig,
				 a->algo == HOP_ALGO_HIER
					 ? (uint64_t)(a->sub_algo[0] * 64 +
						      a->sub_algo[1] + 4096 *
						      a->leaders) : 0,
				 (uint64_t)a->sync };
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		h = (h ^ v[i]) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	h ^= h >> 32;
	return (uint32_t)h ? (uint32_t)h : 1;
}

static int grow_op(struct hop_coll_op *op)
{
	struct hop_sched *s = &op->sched;

	if (s->nsteps > op->reqs_cap) {
		int cap = s->cap; /* the step array's capacity */
		void *r = realloc(op->reqs, (size_t)cap * sizeof(*op->reqs));
		if (r)
			op->reqs = r;
		void *p = realloc(op->posted, (size_t)cap);
		if (p)
			op->posted = p;
		if (!r || !p)
			return HOP_ERR_NO_MEMORY;
		op->reqs_cap = cap;
	}
	if (s->scratch_bytes > op->scratch_cap) {
		free(op->scratch);
		op->scratch_cap = 0;
		if (!(op->scratch = aligned_alloc(HOP_SCRATCH_ALIGN,
						  s->scratch_bytes)))
			return HOP_ERR_NO_MEMORY;
		op->scratch_cap = s->scratch_bytes;
	}
	return 0;
}

/* "allreduce(ring, count 5, f32, sum, root 0)", for messages only. */
static const char *op_desc(struct hop_coll_op *op)
{
	const struct hop_coll_args *a = &op->dargs;

	if (a->kind == HOP_COLL_ALLTOALLV) /* counts per pair; no op, root */
		snprintf(op->desc, sizeof(op->desc), "alltoallv(%s, %s)",
			 hop_coll_algo_name(a->algo), hop_dtype_name(a->dtype));
	else if (a->kind == HOP_COLL_ALLTOALL)
		snprintf(op->desc, sizeof(op->desc), "alltoall(%s, count %zu, "
			 "%s)", hop_coll_algo_name(a->algo), a->count,
			 hop_dtype_name(a->dtype));
	if (a->kind == HOP_COLL_ALLTOALLV || a->kind == HOP_COLL_ALLTOALL)
		return op->desc;
	snprintf(op->desc, sizeof(op->desc), "%s(%s, count %zu, %s, %s, root "
		 "%d)", hop_coll_kind_name(a->kind), hop_coll_algo_name(a->algo),
		 a->count, hop_dtype_name(a->dtype), hop_op_name(a->op), a->root);
	return op->desc;
}

int hop_coll_op_start(struct hop_coll_op *op, const struct hop_coll_args *a,
		      const void *sendbuf, void *recvbuf)
{
	struct hop_comm *comm = op->comm;
	void *base[HOP_BUF_COUNT] = { NULL };
	int ret;

	op->dargs = *a;
	if ((ret = hop_sched_build(&op->sched, a)) || (ret = grow_op(op))) {
		hop_coll_release(comm, op);
		if (ret == HOP_ERR_NO_MEMORY)
			return hop_set_error(comm, ret, "rank %d: %s: out of "
					     "memory for its schedule (%d steps, "
					     "%zu B scratch)", comm->rank,
					     op_desc(op), op->sched.nsteps,
					     op->sched.scratch_bytes);
		return hop_set_error(comm, ret, "rank %d: %s: cannot build the "
				     "schedule: %s", comm->rank, op_desc(op),
				     hop_strerror(ret));
	}
	if (op->sched.nsteps)
		memset(op->posted, 0, (size_t)op->sched.nsteps);
	op->seq = comm->coll->seq++ & 0xffffffu;
	op->sig = hop_coll_signature(a);
	base[HOP_BUF_SEND] = (void *)(uintptr_t)sendbuf;
	base[HOP_BUF_RECV] = recvbuf;
	base[HOP_BUF_SCRATCH] = op->scratch;
	hop_sched_start(&op->sched, base);
	/* a mismatch already known fails the op; its steps are not posted */
	op->status = hop_p2p_coll_begin(comm, op->seq, op->sig);
	HOP_TRACE("rank %d: %s seq %u: %d steps, %zu B scratch", comm->rank,
		  op_desc(op), op->seq, op->sched.nsteps, op->sched.scratch_bytes);
	op_advance(op);
	return 0;
}

static int op_failed(struct hop_comm *comm, struct hop_coll_op *op)
{
	int code = op->status;

	return hop_set_error(comm, code, "rank %d: %s failed: %s", comm->rank,
			     op_desc(op), comm->fail_msg[0] ? comm->fail_msg
					  : op->why[0] ? op->why
					  : hop_strerror(code));
}

int hop_coll_test(struct hop_comm *comm, struct hop_coll_op *op, int *done)
{
	*done = 0;
	if (!op->status && !op->sched.finished) {
		int ret = hop_p2p_progress(comm);
		if (ret < 0 && !op->status)
			op->status = ret;
		advance_all(comm);
	}
	if (op->status) {
		*done = 1;
		return op_failed(comm, op);
	}
	*done = op->sched.finished;
	return 0;
}

static int op_done(void *arg)
{
	struct hop_coll_op *op = arg;

	advance_all(op->comm);
	return op->status || op->sched.finished;
}

/*
 * At the deadline: the collective and the peers its posted steps still
 * wait on, so a survivor of a silent peer (a cut link, a hung process)
 * names it: "allreduce(ring, ...) waiting on rank 1 (receive of 4096 B),
 * rank 3 (send of 4096 B)".
 */
static void describe_op(void *arg, char *buf, size_t len)
{
	struct hop_coll_op *op = arg;
	size_t o;
	int shown = 0, more = 0;

	o = (size_t)snprintf(buf, len, "%s", op_desc(op));
	for (int i = 0; i < op->sched.nsteps && o < len; i++) {
		const struct hop_step *st = &op->sched.steps[i];

		if (!op->posted[i] || (st->kind != HOP_STEP_SEND &&
				       st->kind != HOP_STEP_RECV))
			continue;
		if (shown == 4) {
			more++;
			continue;
		}
		o += (size_t)snprintf(buf + o, len - o, "%s rank %d (%s of %zu B)",
				      shown ? "," : " waiting on", st->peer,
				      st->kind == HOP_STEP_RECV ? "receive"
								: "send",
				      st->len);
		shown++;
	}
	if (more && o < len)
		snprintf(buf + o, len - o, " and %d more step(s)", more);
}

int hop_coll_wait(struct hop_comm *comm, struct hop_coll_op *op)
{
	int ret = hop_p2p_wait_described(comm, op_done, op, describe_op, op);

	if (ret && !op->status)
		op->status = ret;
	return op->status ? op_failed(comm, op) : 0;
}
