/*
 * sim.c - in-process simulation executor (see sim.h).
 *
 * Posted SENDs and RECVs that found no partner wait, FIFO per (source,
 * destination, tag): the matching rule of the p2p layer (sim_match.c,
 * shared with the network simulator of hop-model).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

static int sim_setup(struct hop_sim *sim)
{
	int n = sim->nranks;

	hop_sim_match_free(&sim->match);
	if (sim->wcap < n) {
		free(sim->work);
		free(sim->inwork);
		sim->work = malloc((size_t)n * sizeof(int));
		sim->inwork = malloc((size_t)n);
		if (!sim->work || !sim->inwork)
			return HOP_ERR_NO_MEMORY;
		sim->wcap = n;
	}
	sim->whead = 0;
	sim->wcount = n;
	for (int i = 0; i < n; i++) {
		sim->work[i] = i;
		sim->inwork[i] = 1;
	}
	sim->makespan = 0;
	sim->nlate = 0;
	sim->messages = sim->bytes = 0;
	sim->err[0] = 0;
	return sim->timed ? hop_sim_clock_init(&sim->clock, sim->s, n,
					       sim->gamma) : 0;
}

/* ring buffer of ranks with queued work (each rank at most once) */
static void sim_wake(struct hop_sim *sim, int rank)
{
	if (sim->inwork[rank])
		return;
	sim->inwork[rank] = 1;
	sim->work[(sim->whead + sim->wcount) % sim->wcap] = rank;
	sim->wcount++;
}

static int sim_deliver(struct hop_sim *sim, int srank, int sstep, int rrank,
		       int rstep)
{
	struct hop_sched *ss = &sim->s[srank], *rs = &sim->s[rrank];
	const struct hop_step *sd = &ss->steps[sstep], *rv = &rs->steps[rstep];

	if (sd->len != rv->len) {
		snprintf(sim->err, sizeof(sim->err),
			 "rank %d step %d sends %zu bytes (tag %u) but rank %d "
			 "step %d receives %zu", srank, sstep, sd->len, sd->tag,
			 rrank, rstep, rv->len);
		return HOP_ERR_INTERNAL;
	}
	void *dst = hop_step_dst(rs, rstep);
	const void *src = hop_step_src(ss, sstep);
	if (dst && src && sd->len)
		memcpy(dst, src, sd->len);
	sim->messages++;
	sim->bytes += sd->len;
	if (sim->timed) {
		double ts = hop_sim_tready(&sim->clock, ss, sstep);
		double tr = hop_sim_tready(&sim->clock, rs, rstep);
		double t = ts > tr ? ts : tr;
		t += sim->alpha + sim->beta * (double)sd->len;
		*hop_sim_tdone(&sim->clock, ss, sstep) = t;
		*hop_sim_tdone(&sim->clock, rs, rstep) = t;
	}
	hop_sched_complete(ss, sstep);
	hop_sched_complete(rs, rstep);
	sim_wake(sim, srank);
	sim_wake(sim, rrank);
	return 0;
}

static uint64_t sim_rand(struct hop_sim *sim)
{
	sim->seed = sim->seed * 6364136223846793005ull + 1442695040888963407ull;
	return sim->seed >> 33;
}

/* chaos: remember a matched pair, deliver it later */
static int sim_defer(struct hop_sim *sim, int srank, int sstep, int rrank,
		     int rstep)
{
	if (sim->nlate + 4 > sim->late_cap) {
		int ncap = sim->late_cap ? sim->late_cap * 2 : 1024;
		void *p = realloc(sim->late, (size_t)ncap * sizeof(int));
		if (!p)
			return HOP_ERR_NO_MEMORY;
		sim->late = p;
		sim->late_cap = ncap;
	}
	int *q = sim->late + sim->nlate;
	q[0] = srank;
	q[1] = sstep;
	q[2] = rrank;
	q[3] = rstep;
	sim->nlate += 4;
	return 0;
}

static int sim_deliver_random(struct hop_sim *sim)
{
	int k = (int)(sim_rand(sim) % (uint64_t)(sim->nlate / 4)) * 4;
	int q[4];

	memcpy(q, sim->late + k, sizeof(q));
	sim->nlate -= 4;
	memmove(sim->late + k, sim->late + sim->nlate, sizeof(q));
	return sim_deliver(sim, q[0], q[1], q[2], q[3]);
}

static int sim_start(void *ctx, struct hop_sched *s, int idx)
{
	struct hop_sim *sim = ctx;
	const struct hop_step *st = &s->steps[idx];
	int me = s->args.rank, is_send = st->kind == HOP_STEP_SEND;
	int src = is_send ? me : st->peer, dst = is_send ? st->peer : me;

	if (st->peer < 0 || st->peer >= sim->nranks || st->peer == me) {
		snprintf(sim->err, sizeof(sim->err),
			 "rank %d step %d: bad peer %d", me, idx, st->peer);
		return HOP_ERR_INTERNAL;
	}
	int prank, pstep;
	int ret = hop_sim_match_post(&sim->match, src, dst, st->tag, is_send,
				     me, idx, &prank, &pstep);

	if (ret <= 0)
		return ret;
	if (sim->chaos)
		return is_send ? sim_defer(sim, me, idx, prank, pstep)
			       : sim_defer(sim, prank, pstep, me, idx);
	return is_send ? sim_deliver(sim, me, idx, prank, pstep)
		       : sim_deliver(sim, prank, pstep, me, idx);
}

/* Driver hook (timed runs): an inline step ran. */
static void sim_ran(void *ctx, struct hop_sched *s, int idx)
{
	struct hop_sim *sim = ctx;

	hop_sim_clock_inline(&sim->clock, s, idx);
}

int hop_sim_run(struct hop_sim *sim)
{
	int ret = sim_setup(sim);

	if (ret)
		return ret;
	while (sim->wcount > 0 || sim->nlate > 0) {
		if (sim->nlate > 0 && (sim->wcount == 0 || sim_rand(sim) % 3 == 0)) {
			if ((ret = sim_deliver_random(sim)))
				return ret;
			continue;
		}
		if (sim->chaos && sim->wcount > 1) {
			/* a random waiting rank goes first */
			int k = (int)(sim_rand(sim) % (uint64_t)sim->wcount);
			int a = sim->whead, b = (sim->whead + k) % sim->wcap;
			int t = sim->work[a];
			sim->work[a] = sim->work[b];
			sim->work[b] = t;
		}
		int r = sim->work[sim->whead];
		sim->whead = (sim->whead + 1) % sim->wcap;
		sim->wcount--;
		sim->inwork[r] = 0;
		ret = hop_sched_advance_hook(&sim->s[r], sim_start,
					     sim->timed ? sim_ran : NULL, sim);
		if (ret) {
			if (!sim->err[0])
				snprintf(sim->err, sizeof(sim->err),
					 "rank %d: %s", r, hop_strerror(ret));
			return ret;
		}
	}
	for (int r = 0; r < sim->nranks; r++) {
		struct hop_sched *s = &sim->s[r];
		if (!s->finished) {
			hop_sim_match_report_stuck(&sim->match, s, r, sim->err,
						   sizeof(sim->err));
			return HOP_ERR_INTERNAL;
		}
	}
	if (sim->timed)
		sim->makespan = hop_sim_clock_last(&sim->clock);
	return 0;
}

void hop_sim_free(struct hop_sim *sim)
{
	hop_sim_match_free(&sim->match);
	hop_sim_clock_free(&sim->clock);
	free(sim->work);
	free(sim->inwork);
	free(sim->late);
	sim->late = NULL;
	sim->nlate = sim->late_cap = 0;
	sim->work = NULL;
	sim->inwork = NULL;
	sim->wcap = 0;
}
