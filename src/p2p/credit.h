/*
 * credit.h - eager-slot flow control of one peer pair (pure, unit-tested).
 *
 * Sender side: @avail slots of the peer's ring may still be written; one is
 * taken per eager message and given back by the peer. Receiver side: @owed
 * slots were freed (their message copied out) and not yet returned; they
 * ride on any message to the peer (eager header, control message) and are
 * sent on their own once @batch (slots / 2) have accumulated. Since a
 * receiver frees every slot as soon as it arrives, at most batch - 1 slots
 * are ever withheld and a sender never waits for credits that will not come.
 */
#ifndef HOP_P2P_CREDIT_H
#define HOP_P2P_CREDIT_H

#include <stdint.h>

struct hop_credit {
	uint32_t avail;         /* sender: slots we may write at the peer */
	uint32_t owed;          /* receiver: freed slots not yet returned */
	uint32_t slots;
	uint32_t batch;
};

static inline void hop_credit_init(struct hop_credit *c, uint32_t slots)
{
	c->avail = slots;
	c->owed = 0;
	c->slots = slots;
	c->batch = slots / 2 ? slots / 2 : 1;
}

/* Take one slot for an eager message; 0 when none is left. */
static inline int hop_credit_take(struct hop_credit *c)
{
	if (!c->avail)
		return 0;
	c->avail--;
	return 1;
}

/* The peer returned @n slots; -1 when it returns more than were taken
 * (a protocol error). */
static inline int hop_credit_grant(struct hop_credit *c, uint32_t n)
{
	if (n > c->slots - c->avail)
		return -1;
	c->avail += n;
	return 0;
}

/* A slot of the peer's messages was freed here. */
static inline void hop_credit_freed(struct hop_credit *c) { c->owed++; }

/* Enough freed slots to send them back on their own? */
static inline int hop_credit_due(const struct hop_credit *c)
{
	return c->owed >= c->batch;
}

/* @n of the owed slots went out on a message. */
static inline void hop_credit_returned(struct hop_credit *c, uint32_t n)
{
	c->owed -= n;
}

#endif /* HOP_P2P_CREDIT_H */
