/*
 * clock.c - the simulators' per-step virtual clock (see clock.h).
 */
#include "sim/clock.h"

#include <stdlib.h>
#include <string.h>

int hop_sim_clock_init(struct hop_sim_clock *c, const struct hop_sched *s,
		       int nranks, double gamma)
{
	size_t total = 0;

	hop_sim_clock_free(c);
	c->first = malloc((size_t)(nranks > 0 ? nranks : 1) * sizeof(size_t));
	if (!c->first)
		return HOP_ERR_NO_MEMORY;
	for (int r = 0; r < nranks; r++) {
		c->first[r] = total;
		total += (size_t)s[r].nsteps;
	}
	c->t = calloc(total ? total : 1, sizeof(double));
	if (!c->t) {
		hop_sim_clock_free(c);
		return HOP_ERR_NO_MEMORY;
	}
	c->nt = total;
	c->nranks = nranks;
	c->gamma = gamma;
	return 0;
}

void hop_sim_clock_free(struct hop_sim_clock *c)
{
	free(c->t);
	free(c->first);
	memset(c, 0, sizeof(*c));
}

double hop_sim_clock_last(const struct hop_sim_clock *c)
{
	double last = 0;

	for (size_t i = 0; i < c->nt; i++)
		if (c->t[i] > last)
			last = c->t[i];
	return last;
}
