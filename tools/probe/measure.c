/*
 * measure.c - hop-probe's measuring context: buffers registered with the
 * provider, keys exchanged over the bootstrap, completions polled straight
 * from the provider's ops (no p2p protocol in the way), every wait bounded
 * by the communicator's deadline.
 */
#include "probe.h"

#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bootstrap.h"
#include "core/core.h"
#include "transport/provider.h"

#define PROBE_WR_TAG 0x7072620000000000ull /* "prb" in the top bytes */
#define PROBE_SIGNAL_EVERY 16
#define PROBE_MSGQ 8

/* queued post_send messages (control: done, results, clear-to-send) */
struct probe_msgq {
	int n;
	struct {
		int peer;
		uint32_t len;
		uint8_t data[HOP_PROV_SEND_MAX];
	} m[PROBE_MSGQ];
};
static struct probe_msgq msgq;

static int fail(struct probe_ctx *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct probe_ctx *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return code;
}

static void measure_timer(struct probe_ctx *c)
{
	size_t n = c->max_samples;

	for (size_t i = 0; i < n; i++) {
		uint64_t t0 = hop_now_ns(), t1 = hop_now_ns();

		c->samples[i] = (double)(t1 - t0) / 1e3;
	}
	struct hop_stats st;

	hop_stats_compute(c->samples, n, &st);
	c->timer_us = st.median;
}

double probe_elapsed_us(const struct probe_ctx *c, uint64_t t0, uint64_t t1)
{
	double us = (double)(t1 - t0) / 1e3 - c->timer_us;

	return us > 0 ? us : 0;
}

void probe_stat_set(struct hop_pstat *dst, const struct hop_stats *st)
{
	dst->median_us = st->median;
	dst->p99_us = st->p99;
}

size_t probe_iters(const struct probe_ctx *c, size_t size)
{
	double budget = c->opt->budget_mb * 1048576.0;
	double n = budget / (double)(size ? size : 1);

	if (n > c->opt->iters)
		n = c->opt->iters;
	if (n < 5)
		n = 5;
	return (size_t)n;
}

/*
 * Between phases: a rank outside the pair being measured waits here while
 * that pair runs its whole sequence, which may take longer than one
 * HOP_TIMEOUT on a slow link; so this wait, and only this one, is bounded
 * by PROBE_PHASE_TIMEOUTS x HOP_TIMEOUT. A rank that dies still fails it
 * at once (the bootstrap sees its socket close).
 */
/*
 * Push out everything posted since the last barrier: tcp and shm may queue
 * a post and move it on a later poll(), and nobody polls the provider
 * while waiting in the bootstrap barrier, so a peer still waiting for our
 * last write would wait forever. A signalled 0-byte write to each peer
 * written to, and its completion, cover every write before it (ordering).
 */
static int flush_posts(struct probe_ctx *c)
{
	int ret;

	for (int p = 0; p < c->nranks; p++) {
		if (!c->dirty[p])
			continue;
		if ((ret = probe_write(c, p, 0, 0, 0, 0, 0, HOP_WR_SIGNALED)))
			return ret;
		c->dirty[p] = 0;
	}
	return probe_wait_writes(c, c->sig_posted);
}

int probe_barrier(struct probe_ctx *c)
{
	uint64_t ms = (uint64_t)c->comm->cfg.timeout_ms * PROBE_PHASE_TIMEOUTS;
	int ret = flush_posts(c);

	if (ret)
		return ret;
	ret = hop_bootstrap_barrier(c->comm->bs, hop_deadline_after((int64_t)ms));

	if (ret)
		return fail(c, ret, "barrier: %s", hop_bootstrap_error(c->comm->bs));
	return 0;
}

int probe_allgather(struct probe_ctx *c, const void *mine, void *all,
		    size_t len)
{
	int ret = hop_bootstrap_allgather(c->comm->bs, mine, all, len,
					  hop_comm_deadline(c->comm));

	if (ret)
		return fail(c, ret, "allgather: %s",
			    hop_bootstrap_error(c->comm->bs));
	return 0;
}

int probe_poll(struct probe_ctx *c)
{
	struct hop_cqe cqe[16];
	int n = c->ops->poll(c->prov, cqe, 16);

	if (n < 0)
		return fail(c, n, "provider poll: %s",
			    hop_comm_last_error(c->comm));
	for (int i = 0; i < n; i++) {
		struct hop_cqe *e = &cqe[i];

		if (e->status)
			return fail(c, e->status, "completion error %s from rank %d: %s",
				    hop_err_name(e->status), e->peer,
				    hop_comm_last_error(c->comm));
		switch (e->op) {
		case HOP_CQE_WRITE:
		case HOP_CQE_SEND:
			if ((e->wr_id & 0xffffff0000000000ull) != PROBE_WR_TAG)
				c->foreign++;
			else if (e->op == HOP_CQE_WRITE)
				c->writes_done++;
			else
				c->sends_done++;
			break;
		case HOP_CQE_RECV_IMM:
			if (e->peer >= 0 && e->peer < c->nranks) {
				c->imm_count[e->peer]++;
				c->last_imm[e->peer] = e->imm;
			}
			break;
		case HOP_CQE_RECV:
			if (msgq.n == PROBE_MSGQ || e->len > HOP_PROV_SEND_MAX) {
				c->foreign++;
				break;
			}
			msgq.m[msgq.n].peer = e->peer;
			msgq.m[msgq.n].len = e->len;
			memcpy(msgq.m[msgq.n].data, e->data, e->len);
			msgq.n++;
			break;
		default:
			c->foreign++;
		}
	}
	return n;
}

/*
 * Poll once more; every 256 polls check the deadline, and after 1 ms
 * without any completion yield the CPU (on an oversubscribed host the peer
 * may need it to answer). A healthy measurement never waits that long, so
 * the link, not the scheduler, is what gets timed.
 */
static int spin(struct probe_ctx *c, unsigned *k, uint64_t deadline,
		const char *what, int peer)
{
	int ret = probe_poll(c);
	uint64_t now;

	if (ret < 0)
		return ret;
	if (ret > 0) {
		c->idle_since = 0;
		return 0;
	}
	if ((++*k & 255) != 0)
		return 0;
	now = hop_now_ns();
	if (!c->idle_since)
		c->idle_since = now;
	else if (now - c->idle_since > 1000000)
		sched_yield();
	if (now >= deadline)
		return fail(c, HOP_ERR_TIMEOUT,
			    "rank %d: timed out after HOP_TIMEOUT=%d ms waiting for %s from rank %d",
			    c->rank, c->comm->cfg.timeout_ms, what, peer);
	return 0;
}

int probe_write_buf(struct probe_ctx *c, int peer, struct hop_prov_mr *mr,
		    const void *buf, size_t len, size_t roff, uint32_t imm,
		    unsigned flags)
{
	uint64_t deadline = 0;
	unsigned k = 0;
	int ret;

	if (++c->wr_seq % PROBE_SIGNAL_EVERY == 0)
		flags |= HOP_WR_SIGNALED;
	for (;;) {
		ret = c->ops->post_write(c->prov, peer, mr, buf, len,
					 c->rem[peer].addr + roff,
					 c->rem[peer].key, imm, flags,
					 PROBE_WR_TAG | c->wr_seq);
		if (ret != HOP_PROV_AGAIN)
			break;
		if (!deadline)
			deadline = hop_comm_deadline(c->comm);
		if ((ret = spin(c, &k, deadline, "send queue space", peer)))
			return ret;
	}
	if (ret < 0)
		return fail(c, ret, "post_write of %zu bytes to rank %d: %s", len,
			    peer, hop_comm_last_error(c->comm));
	if (flags & HOP_WR_SIGNALED)
		c->sig_posted++;
	c->dirty[peer] = 1;
	return 0;
}

int probe_write(struct probe_ctx *c, int peer, int use_mr, size_t off,
		size_t len, size_t roff, uint32_t imm, unsigned flags)
{
	return probe_write_buf(c, peer, use_mr ? c->src_mr : NULL, c->src + off,
			       len, roff, imm, flags);
}

size_t probe_inline_len(const struct probe_ctx *c)
{
	if (!c->inline_ok)
		return 0;
	/* the largest inline write: the non-inline one is one byte more, so
	 * the two differ by the path, not the size */
	return c->max_inline < 4096 ? c->max_inline : 4096;
}

int probe_next_imm(struct probe_ctx *c, int peer, const char *what)
{
	uint64_t deadline = hop_comm_deadline(c->comm);
	uint64_t target = ++c->imm_used[peer];
	unsigned k = 0;
	int ret;

	c->idle_since = 0;

	while (c->imm_count[peer] < target)
		if ((ret = spin(c, &k, deadline, what, peer)))
			return ret;
	return 0;
}

int probe_wait_writes(struct probe_ctx *c, uint64_t target)
{
	uint64_t deadline = hop_comm_deadline(c->comm);
	unsigned k = 0;
	int ret;

	c->idle_since = 0;
	while (c->writes_done < target)
		if ((ret = spin(c, &k, deadline, "a local write completion",
				c->rank)))
			return ret;
	return 0;
}

int probe_send_msg(struct probe_ctx *c, int peer, const void *buf,
		   size_t len)
{
	uint64_t deadline = 0;
	unsigned k = 0;
	int ret;

	for (;;) {
		ret = c->ops->post_send(c->prov, peer, buf, len, 0,
					PROBE_WR_TAG | ++c->wr_seq);
		if (ret != HOP_PROV_AGAIN)
			break;
		if (!deadline)
			deadline = hop_comm_deadline(c->comm);
		if ((ret = spin(c, &k, deadline, "send queue space", peer)))
			return ret;
	}
	if (ret < 0)
		return fail(c, ret, "post_send to rank %d: %s", peer,
			    hop_comm_last_error(c->comm));
	c->dirty[peer] = 1;
	return 0;
}

int probe_wait_msg(struct probe_ctx *c, int peer, void *buf, size_t len)
{
	uint64_t deadline = hop_comm_deadline(c->comm);
	unsigned k = 0;
	int ret;

	c->idle_since = 0;
	for (;;) {
		for (int i = 0; i < msgq.n; i++) {
			if (msgq.m[i].peer != peer)
				continue;
			if (msgq.m[i].len != len)
				return fail(c, HOP_ERR_PROTOCOL,
					    "rank %d sent a %u-byte control message, expected %zu",
					    peer, msgq.m[i].len, len);
			memcpy(buf, msgq.m[i].data, len);
			memmove(&msgq.m[i], &msgq.m[i + 1],
				(size_t)(msgq.n - i - 1) * sizeof(msgq.m[0]));
			msgq.n--;
			return 0;
		}
		if ((ret = spin(c, &k, deadline, "a control message", peer)))
			return ret;
	}
}

static void *dst_alloc(struct probe_ctx *c, size_t len)
{
	size_t have = offsetof(struct hop_prov_ops, mem_free) +
		      sizeof(c->ops->mem_free);
	void *p;

	/* the provider's own memory where it has some (the shm segment):
	 * that is where p2p places what peers write into */
	if (c->ops->size >= have && c->ops->mem_alloc && c->ops->mem_free &&
	    (p = c->ops->mem_alloc(c->prov, len))) {
		c->dst_from_prov = 1;
		return p;
	}
	return aligned_alloc(4096, len);
}

int probe_ctx_open(struct probe_ctx *c, struct hop_comm *comm,
		   const struct probe_opts *opt)
{
	struct probe_remote mine;
	int ret;

	memset(c, 0, sizeof(*c));
	c->comm = comm;
	c->opt = opt;
	c->ops = comm->prov_ops;
	c->prov = comm->prov;
	c->rank = comm->rank;
	c->nranks = comm->nranks;
	if (!c->ops || !c->prov || !comm->bs)
		return fail(c, HOP_ERR_INTERNAL,
			    "communicator has no provider or bootstrap to drive");
	if (c->ops->size < offsetof(struct hop_prov_ops, max_inline) +
				   sizeof(c->ops->max_inline))
		return fail(c, HOP_ERR_NOT_SUPPORTED,
			    "provider %s has an older ops table", c->ops->name);
	c->max_inline = c->ops->max_inline(c->prov);
	c->inline_ok = c->max_inline >= 1;
	/* tcp and shm land data only when the target polls */
	c->poll_every = strcmp(c->ops->name, "verbs") ? 1 : 64;
	c->buflen = (opt->max_size + 8191) & ~(size_t)4095;
	c->max_samples = (size_t)(opt->iters + opt->warmup) + 64;
	if (c->max_samples < 20000)
		c->max_samples = 20000;
	c->samples = calloc(c->max_samples, sizeof(double));
	c->rem = calloc((size_t)c->nranks, sizeof(*c->rem));
	c->imm_count = calloc((size_t)c->nranks, sizeof(*c->imm_count));
	c->imm_used = calloc((size_t)c->nranks, sizeof(*c->imm_used));
	c->dirty = calloc((size_t)c->nranks, sizeof(*c->dirty));
	c->last_imm = calloc((size_t)c->nranks, sizeof(*c->last_imm));
	c->src = aligned_alloc(4096, c->buflen);
	if (!c->samples || !c->rem || !c->imm_count || !c->imm_used ||
	    !c->dirty || !c->last_imm || !c->src ||
	    !(c->dst = dst_alloc(c, c->buflen))) {
		ret = fail(c, HOP_ERR_NO_MEMORY,
			   "cannot allocate 2 x %zu bytes of buffers", c->buflen);
		goto err;
	}
	for (size_t i = 0; i < c->buflen; i++)
		c->src[i] = (uint8_t)(i * 7 + 1);
	memset(c->dst, 0, c->buflen);
	if ((ret = c->ops->mr_reg(c->prov, c->src, c->buflen, 0, &c->src_mr)) ||
	    (ret = c->ops->mr_reg(c->prov, c->dst, c->buflen,
				  HOP_PROV_REMOTE_WRITE, &c->dst_mr))) {
		ret = fail(c, ret < 0 ? ret : HOP_ERR_TRANSPORT,
			   "registering %zu bytes: %s", c->buflen,
			   hop_comm_last_error(comm));
		goto err;
	}
	mine.addr = (uint64_t)(uintptr_t)c->dst_mr->addr;
	mine.key = c->dst_mr->key;
	mine.len = c->dst_mr->len;
	if ((ret = probe_allgather(c, &mine, c->rem, sizeof(mine))))
		goto err;
	measure_timer(c);
	return 0;
err:
	probe_ctx_close(c);
	return ret;
}

void probe_ctx_close(struct probe_ctx *c)
{
	if (c->src_mr)
		c->ops->mr_dereg(c->prov, c->src_mr);
	if (c->dst_mr)
		c->ops->mr_dereg(c->prov, c->dst_mr);
	if (c->dst && c->dst_from_prov)
		c->ops->mem_free(c->prov, c->dst, c->buflen);
	else
		free(c->dst);
	free(c->src);
	free(c->samples);
	free(c->rem);
	free(c->imm_count);
	free(c->imm_used);
	free(c->dirty);
	free(c->last_imm);
	c->src_mr = c->dst_mr = NULL;
	c->src = c->dst = NULL;
	c->samples = NULL;
	c->rem = NULL;
	c->imm_count = c->imm_used = NULL;
	c->dirty = NULL;
	c->last_imm = NULL;
}

/* wait until @v appears in dst[@at], polling the provider as it needs */
int probe_wait_byte(struct probe_ctx *c, size_t at, uint8_t v, int peer)
{
	volatile uint8_t *p = c->dst + at;
	uint64_t deadline = hop_comm_deadline(c->comm);
	unsigned k = 0, i = 0;
	int ret;

	c->idle_since = 0;
	while (*p != v) {
		if (++i % (unsigned)c->poll_every)
			continue;
		if ((ret = spin(c, &k, deadline, "a write (memory polling)", peer)))
			return ret;
	}
	atomic_thread_fence(memory_order_acquire);
	return 0;
}
