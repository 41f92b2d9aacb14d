/*
 * put.c - one-sided put: the data goes by post_write (no immediate), then a
 * PUT note {imm, len} by post_send; the provider delivers them in order
 * (contract 1), so when the note arrives the data is in place. A put of
 * one write (at most HOP_RNDV_CHUNK bytes) whose immediate fits the
 * protocol's 28 bits goes as that write alone, with the immediate
 * HOP_IMM_PUT | imm: one message instead of two (at 4 KiB on a 4 KiB MTU,
 * one packet instead of two), and the target takes the length from the
 * completion. Both kinds reach the target's receive queue in the order
 * posted, so puts to a target stay in order. The target queues notes for
 * hop_wait_imm(). A put to this rank is a copy plus a note (see hop_put()
 * in api.c).
 *
 * Puts stream: hop_p2p_iput() returns once the data and the immediate
 * (with the last write, or as the note) are posted, progressing only
 * while the provider's queue is full, without waiting for the write. A
 * put from a registered source keeps its request in p->sids, and its last
 * write asks for a completion (WR_PUT | id) that completes the request;
 * the provider signals its hardware only every k-th such write (selective
 * signalling, contract 2). A put small enough to be posted inline is
 * complete when posted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/copy.h"
#include "p2p/p2p_priv.h"

int p2p_note_push(struct hop_p2p *p, int peer, uint32_t imm, uint64_t len)
{
	struct p2p_note *n = p->notes_free;

	/* held until hop_wait_imm(): bounded with unexpected messages */
	if (hop_ux_charge(&p->uxpool, sizeof(*n)))
		return p2p_ux_fail(p, peer, sizeof(*n), "the immediate of a put");
	if (n) {
		p->notes_free = n->next;
		p->nnotes_free--;
	} else if (!(n = malloc(sizeof(*n)))) {
		hop_ux_uncharge(&p->uxpool, sizeof(*n));
		return p2p_ux_fail(p, peer, sizeof(*n), "the immediate of a put");
	}
	n->next = NULL;
	n->peer = peer;
	n->imm = imm;
	n->len = len;
	if (p->notes_tail)
		p->notes_tail->next = n;
	else
		p->notes_head = n;
	p->notes_tail = n;
	return 0;
}

int p2p_put_note_arrived(struct hop_p2p *p, int peer, const struct hop_ctl *m)
{
	return p2p_note_push(p, peer, m->u.put.imm, m->u.put.len);
}

void p2p_notes_free(struct hop_p2p *p)
{
	struct p2p_note *n;

	while ((n = p->notes_head)) {
		p->notes_head = n->next;
		free(n);
	}
	p->notes_tail = NULL;
	while ((n = p->notes_free)) {
		p->notes_free = n->next;
		free(n);
	}
	p->nnotes_free = 0;
}

/* hop_wait_imm()'s wait: for a note from @peer (-1: any rank). */
struct imm_wait {
	struct hop_p2p *p;
	int peer;
	struct p2p_note *found;
};

static void describe_imm_wait(void *arg, char *buf, size_t len)
{
	struct imm_wait *w = arg;

	if (w->peer < 0)
		snprintf(buf, len, "put immediate from any rank");
	else
		snprintf(buf, len, "put immediate from rank %d", w->peer);
}

/*
 * The provider refused a post of put @r (HOP_PROV_AGAIN: its queue to the
 * peer is full): progress once so completions free room. Fails the comm
 * once the transport stayed busy until the comm deadline (*@deadline, set
 * at the first refusal).
 */
static int put_busy(struct hop_comm *comm, const struct hop_p2p_req *r,
		    uint64_t *deadline)
{
	struct hop_p2p *p = comm->p2p;
	int ret;

	if (!*deadline)
		*deadline = hop_comm_deadline(comm);
	if (hop_deadline_passed(*deadline)) {
		ret = hop_comm_fail(comm, HOP_ERR_TIMEOUT, "rank %d: put to "
				    "rank %d (%zu B): the transport stayed busy "
				    "for %g s", p->rank, r->peer, r->len,
				    comm->cfg.timeout_ms / 1000.0);
		p2p_fail_all(p, ret);
		return ret;
	}
	ret = hop_p2p_progress(comm);
	return ret < 0 ? ret : 0;
}

/* Post the data of put @r in writes of at most rndv_chunk bytes, the last
 * one signalled when the source is registered (id: RQ_ID) and carrying
 * @imm when @wflags has HOP_WR_IMM. */
static int put_post_data(struct hop_comm *comm, struct hop_p2p_req *r,
			 struct hop_prov_mr *lmr, uint64_t raddr, uint64_t rkey,
			 uint32_t imm, unsigned wflags)
{
	struct hop_p2p *p = comm->p2p;
	const unsigned char *s = r->buf;
	uint64_t deadline = 0;
	size_t off = 0;
	int ret;

	while (off < r->len) {
		size_t chunk = r->len - off > p->rndv_chunk ? p->rndv_chunk
							    : r->len - off;
		int last = off + chunk == r->len;
		unsigned flags = (last && lmr ? HOP_WR_SIGNALED : 0) |
				 (last ? wflags : 0);

		ret = p->ops->post_write(p->prov, r->peer, lmr, s + off, chunk,
					 raddr + off, rkey, last ? imm : 0,
					 flags, WR_PUT | RQ_ID(r));
		if (ret == HOP_PROV_AGAIN)
			ret = put_busy(comm, r, &deadline);
		else if (ret == 0)
			off += chunk;
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Hand the PUT note {imm, len} of @r to the provider, behind the control
 * messages queued before it: the target learns of the put in order. */
static int put_post_note(struct hop_comm *comm, struct hop_p2p_req *r,
			 uint32_t imm)
{
	struct hop_p2p *p = comm->p2p;
	struct hop_ctl m = { .type = HOP_MSG_PUT };
	uint64_t deadline = 0;
	int ret;

	m.u.put.imm = imm;
	m.u.put.len = r->len;
	if ((ret = p2p_ctl_send(p, r->peer, &m)))
		return ret;
	while (p->peers[r->peer].ctl_head)
		if ((ret = put_busy(comm, r, &deadline)))
			return ret;
	return 0;
}

/* @r (on a registered source) is in flight: its id in p->sids, the
 * registration cache entry it holds in RQ_RCE. */
static int put_track(struct hop_comm *comm, struct hop_p2p_req *r,
		     struct hop_prov_mr **lmr)
{
	struct hop_p2p *p = comm->p2p;
	struct hop_rc_entry *e = NULL;
	uint32_t id;
	int ret;

	if (!*lmr) {
		ret = hop_regcache_get(&p->rc, r->buf, r->len, 0, &e);
		if (ret)
			return hop_set_error(comm, ret, "put to rank %d: "
					     "registering the %zu B source %p "
					     "failed: %s", r->peer, r->len,
					     r->buf, hop_strerror(ret));
		*lmr = e->mr;
		RQ_RCE(r) = (uint64_t)(uintptr_t)e;
	}
	if (hop_idtab_alloc(&p->sids, r, &id)) {
		if (e)
			hop_regcache_put(&p->rc, e);
		RQ_RCE(r) = 0;
		return hop_comm_fail(comm, HOP_ERR_NO_MEMORY, "p2p: out of "
				     "memory tracking a put to rank %d",
				     r->peer);
	}
	RQ_ID(r) = id;
	RQ_STATE(r) = ST_RNDV_LAST;
	return 0;
}

/* Put @r leaves the table: its id and registration are given back. */
static void put_untrack(struct hop_p2p *p, struct hop_p2p_req *r)
{
	hop_idtab_free(&p->sids, (uint32_t)RQ_ID(r));
	if (RQ_RCE(r)) {
		hop_regcache_put(&p->rc, rq_rce(r));
		RQ_RCE(r) = 0;
	}
}

/* A put of @len bytes with @imm goes as one write with immediate. */
static int one_write(const struct hop_p2p *p, size_t len, uint32_t imm)
{
	return len && len <= p->rndv_chunk && len <= UINT32_MAX &&
	       !(imm & ~HOP_IMM_VAL_MASK);
}

int hop_p2p_iput(struct hop_comm *comm, struct hop_p2p_req *r,
		 struct hop_prov_mr *lmr, const void *src, size_t len,
		 int peer, uint64_t raddr, uint64_t rkey, uint32_t imm)
{
	struct hop_p2p *p = comm->p2p;
	int ret, tracked;

	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	if ((ret = p2p_failed(comm)))
		return ret;
	if (peer < 0 || peer >= p->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "p2p: put to "
				     "rank %d out of range (comm has %d ranks)",
				     peer, p->nranks);
	memset(r->priv, 0, sizeof(r->priv));
	r->kind = P2P_KIND_PUT;
	r->done = r->status = 0;
	r->peer = peer;
	r->tag = 0;
	r->buf = (void *)(uintptr_t)src;
	r->len = r->bytes = len;
	r->sig = 0;
	if (peer == p->rank) {
		if (len)
			hop_move((void *)(uintptr_t)raddr, src, len);
		if ((ret = p2p_note_push(p, peer, imm, len)))
			return ret;
		p2p_complete(p, r, 0);
		return 0;
	}
	/* copied at post (inline) or empty: nothing to wait for */
	tracked = len > p->max_inline;
	if (!tracked)
		lmr = NULL;
	else if ((ret = put_track(comm, r, &lmr)))
		return ret;
	if (one_write(p, len, imm))
		ret = put_post_data(comm, r, lmr, raddr, rkey,
				    hop_imm_make(HOP_IMM_PUT, imm), HOP_WR_IMM);
	else if (!(ret = put_post_data(comm, r, lmr, raddr, rkey, 0, 0)))
		ret = put_post_note(comm, r, imm);
	if (ret) {
		if (tracked && !r->done)
			put_untrack(p, r);  /* else a failure completed it */
		return ret;
	}
	if (!tracked)
		p2p_complete(p, r, 0);
	return 0;
}

/* The signalled write of a put completed: its source may be reused. A
 * failed write fails the comm: its note already left for the target. */
int p2p_put_write_done(struct hop_p2p *p, const struct hop_cqe *c)
{
	struct hop_p2p_req *r = hop_idtab_get(&p->sids, WR_VAL(c->wr_id));
	size_t len;

	/* a put a failure completed already (its id was freed) */
	if (!r || r->kind != P2P_KIND_PUT || r->peer != c->peer)
		return 0;
	len = r->len;
	put_untrack(p, r);
	p2p_complete(p, r, c->status);
	if (c->status)
		return hop_comm_fail(p->comm, c->status, "p2p: put of %zu B "
				     "to rank %d failed: %s", len, c->peer,
				     hop_strerror(c->status));
	return 0;
}

static int note_found(void *arg)
{
	struct imm_wait *w = arg;
	struct hop_p2p *p = w->p;
	struct p2p_note *prev = NULL;

	for (struct p2p_note *n = p->notes_head; n; prev = n, n = n->next) {
		if (w->peer >= 0 && n->peer != w->peer)
			continue;
		if (prev)
			prev->next = n->next;
		else
			p->notes_head = n->next;
		if (p->notes_tail == n)
			p->notes_tail = prev;
		w->found = n;
		return 1;
	}
	return 0;
}

int hop_p2p_wait_imm(struct hop_comm *comm, int peer, uint32_t *imm,
		     int *source, size_t *bytes)
{
	struct hop_p2p *p = comm->p2p;
	struct imm_wait w = { p, peer, NULL };
	struct p2p_note *n;
	int ret;

	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	if ((ret = p2p_wait_loop(comm, note_found, &w, describe_imm_wait, &w)))
		return ret;
	n = w.found;
	*imm = n->imm;
	if (source)
		*source = n->peer;
	if (bytes)
		*bytes = (size_t)n->len;
	hop_ux_uncharge(&p->uxpool, sizeof(*n));
	if (p->nnotes_free >= HOP_UX_KEEP) {
		free(n);
		return 0;
	}
	n->next = p->notes_free;
	p->notes_free = n;
	p->nnotes_free++;
	return 0;
}

int hop_p2p_reg_cached(struct hop_comm *comm, void *addr, size_t len,
		       unsigned access, struct hop_prov_mr **out)
{
	struct hop_p2p *p = comm->p2p;
	struct hop_rc_entry *e;
	int ret;

	if (!p || !out)
		return HOP_ERR_INVALID_ARG;
	if ((ret = hop_regcache_get(&p->rc, addr, len, access, &e)))
		return ret;
	hop_regcache_unref(&p->rc, e);
	*out = e->mr;
	return 0;
}
