/*
 * progress.c - the one progress engine of hop: poll the provider in
 * batches, dispatch completions to the protocols, post queued work, run
 * completion callbacks; failing every outstanding request when the
 * communicator fails. The waiting loop every blocking call goes through
 * is in wait.c.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "p2p/p2p_priv.h"

void p2p_complete(struct hop_p2p *p, struct hop_p2p_req *r, int status)
{
	if (r->kind == P2P_KIND_RECV && RQ_ADV(r))
		p2p_adv_retract(p, r);
	r->status = status;
	if (r->cb && !p->tearing_down) {
		if (p->post_depth) {
			/* inside isend/irecv: the caller has not returned yet */
			RQ_STATE(r) = ST_DEFERRED;
			hop_rlist_push(&p->deferred, r);
			return;
		}
		RQ_STATE(r) = ST_DONE;
		r->done = 1;
		r->cb(r, r->cb_arg);    /* may reuse @r: touch it no more */
		return;
	}
	RQ_STATE(r) = ST_DONE;
	r->done = 1;
}

static void run_deferred(struct hop_p2p *p)
{
	struct hop_p2p_req *r;

	while ((r = hop_rlist_pop(&p->deferred))) {
		RQ_STATE(r) = ST_DONE;
		r->done = 1;
		r->cb(r, r->cb_arg);
	}
}

/* Drop @r's registration; @offered: a rendezvous receive's, its sender
 * was told the key (p2p_offer_put()). */
static void release_rce(struct hop_p2p *p, struct hop_p2p_req *r, int offered)
{
	if (RQ_RCE(r)) {
		if (offered)
			p2p_offer_put(p, rq_rce(r));
		else
			hop_regcache_put(&p->rc, rq_rce(r));
		RQ_RCE(r) = 0;
	}
}

/*
 * Complete every outstanding request with @code (once): the communicator
 * failed, was aborted, or is being destroyed. Nothing stays linked to
 * memory of the caller afterwards.
 */
void p2p_fail_all(struct hop_p2p *p, int code)
{
	struct hop_p2p_req *r;
	struct hop_ux *ux;

	if (p->fail_code)
		return;
	p->fail_code = code;
	p->rndv_active.head = p->rndv_active.tail = NULL;
	while ((r = hop_rlist_pop(&p->any.posted)))
		p2p_complete(p, r, code);
	for (int q = 0; q < p->nranks; q++) {
		struct p2p_peer *pp = &p->peers[q];
		struct p2p_ctlq_ent *e;

		while ((r = hop_rlist_pop(&pp->mq.posted)))
			p2p_complete(p, r, code);
		while ((r = hop_rlist_pop(&pp->sendq))) {
			if (r->len > p->eager_size)
				hop_idtab_free(&p->sids, (uint32_t)RQ_ID(r));
			p2p_complete(p, r, code);
		}
		while ((ux = hop_match_take_unexp_any(&pp->mq))) {
			if (ux->kind == HOP_UX_SELF)
				p2p_complete(p, ux->sreq, code);
			hop_ux_put(&p->uxpool, ux);
		}
		while ((e = pp->ctl_head)) {
			pp->ctl_head = e->next;
			e->next = p->ctl_free;
			p->ctl_free = e;
		}
		pp->ctl_tail = NULL;
		pp->credit_queued = 0;
		pp->in_backlog = 0;
	}
	p->nbacklog = 0;
	for (uint32_t id = 0; id < p->sids.cap; id++) {
		if ((r = hop_idtab_get(&p->sids, id))) {
			hop_idtab_free(&p->sids, id);
			release_rce(p, r, 0);
			p2p_complete(p, r, code);
		}
	}
	for (uint32_t id = 0; id < p->rids.cap; id++) {
		if ((r = hop_idtab_get(&p->rids, id))) {
			hop_idtab_free(&p->rids, id);
			release_rce(p, r, 1);
			p2p_complete(p, r, code);
		}
	}
	if (p->tearing_down) {
		while ((r = hop_rlist_pop(&p->deferred))) {
			RQ_STATE(r) = ST_DONE;
			r->done = 1;
		}
	} else if (!p->post_depth) {
		run_deferred(p);
	}
}

/* Complete @l's requests of communicator @id with @code; @sends: those
 * of a send queue (a rendezvous one holds a send id). */
static void cancel_list(struct hop_p2p *p, struct hop_rlist *l, unsigned id,
			int sends, int code)
{
	struct hop_p2p_req *r = l->head, *n;

	for (; r; r = n) {
		n = r->next;
		if (HOP_TAG_COMM(r->tag) != id)
			continue;
		hop_rlist_remove(l, r);
		if (sends && r->len > p->eager_size)
			hop_idtab_free(&p->sids, (uint32_t)RQ_ID(r));
		p2p_complete(p, r, code);
	}
}

/* Drop @pp's unexpected messages of communicator @id. */
static void cancel_unexp(struct hop_p2p *p, struct p2p_peer *pp, unsigned id,
			 int code)
{
	struct hop_ux *ux, *keep = NULL, **tail = &keep;

	while ((ux = hop_match_take_unexp_any(&pp->mq))) {
		if (HOP_TAG_COMM(ux->tag) != id) {
			*tail = ux;
			tail = &ux->next;
			continue;
		}
		if (ux->kind == HOP_UX_SELF)
			p2p_complete(p, ux->sreq, code);
		hop_ux_put(&p->uxpool, ux);
	}
	while ((ux = keep)) {
		keep = ux->next;
		hop_match_add_unexp(&pp->mq, ux);
	}
}

void hop_p2p_cancel_comm(struct hop_comm *comm, int code)
{
	struct hop_p2p *p = comm->p2p;
	unsigned id = (unsigned)comm->comm_id;

	if (!p || p->fail_code)
		return;         /* every request was completed already */
	p->post_depth++;        /* callbacks after the walk */
	for (int q = 0; q < p->nranks; q++) {
		struct p2p_peer *pp = &p->peers[q];

		cancel_list(p, &pp->mq.posted, id, 0, code);
		cancel_list(p, &pp->sendq, id, 1, code);
		cancel_unexp(p, pp, id, code);
	}
	p->post_depth--;
	if (!p->post_depth)
		run_deferred(p);
}

static int dispatch_write(struct hop_p2p *p, const struct hop_cqe *c)
{
	switch (WR_KIND(c->wr_id)) {
	case WR_STAGE:
		if (WR_VAL(c->wr_id) >= p->nstage)
			break;
		p->stage_free[p->stage_nfree++] = (uint32_t)WR_VAL(c->wr_id);
		if (c->status)
			return hop_comm_fail(p->comm, c->status, "p2p: eager "
					     "write to rank %d failed: %s",
					     c->peer, hop_strerror(c->status));
		return 0;
	case WR_RNDV:
		return p2p_rndv_write_done(p, c);
	case WR_PUT:
		return p2p_put_write_done(p, c);
	}
	return hop_comm_fail(p->comm, HOP_ERR_INTERNAL, "p2p: completion of "
			     "unknown write 0x%llx from rank %d",
			     (unsigned long long)c->wr_id, c->peer);
}

/* A rendezvous request keeps its place among the eager messages: the LL
 * ones sent before it (sequence numbers below @seq) are delivered first,
 * the ones sent after it stay in their slots. */
static int ll_before_rts(struct hop_p2p *p, int q, uint32_t seq)
{
	int32_t n = (int32_t)(seq - p->peers[q].recv_seq);

	return p->ll_on && n > 0 ? p2p_ll_drain(p, q, (uint32_t)n) : 0;
}

static int dispatch_recv(struct hop_p2p *p, const struct hop_cqe *c)
{
	struct hop_ctl m;
	char err[160];
	int ret;

	if (c->len > HOP_PROV_SEND_MAX)
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL, "p2p: control "
				     "message of %u B from rank %d", c->len,
				     c->peer);
	if ((ret = hop_ctl_decode(c->data, c->len, &m, err, sizeof(err))))
		return hop_comm_fail(p->comm, ret, "p2p: from rank %d: %s",
				     c->peer, err);
	if ((ret = p2p_grant(p, c->peer, m.credits)))
		return ret;
	switch (m.type) {
	case HOP_MSG_RTS:
		if ((ret = ll_before_rts(p, c->peer, m.u.rts.seq)) < 0)
			return ret;
		return p2p_rts_arrived(p, c->peer, &m);
	case HOP_MSG_CTS:
		return p2p_cts_arrived(p, c->peer, &m);
	case HOP_MSG_NAK:
		return p2p_nak_arrived(p, c->peer, &m);
	case HOP_MSG_PUT:
		return p2p_put_note_arrived(p, c->peer, &m);
	case HOP_MSG_ADVERT:
		return p2p_adv_arrived(p, c->peer, &m);
	default:        /* CREDIT: granted above */
		return 0;
	}
}

static int dispatch(struct hop_p2p *p, const struct hop_cqe *c)
{
	if (c->peer < 0 || c->peer >= p->nranks)
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL, "p2p: completion "
				     "names rank %d (comm has %d ranks)",
				     c->peer, p->nranks);
	if (p->ll_on && (c->op == HOP_CQE_RECV_IMM || c->op == HOP_CQE_RECV)) {
		/* LL messages sent before an eager write with immediate:
		 * the drain stops at its slot, which holds no LL form */
		if (c->op == HOP_CQE_RECV_IMM &&
		    hop_imm_kind(c->imm) == HOP_IMM_EAGER) {
			int ret = p2p_ll_drain(p, c->peer, UINT32_MAX);

			if (ret < 0)
				return ret;
		}
		p->peers[c->peer].last_recv_ns = p->batch_ns;
	}
	switch (c->op) {
	case HOP_CQE_WRITE:
		return dispatch_write(p, c);
	case HOP_CQE_SEND:
		return 0;
	case HOP_CQE_RECV_IMM:
		switch (hop_imm_kind(c->imm)) {
		case HOP_IMM_EAGER:
			return p2p_eager_arrived(p, c);
		case HOP_IMM_RNDV:
			return p2p_rndv_recv_done(p, c);
		case HOP_IMM_DIRECT:
			return p2p_adv_recv_done(p, c);
		case HOP_IMM_PUT:
			return p2p_note_push(p, c->peer, hop_imm_val(c->imm),
					     c->len);
		}
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL, "p2p: rank %d "
				     "wrote with unknown immediate 0x%08x",
				     c->peer, c->imm);
	case HOP_CQE_RECV:
		return dispatch_recv(p, c);
	}
	return hop_comm_fail(p->comm, HOP_ERR_INTERNAL, "p2p: completion of "
			     "unknown kind %d from rank %d", c->op, c->peer);
}

/*
 * Another thread (hop_comm_abort()) has claimed the failure and is writing
 * its cause. Returning now would hand the waiter a code without the
 * message ("aborted by hop_comm_abort()" read as an empty fail_msg), so
 * wait the microseconds until it is published; a writer descheduled for
 * longer than a second still cannot hang us.
 */
int p2p_failed_recording(const struct hop_comm *comm)
{
	struct hop_comm *c = (struct hop_comm *)comm;
	uint64_t give_up = hop_deadline_after(1000);
	int f;

	for (;;) {
		f = atomic_load_explicit(&c->failed, memory_order_acquire);
		if (f < 0)
			return f;
		if (hop_deadline_passed(give_up))
			return atomic_load(&c->aborted) ? HOP_ERR_ABORTED
							: HOP_ERR_COMM_FAILED;
		sched_yield();
	}
}

/* The LL messages p2p_ll_peek() saw, once the CQ is empty: the batch
 * just dispatched (@n entries) and as many more as it takes. Returns
 * what arrived in all, or a failure. */
static int ll_after_cq(struct hop_p2p *p, int n)
{
	int got = 0, ret = 0;

	while (n == P2P_POLL_BATCH) {
		n = p->ops->poll(p->prov, p->cqe, P2P_POLL_BATCH);
		if (n < 0)
			return n;
		for (int i = 0; i < n && ret >= 0; i++)
			ret = dispatch(p, &p->cqe[i]);
		if (ret < 0)
			return ret;
		got += n;
	}
	if ((ret = p2p_ll_deliver(p)) < 0)
		return ret;
	return got + ret;
}

/* A failure met while progressing: every request fails with the comm's
 * code (or @ret when the comm itself has not failed). */
static int progress_fail(struct hop_p2p *p, int ret)
{
	if (p2p_failed(p->comm))
		ret = p2p_failed(p->comm);
	p2p_fail_all(p, ret);
	return ret;
}

int p2p_dispatch_batch(struct hop_p2p *p, int n, int ll_seen)
{
	int ret = 0;

	p->post_depth++;        /* callbacks run after the batch */
	if (p->ll_on && (n || ll_seen))
		p->batch_ns = hop_now_ns();
	for (int i = 0; i < n && ret >= 0; i++)
		ret = dispatch(p, &p->cqe[i]);
	if (ret >= 0 && ll_seen) {
		int got = ll_after_cq(p, n);

		if (got < 0)
			ret = got;
		else
			n += got;
	}
	if (ret >= 0 && (p->nbacklog || p->rndv_active.head))
		ret = p2p_flush_backlog(p);
	p->post_depth--;
	if (ret < 0 || (ret = p2p_failed(p->comm)))
		return progress_fail(p, ret);
	if (p->deferred.head)
		run_deferred(p);
	return n;
}

int hop_p2p_progress(struct hop_comm *comm)
{
	struct hop_p2p *p = comm->p2p;
	int n, ret, ll_seen;

	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	if (p->post_depth)      /* called from a completion callback */
		return 0;
	if ((ret = p2p_failed(p->comm))) {
		hop_comm_inherit_failure(comm);
		return progress_fail(p, ret);
	}
	if (comm != p->comm && (ret = p2p_failed(comm))) {
		/* a derived comm failed alone: the others go on */
		hop_p2p_cancel_comm(comm, ret);
		return ret;
	}
	if (p->deferred.head)
		run_deferred(p);
	/* Memory-polled messages (eager_ll.c) are taken only after a CQ poll
	 * that began after they were seen and emptied the CQ: an RTS sent
	 * before them then came out of it first. While LL peers are hot and
	 * nothing has landed or waits for a completion, the provider is
	 * polled on one call in P2P_LL_CQ_EVERY: a CQ poll costs more than
	 * reading the slots, and spinning on it cost rxe ping-pongs 3-13% of
	 * a half round trip */
	ll_seen = p->ll_on ? p2p_ll_peek(p, 0) : 0;
	if (p->ll_on && !ll_seen && p->nhot && !p->nbacklog &&
	    !p->rndv_active.head && ++p->ll_cq_skip % P2P_LL_CQ_EVERY)
		n = 0;
	else
		n = p->ops->poll(p->prov, p->cqe, P2P_POLL_BATCH);
	if (n < 0)
		return progress_fail(p, n);
	/* the spinning path: nothing arrived, nothing queued */
	if (!n && !p->nbacklog && !p->rndv_active.head && !ll_seen)
		return 0;
	return p2p_dispatch_batch(p, n, ll_seen);
}
