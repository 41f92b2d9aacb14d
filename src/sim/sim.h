/*
 * sim.h - the in-process simulation executor: runs the schedules of all N
 * ranks of one collective in this process, matching each SEND to the RECV
 * with the same (source, destination, tag) in posting order, copying the
 * bytes between the ranks' buffers (or not, when a rank's buffers are
 * NULL: data-less simulation). Used by the unit tests to check every
 * algorithm for many N and counts without a transport, and meant for the
 * simulator of hop-model.
 *
 * Chaos mode delays every matched message and delivers them in a random
 * order, interleaved with the ranks' progress, as a real network may.
 *
 * Optional virtual time: with timed set, a message completes at
 * max(send ready, recv ready) + alpha + bytes * beta (seconds per byte)
 * and an inline step (reduce/copy) takes bytes * gamma; hop_sim_run()
 * reports the latest completion as makespan. Links have no contention.
 * The clock is the executor's own (clock.h), not the schedules'.
 */
#ifndef HOP_SIM_SIM_H
#define HOP_SIM_SIM_H

#include "coll/sched.h"
#include "sim/clock.h"
#include "sim/sim_match.h"

struct hop_sim {
	/* caller */
	int nranks;
	struct hop_sched *s;    /* nranks schedules, built and started */
	int timed;
	double alpha, beta, gamma;
	/* chaos: deliver matched messages in a random order, late (seeded);
	 * exposes a missing dependency as corrupted data */
	int chaos;
	uint64_t seed;
	/* results */
	double makespan;
	uint64_t messages, bytes;
	char err[256];
	/* private */
	struct hop_sim_match match;     /* posted, unmatched SEND/RECV */
	int *work;              /* ranks with queued work */
	char *inwork;
	int whead, wcount, wcap;
	int *late;              /* chaos: matched (send ent, recv ent) pairs */
	int nlate, late_cap;
	struct hop_sim_clock clock; /* timed: when each step ended */
};

/*
 * hop_sim_run() - Drive every schedule of @sim to completion.
 * Return: 0; HOP_ERR_INTERNAL when schedules deadlock (a step waits for a
 * message nobody sends) or disagree on a message size, with @sim->err
 * naming the rank, step, peer and tag; HOP_ERR_NO_MEMORY.
 */
int hop_sim_run(struct hop_sim *sim);

void hop_sim_free(struct hop_sim *sim);

#endif /* HOP_SIM_SIM_H */
