/*
 * cqring.c - growable FIFO of completions for the software providers.
 */
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "transport/emu.h"

int hop_cqring_init(struct hop_cqring *q, uint32_t cap)
{
	uint32_t c = 16;

	while (c < cap)
		c <<= 1;
	q->e = calloc(c, sizeof(*q->e));
	if (!q->e)
		return HOP_ERR_NO_MEMORY;
	q->cap = c;
	q->head = 0;
	q->count = 0;
	return 0;
}

void hop_cqring_fini(struct hop_cqring *q)
{
	free(q->e);
	q->e = NULL;
	q->cap = q->count = q->head = 0;
}

static int cqring_grow(struct hop_cqring *q)
{
	uint32_t ncap = q->cap * 2, first;
	struct hop_cqe *ne;

	if (ncap < q->cap)
		return HOP_ERR_NO_MEMORY;
	ne = malloc((size_t)ncap * sizeof(*ne));
	if (!ne)
		return HOP_ERR_NO_MEMORY;
	/* unwrap into the new array, oldest first */
	first = q->cap - q->head;
	if (first > q->count)
		first = q->count;
	memcpy(ne, q->e + q->head, first * sizeof(*ne));
	memcpy(ne + first, q->e, (q->count - first) * sizeof(*ne));
	free(q->e);
	q->e = ne;
	q->cap = ncap;
	q->head = 0;
	return 0;
}

struct hop_cqe *hop_cqring_push(struct hop_cqring *q)
{
	struct hop_cqe *e;

	if (q->count == q->cap && cqring_grow(q))
		return NULL;
	e = &q->e[(q->head + q->count) & (q->cap - 1)];
	q->count++;
	e->status = 0;
	e->imm = 0;
	e->len = 0;
	e->wr_id = 0;
	return e;
}

int hop_cqring_pop(struct hop_cqring *q, struct hop_cqe *out, int max)
{
	int n = 0;

	while (n < max && q->count) {
		struct hop_cqe *e = &q->e[q->head];

		/* RECV carries data; others need only the fixed fields */
		if (e->op == HOP_CQE_RECV)
			out[n] = *e;
		else
			memcpy(&out[n], e, offsetof(struct hop_cqe, data));
		q->head = (q->head + 1) & (q->cap - 1);
		q->count--;
		n++;
	}
	return n;
}
