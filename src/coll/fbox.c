/*
 * fbox.c - blocking AllReduce, Broadcast and Reduce through the fast
 * boxes (fbox.h): the writer copies into its slot and stores the flag;
 * a reader polls the flag line, checks the header against its own call
 * and reads the payload in place.
 *
 * Reductions are flat, in rank order 0 .. N-1 on every rank that
 * reduces, so every rank computes the same bytes. Every wait keeps the
 * comm's deadline, its failure and abort, and the provider's liveness
 * checks of dead peers (fbox_poll()). A rank that
 * fails here says so in its control line, so peers waiting for it stop
 * instead of waiting out their deadline.
 */
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <hop/provider.h>

#include "coll/coll_int.h"
#include "coll/fbox.h"
#include "coll/fbox_int.h"
#include "coll/reduce.h"
#include "model/model.h"

static int wait_done(void *arg)
{
	struct hop_fbox_wait *w = arg;

	if (atomic_load_explicit(w->word, memory_order_acquire) >= w->want)
		return 1;
	/* a peer's failure is rare: look at it now and then */
	if ((++w->polls & 255) == 0 &&
	    atomic_load_explicit(&hop_fbox_ctrl(w->fb, w->peer)->failed,
				 memory_order_relaxed))
		w->peer_failed = 1;
	return w->peer_failed;
}

static void wait_describe(void *arg, char *buf, size_t len)
{
	const struct hop_fbox_wait *w = arg;

	snprintf(buf, len, "%s (fast box, collective #%llu) waiting on rank "
		 "%d %s", w->c->fn, (unsigned long long)w->seq, w->peer,
		 w->what);
}

/* This rank's failure, for peers that wait on it. */
int hop_fbox_failed(struct hop_fbox *fb, int code)
{
	atomic_store_explicit(&hop_fbox_ctrl(fb, fb->rank)->failed, code,
			      memory_order_release);
	return code;
}

/* Yield this long after the comm's spin time (HOP_SPIN), then sleep
 * this long between looks: a writer rings no bell, so the provider's
 * blocking wait would sleep its whole period (1 ms) on every late peer.
 * Yielding after 20 us instead of the spin time cost 2-rank AllReduce
 * 25-36 us a call on a VM where other jobs took the yielded core. */
#define FBOX_YIELD_NS 10000000ull
#define FBOX_NAP_NS 20000

/*
 * With pairs connected on first use, a rank a fast box waits on may never
 * have been reached through the provider, which then does not watch it:
 * connect it. Only a wait that outlasted the yields does, so a rank's
 * connections still grow with the peers it waits on, not with the host.
 */
static void watch_peer(struct hop_comm *comm, int peer)
{
	struct hop_comm *root = comm->root ? comm->root : comm;

	(void)hop_prov_connect(root->prov_ops, root->prov,
			       hop_comm_peer(comm, peer));
}

/*
 * This rank's CPU, published when it changed: a peer that waits on this
 * rank from the same CPU yields to it instead of spinning. Ranks started
 * together begin on one CPU until the scheduler moves one; until then a
 * waiter's spin kept its peer off the CPU for the whole spin time, and
 * each of the first calls took 2 ms.
 */
static int publish_cpu(const struct hop_fbox *fb)
{
	int cpu = sched_getcpu();
	_Atomic int32_t *mine = &hop_fbox_ctrl(fb, fb->rank)->cpu;

	if (atomic_load_explicit(mine, memory_order_relaxed) != cpu)
		atomic_store_explicit(mine, cpu, memory_order_relaxed);
	return cpu;
}

int hop_fbox_cpu_shared(const struct hop_fbox *fb)
{
	int cpu = publish_cpu(fb);

	for (int q = 0; cpu >= 0 && q < fb->nranks; q++)
		if (q != fb->rank &&
		    atomic_load_explicit(&hop_fbox_ctrl(fb, q)->cpu,
					 memory_order_relaxed) == cpu)
			return 1;
	return 0;
}

/* The rank @w waits on last began a wait on this CPU, @cpu. */
static int peer_on_cpu(const struct hop_fbox_wait *w, int cpu)
{
	return cpu >= 0 &&
	       atomic_load_explicit(&hop_fbox_ctrl(w->fb, w->peer)->cpu,
				    memory_order_relaxed) == cpu;
}

/*
 * Poll @w until it is done: the flag line alone between checks; every 64
 * polls (every poll when the host runs more ranks than cores) progress
 * p2p (the provider's liveness checks of dead peers, messages of a rank
 * that scheduled this call, the comm's failure and abort), the deadline,
 * and a yield once the comm's spin time passed, or at once while the
 * peer waited on shares this rank's CPU, then short naps.
 */
static int fbox_poll(struct hop_comm *comm, struct hop_fbox_wait *w)
{
	unsigned every = hop_comm_oversubscribed(comm) ? 1 : 64; /* 2^k */
	uint64_t start = hop_now_ns(), now, deadline = hop_comm_deadline(comm);
	char what[256];
	int ret, linked = 0, cpu = publish_cpu(w->fb);

	for (unsigned i = 1;; i++) {
		if (wait_done(w))
			return 0;
		if (i & (every - 1))
			continue;
		if ((ret = hop_p2p_progress(comm)) < 0)
			return ret;
		now = hop_now_ns();
		if (now >= deadline)
			break;
		if (now - start < comm->spin_min_ns && every > 1) {
			if (peer_on_cpu(w, cpu)) {
				sched_yield();
				cpu = publish_cpu(w->fb);
			}
			continue;
		}
		if (now - start < comm->spin_min_ns + FBOX_YIELD_NS) {
			sched_yield();
			continue;
		}
		/* a peer that published its failure is not dialled: its
		 * cause is what the wait reports (hop_fbox_wait()). Looked at
		 * on every nap: a live peer waited on may fail later, when
		 * another rank's death reaches it first */
		if (atomic_load_explicit(&hop_fbox_ctrl(w->fb, w->peer)->failed,
					 memory_order_acquire)) {
			w->peer_failed = 1;
			return 0;
		}
		if (!linked++)
			watch_peer(comm, w->peer);
		nanosleep(&(struct timespec){ 0, FBOX_NAP_NS }, NULL);
	}
	wait_describe(w, what, sizeof(what));
	ret = hop_comm_fail(comm, HOP_ERR_TIMEOUT, "rank %d: %s not completed "
			    "within %g s (HOP_TIMEOUT)", comm->rank, what,
			    comm->cfg.timeout_ms / 1000.0);
	hop_p2p_progress(comm); /* fails the requests in flight */
	return ret;
}

/*
 * A peer failed for a peer's death it does not name (its provider found
 * it; only fast-box failures publish a cause): look for the dead rank
 * here, connecting every rank so the provider watches each, for at most
 * a fifth of the comm's timeout. Returns the comm's failure when that
 * found one (its message names the dead rank), else 0.
 */
static int find_dead(struct hop_comm *comm)
{
	uint64_t end = hop_now_ns() + comm->cfg.timeout_ms * 200000ull;
	int ret;

	if (end > hop_comm_deadline(comm))
		end = hop_comm_deadline(comm);
	for (int q = 0; q < comm->nranks; q++)
		if (q != comm->rank)
			watch_peer(comm, q);
	while (hop_now_ns() < end) {
		if ((ret = hop_p2p_progress(comm)) < 0)
			return ret;
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return 0;
}

int hop_fbox_wait(struct hop_comm *comm, struct hop_fbox *fb,
		  struct hop_fbox_wait *w)
{
	int ret, code;

	if (atomic_load_explicit(w->word, memory_order_acquire) >= w->want)
		return 0;
	w->fb = fb;
	if ((ret = fbox_poll(comm, w)))
		return hop_fbox_failed(fb, ret);
	if (atomic_load_explicit(w->word, memory_order_acquire) >= w->want)
		return 0;
	const struct hop_fbox_ctrl *pc = hop_fbox_ctrl(fb, w->peer);
	char why[64] = "";

	code = atomic_load_explicit(&pc->failed, memory_order_acquire);
	if (code == HOP_ERR_PEER_FAILED && pc->cause_peer < 0 &&
	    (ret = find_dead(comm)))
		return hop_fbox_failed(fb, ret);
	if (pc->cause_peer >= 0)
		snprintf(why, sizeof(why), code == HOP_ERR_MISMATCH
			 ? ": mismatched collectives with rank %d"
			 : ": rank %d is gone", (int)pc->cause_peer);
	else if (code == HOP_ERR_MISMATCH) /* found by p2p's signatures */
		snprintf(why, sizeof(why), ": mismatched collectives");
	return hop_fbox_failed(fb, hop_comm_fail(comm, code, "rank %d: %s "
				"(fast box, collective #%llu): rank %d failed "
				"(%s%s) while rank %d waited on it %s",
				comm->rank, w->c->fn,
				(unsigned long long)w->seq, w->peer,
				hop_err_name(code), why, comm->rank, w->what));
}

/* The header of rank @q's slot describes the same call as @c? */
static int check_hdr(struct hop_comm *comm, struct hop_fbox *fb,
		     const struct hop_coll_call *c,
		     const struct hop_fbox_hdr *h, int q, uint64_t seq)
{
	if (hop_fbox_hdr_matches(h, c))
		return 0;
	hop_fbox_ctrl(fb, fb->rank)->cause_peer = q;
	return hop_fbox_failed(fb, hop_comm_fail(comm, HOP_ERR_MISMATCH,
		"fast boxes: mismatched collectives #%llu: rank %d ran "
		"%s(count %zu, %s, %s, root %d), rank %d ran %s(count %llu, "
		"%s, %s, root %d)", (unsigned long long)seq, comm->rank,
		hop_coll_kind_name(c->kind), c->count,
		hop_dtype_name(c->dtype), hop_op_name(c->op), c->root, q,
		hop_coll_kind_name(h->kind), (unsigned long long)h->count,
		hop_dtype_name((hop_dtype_t)h->dtype),
		hop_op_name((hop_op_t)h->op), h->root));
}

int hop_fbox_wait_peers(struct hop_comm *comm, struct hop_fbox *fb,
			const struct hop_coll_call *c, size_t word,
			uint64_t want, uint64_t seq, const char *what,
			uint64_t *floor)
{
	uint64_t low = UINT64_MAX;
	int ret;

	for (int q = 0; q < fb->nranks; q++) {
		_Atomic uint64_t *k = (_Atomic uint64_t *)
			((uint8_t *)hop_fbox_ctrl(fb, q) + word);
		struct hop_fbox_wait w = { .c = c, .word = k, .want = want,
				       .seq = seq, .peer = q, .what = what };
		uint64_t d;

		if (q == fb->rank)
			continue;
		if ((ret = hop_fbox_wait(comm, fb, &w)))
			return ret;
		d = atomic_load_explicit(k, memory_order_acquire);
		low = d < low ? d : low;
	}
	if (low != UINT64_MAX && low > *floor)
		*floor = low;
	return 0;
}

/* Wait until every peer finished the collective whose flag is @want
 * (its last read of the slot about to be rewritten). */
int hop_fbox_wait_readers(struct hop_comm *comm, struct hop_fbox *fb,
			  const struct hop_coll_call *c, uint64_t want,
			  uint64_t seq)
{
	return hop_fbox_wait_peers(comm, fb, c,
				   offsetof(struct hop_fbox_ctrl, done), want,
				   seq, "to read this rank's slot of an "
				   "earlier collective", &fb->floor);
}

/* Rank @q's payload of @seq once it is there and matches @c; NULL on
 * failure (*@ret set). */
const uint8_t *hop_fbox_read_wait(struct hop_comm *comm,
				  struct hop_fbox *fb,
				  const struct hop_coll_call *c,
				  uint64_t seq, int q, int *ret)
{
	struct hop_fbox_hdr *h = hop_fbox_slot(fb, q, seq);
	struct hop_fbox_wait w = { .c = c, .word = &h->flag, .want = seq + 1,
			       .seq = seq, .peer = q,
			       .what = "to write its slot" };

	if ((*ret = hop_fbox_wait(comm, fb, &w)) ||
	    (*ret = check_hdr(comm, fb, c, h, q, seq)))
		return NULL;
	return h->data;
}

/* Rank @q has written its slot of @seq (what hop_fbox_read_slot() waits
 * for), so reading its header does not wait. */
static int slot_written(const struct hop_fbox *fb, int q, uint64_t seq)
{
	return atomic_load_explicit(&hop_fbox_slot(fb, q, seq)->flag,
				    memory_order_acquire) >= seq + 1;
}

/* A Broadcast's readers check only the root's header, so ranks that
 * disagree on the root could each pass. So every rank publishes its call
 * (the root with the payload), and every non-root also checks the next
 * rank after it that is not its root: the checks chain around the ring
 * past the root, so ranks that disagree fail unless every one of them
 * took itself for the root. In the slots the root checks nobody and
 * keeps running ahead of slow readers; in the wide area it checks its
 * successor too, as p2p's signatures did for the schedule that sizes
 * above a slot took before, so ranks that each took themselves for the
 * root fail there as well. A header not written yet is not waited for:
 * readers waiting on each other ran 4 ranks on 2 cores in lockstep, tens
 * of us a call instead of 2-3. It is checked at a later call
 * (check_pending()). */
static int check_successor(struct hop_comm *comm, struct hop_fbox *fb,
			   const struct hop_coll_call *c, uint64_t seq)
{
	int next = fb->rank + 1 < fb->nranks ? fb->rank + 1 : 0, ret = 0;

	if (next == c->root)
		next = next + 1 < fb->nranks ? next + 1 : 0;
	if (next == fb->rank)
		return 0;
	if (slot_written(fb, next, seq)) {
		hop_fbox_read_slot(comm, fb, c, seq, next, &ret);
		return ret;
	}
	if (fb->pend_lo == fb->pend_hi)
		fb->pend_lo = fb->pend_hi = seq;
	for (; fb->pend_hi < seq; fb->pend_hi++)
		fb->pend[fb->pend_hi % HOP_FBOX_DEPTH].peer = -1;
	fb->pend[seq % HOP_FBOX_DEPTH] = (struct hop_fbox_pend){
		.fn = c->fn, .peer = next, .kind = c->kind, .root = c->root,
		.count = c->count, .dtype = c->dtype, .op = c->op };
	fb->pend_hi = seq + 1;
	return 0;
}

/* This rank finished every collective before the first one with a check
 * left, or else before @seq. */
static void publish_done(struct hop_fbox *fb, uint64_t seq)
{
	atomic_store_explicit(&hop_fbox_ctrl(fb, fb->rank)->done,
			      fb->pend_lo < fb->pend_hi ? fb->pend_lo : seq,
			      memory_order_release);
}

/* The checks check_successor() left, oldest first: those whose header is
 * there, or all of them (@all: before a call that is no small Broadcast,
 * or when they span all slots but one), waiting for each; then the done
 * word, before collective @seq waits on anyone who waits for it. */
static int check_pending(struct hop_comm *comm, struct hop_fbox *fb, int all,
			 uint64_t seq)
{
	int ret = 0;

	all |= fb->pend_hi - fb->pend_lo >= HOP_FBOX_DEPTH - 1;
	for (; fb->pend_lo < fb->pend_hi; fb->pend_lo++) {
		uint64_t s = fb->pend_lo;
		const struct hop_fbox_pend *p = &fb->pend[s % HOP_FBOX_DEPTH];
		struct hop_coll_call c = { .fn = p->fn, .kind = p->kind,
					   .root = p->root, .count = p->count,
					   .dtype = p->dtype, .op = p->op };

		if (p->peer < 0)
			continue;
		if (!all && !slot_written(fb, p->peer, s))
			break;
		if (!hop_fbox_read_slot(comm, fb, &c, s, p->peer, &ret))
			return ret;
	}
	publish_done(fb, seq);
	return 0;
}

static int run_kind(struct hop_comm *comm, struct hop_fbox *fb,
		    const struct hop_coll_call *c, uint64_t seq, size_t bytes,
		    int wide)
{
	int me = fb->rank, ret = 0;
	const uint8_t *src;

	switch (c->kind) {
	case HOP_COLL_ALLGATHER:
	case HOP_COLL_ALLTOALL:
	case HOP_COLL_REDUCESCATTER:
		return hop_fbox_gather(comm, fb, c, seq, bytes, wide);
	case HOP_COLL_ALLREDUCE:
		if (wide)
			return hop_fbox_wide_allreduce(comm, fb, c, seq, bytes);
		if ((ret = hop_fbox_publish(comm, fb, c, seq, c->sendbuf,
					    bytes)))
			return ret;
		return hop_fbox_reduce_all(comm, fb, c, seq,
					   hop_fbox_slot(fb, me, seq)->data,
					   bytes, 0);
	case HOP_COLL_REDUCE:
		if (wide)
			return hop_fbox_wide_reduce(comm, fb, c, seq, bytes);
		/* the root too: its slot keeps its input when recvbuf is
		 * sendbuf (in place) */
		if ((ret = hop_fbox_publish(comm, fb, c, seq, c->sendbuf,
					    bytes)))
			return ret;
		if (me != c->root)
			return 0;
		return hop_fbox_reduce_all(comm, fb, c, seq,
					   hop_fbox_slot(fb, me, seq)->data,
					   bytes, 0);
	default: /* HOP_COLL_BROADCAST */
		ret = wide ? hop_fbox_wide_publish(comm, fb, c, seq, c->recvbuf,
						   me == c->root ? bytes : 0)
			   : hop_fbox_publish(comm, fb, c, seq, c->recvbuf,
					      me == c->root ? bytes : 0);
		if (ret)
			return ret;
		if (me == c->root)
			return wide ? check_successor(comm, fb, c, seq) : 0;
		if (!(src = hop_fbox_read_data(comm, fb, c, seq, c->root,
					       bytes, wide, &ret)))
			return ret;
		if (bytes)
			hop_copy(c->recvbuf, src, bytes);
		return check_successor(comm, fb, c, seq);
	}
}

/* Nonblocking collectives started before this call finish first: the
 * fast boxes hold one collective at a time. */
static int finish_started(struct hop_comm *comm)
{
	for (struct hop_coll_op *op = comm->coll->active; op; op = op->next)
		if (!op->status && !op->sched.finished &&
		    hop_coll_wait(comm, op) &&
		    atomic_load_explicit(&comm->failed, memory_order_acquire))
			return hop_comm_check(comm);
	return 0;
}

/* The wide or CMA form, whichever the model prices lowest, when that is
 * at or below the schedule it would run, else HOP_FBOX_FORM_NONE. Priced
 * without the cores (a rank's own count), so every rank decides alike.
 * A ReduceScatter has no CMA form. */
static int large_form(struct hop_comm *comm, int kind, size_t bytes)
{
	struct hop_coll_choice ch;
	int n = comm->nranks, form = HOP_FBOX_FORM_NONE;
	double t, best;

	/* the schedule prices an AllToAll and a ReduceScatter by a block */
	hop_coll_choose_bytes(comm, kind,
			      hop_fbox_n_blocks(kind) ? bytes / (size_t)n
						      : bytes, &ch);
	best = ch.predicted;
	if (bytes <= hop_fbox_wide_max(kind, n) &&
	    (t = hop_model_fbox_wide(kind, (double)bytes, n, 0)) <= best) {
		form = HOP_FBOX_FORM_WIDE;
		best = t;
	}
	if (kind != HOP_COLL_REDUCESCATTER && comm->coll->fbox->cma &&
	    hop_model_fbox_cma(kind, (double)bytes, n, 0) <= best)
		form = HOP_FBOX_FORM_CMA;
	return form;
}

int hop_fbox_takes(struct hop_comm *comm, int kind, size_t bytes)
{
	const struct hop_coll *c = comm->coll;
	struct hop_fbox_memo *m;

	if (!c || !c->fbox || c->tune.forced[kind] != HOP_ALGO_AUTO ||
	    (kind != HOP_COLL_ALLREDUCE && kind != HOP_COLL_BROADCAST &&
	     kind != HOP_COLL_REDUCE && kind != HOP_COLL_ALLGATHER &&
	     kind != HOP_COLL_ALLTOALL && kind != HOP_COLL_REDUCESCATTER))
		return HOP_FBOX_FORM_NONE;
	if (bytes <= HOP_FBOX_MAX)
		return HOP_FBOX_FORM_SLOT;
	m = &c->fbox->memo[kind];
	if (!m->form || m->bytes != bytes)
		*m = (struct hop_fbox_memo){ .bytes = bytes,
			.form = large_form(comm, kind, bytes) + 1 };
	return m->form - 1;
}

/* The signature the p2p layer compares for @c: hop_coll_signature() of
 * the fast call, kept per kind while the calls repeat (fb->sig). */
static uint32_t call_signature(struct hop_fbox *fb, const struct hop_coll_call *c)
{
	struct hop_fbox_sig *s = &fb->sig[c->kind];

	if (s->sig && s->count == c->count && s->root == c->root &&
	    s->dtype == c->dtype && s->op == c->op)
		return s->sig;
	struct hop_coll_args a = { .kind = c->kind, .algo = HOP_COLL_ALGO_FBOX,
				   .nranks = fb->nranks, .root = c->root,
				   .count = c->count, .dtype = c->dtype,
				   .op = c->op };
	*s = (struct hop_fbox_sig){ .count = c->count, .root = c->root,
				    .dtype = c->dtype, .op = c->op,
				    .sig = hop_coll_signature(&a) };
	return s->sig;
}

int hop_fbox_run(struct hop_comm *comm, const struct hop_coll_call *c,
		 size_t bytes, int form)
{
	struct hop_coll *cl = comm->coll;
	struct hop_fbox *fb = cl->fbox;
	uint64_t seq;
	int ret;

	if (cl->active && (ret = finish_started(comm)))
		return ret;
	/* the comm's sequence, widened: ranks agree on it as they call
	 * collectives in one order */
	fb->seq += (uint32_t)(cl->seq - (uint32_t)fb->seq);
	seq = fb->seq;
	cl->seq++;
	/* only a Broadcast in the slots or the wide area leaves checks
	 * pending: every other call (the CMA form's root too) may wait for
	 * this rank's done word */
	if (fb->pend_lo < fb->pend_hi &&
	    (ret = check_pending(comm, fb, c->kind != HOP_COLL_BROADCAST ||
					   form == HOP_FBOX_FORM_CMA, seq)))
		return hop_fbox_failed(fb, ret);
	/* a rank that took the scheduled path under this number sends
	 * messages p2p compares with this signature */
	if ((ret = hop_p2p_coll_begin(comm, (uint32_t)seq & 0xffffffu,
				      call_signature(fb, c))))
		return hop_fbox_failed(fb, ret);
	ret = form == HOP_FBOX_FORM_CMA
		      ? hop_fbox_cma_run(comm, fb, c, seq, bytes)
		      : run_kind(comm, fb, c, seq, bytes,
				 form == HOP_FBOX_FORM_WIDE);
	if (ret)
		return ret;
	publish_done(fb, seq + 1);
	atomic_store_explicit(&hop_fbox_ctrl(fb, fb->rank)->wread, seq + 1,
			      memory_order_release);
	return 0;
}

/* Measured on shm (docs/results/2026-12-05-shm-fastbox.md): a call, one
 * line per peer read, the payload copied (and reduced) once per rank;
 * above the slot, the model's wide or CMA form. */
double hop_fbox_predict(int form, int kind, size_t bytes, int nranks,
			int cores)
{
	/* Broadcast: the root's slot and another reader's header */
	int reads = kind == HOP_COLL_BROADCAST ? (nranks > 2 ? 2 : 1) : nranks - 1;
	/* an AllToAll or ReduceScatter reader takes one block of each slot */
	double copied = hop_fbox_n_blocks(kind) ? (double)bytes / nranks
						: (double)bytes;

	if (form == HOP_FBOX_FORM_WIDE)
		return hop_model_fbox_wide(kind, (double)bytes, nranks, cores);
	if (form == HOP_FBOX_FORM_CMA)
		return hop_model_fbox_cma(kind, (double)bytes, nranks, cores);
	return 0.15e-6 + reads * (0.1e-6 + copied / 5e9);
}

const char *hop_fbox_form(int form)
{
	return form == HOP_FBOX_FORM_CMA ? "fbox-cma"
	       : form == HOP_FBOX_FORM_WIDE ? "fbox-wide" : "fbox";
}
