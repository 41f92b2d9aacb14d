/*
 * put.c - one-sided put: the data goes by post_write (no immediate), then a
 * PUT note {imm, len} by post_send; the provider delivers them in order
 * (contract 1), so when the note arrives the data is in place. The target
 * queues notes for hop_wait_imm(). A put to this rank is a copy plus a
 * note (see hop_put() in api.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

struct put_wait {
	struct hop_p2p *p;
	int peer;
	size_t len;
	const char *what;
	struct p2p_note *found;
};

static void describe_put(void *arg, char *buf, size_t len)
{
	struct put_wait *w = arg;

	if (w->peer < 0)
		snprintf(buf, len, "%s from any rank", w->what);
	else
		snprintf(buf, len, "%s rank %d (%zu B)", w->what, w->peer,
			 w->len);
}

static int put_written(void *arg)
{
	return ((struct put_wait *)arg)->p->put_done;
}

static int ctl_drained(void *arg)
{
	struct put_wait *w = arg;

	return w->p->peers[w->peer].ctl_head == NULL;
}

int hop_p2p_put(struct hop_comm *comm, struct hop_prov_mr *lmr,
		const void *src, size_t len, int peer, uint64_t raddr,
		uint64_t rkey, uint32_t imm)
{
	struct hop_p2p *p = comm->p2p;
	struct put_wait w = { p, peer, len, "put to", NULL };
	struct hop_ctl m = { .type = HOP_MSG_PUT };
	struct hop_rc_entry *e = NULL;
	const unsigned char *s = src;
	uint64_t deadline = 0;
	size_t off = 0;
	int ret;

	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	if ((ret = p2p_failed(comm)))
		return ret;
	if (peer < 0 || peer >= p->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "p2p: put to "
				     "rank %d out of range (comm has %d ranks)",
				     peer, p->nranks);
	if (peer == p->rank) {
		if (len)
			memmove((void *)(uintptr_t)raddr, src, len);
		return p2p_note_push(p, peer, imm, len);
	}
	if (len <= p->max_inline) {
		lmr = NULL;     /* copied at post: nothing to wait for */
	} else if (!lmr) {
		ret = hop_regcache_get(&p->rc, (void *)(uintptr_t)src, len, 0,
				       &e);
		if (ret)
			return hop_set_error(comm, ret, "put to rank %d: "
					     "registering the %zu B source %p "
					     "failed: %s", peer, len, src,
					     hop_strerror(ret));
		lmr = e->mr;
	}
	p->put_seq = (p->put_seq + 1) & ((1ull << 60) - 1);
	p->put_done = 0;
	p->put_status = 0;
	while (off < len) {
		size_t chunk = len - off > p->rndv_chunk ? p->rndv_chunk
							 : len - off;
		unsigned flags = (off + chunk == len && lmr) ? HOP_WR_SIGNALED
							     : 0;

		ret = p->ops->post_write(p->prov, peer, lmr, s + off, chunk,
					 raddr + off, rkey, 0, flags,
					 WR_PUT | p->put_seq);
		if (ret == HOP_PROV_AGAIN) {
			if (!deadline)
				deadline = hop_comm_deadline(comm);
			if (hop_deadline_passed(deadline)) {
				ret = hop_comm_fail(comm, HOP_ERR_TIMEOUT,
					"rank %d: put to rank %d (%zu B): the "
					"transport stayed busy for %g s",
					p->rank, peer, len,
					comm->cfg.timeout_ms / 1000.0);
				p2p_fail_all(p, ret);
				goto out;
			}
			if ((ret = hop_p2p_progress(comm)) < 0)
				goto out;
			continue;
		}
		if (ret < 0)
			goto out;
		off += chunk;
	}
	if (len && lmr) {
		if ((ret = p2p_wait_loop(comm, put_written, &w, describe_put,
					 &w)))
			goto out;
		if ((ret = p->put_status)) {
			hop_set_error(comm, ret, "put to rank %d (%zu B at "
				      "0x%llx): %s", peer, len,
				      (unsigned long long)raddr,
				      hop_strerror(ret));
			goto out;
		}
	}
	m.u.put.imm = imm;
	m.u.put.len = len;
	if ((ret = p2p_ctl_send(p, peer, &m)))
		goto out;
	if (p->peers[peer].ctl_head) {
		w.what = "put notification to";
		ret = p2p_wait_loop(comm, ctl_drained, &w, describe_put, &w);
	}
out:
	if (e)
		hop_regcache_put(&p->rc, e);
	return ret;
}

static int note_found(void *arg)
{
	struct put_wait *w = arg;
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
	struct put_wait w = { p, peer, 0, "put immediate from", NULL };
	struct p2p_note *n;
	int ret;

	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	if ((ret = p2p_wait_loop(comm, note_found, &w, describe_put, &w)))
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
