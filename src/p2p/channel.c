/*
 * channel.c - set-up and tear-down of the channels (eager rings, staging
 * slots, peers), control messages and their queue, credits, the backlog of
 * peers with queued work.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/bootstrap.h"
#include "p2p/memmon.h"
#include "p2p/p2p_priv.h"

_Static_assert(HOP_CTL_MAX <= HOP_PROV_SEND_MAX, "control messages fit a send");

/* What each rank publishes about its ring. */
struct p2p_ring_info {
	uint64_t addr;
	uint64_t key;
	uint64_t eager_size;
	uint32_t slots;
	uint32_t slot_bytes;
};

static int has_mem_alloc(const struct hop_prov_ops *ops)
{
	return ops->size >= offsetof(struct hop_prov_ops, mem_free) +
			    sizeof(ops->mem_free) &&
	       ops->mem_alloc && ops->mem_free;
}

static size_t page_round(size_t n)
{
	return (n + HOP_RC_PAGE - 1) & ~(size_t)(HOP_RC_PAGE - 1);
}

/* Registration cache callbacks: straight to the provider. */
static int rc_reg(void *ctx, void *addr, size_t len, unsigned access,
		  struct hop_prov_mr **out)
{
	struct hop_p2p *p = ctx;

	return p->ops->mr_reg(p->prov, addr, len, access, out);
}

static void rc_dereg(void *ctx, struct hop_prov_mr *mr)
{
	struct hop_p2p *p = ctx;

	if (mr && p->prov)
		p->ops->mr_dereg(p->prov, mr);
}

/*
 * The eager rings: slots for every peer, in one registered region whose
 * address and key the peers learn at init. Anonymous pages read as zero
 * and take memory when first written, so a peer's slots cost memory from
 * its first message on: a rank's eager memory grows with the peers that
 * send to it, not with the job (16 slots of 8 KiB: 32 MiB per rank at 256
 * ranks if touched at init). A provider's own memory (mem_alloc) is
 * cleared here instead.
 */
static int p2p_alloc_ring(struct hop_p2p *p)
{
	struct hop_comm *comm = p->comm;
	int ret;

	p->ring_len = page_round((size_t)p->nranks * p->slots * p->slot_bytes);
	if (has_mem_alloc(p->ops)) {
		p->ring = p->ops->mem_alloc(p->prov, p->ring_len);
		p->ring_prov_alloc = p->ring != NULL;
		if (p->ring)
			memset(p->ring, 0, p->ring_len);
	}
	if (!p->ring) {
		void *m = mmap(NULL, p->ring_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return hop_comm_fail(comm, HOP_ERR_NO_MEMORY,
					     "p2p: rank %d: cannot map %zu B "
					     "of eager rings: %s", p->rank,
					     p->ring_len, strerror(errno));
		p->ring = m;
	}
	ret = p->ops->mr_reg(p->prov, p->ring, p->ring_len,
			     HOP_PROV_REMOTE_WRITE, &p->ring_mr);
	if (ret) {
		p->ring_mr = NULL;
		return hop_comm_fail(comm, ret < 0 ? ret : HOP_ERR_TRANSPORT,
				     "p2p: rank %d: registering %zu B of eager "
				     "rings failed: %s", p->rank, p->ring_len,
				     hop_strerror(ret));
	}
	return 0;
}

static int p2p_alloc_stage(struct hop_p2p *p)
{
	struct hop_comm *comm = p->comm;
	int ret;

	p->nstage = p->nranks > 1 ? 2 * p->slots : 0;
	if (p->nstage < 4 && p->nranks > 1)
		p->nstage = 4;
	if (!p->nstage)
		return 0;
	p->stage_len = page_round((size_t)p->nstage * p->slot_bytes);
	if (posix_memalign((void **)&p->stage, HOP_RC_PAGE, p->stage_len)) {
		p->stage = NULL;
		goto err_nomem;
	}
	if (!(p->stage_free = malloc(p->nstage * sizeof(*p->stage_free))))
		goto err_nomem;
	for (uint32_t i = 0; i < p->nstage; i++)
		p->stage_free[i] = p->nstage - 1 - i;
	p->stage_nfree = p->nstage;
	ret = p->ops->mr_reg(p->prov, p->stage, p->stage_len, 0, &p->stage_mr);
	if (ret) {
		p->stage_mr = NULL;
		return hop_comm_fail(comm, ret < 0 ? ret : HOP_ERR_TRANSPORT,
				     "p2p: rank %d: registering %zu B of eager "
				     "staging slots failed: %s", p->rank,
				     p->stage_len, hop_strerror(ret));
	}
	return 0;
err_nomem:
	return hop_comm_fail(comm, HOP_ERR_NO_MEMORY,
			     "p2p: rank %d: cannot allocate eager staging "
			     "slots", p->rank);
}

/* Exchange ring addresses and keys; check every rank agrees on sizes. */
static int p2p_exchange(struct hop_p2p *p)
{
	struct hop_comm *comm = p->comm;
	struct p2p_ring_info mine = {
		.addr = (uint64_t)(uintptr_t)p->ring,
		.key = p->ring_mr->key,
		.eager_size = p->eager_size,
		.slots = p->slots,
		.slot_bytes = (uint32_t)p->slot_bytes,
	}, *all;
	int ret;

	if (!(all = calloc((size_t)p->nranks, sizeof(*all))))
		return hop_comm_fail(comm, HOP_ERR_NO_MEMORY,
				     "p2p: out of memory");
	ret = hop_bootstrap_allgather(comm->bs, &mine, all, sizeof(mine),
				      hop_comm_deadline(comm));
	if (ret) {
		hop_comm_fail(comm, ret, "p2p: rank %d: exchanging eager ring "
			      "addresses failed: %s", p->rank,
			      hop_bootstrap_error(comm->bs));
		goto out;
	}
	for (int q = 0; q < p->nranks; q++) {
		if (all[q].eager_size != p->eager_size ||
		    all[q].slots != p->slots) {
			ret = hop_comm_fail(comm, HOP_ERR_CONFIG,
				"p2p: rank %d has HOP_EAGER_SIZE=%" PRIu64
				" HOP_EAGER_SLOTS=%u but rank %d has %zu and "
				"%u; every rank must use the same values",
				q, all[q].eager_size, all[q].slots, p->rank,
				p->eager_size, p->slots);
			goto out;
		}
		p->peers[q].ring_raddr = all[q].addr +
			(uint64_t)p->rank * p->slots * p->slot_bytes;
		p->peers[q].ring_rkey = all[q].key;
		hop_credit_init(&p->peers[q].cr, p->slots);
	}
out:
	free(all);
	return ret;
}

int hop_p2p_init(struct hop_comm *comm)
{
	struct hop_p2p *p;
	int ret;

	if (!comm || !comm->prov_ops || !comm->prov)
		return HOP_ERR_INVALID_ARG;
	if (!(p = calloc(1, sizeof(*p))))
		return hop_comm_fail(comm, HOP_ERR_NO_MEMORY,
				     "p2p: out of memory");
	comm->p2p = p;
	p->comm = comm;
	p->ops = comm->prov_ops;
	p->prov = comm->prov;
	p->rank = comm->rank;
	p->nranks = comm->nranks;
	if (comm->cfg.eager_slots < 1 || comm->cfg.eager_slots > 65535 ||
	    comm->cfg.eager_size < 64 || comm->cfg.eager_size > (1u << 30) ||
	    comm->cfg.rndv_chunk == 0)
		return hop_comm_fail(comm, HOP_ERR_CONFIG,
				     "p2p: HOP_EAGER_SLOTS=%d (1..65535), "
				     "HOP_EAGER_SIZE=%zu (64 B..1 GiB) or "
				     "HOP_RNDV_CHUNK=%zu (> 0) out of range",
				     comm->cfg.eager_slots, comm->cfg.eager_size,
				     comm->cfg.rndv_chunk);
	p->slots = (uint32_t)comm->cfg.eager_slots;
	p->eager_size = comm->cfg.eager_size;
	p->rndv_chunk = comm->cfg.rndv_chunk;
	p->adv_min = comm->cfg.rndv_advert;
	p->slot_bytes = (HOP_EAGER_HDR + p->eager_size + 63) & ~(size_t)63;
	p->max_inline = p->ops->max_inline(p->prov);
	p->inl_len = p->max_inline < p->slot_bytes ? p->max_inline
						   : p->slot_bytes;
	hop_idtab_init(&p->sids);
	hop_idtab_init(&p->rids);
	hop_ux_pool_init(&p->uxpool, p->eager_size,
			  comm->cfg.unexpected_max);
	hop_regcache_init(&p->rc, rc_reg, rc_dereg, p,
			  (size_t)comm->cfg.reg_cache);
	hop_memmon_attach(&p->rc, &comm->cfg);
	p->peers = calloc((size_t)p->nranks, sizeof(*p->peers));
	p->backlog = calloc((size_t)p->nranks, sizeof(*p->backlog));
	p->waited = calloc((size_t)p->nranks, sizeof(*p->waited));
	p->inl = malloc(p->inl_len ? p->inl_len : 1);
	if (!p->peers || !p->backlog || !p->waited || !p->inl)
		return hop_comm_fail(comm, HOP_ERR_NO_MEMORY,
				     "p2p: out of memory");
	for (int q = 0; q < p->nranks; q++) {
		p->peers[q].mq.any = &p->any;
		p->peers[q].mq.peer = q;
	}
	if ((ret = p2p_alloc_ring(p)) || (ret = p2p_alloc_stage(p)) ||
	    (ret = p2p_ll_init(p)) || (ret = p2p_adv_init(p)))
		return ret;
	if ((ret = p2p_exchange(p)))
		return ret;
	HOP_INFO("p2p: %d ranks on %s, eager %zu B x %u slots, inline %zu B, "
		 "memory-polled eager up to %zu B, rendezvous chunk %zu B, "
		 "reg cache %zu", p->nranks, p->ops->name, p->eager_size,
		 p->slots, p->max_inline,
		 p->ll_on ? p->ll_max - HOP_EAGER_HDR : 0, p->rndv_chunk,
		 p->rc.max);
	return 0;
}

static int out_idle(void *arg)
{
	struct hop_p2p *p = arg;

	return !p->nbacklog && !p->rndv_active.head;
}

/* Progress until @cond or @deadline; 0 when @cond became true. */
static int fini_wait(struct hop_p2p *p, int (*cond)(void *),
		     uint64_t deadline)
{
	while (!cond(p)) {
		if (hop_p2p_progress(p->comm) < 0 ||
		    hop_deadline_passed(deadline))
			return -1;
		p->ops->wait(p->prov, 100);
	}
	return 0;
}

/*
 * Best effort, bounded: hand what we still queue (sends waiting for
 * credits, control messages) to the provider, then keep polling until the
 * provider has been quiet for a while, so that messages already complete
 * for the caller (eager sends, put notes) leave before close() drops what
 * the provider still queues. Not collective: peers are not waited for, and
 * nothing new is sent (a peer may have closed already).
 */
static void p2p_flush_out(struct hop_p2p *p)
{
	int ms = p->comm->cfg.timeout_ms < 2000 ? p->comm->cfg.timeout_ms
						 : 2000;
	uint64_t deadline = hop_deadline_after(ms), quiet_end;
	int dirty = 0;

	if (p2p_failed(p->comm) || !p->ring_mr)
		return;
	for (int q = 0; q < p->nranks && !dirty; q++)
		dirty = p->peers[q].dirty && q != p->rank;
	if (!dirty || fini_wait(p, out_idle, deadline))
		return;
	quiet_end = hop_deadline_after(P2P_FLUSH_QUIET_MS);
	for (int idle = 0; idle < 64 && !hop_deadline_passed(quiet_end);) {
		int n = hop_p2p_progress(p->comm);

		if (n < 0)
			return;
		idle = n ? 0 : idle + 1;
	}
}

void hop_p2p_fini(struct hop_comm *comm)
{
	struct hop_p2p *p;
	struct p2p_ctlq_ent *c;

	if (!comm || !(p = comm->p2p))
		return;
	p2p_flush_out(p);
	p->tearing_down = 1;
	if (p->peers)
		p2p_fail_all(p, HOP_ERR_ABORTED);
	if (p->peers)
		p2p_adv_free(p);
	free(p->probe);
	while ((c = p->ctl_free)) {
		p->ctl_free = c->next;
		free(c);
	}
	p2p_notes_free(p);
	p2p_mrs_free(p);
	hop_regcache_fini(&p->rc);
	if (p->ring_mr)
		p->ops->mr_dereg(p->prov, p->ring_mr);
	if (p->ring) {
		if (p->ring_prov_alloc)
			p->ops->mem_free(p->prov, p->ring, p->ring_len);
		else
			munmap(p->ring, p->ring_len);
	}
	if (p->stage_mr)
		p->ops->mr_dereg(p->prov, p->stage_mr);
	free(p->stage);
	free(p->stage_free);
	hop_ux_pool_fini(&p->uxpool);
	hop_idtab_fini(&p->sids);
	hop_idtab_fini(&p->rids);
	p2p_requests_free(p);
	p2p_group_free(p);
	if (p->ll_on)
		HOP_INFO("p2p: memory-polled eager messages: %llu sent, %llu "
			 "received (%llu straight into hop_recv's buffer)",
			 (unsigned long long)p->ll_sent,
			 (unsigned long long)p->ll_received,
			 (unsigned long long)p->ll_direct);
	if (p->adv_direct)
		HOP_INFO("p2p: %llu sends written straight into advertised "
			 "receives", (unsigned long long)p->adv_direct);
	free(p->inl);
	free(p->hot);
	free(p->peers);
	free(p->backlog);
	free(p->waited);
	free(p);
	comm->p2p = NULL;
}

void p2p_backlog_add(struct hop_p2p *p, int peer)
{
	if (p->peers[peer].in_backlog)
		return;
	p->peers[peer].in_backlog = 1;
	p->backlog[p->nbacklog++] = peer;
}

/* Post @m now, carrying the credits owed to @peer. */
int p2p_ctl_post_flags(struct hop_p2p *p, int peer, struct hop_ctl *m,
		       unsigned flags, uint64_t wr_id)
{
	struct p2p_peer *pp = &p->peers[peer];
	unsigned char buf[HOP_CTL_MAX];
	size_t len;
	int ret;

	m->credits = pp->cr.owed;
	len = hop_ctl_encode(m, buf);
	ret = p->ops->post_send(p->prov, peer, buf, len, flags, wr_id);
	if (ret == 0) {
		pp->dirty = 1;
		p2p_ll_note_send(p, peer);
		hop_credit_returned(&pp->cr, m->credits);
		if (m->type == HOP_MSG_CREDIT)
			pp->credit_queued = 0;
	}
	return ret;
}

int p2p_ctl_post_now(struct hop_p2p *p, int peer, struct hop_ctl *m)
{
	return p2p_ctl_post_flags(p, peer, m, 0, 0);
}

/*
 * Send a control message, or queue it behind earlier ones when the
 * provider is busy. Returns 0 or a failure code.
 */
int p2p_ctl_send(struct hop_p2p *p, int peer, struct hop_ctl *m)
{
	struct p2p_peer *pp = &p->peers[peer];
	struct p2p_ctlq_ent *e;
	int ret;

	if (!pp->ctl_head) {
		ret = p2p_ctl_post_now(p, peer, m);
		if (ret != HOP_PROV_AGAIN)
			return ret;
	}
	if ((e = p->ctl_free))
		p->ctl_free = e->next;
	else if (!(e = malloc(sizeof(*e))))
		return hop_comm_fail(p->comm, HOP_ERR_NO_MEMORY,
				     "p2p: out of memory queueing a %s "
				     "message to rank %d",
				     hop_msg_name(m->type), peer);
	e->msg = *m;
	e->next = NULL;
	if (pp->ctl_tail)
		pp->ctl_tail->next = e;
	else
		pp->ctl_head = e;
	pp->ctl_tail = e;
	if (m->type == HOP_MSG_CREDIT)
		pp->credit_queued = 1;
	p2p_backlog_add(p, peer);
	return 0;
}

/* A slot of @peer's messages was copied out: return credits when due. */
void p2p_credit_freed(struct hop_p2p *p, int peer)
{
	struct p2p_peer *pp = &p->peers[peer];

	hop_credit_freed(&pp->cr);
	/* a peer that closed needs no credits; posting would fail the comm */
	if (hop_credit_due(&pp->cr) && !pp->credit_queued &&
	    !p2p_peer_closed(p, peer)) {
		struct hop_ctl m = { .type = HOP_MSG_CREDIT };

		p2p_ctl_send(p, peer, &m);
	}
}

/* @peer returned @n of our slots in its ring. */
int p2p_grant(struct hop_p2p *p, int peer, uint32_t n)
{
	struct p2p_peer *pp = &p->peers[peer];

	if (!n)
		return 0;
	if (hop_credit_grant(&pp->cr, n))
		return hop_comm_fail(p->comm, HOP_ERR_PROTOCOL,
				     "p2p: rank %d returned %u eager credits "
				     "but only %u were in use", peer, n,
				     pp->cr.slots - pp->cr.avail);
	if (pp->sendq.head)
		p2p_backlog_add(p, peer);
	return 0;
}

/* Post what waits in one peer's queues; 1 when both queues are empty. */
static int flush_peer(struct hop_p2p *p, int peer, int *err)
{
	struct p2p_peer *pp = &p->peers[peer];
	struct hop_p2p_req *r;
	struct p2p_ctlq_ent *e;
	int ret;

	while ((e = pp->ctl_head)) {
		if (e->msg.type == HOP_MSG_CREDIT && p2p_peer_closed(p, peer)) {
			ret = 0;        /* nobody left to use them */
			pp->credit_queued = 0;
		} else {
			ret = p2p_ctl_post_now(p, peer, &e->msg);
		}
		if (ret == HOP_PROV_AGAIN)
			return 0;
		if (ret < 0) {
			*err = ret;
			return 0;
		}
		if (!(pp->ctl_head = e->next))
			pp->ctl_tail = NULL;
		e->next = p->ctl_free;
		p->ctl_free = e;
	}
	while ((r = pp->sendq.head)) {
		ret = p2p_send_post(p, r);
		if (ret == HOP_PROV_AGAIN)
			return 0;
		if (ret < 0) {
			*err = ret;
			return 0;
		}
		/* posted: the request left the queue inside *_post() */
	}
	return 1;
}

int p2p_flush_backlog(struct hop_p2p *p)
{
	int err = 0, i = 0;

	while (i < p->nbacklog && !err) {
		int peer = p->backlog[i];

		if (flush_peer(p, peer, &err)) {
			p->peers[peer].in_backlog = 0;
			p->backlog[i] = p->backlog[--p->nbacklog];
		} else {
			i++;
		}
	}
	for (struct hop_p2p_req *r = p->rndv_active.head, *n; r && !err;
	     r = n) {
		n = r->next;
		err = p2p_rndv_push(p, r);
	}
	return err;
}

const char *p2p_tag_str(uint64_t tag, char *buf, size_t len)
{
	unsigned ctx = HOP_TAG_CTX(tag), id = HOP_TAG_COMM(tag);
	int n;

	if (ctx == HOP_CTX_USER && HOP_TAG_HI24(tag) == 0)
		n = snprintf(buf, len, "%u", (unsigned)tag);
	else
		n = snprintf(buf, len, "%s:0x%06x:%u",
			     ctx == HOP_CTX_COLL ? "coll" :
			     ctx == HOP_CTX_INTERNAL ? "internal" : "ctx?",
			     HOP_TAG_HI24(tag), HOP_TAG_LO32(tag));
	/* a derived communicator's (split, dup) */
	if (id && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " of comm %u", id);
	return buf;
}

void p2p_waited_add(struct hop_p2p *p, int peer)
{
	if (p->peers[peer].in_waited || peer == p->rank)
		return;
	p->peers[peer].in_waited = 1;
	p->waited[p->nwaited++] = peer;
}

/*
 * A wait that has gone quiet: a peer that closed its comm in order while
 * a receive from it is posted, or a send to it waits for its credits (-1:
 * none). Once what it sent before closing is taken (the caller lets some
 * quiet rounds pass: memory-polled messages take more than one), nothing
 * more can come from it, credits included, and the wait fails naming it
 * instead of at HOP_TIMEOUT (with connections made on first use, the rank
 * that saw a failure closes, and the ranks waiting on it would otherwise
 * learn nothing; a rank that failed with a peer's messages unreceived
 * leaves that peer's sends waiting for credits).
 */
/* A rendezvous send to @q still waiting for its clear to send? A scan of
 * the live send ids: asked only while a wait is quiet, of peers with no
 * receive posted and no send queued. */
static int waits_cts_from(const struct hop_p2p *p, int q)
{
	for (uint32_t id = 0, seen = 0; id < p->sids.cap &&
					 seen < p->sids.used; id++) {
		const struct hop_p2p_req *r = hop_idtab_get(&p->sids, id);

		if (!r)
			continue;
		seen++;
		if (r->peer == q && RQ_STATE(r) == ST_WAIT_CTS)
			return 1;
	}
	return 0;
}

int p2p_closed_waited(struct hop_p2p *p)
{
	/* the peers a receive was posted from, not all of them: a wait of
	 * a 1024-rank job wakes often and waits on one or two */
	for (int i = 0; i < p->nwaited;) {
		int q = p->waited[i];

		if (!p->peers[q].mq.posted.head && !p->peers[q].sendq.head &&
		    !waits_cts_from(p, q)) {
			p->peers[q].in_waited = 0;
			p->waited[i] = p->waited[--p->nwaited];
			continue;
		}
		if (p2p_peer_closed(p, q))
			return q;
		i++;
	}
	return -1;
}

/*
 * A wait quiet for a quarter of HOP_TIMEOUT: connect every rank (a no-op
 * on an eager mesh), so a death anywhere in the comm, which may be what
 * holds the live ranks this one waits on, fails the wait naming the dead
 * rank instead of a timeout naming a live one. Only slow waits pay it.
 */
void p2p_connect_all(struct hop_p2p *p)
{
	for (int q = 0; q < p->nranks; q++)
		if (q != p->rank && hop_prov_connect(p->ops, p->prov, q) < 0)
			return;
}
