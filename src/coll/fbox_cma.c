/*
 * fbox_cma.c - the fast boxes' form for blocking calls above
 * HOP_FBOX_MAX bytes: each rank publishes in its slot the call's header
 * and the addresses of its buffers, then moves the data between its own
 * memory and its peers' by process_vm_readv/writev (CMA), each byte once:
 *
 * AllReduce: the vector is cut into N segments (cache-line aligned).
 *   Rank i reads segment i of every rank's send buffer, one L2-sized
 *   chunk at a time, reduces the chunks in rank order 0..N-1 into its
 *   receive buffer and writes the result into every peer's receive
 *   buffer; its control line then says so (reduced).
 * Reduce: the same; a rank off the root reduces into a chunk of its own
 *   and writes it into the root's receive buffer, and the root, which
 *   writes nothing, takes a larger segment.
 * Broadcast: the root writes its segment into every reader's buffer,
 *   each reader reads the other segments of the root's.
 * AllGather and AllToAll: every rank reads its block of every peer's
 *   send buffer straight into its receive buffer.
 *
 * Only rank i reads or writes segment i of anybody's buffers, so in place
 * works as it is (an AllToAll in place overwrites blocks its peers still
 * read, so they read a copy). One rank reduces each element, in one
 * order, so every rank holds the same bytes, equal to the payload form's
 * flat left fold. A rank returns once no peer touches its buffers any
 * more: every peer's reduced word (AllReduce, Reduce, AllGather,
 * AllToAll) or done word (the Broadcast root) says so. The header check,
 * deadlines, abort and peer failures are the payload form's (fbox.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "coll/coll_int.h"
#include "coll/fbox_int.h"
#include "coll/reduce.h"
#include "core/copy.h"

/* The payload of a slot in this form: where the peers read (@send) and
 * write their reduced segments (@res, the receive buffer). */
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

/* @x elements rounded up to whole cache lines. */
static size_t line_up(const struct cma_call *k, size_t x)
{
	size_t align = HOP_FBOX_LINE / k->es;

	return (x + align - 1) / align * align;
}

/* Rank @i's segment of the vector, in elements: cache-line multiples,
 * so no two ranks write one line. The segments follow in rank order,
 * equal but for a Reduce's root's: it writes its result nowhere, so it
 * takes hop_model_fbox_cma_root_weight() times a peer's (2 ranks: 59 %
 * of the vector), and every rank finishes together. */
static void segment(const struct cma_call *k, int i, size_t *off,
		    size_t *len)
{
	size_t count = k->c->count, n = (size_t)k->fb->nranks;
	size_t per = line_up(k, (count + n - 1) / n), big = per, a, b;
	int root = k->c->kind == HOP_COLL_REDUCE ? k->c->root : -1;

	if (root >= 0) {
		double w = hop_model_fbox_cma_root_weight((int)n);

		big = line_up(k, (size_t)((double)count * w / (w + n - 1)));
		per = count > big ? line_up(k, (count - big + n - 2) / (n - 1))
				  : 0;
	}
	a = root >= 0 && i > root ? (size_t)(i - 1) * per + big
				  : (size_t)i * per;
	b = a + (i == root ? big : per);
	*off = a < count ? a : count;
	*len = (b < count ? b : count) - *off;
}

/* @len bytes between @mine and rank @q's memory at @addr: read into
 * @mine, or with @write written from it. */
static int cma_move(struct cma_call *k, int q, void *mine, uint64_t addr,
		    size_t len, int write)
{
	int pid = hop_fbox_ctrl(k->fb, q)->pid;
	uint8_t *d = mine;

	while (len) {
		struct iovec l = { d, len };
		struct iovec r = { (void *)(uintptr_t)addr, len };
		ssize_t n = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
				  : process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ESRCH) {  /* its process is gone */
			hop_fbox_ctrl(k->fb, k->fb->rank)->cause_peer = q;
			return hop_fbox_failed(k->fb, hop_comm_fail(k->comm,
				HOP_ERR_PEER_FAILED, "rank %d: %s (fast box by "
				"CMA, collective #%llu): rank %d (pid %d) died",
				k->comm->rank, k->c->fn,
				(unsigned long long)k->seq, q, pid));
		}
		if (n <= 0)
			return hop_fbox_failed(k->fb, hop_comm_fail(k->comm,
				HOP_ERR_SYSTEM, "rank %d: %s (fast box by CMA, "
				"collective #%llu): %s %zu B %s rank %d "
				"(pid %d) at %#llx: %s", k->comm->rank,
				k->c->fn, (unsigned long long)k->seq,
				write ? "writing" : "reading", len,
				write ? "to" : "of", q, pid,
				(unsigned long long)addr,
				n ? strerror(errno) : "nothing moved"));
		d += n;
		addr += (uint64_t)n;
		len -= (size_t)n;
	}
	return 0;
}

/* @d = rank 0's @n elements from @at op rank 1's op ...; @own: this
 * rank's, which may be @d (in place). */
static int reduce_chunk(struct cma_call *k, uint8_t *d, const uint8_t *own,
			size_t at, size_t n)
{
	const struct hop_coll_call *c = k->c;
	struct hop_fbox *fb = k->fb;
	uint8_t *peer = fb->chunk;
	size_t bytes = n * k->es;
	int ret, first = 0;

	/* rank 0's data lands in @d first: keep this rank's own */
	if (d == own && fb->rank) {
		hop_copy(fb->chunk + HOP_FBOX_CMA_CHUNK, own, bytes);
		own = fb->chunk + HOP_FBOX_CMA_CHUNK;
	}
	/* rank 0, not in place: rank 1's data straight into @d and its own
	 * reduced in before it, rather than its own copied in first */
	if (!fb->rank && d != own) {
		if ((ret = cma_move(k, 1, d, k->peer[1].send + at * k->es,
				    bytes, 0)))
			return ret;
		hop_reduce_local(d, own, n, c->dtype, c->op, 1);
		first = 2;
	}
	for (int q = first; q < fb->nranks; q++) {
		const uint8_t *src = own;

		if (q != fb->rank) {
			src = q ? peer : d;
			if ((ret = cma_move(k, q, (void *)src, k->peer[q].send +
					    at * k->es, bytes, 0)))
				return ret;
		}
		if (!q && src != d)
			hop_copy(d, src, bytes);
		else if (q)
			hop_reduce_local(d, src, n, c->dtype, c->op, 0);
	}
	if (c->op == HOP_AVG)
		hop_reduce_avg(d, n, c->dtype, fb->nranks);
	return 0;
}

/*
 * This rank's segment, chunk by chunk: reduced into @dst (NULL: a chunk
 * of scratch), then written where rank @to keeps the result (-1: every
 * peer), while it is in cache.
 */
static int reduce_segment(struct cma_call *k, uint8_t *dst, int to)
{
	struct hop_fbox *fb = k->fb;
	size_t es = k->es, step = HOP_FBOX_CMA_CHUNK / es, off, len, n;
	int ret;

	segment(k, fb->rank, &off, &len);
	for (size_t at = off; at < off + len; at += n) {
		uint8_t *d = dst ? dst + at * es
				 : fb->chunk + 2 * HOP_FBOX_CMA_CHUNK;

		n = off + len - at < step ? off + len - at : step;
		if ((ret = reduce_chunk(k, d, (const uint8_t *)k->c->sendbuf +
					at * es, at, n)))
			return ret;
		for (int q = 0; q < fb->nranks; q++)
			if (q != fb->rank && (to < 0 || q == to) &&
			    (ret = cma_move(k, q, d, k->peer[q].res + at * es,
					    n * es, 1)))
				return ret;
	}
	return 0;
}

/* Publish this rank's addresses (@mine) and read every peer's (@only
 * >= 0: rank @only's alone). */
static int exchange_with(struct cma_call *k, const struct cma_addr *mine,
			 int only)
{
	const uint8_t *p;
	int ret;

	if ((ret = hop_fbox_publish(k->comm, k->fb, k->c, k->seq, mine,
				    sizeof(*mine))))
		return ret;
	for (int q = 0; q < k->fb->nranks; q++) {
		if (q == k->fb->rank || (only >= 0 && q != only))
			continue;
		if (!(p = hop_fbox_read_slot(k->comm, k->fb, k->c, k->seq, q,
					     &ret)))
			return ret;
		memcpy(&k->peer[q], p, sizeof(k->peer[q]));
	}
	/* every rank wrote @seq, so every rank finished @seq - 1 */
	if (only < 0)
		k->fb->floor = k->seq;
	return 0;
}

/* Publish this rank's addresses and read every peer's. */
static int exchange(struct cma_call *k, uint64_t send, uint64_t res)
{
	struct cma_addr mine = { send, res };

	return exchange_with(k, &mine, -1);
}

/* This rank's moves of this call are done: its reduced word. */
static void mark_moved(struct cma_call *k)
{
	atomic_store_explicit(&hop_fbox_ctrl(k->fb, k->fb->rank)->reduced,
			      k->seq + 1, memory_order_release);
}

/* Rank @q's moves of this call are done (@what it does meanwhile). */
static int wait_moved(struct cma_call *k, int q, const char *what)
{
	struct hop_fbox_wait w = {
		.c = k->c, .word = &hop_fbox_ctrl(k->fb, q)->reduced,
		.want = k->seq + 1, .seq = k->seq, .peer = q, .what = what
	};

	return hop_fbox_wait(k->comm, k->fb, &w);
}

/* This rank's moves are done; then every peer's: nobody reads or writes
 * this rank's buffers any more. */
static int moves_done(struct cma_call *k, const char *what)
{
	int ret;

	mark_moved(k);
	for (int q = 0; q < k->fb->nranks; q++)
		if (q != k->fb->rank && (ret = wait_moved(k, q, what)))
			return ret;
	return 0;
}

/*
 * AllReduce and Reduce: this rank's segment reduced and written to the
 * root (@root) or to every peer (-1); then every peer's reduced word:
 * each has read its segment of this rank's send buffer and written its
 * result here.
 */
static int reduce_scatter(struct cma_call *k, uint8_t *dst, int root)
{
	int ret;

	if ((ret = exchange(k, (uintptr_t)k->c->sendbuf, (uintptr_t)dst)) ||
	    (ret = reduce_segment(k, dst, root)))
		return ret;
	return moves_done(k, "to reduce its segment");
}

/* The copy of an AllToAll's @bytes of send blocks its peers read when it
 * runs in place (fb->copy, kept for the next call). */
static const uint8_t *send_copy(struct cma_call *k, const void *send,
				size_t bytes, int *err)
{
	struct hop_fbox *fb = k->fb;

	if (bytes > fb->copy_len) {
		uint8_t *p = realloc(fb->copy, bytes);

		if (!p) {
			*err = hop_fbox_failed(fb, hop_comm_fail(k->comm,
				HOP_ERR_NO_MEMORY, "rank %d: %s (fast box by "
				"CMA, collective #%llu): out of memory for "
				"the %zu B copy of the send blocks in place",
				k->comm->rank, k->c->fn,
				(unsigned long long)k->seq, bytes));
			return NULL;
		}
		fb->copy = p;
		fb->copy_len = bytes;
	}
	hop_copy(fb->copy, send, bytes);
	return fb->copy;
}

/*
 * AllGather and AllToAll: this rank's block of every peer's send data
 * (an AllGather's whole one, block rank of an AllToAll's N), read
 * straight into its receive buffer, the peers in turn from the next
 * rank on; its own block copied, unless in place it is there already.
 */
static int cma_gather(struct cma_call *k)
{
	const struct hop_coll_call *c = k->c;
	const int me = k->fb->rank, n = k->fb->nranks;
	const int a2a = c->kind == HOP_COLL_ALLTOALL;
	const size_t blk = c->count * k->es, at = a2a ? (size_t)me * blk : 0;
	const uint8_t *send = c->sendbuf;
	uint8_t *out = c->recvbuf;
	int ret = 0;

	if (send + at != out + (size_t)me * blk)
		hop_copy(out + (size_t)me * blk, send + at, blk);
	else if (a2a && !(send = send_copy(k, send, (size_t)n * blk, &ret)))
		return ret;
	if ((ret = exchange(k, (uintptr_t)send, (uintptr_t)out)))
		return ret;
	for (int i = 1; i < n; i++) {
		int q = me + i < n ? me + i : me + i - n;

		if ((ret = cma_move(k, q, out + (size_t)q * blk,
				    k->peer[q].send + at, blk, 0)))
			return ret;
	}
	return moves_done(k, "to read its blocks");
}

/*
 * Broadcast: the vector in N segments, as AllReduce's. The root writes
 * its segment (number root) into every reader's receive buffer while
 * each reader reads the others from the root's, so the root's core
 * copies too: at 2 ranks each rank copies half. Every rank publishes
 * its call, and the root checks them all: a rank that believes itself
 * the root too would otherwise wait for readers that never come, until
 * HOP_TIMEOUT, where this names the mismatch at once. A reader returns
 * once the root's reduced word says its writes are done, the root once
 * every reader's done word says it finished.
 */
static int cma_broadcast(struct cma_call *k)
{
	struct hop_fbox *fb = k->fb;
	const int root = k->c->root, me = fb->rank;
	const size_t es = k->es, count = k->c->count;
	uint8_t *buf = k->c->recvbuf;
	struct cma_addr mine = { me == root ? (uintptr_t)buf : 0,
				 (uintptr_t)buf };
	size_t off, len;
	int ret;

	segment(k, root, &off, &len);
	if ((ret = exchange_with(k, &mine, me == root ? -1 : root)))
		return ret;
	if (me == root) {
		for (int q = 0; q < fb->nranks; q++)
			if (q != root && len &&
			    (ret = cma_move(k, q, buf + off * es,
					    k->peer[q].res + off * es,
					    len * es, 1)))
				return ret;
		mark_moved(k);
		return hop_fbox_wait_readers(k->comm, fb, k->c, k->seq + 1,
					     k->seq);
	}
	/* the segments before and after the root's */
	if (off && (ret = cma_move(k, root, buf, k->peer[root].send,
				   off * es, 0)))
		return ret;
	if (off + len < count &&
	    (ret = cma_move(k, root, buf + (off + len) * es,
			    k->peer[root].send + (off + len) * es,
			    (count - off - len) * es, 0)))
		return ret;
	return wait_moved(k, root, "to write its segment");
}

int hop_fbox_cma_run(struct hop_comm *comm, struct hop_fbox *fb,
		     const struct hop_coll_call *c, uint64_t seq, size_t bytes)
{
	struct cma_call k = { .comm = comm, .fb = fb, .c = c, .seq = seq,
			      .es = bytes / hop_fbox_payload(c->kind, c->count,
							     fb->nranks) };

	switch (c->kind) {
	case HOP_COLL_ALLREDUCE:
		return reduce_scatter(&k, c->recvbuf, -1);
	case HOP_COLL_REDUCE:
		return reduce_scatter(&k, fb->rank == c->root ? c->recvbuf
							      : NULL, c->root);
	case HOP_COLL_ALLGATHER:
	case HOP_COLL_ALLTOALL:
		return cma_gather(&k);
	default: /* HOP_COLL_BROADCAST */
		return cma_broadcast(&k);
	}
}
