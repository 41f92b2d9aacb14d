/*
 * simrun.h - one simulated collective, end to end: build the real
 * schedules of all N ranks (hop_sched_build(), as the collectives do),
 * give each rank float32 inputs, run them over the simulated network
 * (simnet.h) and check every rank's result bit for bit against a
 * reference reduction computed here, element by element, in integers.
 *
 * Inputs are small integers (-8..8) in float32, so every partial sum is
 * exact in any order and each algorithm must reproduce the reference
 * exactly (N <= 2^20 keeps |sum| < 2^24).
 */
#ifndef HOP_SIM_SIMRUN_H
#define HOP_SIM_SIMRUN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct hop_topo;

struct hop_simrun {
	/* in */
	int kind;               /* enum hop_coll_kind */
	int algo;               /* enum hop_coll_algo; AUTO: the model's pick */
	int nranks, root, inplace;
	int depth;              /* pipeline lanes; 0 = 4 (hop's default) */
	size_t bytes;           /* as hop_coll_select(); a multiple of 4 */
	long chunks;            /* pipelining chunks; 0 = the model's best */
	struct hop_model_link link;  /* alpha, beta, gamma (duplex: 1) */
	const struct hop_topo *topo; /* per-link alpha/beta, or NULL */
	/* link classes: rank r on host host_of[r] (ids in [0, nranks)); a
	 * message inside a host runs on links[0] (intra), between hosts on
	 * links[1] (inter), and the model prices the placement
	 * (hop_model_choose_place(): AUTO may pick HOP_ALGO_HIER, whose
	 * schedule hop_sched_build() makes). NULL: @link for every message */
	const int *host_of;
	struct hop_model_link links[HOP_MODEL_CLASSES];
	int verify;             /* move real data and check it */
	int rotate;             /* run rank 0's schedule as every rank's
				 * rotation (simnet.h): needs verify 0, no
				 * topo or trace, and schedules that are
				 * rotations of each other (checked on ranks
				 * 1, n/2 and n - 1; HOP_ERR_INVALID_ARG
				 * otherwise) */
	FILE *trace;            /* every message (simnet.h), or NULL */
	/* out */
	double sim_time;        /* virtual seconds */
	double predicted;       /* the closed form at the same chunk count */
	double wall;            /* seconds this run took (build + run) */
	long chunks_used;
	int sub_algo[2];        /* HOP_ALGO_HIER: its phases' algorithms */
	int leaders;            /* HOP_ALGO_HIER: its AllReduce's leaders' form */
	size_t chunk_bytes;
	uint64_t messages, moved, events, steps;
	size_t wrong;           /* elements that differ from the reference */
	char err[320];
};

/*
 * hop_simrun() - Simulate @r's collective and fill its results.
 * Return: 0 (then @r->wrong says whether the data were right);
 * HOP_ERR_INVALID_ARG (a bad field, named in @r->err), HOP_ERR_NO_MEMORY,
 * or the simulator's error (deadlock, mismatch: @r->err).
 */
int hop_simrun(struct hop_simrun *r);

#endif /* HOP_SIM_SIMRUN_H */
