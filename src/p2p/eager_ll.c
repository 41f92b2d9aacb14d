/*
 * eager_ll.c - small eager messages noticed in memory instead of through
 * a completion: the LL form of a slot (proto.h) written without an
 * immediate, and the polling of the slots it lands in (HOP_EAGER_POLL).
 *
 * Why: over verbs a write with immediate costs the receiver a receive WQE,
 * a CQE, a CQ poll and a repost before it sees the message; ib_write_lat
 * polls its buffer instead, and so does hop for messages up to ll_max
 * bytes to a peer that is awake (docs/verbs.md, "Small eager messages
 * noticed in memory").
 *
 * A write without immediate wakes nobody, so both ends keep a window:
 *   - a rank polls the next slot of every peer it posted to within
 *     P2P_LL_WINDOW_NS (its "hot" peers) on each progress call, and does
 *     not block in the provider while that window is open;
 *   - a sender writes LL only to a peer it heard from within half the
 *     window, which had posted to it just before and so is polling.
 * A message that still misses the window (a peer descheduled for longer
 * than half of it) is found by the scan of every peer that runs each
 * P2P_LL_FULL_SCAN progress calls and before every blocking wait: late by
 * at most one provider wait (P2P_WAIT_US), never lost.
 *
 * Order against what comes through the CQ (progress.c): a slot seen by
 * p2p_ll_peek() is delivered only after the CQ was polled empty, an RTS
 * first delivers the LL messages below the sequence number it carries,
 * and an eager write with immediate the ones before its own slot.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/copy.h"
#include "p2p/p2p_priv.h"

int p2p_ll_init(struct hop_p2p *p)
{
	int mode = p->comm->cfg.eager_poll;
	int rdma = hop_prov_has(p->ops, HOP_PROV_CAP_RDMA);
	int whole8 = hop_prov_has(p->ops, HOP_PROV_CAP_ATOMIC8);
	size_t room = p->inl_len < p->slot_bytes ? p->inl_len : p->slot_bytes;

	p->ll_direct_peer = -1;
	p->direct_spins = rdma ? P2P_DIRECT_SPINS_RDMA : 1;
	/* the LL form must go inline (the write copies it at post) */
	p->ll_max = hop_ll_max_msg(room);
	p->ll_on = (mode > 0 || (mode < 0 && whole8)) &&
		   p->nranks > 1 && p->ll_max > HOP_EAGER_HDR;
	if (!p->ll_on)
		return 0;
	p->hot = calloc((size_t)p->nranks, sizeof(*p->hot));
	if (!p->hot)
		return hop_comm_fail(p->comm, HOP_ERR_NO_MEMORY,
				     "p2p: out of memory (LL peer list)");
	return 0;
}

int p2p_ll_usable(struct hop_p2p *p, int peer, size_t len)
{
	const struct p2p_peer *pp = &p->peers[peer];

	return p->ll_on && len <= p->ll_max - HOP_EAGER_HDR &&
	       pp->last_recv_ns &&
	       hop_now_ns() - pp->last_recv_ns < P2P_LL_WINDOW_NS / 2;
}

int p2p_ll_post(struct hop_p2p *p, int peer, const struct hop_eager_hdr *h,
		const void *payload, uint64_t raddr)
{
	unsigned char msg[HOP_LL_MAX];
	size_t len = HOP_EAGER_HDR + h->len;
	int ret;

	hop_eager_hdr_encode(msg, h);
	if (h->len)
		hop_copy(msg + HOP_EAGER_HDR, payload, h->len);
	hop_ll_encode(p->inl, msg, len, hop_ll_flag(h->seq));
	ret = p->ops->post_write(p->prov, peer, NULL, p->inl,
				 hop_ll_bytes(len), raddr,
				 p->peers[peer].ring_rkey, 0, 0, 0);
	p->ll_sent += ret == 0;
	return ret;
}

void p2p_ll_note_send(struct hop_p2p *p, int peer)
{
	struct p2p_peer *pp = &p->peers[peer];

	if (!p->ll_on)
		return;
	pp->last_send_ns = p->ll_last_send_ns = hop_now_ns();
	if (!pp->in_hot) {
		pp->in_hot = 1;
		p->hot[p->nhot++] = peer;
	}
}

int p2p_ll_drain(struct hop_p2p *p, int q, uint32_t max)
{
	struct p2p_peer *pp = &p->peers[q];
	unsigned char msg[HOP_LL_MAX];
	char err[160];
	uint32_t got = 0;
	int ret;

	while (got < max) {
		size_t len;

		ret = hop_ll_read(p2p_ring_slot(p, q, pp->recv_seq),
				  p->slot_bytes, hop_ll_flag(pp->recv_seq), msg,
				  &len, err, sizeof(err));
		if (ret == 0)
			break;
		if (ret < 0)
			return hop_comm_fail(p->comm, ret, "p2p: from rank %d: "
					     "%s", q, err);
		pp->last_recv_ns = p->batch_ns;
		p->ll_received++;
		if ((ret = p2p_eager_deliver(p, q, msg, len)))
			return ret;
		got++;
	}
	return (int)got;
}

/* Forget the hot peers whose window closed. */
static void ll_prune(struct hop_p2p *p)
{
	uint64_t now = hop_now_ns();

	for (int i = 0; i < p->nhot;) {
		struct p2p_peer *pp = &p->peers[p->hot[i]];

		if (now - pp->last_send_ns < P2P_LL_WINDOW_NS) {
			i++;
			continue;
		}
		pp->in_hot = 0;
		p->hot[i] = p->hot[--p->nhot];
	}
}

/* Mark the LL messages that have begun to land in @q's slots; their
 * first word is enough, p2p_ll_drain() waits for the rest. */
static int ll_peek_peer(struct hop_p2p *p, int q)
{
	struct p2p_peer *pp = &p->peers[q];
	uint32_t k = 0;

	while (k < p->slots) {
		uint32_t seq = pp->recv_seq + k;
		const volatile uint64_t *w =
			(const volatile uint64_t *)p2p_ring_slot(p, q, seq);

		if ((uint32_t)(*w >> 32) != hop_ll_flag(seq))
			break;
		k++;
	}
	pp->ll_upto = pp->recv_seq + k;
	return (int)k;
}

int p2p_ll_peek(struct hop_p2p *p, int all)
{
	int seen = 0;

	if (!p->ll_on)
		return 0;
	p->ll_peek_all = all || ++p->ll_polls >= P2P_LL_FULL_SCAN;
	if (p->ll_peek_all) {
		p->ll_polls = 0;
		ll_prune(p);
		for (int q = 0; q < p->nranks; q++)
			if (q != p->rank && q != p->ll_direct_peer)
				seen += ll_peek_peer(p, q);
	} else {
		for (int i = 0; i < p->nhot; i++)
			if (p->hot[i] != p->ll_direct_peer)
				seen += ll_peek_peer(p, p->hot[i]);
	}
	/* the CQ is read after these slots (p2p_ll_deliver's contract) */
	atomic_thread_fence(memory_order_acquire);
	return seen;
}

static int ll_deliver_peer(struct hop_p2p *p, int q)
{
	const struct p2p_peer *pp = &p->peers[q];
	int32_t n = (int32_t)(pp->ll_upto - pp->recv_seq);

	return n > 0 ? p2p_ll_drain(p, q, (uint32_t)n) : 0;
}

int p2p_ll_deliver(struct hop_p2p *p)
{
	int got = 0, ret;

	if (p->ll_peek_all) {
		for (int q = 0; q < p->nranks; q++) {
			if (q == p->rank)
				continue;
			if ((ret = ll_deliver_peer(p, q)) < 0)
				return ret;
			got += ret;
		}
		return got;
	}
	for (int i = 0; i < p->nhot; i++) {
		if ((ret = ll_deliver_peer(p, p->hot[i])) < 0)
			return ret;
		got += ret;
	}
	return got;
}

int p2p_ll_keep_awake(struct hop_p2p *p)
{
	return p->ll_on && p->nhot &&
	       hop_now_ns() - p->ll_last_send_ns < P2P_LL_WINDOW_NS;
}
