/*
 * sim_match.c - matching posted steps per (source, destination) pair
 * (see sim_match.h).
 */
#include "sim/sim_match.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/sched.h"

#include <hop/common.h>

int hop_sim_slot_new(void **arr, int *n, int *cap, int *free_head,
			size_t size, size_t next_off)
{
	if (free_head && *free_head >= 0) {
		int i = *free_head;

		memcpy(free_head, (char *)*arr + (size_t)i * size + next_off,
		       sizeof(int));
		return i;
	}
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 4096;
		void *p;

		if (*cap > (1 << 29))
			return -1;
		if (!(p = realloc(*arr, (size_t)ncap * size)))
			return -1;
		*arr = p;
		*cap = ncap;
	}
	return (*n)++;
}

/* Bucket of a key: a hash of the tag and the peer's offset, plus the
 * destination, so that consecutive ranks posting one tag to the same
 * relative peer land in consecutive buckets (see sim_match.h). */
static unsigned wait_hash(int src, int dst, uint32_t tag, int nb)
{
	uint64_t h = (uint64_t)(uint32_t)(src - dst) << 32 | tag;

	h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9ull; /* splitmix64's finaliser */
	h = (h ^ h >> 27) * 0x94d049bb133111ebull;
	h ^= h >> 31;
	return (unsigned)((h + (uint32_t)dst) & (uint64_t)(nb - 1));
}

/* Rebuild with @nb buckets. A key's entries share a chain, walked in
 * order and appended in order: posting order is kept. */
static int rehash(struct hop_sim_match *m, int nb)
{
	int *bucket = malloc((size_t)nb * sizeof(int));
	int *tail = malloc((size_t)nb * sizeof(int));

	if (!bucket || !tail) {
		free(bucket);
		free(tail);
		return HOP_ERR_NO_MEMORY;
	}
	for (int i = 0; i < nb; i++)
		bucket[i] = tail[i] = -1;
	for (int b = 0; b < m->nbucket; b++) {
		for (int cur = m->bucket[b], next; cur >= 0; cur = next) {
			struct hop_sim_wait *w = &m->wait[cur];
			unsigned h = wait_hash(w->src, w->dst, w->tag, nb);

			next = w->next;
			w->next = -1;
			if (tail[h] < 0)
				bucket[h] = cur;
			else
				m->wait[tail[h]].next = cur;
			tail[h] = cur;
		}
	}
	free(tail);
	free(m->bucket);
	m->bucket = bucket;
	m->nbucket = nb;
	return 0;
}

int hop_sim_match_post(struct hop_sim_match *m, int src, int dst,
			  uint32_t tag, int is_send, int rank, int step,
			  int *prank, int *pstep)
{
	unsigned h;
	int prev = -1, cur, w;

	if (!m->bucket && rehash(m, 4096))
		return HOP_ERR_NO_MEMORY;
	h = wait_hash(src, dst, tag, m->nbucket);
	for (cur = m->bucket[h]; cur >= 0; prev = cur, cur = m->wait[cur].next) {
		struct hop_sim_wait *e = &m->wait[cur];

		if (e->src != src || e->dst != dst || e->tag != tag ||
		    e->is_send == is_send)
			continue;
		if (prev < 0)
			m->bucket[h] = e->next;
		else
			m->wait[prev].next = e->next;
		*prank = e->rank;
		*pstep = e->step;
		e->rank = -1;
		e->next = m->wait_free;
		m->wait_free = cur;
		m->live--;
		return 1;
	}
	w = hop_sim_slot_new((void **)&m->wait, &m->nwait, &m->wait_cap,
				&m->wait_free, sizeof(*m->wait),
				offsetof(struct hop_sim_wait, next));
	if (w < 0)
		return HOP_ERR_NO_MEMORY;
	m->wait[w] = (struct hop_sim_wait){ src, dst, tag, is_send, rank,
					       step, -1 };
	if (prev < 0) /* append: FIFO per key */
		m->bucket[h] = w;
	else
		m->wait[prev].next = w;
	if (++m->live > m->nbucket && m->nbucket < (1 << 28))
		return rehash(m, m->nbucket * 2);
	return 0;
}

const struct hop_sim_wait *
hop_sim_match_waiting(const struct hop_sim_match *m, int rank)
{
	for (int w = 0; w < m->nwait; w++)
		if (m->wait[w].rank == rank)
			return &m->wait[w];
	return NULL;
}

void hop_sim_match_report_stuck(const struct hop_sim_match *m,
				const struct hop_sched *s, int rank,
				char *err, size_t len)
{
	const struct hop_sim_wait *e = hop_sim_match_waiting(m, rank);
	int n = snprintf(err, len, "deadlock: rank %d finished %d of %d steps",
			 rank, s->ndone, s->nsteps);

	if (e && n >= 0 && (size_t)n < len)
		snprintf(err + n, len - (size_t)n, "; %s step %d peer %d tag %u "
			 "unmatched", e->is_send ? "send" : "recv", e->step,
			 e->is_send ? e->dst : e->src, e->tag);
}

void hop_sim_match_free(struct hop_sim_match *m)
{
	free(m->wait);
	free(m->bucket);
	memset(m, 0, sizeof(*m));
	m->wait_free = -1;
}
