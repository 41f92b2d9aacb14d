/*
 * eager_direct.c - blocking hop_send()/hop_recv() of a small message to or
 * from a peer that talks LL (eager_ll.c), without a request: the message
 * goes from the slot straight into the caller's buffer, and out of the
 * caller's buffer straight into the LL write.
 *
 * Why: otherwise a ping-pong's answer runs the whole receive machinery
 * (a request, the wait loop, progress, peek, deliver, match, complete) and
 * then the whole send machinery before its write goes out, ~50 calls.
 * Under a TCG hypervisor each call costs ~0.2 us, and without this path
 * hop's 2 B half round trip is 1.09-1.12x a perftest-like raw verbs
 * ping-pong in the same process; the path takes 4-5 % off it there, and
 * shm's 2 B from 0.50 to 0.46 us (docs/verbs.md, "Blocking calls without a
 * request"; docs/results/2026-12-05-verbs-eager-direct.md).
 *
 * It applies only where it cannot change what the general path would do:
 * no posted or unexpected receive from the peer (matching order), no
 * queued sends, rendezvous transfers or callbacks (progress), and the CQ
 * polled empty after the slot was seen (an RTS sent before the message
 * comes first, as in p2p_ll_deliver()). Anything else - a message of
 * another tag, size or signature, a slot still landing, a completion -
 * leaves the slot untouched and returns 0: the general path takes over.
 */
#include <string.h>

#include "core/copy.h"
#include "p2p/p2p_priv.h"

static const volatile uint64_t *next_slot(const struct hop_p2p *p, int peer)
{
	return (const volatile uint64_t *)p2p_ring_slot(
		p, peer, p->peers[peer].recv_seq);
}

/* Nothing the general path would have to do first for @peer. */
static int direct_quiet(const struct hop_p2p *p, int peer)
{
	const struct p2p_peer *pp = &p->peers[peer];

	return p->ll_on && !p->post_depth && !p->nbacklog &&
	       !p->rndv_active.head && !p->deferred.head && !pp->sendq.head &&
	       !pp->mq.posted.head && !pp->mq.unexp.head;
}

/*
 * Spin until the first word of @peer's next slot carries its flag, running
 * the progress engine between reads, as long as the general wait loop
 * would spin: HOP_SPIN progress calls, then until comm->spin_min_ns.
 * Returns 1 (seen), 0 (the general path must take over: a message from
 * @peer was taken by the progress engine, work was queued, or the spin
 * phase ended) or a failure.
 */
static int direct_spin(struct hop_comm *comm, int peer)
{
	struct hop_p2p *p = comm->p2p;
	unsigned calls = 0, spin_calls = (unsigned)comm->cfg.spin_count;
	uint64_t end = 0;

	for (;;) {
		/* recomputed: a progress call may have taken the message */
		uint32_t flag = hop_ll_flag(p->peers[peer].recv_seq);
		const volatile uint64_t *w = next_slot(p, peer);
		int ret;

		for (unsigned i = 0; i < p->direct_spins; i++)
			if ((uint32_t)(*w >> 32) == flag)
				return 1;
		p->ll_direct_peer = peer;
		ret = hop_p2p_progress(comm);
		p->ll_direct_peer = -1;
		if (ret < 0)
			return ret;
		if (!direct_quiet(p, peer))
			return 0;
		if (++calls < spin_calls)
			continue;
		if (!end)
			end = hop_now_ns() + comm->spin_min_ns;
		else if (hop_now_ns() >= end)
			return 0;
	}
}

int p2p_direct_recv(struct hop_comm *comm, int peer, uint64_t tag, void *buf,
		    size_t len, size_t *bytes)
{
	struct hop_p2p *p = comm->p2p;
	unsigned char msg[HOP_LL_MAX];
	struct hop_eager_hdr h;
	char err[160];
	size_t mlen;
	int ret, n;

	/* a waiter that yields its core (oversubscribed) waits the general
	 * way, where the provider can block */
	if (!p || comm->cfg.spin_count <= 0 || comm->cfg.yield_us > 0 ||
	    !p->peers[peer].in_hot || !direct_quiet(p, peer))
		return 0;
	if ((ret = direct_spin(comm, peer)) <= 0)
		return ret;
	/* the CQ after the slot: what came before the message comes first */
	n = p->ops->poll(p->prov, p->cqe, P2P_POLL_BATCH);
	if (n) {
		ret = n < 0 ? n : p2p_dispatch_batch(p, n, 0);
		return ret < 0 ? ret : 0;
	}
	/* a malformed message is the general path's to report */
	if (hop_ll_read((const void *)next_slot(p, peer), p->slot_bytes,
			hop_ll_flag(p->peers[peer].recv_seq), msg, &mlen, err,
			sizeof(err)) != 1 ||
	    hop_eager_hdr_decode(msg, mlen, p->eager_size, &h, err,
				 sizeof(err)) ||
	    h.tag != tag || h.sig || h.len > len)
		return 0;
	if ((ret = p2p_eager_accept(p, peer, &h)))
		return ret;
	if (h.len)
		hop_copy(buf, msg + HOP_EAGER_HDR, h.len);
	*bytes = h.len;
	p->peers[peer].last_recv_ns = hop_now_ns();
	p->ll_received++;
	p->ll_direct++;
	p2p_credit_freed(p, peer);
	return 1;
}

int p2p_direct_send(struct hop_comm *comm, int peer, uint64_t tag,
		    const void *buf, size_t len)
{
	struct hop_p2p *p = comm->p2p;
	struct p2p_peer *pp;
	struct hop_eager_hdr h;
	int ret;

	if (!p || p->post_depth || !p2p_ll_usable(p, peer, len))
		return 0;
	pp = &p->peers[peer];
	if (pp->sendq.head || !pp->cr.avail)
		return 0;
	p2p_eager_hdr(p, pp, tag, len, 0, &h);
	ret = p2p_ll_post(p, peer, &h, buf, p2p_send_slot_raddr(p, pp));
	if (ret)
		return ret == HOP_PROV_AGAIN ? 0 : ret;
	p2p_eager_sent(p, peer, &h);
	return 1;
}
