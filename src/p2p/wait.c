/*
 * wait.c - the waiting loop every blocking call goes through: progress,
 * spin, yield, then bounded provider waits until the comm deadline; a
 * wait on a peer that closed fails naming it, a wait quiet for a quarter
 * of HOP_TIMEOUT dials every rank, and a wait at its deadline probes for
 * a mismatch before it times out naming what was pending.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "p2p/p2p_priv.h"

/* One progress call that polls the slots of every peer, not only the hot
 * ones: what arrived, or a failure. */
static int ll_scan_all(struct hop_comm *comm)
{
	comm->p2p->ll_polls = P2P_LL_FULL_SCAN;
	return hop_p2p_progress(comm);
}

void p2p_describe_req(const struct hop_p2p_req *r, char *buf, size_t len)
{
	char tag[48], peer[16] = "any rank";

	if (r->peer >= 0)
		snprintf(peer, sizeof(peer), "rank %d", r->peer);
	p2p_tag_str(r->tag, tag, sizeof(tag));
	if (r->kind == P2P_KIND_RECV && HOP_MATCH_IGNORE(r))
		snprintf(tag, sizeof(tag), "any");
	if (r->kind == P2P_KIND_PUT)
		snprintf(buf, len, "put to %s (%zu B)", peer, r->len);
	else
		snprintf(buf, len, "%s %s tag %s (%zu B)",
			 r->kind == P2P_KIND_SEND ? "send to" : "recv from",
			 peer, tag, r->len);
}

/* How long a wait that reached its deadline still listens for the answer
 * to its mismatch probe (collsig.c): an eighth of HOP_TIMEOUT, 50-500 ms. */
static int probe_grace_ms(const struct hop_comm *comm)
{
	int64_t g = comm->cfg.timeout_ms / 8;

	return (int)(g < 50 ? 50 : g > 500 ? 500 : g);
}

/* Fail the comm once a receive waited @*rounds quiet rounds (@ret: what
 * the last progress brought) on a peer that closed (channel.c). */
static int closed_quiet(struct hop_p2p *p, int ret, int *rounds)
{
	int q = p2p_closed_waited(p);

	*rounds = q < 0 || ret > 0 ? 0 : *rounds + 1;
	if (*rounds < P2P_CLOSED_ROUNDS)
		return 0;
	return hop_comm_fail(p->comm, HOP_ERR_PEER_FAILED, "p2p: rank %d closed "
			     "its communicator while rank %d waits for %s",
			     q, p->rank, p->peers[q].mq.posted.head
			     ? "a message from it"
			     : p->peers[q].sendq.head ? "credits to send to it"
			     : "its clear to send a rendezvous message");
}

/* How long the next provider wait may block: P2P_WAIT_US, longer once
 * *@quiet waits in a row brought nothing and the provider wakes its
 * waiter; never past the deadline, @left_ms away. @gone: a waited peer
 * closed, whose quiet rounds closed_quiet() counts. */
static int wait_us(const struct hop_p2p *p, unsigned *quiet, int gone,
		   int left_ms)
{
	int64_t us = P2P_WAIT_US;

	if (left_ms < 1)
		return 100;
	if (gone || p->ll_on || !hop_prov_has(p->ops, HOP_PROV_CAP_WAKES))
		*quiet = 0;
	else if (++*quiet > P2P_WAIT_GROW_AFTER)
		us = *quiet - P2P_WAIT_GROW_AFTER >= 7 ? P2P_WAIT_MAX_US :
		     (int64_t)P2P_WAIT_US << (*quiet - P2P_WAIT_GROW_AFTER);
	if (us > P2P_WAIT_MAX_US)
		us = P2P_WAIT_MAX_US;
	if (us > (int64_t)left_ms * 1000)
		us = (int64_t)left_ms * 1000;
	return (int)us;
}

int p2p_wait_loop(struct hop_comm *comm, int (*done)(void *), void *arg,
		  p2p_describe_fn describe, void *darg)
{
	struct hop_p2p *p = comm->p2p;
	unsigned spins = 0, iter = 0, spin_max, quiet_waits = 0;
	uint64_t deadline, sweep, yield_ns, quiet_since = 0;
	char what[256];
	int ret, probed = 0, gone = 0, swept = 0, shared = 0;

	if (done(arg))
		return 0;
	if (!p)
		return HOP_ERR_INVALID_HANDLE;
	spin_max = comm->cfg.spin_count > 0 ? (unsigned)comm->cfg.spin_count
					    : 0;
	yield_ns = comm->cfg.yield_us > 0 ? (uint64_t)comm->cfg.yield_us * 1000u
					  : 0;
	deadline = hop_comm_deadline(comm);
	sweep = hop_deadline_after((int)(comm->cfg.timeout_ms / 4));
	for (;;) {
		ret = hop_p2p_progress(comm);
		if (ret < 0)
			return ret;
		if (done(arg))
			return 0;
		if (ret > 0) {
			spins = 0;
			quiet_since = 0;
			quiet_waits = 0;
		}
		if ((++iter & 1023) == 0 || spins >= spin_max) {
			if (closed_quiet(p, ret, &gone))
				continue; /* the next progress reports it */
			if (!swept && hop_deadline_passed(sweep) && ++swept)
				p2p_connect_all(p);
			if (hop_deadline_passed(deadline)) {
				if (probed++ || !p2p_collsig_probe(p))
					break;
				deadline = hop_deadline_after(probe_grace_ms(comm));
			}
		}
		if (spins < spin_max) {
			spins++;
			continue;
		}
		if (comm->spin_min_ns || yield_ns) {
			/* the polls ran out: spin on until comm->spin_min_ns
			 * has passed, then poll with sched_yield() for
			 * yield_ns more */
			uint64_t quiet, now = hop_now_ns();

			if (!quiet_since)
				quiet_since = now;
			quiet = now - quiet_since;
			if (quiet < comm->spin_min_ns) {
				/* a rank on this CPU runs only if we yield:
				 * then yield on every poll of this wait */
				if (!shared && comm->cpu_shared &&
				    (iter & 7) == 0)
					shared = comm->cpu_shared(comm);
				if (shared)
					sched_yield();
				continue;
			}
			if (quiet < comm->spin_min_ns + yield_ns) {
				sched_yield();
				continue;
			}
		}
		if (p->ll_on) {
			/* LL messages wake nobody: do not block while a
			 * peer may answer us that way, and look at every
			 * peer's slot before blocking (eager_ll.c) */
			if (p2p_ll_keep_awake(p)) {
				if (!spin_max || yield_ns)
					sched_yield();
				continue;
			}
			if ((ret = ll_scan_all(comm)) != 0) {
				if (ret < 0)
					return ret;
				continue;
			}
		}
		p->ops->wait(p->prov, wait_us(p, &quiet_waits, gone,
					      hop_deadline_ms_left(deadline)));
	}
	describe(darg, what, sizeof(what));
	ret = hop_comm_fail(comm, HOP_ERR_TIMEOUT, "rank %d: %s not completed "
			    "within %g s (HOP_TIMEOUT)", comm->rank, what,
			    comm->cfg.timeout_ms / 1000.0);
	if (comm == p->comm)
		p2p_fail_all(p, ret);
	else
		hop_p2p_cancel_comm(comm, ret);
	return ret;
}

struct what_arg {
	const char *what;
};

static void describe_what(void *arg, char *buf, size_t len)
{
	snprintf(buf, len, "%s", ((struct what_arg *)arg)->what);
}

int hop_p2p_wait_until(struct hop_comm *comm, int (*done)(void *arg),
		       void *arg, const char *what)
{
	struct what_arg w = { what ? what : "operation" };

	if (!comm || !done)
		return HOP_ERR_INVALID_ARG;
	return p2p_wait_loop(comm, done, arg, describe_what, &w);
}

int hop_p2p_wait_described(struct hop_comm *comm, int (*done)(void *arg),
			   void *arg, hop_p2p_describe_fn describe,
			   void *darg)
{
	if (!comm || !done || !describe)
		return HOP_ERR_INVALID_ARG;
	return p2p_wait_loop(comm, done, arg, describe, darg);
}

static int req_done(void *arg)
{
	return ((struct hop_p2p_req *)arg)->done;
}

static void describe_req(void *arg, char *buf, size_t len)
{
	p2p_describe_req(arg, buf, len);
}

int hop_p2p_wait(struct hop_comm *comm, struct hop_p2p_req *req)
{
	int ret;

	if (req->done)
		return req->status;
	ret = p2p_wait_loop(comm, req_done, req, describe_req, req);
	return req->done ? req->status : ret;
}
