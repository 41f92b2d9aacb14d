/*
 * collsig.c - mismatch detection across a collective, not only per tag.
 *
 * A receive checks the signature of the send it matches, but ranks that
 * run different collectives often never match a tag (allreduce and
 * allgather use different step tags), and ranks that only send (a
 * broadcast root) never match anything. Both cases still deliver messages:
 * a message of collective #s that no posted receive takes is compared here
 * with what this rank knows of #s, which is
 *   - the signature of its own collective #s, once it began (even after it
 *     completed: a correct peer never sends what #s here did not receive);
 *   - else the first signature another rank sent for #s, compared with the
 *     next one and with ours when we begin.
 * The check costs nothing on matched messages and one table lookup per
 * collective. Table slots are reused modulo P2P_COLLSIG_SLOTS, so a
 * program with more collectives in flight only loses checks, never gets a
 * false report.
 */
#include <stdlib.h>

#include "p2p/p2p_priv.h"

/* The step of a deadline probe: no schedule uses it, no receive takes it. */
#define PROBE_STEP 0xffffffffu

enum { CS_EMPTY, CS_SEEN, CS_BEGUN };

/* The sequence number of a key (what messages name). */
#define SEQ(key) ((key) & 0xffffffu)

/* @key: HOP_TAG_COLL_KEY, a communicator's id and its sequence number
 * (collectives of communicators sharing channels are told apart). */
static struct p2p_collsig *slot_of(struct hop_p2p *p, uint32_t key)
{
	return &p->collsig[(key + (key >> 26) * 7u) % P2P_COLLSIG_SLOTS];
}

/* Tell the sender too: it may have nothing left to receive from us. */
static void nak_sender(struct hop_p2p *p, int peer, uint64_t tag,
		       uint64_t len, uint32_t ssig, uint32_t rsig)
{
	struct hop_ctl nak = { .type = HOP_MSG_NAK };

	if (peer == p->rank || p2p_peer_closed(p, peer))
		return;
	nak.u.nak.tag = tag;
	nak.u.nak.slen = len;
	nak.u.nak.sid = HOP_NO_ID;
	nak.u.nak.ssig = ssig;
	nak.u.nak.rsig = rsig;
	nak.u.nak.code = HOP_ERR_MISMATCH;
	p2p_ctl_send(p, peer, &nak);
}

void p2p_collsig_unexpected(struct hop_p2p *p, int peer, uint64_t tag,
			    uint64_t len, uint32_t sig)
{
	uint32_t seq = HOP_TAG_COLL_KEY(tag);
	struct p2p_collsig *cs = slot_of(p, seq);
	char t[48];

	if (HOP_TAG_CTX(tag) != HOP_CTX_COLL || peer == p->rank)
		return;
	if (cs->state == CS_EMPTY || (cs->seq != seq && cs->state == CS_SEEN)) {
		*cs = (struct p2p_collsig){ seq, sig, peer, CS_SEEN, tag, len };
		return;
	}
	if (cs->seq != seq || cs->sig == sig)
		return;
	p2p_tag_str(tag, t, sizeof(t));
	if (cs->state == CS_BEGUN) {
		nak_sender(p, peer, tag, len, sig, cs->sig);
		if (HOP_TAG_LO32(tag) == PROBE_STEP)
			hop_comm_fail(p->comm, HOP_ERR_MISMATCH, "p2p: "
				      "mismatched collectives: rank %d, still "
				      "waiting in collective #%u with signature "
				      "0x%08x, asked rank %d, which ran it with "
				      "signature 0x%08x", peer, SEQ(seq), sig,
				      p->rank, cs->sig);
		else
			hop_comm_fail(p->comm, HOP_ERR_MISMATCH, "p2p: "
				      "mismatched collectives: rank %d ran "
				      "collective #%u with signature 0x%08x, "
				      "rank %d sent it a message (tag %s, %llu "
				      "B) of a collective with signature "
				      "0x%08x", p->rank, SEQ(seq), cs->sig, peer, t,
				      (unsigned long long)len, sig);
	} else {
		hop_comm_fail(p->comm, HOP_ERR_MISMATCH, "p2p: mismatched "
			      "collectives: rank %d sent rank %d a message of "
			      "collective #%u with signature 0x%08x, rank %d "
			      "one (tag %s) with signature 0x%08x", cs->peer,
			      p->rank, SEQ(seq), cs->sig, peer, t, sig);
	}
}

int hop_p2p_coll_begin(struct hop_comm *comm, uint32_t seq, uint32_t sig)
{
	struct hop_p2p *p = comm->p2p;
	struct p2p_collsig *cs;
	struct p2p_collsig seen;

	seq = SEQ(seq) | (uint32_t)comm->comm_id << 26;
	cs = slot_of(p, seq);
	seen = *cs;

	*cs = (struct p2p_collsig){ seq, sig, p->rank, CS_BEGUN, 0, 0 };
	if (seen.state != CS_SEEN || seen.seq != seq || seen.sig == sig)
		return 0;
	nak_sender(p, seen.peer, seen.tag, seen.len, seen.sig, sig);
	return hop_comm_fail(comm, HOP_ERR_MISMATCH, "p2p: mismatched "
			     "collectives: rank %d began collective #%u with "
			     "signature 0x%08x, rank %d had sent it a message "
			     "of one with signature 0x%08x", p->rank, SEQ(seq), sig,
			     seen.peer, seen.sig);
}

/*
 * At a wait's deadline: ranks that each wait for the other to send (two
 * ranks that both believe they are a reduce's root) exchange no message
 * the checks above could see. Tell every peer that a collective receive
 * still waits on which collective it is in; a peer that ran another one
 * under that number fails with HOP_ERR_MISMATCH and answers with a NAK.
 * Returns the number of probes sent; costs nothing before a deadline.
 */
int p2p_collsig_probe(struct hop_p2p *p)
{
	int sent = 0;

	if (!p->probe && !(p->probe = calloc((size_t)p->nranks,
					     sizeof(*p->probe))))
		return 0;
	for (int q = 0; q < p->nranks; q++) {
		struct hop_p2p_req *r = p->peers[q].mq.posted.head;

		while (r && (HOP_TAG_CTX(r->tag) != HOP_CTX_COLL || !r->sig))
			r = r->next;
		if (!r || q == p->rank || p->probe[q].kind)
			continue;
		p->probe[q].cb = NULL;
		if (!hop_p2p_isend(p->comm, &p->probe[q], q,
				   (r->tag & ~0xffffffffull) | PROBE_STEP,
				   NULL, 0, r->sig))
			sent++;
	}
	return sent;
}
