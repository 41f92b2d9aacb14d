/*
 * fbox_cma.c - the fast boxes' form for blocking calls above
 * HOP_FBOX_MAX bytes: each rank publishes in its slot the call's header
 * and the addresses of its buffers, then reads the peers' data where it
 * lies, by process_vm_readv (CMA), each byte once:
 *
 * AllReduce: the vector is cut into N segments (cache-line aligned).
 *   Rank i reads segment i of every rank's send buffer, one L2-sized
 *   chunk at a time, and reduces the chunks in rank order 0..N-1 into
 *   its receive buffer (a reduce-scatter); its control line then says
 *   so (reduced), and it reads every other rank's reduced segment from
 *   that rank's receive buffer (an allgather).
 * Reduce: the same reduce-scatter, a rank off the root reducing its
 *   segment into scratch; the root then reads those segments.
 * Broadcast: every rank off the root reads the root's buffer once.
 *
 * One rank reduces each element, in one order, so every rank holds the
 * same bytes, equal to the payload form's flat left fold. A rank returns
 * once no peer reads its buffers any more: it publishes its done word
 * and waits for the peers' (AllReduce, the Broadcast root) or the
 * root's (Reduce off the root: the root read every rank's segments only
 * after each had reduced its own). The header check, deadlines, abort
 * and peer failures are the payload form's (fbox.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "coll/coll_int.h"
#include "coll/fbox_int.h"
#include "coll/reduce.h"

/* The payload of a slot in this form: where the peers read. @res is
 * where this rank's reduced segment lies, as if the whole vector were
 * there (a rank off a Reduce's root keeps its segment in scratch). */
struct cma_addr {
	uint64_t send, res;
};

struct cma_call {
	struct hop_comm *comm;
	struct hop_fbox *fb;
	const struct hop_coll_call *c;
	uint64_t seq;
	size_t es;
	struct cma_addr peer[HOP_FBOX_RANKS];
};

/* Rank @i's segment of the vector, in elements: cache-line multiples,
 * so no two ranks write one line. */
static void segment(const struct cma_call *k, int i, size_t *off,
		    size_t *len)
{
	size_t count = k->c->count, n = (size_t)k->fb->nranks;
	size_t align = HOP_FBOX_LINE / k->es, per = (count + n - 1) / n;
	size_t a, b;

	per = (per + align - 1) / align * align;
	a = (size_t)i * per < count ? (size_t)i * per : count;
	b = a + per < count ? a + per : count;
	*off = a;
	*len = b - a;
}

/* @len bytes of rank @q's memory at @src into @dst. */
static int cma_read(struct cma_call *k, int q, void *dst, uint64_t src,
		    size_t len)
{
	int pid = hop_fbox_ctrl(k->fb, q)->pid;
	uint8_t *d = dst;

	while (len) {
		struct iovec l = { d, len }, r = { (void *)(uintptr_t)src, len };
		ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return hop_fbox_failed(k->fb, hop_comm_fail(k->comm,
				HOP_ERR_SYSTEM, "rank %d: %s (fast box by CMA, "
				"collective #%llu): reading %zu B of rank %d "
				"(pid %d) at %#llx: %s", k->comm->rank,
				k->c->fn, (unsigned long long)k->seq, len, q,
				pid, (unsigned long long)src,
				n ? strerror(errno) : "nothing read"));
		d += n;
		src += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* dst = rank 0's elements op rank 1's op ... over @len elements from
 * @off, one chunk at a time; @dst may be this rank's own input (in
 * place). */
static int reduce_segment(struct cma_call *k, uint8_t *dst, size_t off,
			  size_t len)
{
	const struct hop_coll_call *c = k->c;
	struct hop_fbox *fb = k->fb;
	size_t es = k->es, step = HOP_FBOX_CMA_CHUNK / es, n;
	uint8_t *peer = fb->chunk, *saved = fb->chunk + HOP_FBOX_CMA_CHUNK;
	int ret;

	for (size_t at = 0; at < len; at += n) {
		uint8_t *d = dst + at * es;
		const uint8_t *own = (const uint8_t *)c->sendbuf +
				     (off + at) * es;

		n = len - at < step ? len - at : step;
		/* rank 0's data lands in @d first: keep this rank's own */
		if (d == own && fb->rank) {
			memcpy(saved, own, n * es);
			own = saved;
		}
		for (int q = 0; q < fb->nranks; q++) {
			const uint8_t *src = own;

			if (q != fb->rank) {
				src = q ? peer : d;
				if ((ret = cma_read(k, q, (void *)src,
						    k->peer[q].send +
							    (off + at) * es,
						    n * es)))
					return ret;
			}
			if (!q && src != d)
				memcpy(d, src, n * es);
			else if (q)
				hop_reduce_local(d, src, n, c->dtype, c->op, 0);
		}
		if (c->op == HOP_AVG)
			hop_reduce_avg(d, n, c->dtype, fb->nranks);
	}
	return 0;
}

/* Publish this rank's addresses and read every peer's. */
static int exchange(struct cma_call *k, uint64_t send, uint64_t res)
{
	struct cma_addr mine = { send, res };
	const uint8_t *p;
	int ret;

	if ((ret = hop_fbox_publish(k->comm, k->fb, k->c, k->seq, &mine,
				    sizeof(mine))))
		return ret;
	for (int q = 0; q < k->fb->nranks; q++) {
		if (q == k->fb->rank)
			continue;
		if (!(p = hop_fbox_read_slot(k->comm, k->fb, k->c, k->seq, q,
					     &ret)))
			return ret;
		memcpy(&k->peer[q], p, sizeof(k->peer[q]));
	}
	return 0;
}

static int wait_word(struct cma_call *k, int q, const _Atomic uint64_t *w,
		     const char *what)
{
	struct hop_fbox_wait wt = { .c = k->c, .word = w, .want = k->seq + 1,
				    .seq = k->seq, .peer = q, .what = what };

	return hop_fbox_wait(k->comm, k->fb, &wt);
}

/* Rank @q's reduced segment, once it is there, into @dst + its offset. */
static int gather_segment(struct cma_call *k, int q, uint8_t *dst)
{
	size_t off, len;
	int ret;

	if ((ret = wait_word(k, q, &hop_fbox_ctrl(k->fb, q)->reduced,
			     "to reduce its segment")))
		return ret;
	segment(k, q, &off, &len);
	return len ? cma_read(k, q, dst + off * k->es,
			      k->peer[q].res + off * k->es, len * k->es)
		   : 0;
}

static void set_word(struct cma_call *k, _Atomic uint64_t *w)
{
	atomic_store_explicit(w, k->seq + 1, memory_order_release);
}

static int cma_allreduce(struct cma_call *k)
{
	struct hop_fbox *fb = k->fb;
	struct hop_fbox_ctrl *me = hop_fbox_ctrl(fb, fb->rank);
	uint8_t *recv = k->c->recvbuf;
	size_t off, len;
	int ret;

	if ((ret = exchange(k, (uintptr_t)k->c->sendbuf, (uintptr_t)recv)))
		return ret;
	segment(k, fb->rank, &off, &len);
	if ((ret = reduce_segment(k, recv + off * k->es, off, len)))
		return ret;
	set_word(k, &me->reduced);
	for (int i = 1; i < fb->nranks; i++)
		if ((ret = gather_segment(k, (fb->rank + i) % fb->nranks, recv)))
			return ret;
	set_word(k, &me->done);
	return hop_fbox_wait_readers(k->comm, fb, k->c, k->seq + 1, k->seq);
}

/* Room for this rank's segment off a Reduce's root, kept across calls:
 * a fresh buffer would fault in every page on every call. */
static uint8_t *scratch(struct cma_call *k, size_t bytes)
{
	struct hop_fbox *fb = k->fb;
	uint8_t *p;

	if (bytes <= fb->scratch_len)
		return fb->scratch;
	if (!(p = malloc(bytes))) {
		hop_fbox_failed(fb, hop_comm_fail(k->comm, HOP_ERR_NO_MEMORY,
			"rank %d: %s (fast box by CMA): no memory for its "
			"%zu B segment", k->comm->rank, k->c->fn, bytes));
		return NULL;
	}
	free(fb->scratch);
	fb->scratch = p;
	fb->scratch_len = bytes;
	return p;
}

static int cma_reduce(struct cma_call *k)
{
	struct hop_fbox *fb = k->fb;
	struct hop_fbox_ctrl *me = hop_fbox_ctrl(fb, fb->rank);
	int root = k->c->root, ret;
	uint8_t *dst = k->c->recvbuf;
	size_t off, len;

	segment(k, fb->rank, &off, &len);
	if (fb->rank != root) {
		if (!(dst = scratch(k, len * k->es)))
			return HOP_ERR_NO_MEMORY;
		/* as if the vector were there: integers, never dereferenced */
		dst = (uint8_t *)(uintptr_t)((uintptr_t)dst - off * k->es);
	}
	if ((ret = exchange(k, (uintptr_t)k->c->sendbuf, (uintptr_t)dst)))
		return ret;
	if ((ret = reduce_segment(k, (uint8_t *)(uintptr_t)
				  ((uintptr_t)dst + off * k->es), off, len)))
		return ret;
	set_word(k, &me->reduced);
	if (fb->rank != root)
		return wait_word(k, root, &hop_fbox_ctrl(fb, root)->done,
				 "to read this rank's segment");
	for (int q = 0; q < fb->nranks; q++)
		if (q != root && (ret = gather_segment(k, q, dst)))
			return ret;
	return 0;
}

static int cma_broadcast(struct cma_call *k)
{
	struct hop_fbox *fb = k->fb;
	int root = k->c->root, ret;
	size_t bytes = k->c->count * k->es;
	const uint8_t *p;

	if (fb->rank == root) {
		struct cma_addr mine = { (uintptr_t)k->c->recvbuf, 0 };

		if ((ret = hop_fbox_publish(k->comm, fb, k->c, k->seq, &mine,
					    sizeof(mine))))
			return ret;
		return hop_fbox_wait_readers(k->comm, fb, k->c, k->seq + 1,
					     k->seq);
	}
	if (!(p = hop_fbox_read_slot(k->comm, fb, k->c, k->seq, root, &ret)))
		return ret;
	memcpy(&k->peer[root], p, sizeof(k->peer[root]));
	return cma_read(k, root, k->c->recvbuf, k->peer[root].send, bytes);
}

int hop_fbox_cma_run(struct hop_comm *comm, struct hop_fbox *fb,
		     const struct hop_coll_call *c, uint64_t seq, size_t bytes)
{
	struct cma_call k = { .comm = comm, .fb = fb, .c = c, .seq = seq,
			      .es = bytes / c->count };

	switch (c->kind) {
	case HOP_COLL_ALLREDUCE:
		return cma_allreduce(&k);
	case HOP_COLL_REDUCE:
		return cma_reduce(&k);
	default: /* HOP_COLL_BROADCAST */
		return cma_broadcast(&k);
	}
}
