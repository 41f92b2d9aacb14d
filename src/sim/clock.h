/*
 * clock.h - the simulators' virtual clock: when each step of each rank's
 * schedule ended. A schedule holds no time (coll/sched.h); the simulators
 * keep it here and time inline steps through the driver's hook
 * (hop_sched_advance_hook()).
 */
#ifndef HOP_SIM_CLOCK_H
#define HOP_SIM_CLOCK_H

#include <stddef.h>

#include "coll/sched.h"

struct hop_sim_clock {
	double *t;              /* end of every step, rank after rank */
	size_t *first;          /* rank r's steps start at t[first[r]] */
	size_t nt;              /* steps of all ranks */
	int nranks;
	double gamma;           /* seconds per byte of a REDUCE or COPY */
};

/*
 * hop_sim_clock_init() - Zero the clock of the @nranks built schedules @s
 * (rank r is s[r]); frees what @c held before (zero it the first time).
 * Return: 0 or HOP_ERR_NO_MEMORY.
 */
int hop_sim_clock_init(struct hop_sim_clock *c, const struct hop_sched *s,
		       int nranks, double gamma);

void hop_sim_clock_free(struct hop_sim_clock *c);

/* When step @i of @s ended. */
static inline double *hop_sim_tdone(const struct hop_sim_clock *c,
				    const struct hop_sched *s, int i)
{
	return &c->t[c->first[s->args.rank] + (size_t)i];
}

/* When step @i of @s became ready: the end of the last of its
 * dependencies (0 without any). */
static inline double hop_sim_tready(const struct hop_sim_clock *c,
				    const struct hop_sched *s, int i)
{
	const double *t = &c->t[c->first[s->args.rank]];
	double r = 0;

	for (int k = 0; k < HOP_SCHED_MAXDEPS; k++) {
		int d = s->steps[i].deps[k];

		if (d >= 0 && t[d] > r)
			r = t[d];
	}
	return r;
}

/* Inline step @i of @s ran: it ends gamma seconds per byte after it
 * became ready (a NOP at once). */
static inline void hop_sim_clock_inline(const struct hop_sim_clock *c,
					const struct hop_sched *s, int i)
{
	const struct hop_step *st = &s->steps[i];

	*hop_sim_tdone(c, s, i) = hop_sim_tready(c, s, i) +
		(st->kind == HOP_STEP_NOP ? 0 : c->gamma * (double)st->len);
}

/* The latest end of any step (0 for no steps). */
double hop_sim_clock_last(const struct hop_sim_clock *c);

#endif /* HOP_SIM_CLOCK_H */
