/*
 * match.c - posted and unexpected queues, the unexpected-entry pool and the
 * id table (match.h).
 */
#include <stdlib.h>

#include <hop/common.h>

#include "p2p/match.h"

void hop_rlist_push(struct hop_rlist *l, struct hop_p2p_req *r)
{
	r->next = NULL;
	r->prev = l->tail;
	if (l->tail)
		l->tail->next = r;
	else
		l->head = r;
	l->tail = r;
}

void hop_rlist_remove(struct hop_rlist *l, struct hop_p2p_req *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		l->head = r->next;
	if (r->next)
		r->next->prev = r->prev;
	else
		l->tail = r->prev;
	r->next = r->prev = NULL;
}

struct hop_p2p_req *hop_rlist_pop(struct hop_rlist *l)
{
	struct hop_p2p_req *r = l->head;

	if (r)
		hop_rlist_remove(l, r);
	return r;
}

void hop_match_post(struct hop_match *m, struct hop_p2p_req *r)
{
	HOP_MATCH_SEQ(r) = m->any ? ++m->any->post_seq : 0;
	hop_rlist_push(&m->posted, r);
}

void hop_match_post_any(struct hop_match_any *a, struct hop_p2p_req *r)
{
	HOP_MATCH_SEQ(r) = ++a->post_seq;
	hop_rlist_push(&a->posted, r);
}

static struct hop_p2p_req *oldest_posted(const struct hop_rlist *l,
					 uint64_t tag)
{
	for (struct hop_p2p_req *r = l->head; r; r = r->next)
		if (hop_match_tag(r, tag))
			return r;
	return NULL;
}

struct hop_p2p_req *hop_match_take_posted(struct hop_match *m, uint64_t tag)
{
	struct hop_p2p_req *r = oldest_posted(&m->posted, tag), *w = NULL;

	if (m->any)
		w = oldest_posted(&m->any->posted, tag);
	if (w && (!r || HOP_MATCH_SEQ(w) < HOP_MATCH_SEQ(r))) {
		hop_rlist_remove(&m->any->posted, w);
		r = w;
	} else if (r) {
		hop_rlist_remove(&m->posted, r);
	} else {
		return NULL;
	}
	r->peer = m->peer;
	r->tag = tag;
	HOP_MATCH_IGNORE(r) = 0;
	return r;
}

void hop_match_add_unexp(struct hop_match *m, struct hop_ux *ux)
{
	ux->next = NULL;
	ux->seq = m->any ? ++m->any->arrive_seq : 0;
	if (m->unexp.tail)
		m->unexp.tail->next = ux;
	else
		m->unexp.head = ux;
	m->unexp.tail = ux;
	m->unexp.count++;
}

struct hop_ux *hop_match_find_unexp(const struct hop_match *m,
				    const struct hop_p2p_req *r)
{
	for (struct hop_ux *ux = m->unexp.head; ux; ux = ux->next)
		if (hop_match_tag(r, ux->tag))
			return ux;
	return NULL;
}

void hop_match_remove_unexp(struct hop_match *m, struct hop_ux *ux)
{
	struct hop_ux *prev = NULL, *u = m->unexp.head;

	while (u && u != ux) {
		prev = u;
		u = u->next;
	}
	if (!u)
		return;
	if (prev)
		prev->next = ux->next;
	else
		m->unexp.head = ux->next;
	if (m->unexp.tail == ux)
		m->unexp.tail = prev;
	m->unexp.count--;
	ux->next = NULL;
}

struct hop_ux *hop_match_take_unexp(struct hop_match *m, uint64_t tag)
{
	struct hop_ux *ux;

	for (ux = m->unexp.head; ux; ux = ux->next)
		if (ux->tag == tag)
			break;
	if (ux)
		hop_match_remove_unexp(m, ux);
	return ux;
}

int hop_match_oldest_unexp(struct hop_match *(*at)(void *arg, int i),
			   void *arg, int n, const struct hop_p2p_req *r,
			   struct hop_ux **ux)
{
	int best = -1;

	*ux = NULL;
	for (int i = 0; i < n; i++) {
		struct hop_ux *u = hop_match_find_unexp(at(arg, i), r);

		if (u && (!*ux || u->seq < (*ux)->seq)) {
			*ux = u;
			best = i;
		}
	}
	return best;
}

struct hop_ux *hop_match_take_unexp_any(struct hop_match *m)
{
	struct hop_ux *ux = m->unexp.head;

	if (!ux)
		return NULL;
	if (!(m->unexp.head = ux->next))
		m->unexp.tail = NULL;
	m->unexp.count--;
	ux->next = NULL;
	return ux;
}

void hop_ux_pool_init(struct hop_ux_pool *p, size_t data_size,
		      size_t max_held)
{
	p->free = p->free_small = NULL;
	p->nfree = p->nfree_small = 0;
	p->data_size = data_size;
	p->allocated = 0;
	p->held = 0;
	p->max_held = max_held;
}

size_t hop_ux_entry_bytes(const struct hop_ux_pool *p, int with_data)
{
	return sizeof(struct hop_ux) + (with_data ? p->data_size : 0);
}

int hop_ux_charge(struct hop_ux_pool *p, size_t bytes)
{
	if (hop_ux_full(p, bytes))
		return HOP_ERR_NO_MEMORY;
	p->held += bytes;
	return 0;
}

void hop_ux_uncharge(struct hop_ux_pool *p, size_t bytes)
{
	p->held -= bytes < p->held ? bytes : p->held;
}

int hop_ux_get(struct hop_ux_pool *p, int with_data, struct hop_ux **out)
{
	struct hop_ux **list = with_data ? &p->free : &p->free_small;
	size_t *nfree = with_data ? &p->nfree : &p->nfree_small;
	size_t bytes = hop_ux_entry_bytes(p, with_data);
	struct hop_ux *ux = *list;

	*out = NULL;
	if (hop_ux_charge(p, bytes))
		return HOP_ERR_NO_MEMORY;
	if (ux) {
		*list = ux->next;
		(*nfree)--;
	} else if ((ux = malloc(bytes))) {
		p->allocated++;
	} else {
		hop_ux_uncharge(p, bytes);
		return HOP_ERR_NO_MEMORY;
	}
	ux->next = NULL;
	ux->sreq = NULL;
	ux->has_data = with_data != 0;
	*out = ux;
	return 0;
}

void hop_ux_put(struct hop_ux_pool *p, struct hop_ux *ux)
{
	struct hop_ux **list = ux->has_data ? &p->free : &p->free_small;
	size_t *nfree = ux->has_data ? &p->nfree : &p->nfree_small;

	hop_ux_uncharge(p, hop_ux_entry_bytes(p, (int)ux->has_data));
	if (*nfree >= HOP_UX_KEEP) {
		free(ux);
		return;
	}
	ux->next = *list;
	*list = ux;
	(*nfree)++;
}

static void ux_free_list(struct hop_ux **list, size_t *n)
{
	struct hop_ux *ux;

	while ((ux = *list)) {
		*list = ux->next;
		free(ux);
	}
	*n = 0;
}

void hop_ux_pool_fini(struct hop_ux_pool *p)
{
	ux_free_list(&p->free, &p->nfree);
	ux_free_list(&p->free_small, &p->nfree_small);
}

void hop_idtab_init(struct hop_idtab *t)
{
	t->ptr = NULL;
	t->next = NULL;
	t->cap = t->used = 0;
	t->free_head = UINT32_MAX;
}

static int idtab_grow(struct hop_idtab *t)
{
	uint32_t ncap = t->cap ? t->cap * 2 : 64;
	void **np;
	uint32_t *nn;

	if (ncap > HOP_IDTAB_MAX)
		return HOP_ERR_NO_MEMORY;
	np = realloc(t->ptr, (size_t)ncap * sizeof(*np));
	if (!np)
		return HOP_ERR_NO_MEMORY;
	t->ptr = np;
	nn = realloc(t->next, (size_t)ncap * sizeof(*nn));
	if (!nn)
		return HOP_ERR_NO_MEMORY;
	t->next = nn;
	/* chain the new ids, lowest first */
	for (uint32_t i = ncap; i-- > t->cap;) {
		t->ptr[i] = NULL;
		t->next[i] = t->free_head;
		t->free_head = i;
	}
	t->cap = ncap;
	return 0;
}

int hop_idtab_alloc(struct hop_idtab *t, void *ptr, uint32_t *id)
{
	uint32_t i;

	if (t->free_head == UINT32_MAX) {
		int rc = idtab_grow(t);

		if (rc)
			return rc;
	}
	i = t->free_head;
	t->free_head = t->next[i];
	t->ptr[i] = ptr;
	t->used++;
	*id = i;
	return 0;
}

void hop_idtab_free(struct hop_idtab *t, uint32_t id)
{
	if (id >= t->cap || !t->ptr[id])
		return;
	t->ptr[id] = NULL;
	t->next[id] = t->free_head;
	t->free_head = id;
	t->used--;
}

void hop_idtab_fini(struct hop_idtab *t)
{
	free(t->ptr);
	free(t->next);
	hop_idtab_init(t);
}
