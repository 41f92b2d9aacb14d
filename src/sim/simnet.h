/*
 * simnet.h - the discrete-event simulator of hop-model: hop's real
 * collective schedules (hop_sched_build(), the builders the collectives
 * use) for all N ranks in one process, over a simulated network with a
 * virtual clock.
 *
 * The network: every rank has one send port and one receive port (full
 * duplex). A message is eligible once both its SEND and its RECV are
 * posted (rendezvous); it starts when the sender's send port and the
 * receiver's receive port are both free, holds both for alpha + bytes /
 * beta of its link (alpha times 1 + HOP_MODEL_RNDV_ALPHAS above the eager
 * size: a rendezvous), then both steps complete. A port that frees takes,
 * among the eligible messages that wait for it, the one its rank's
 * schedule lists first (builders emit steps chunk by chunk, so an older
 * chunk goes before a newer one, as a pipeline needs). alpha and beta are
 * uniform, per link class (intra-host or inter-host, from the hosts of
 * the two ranks), or per link from a HOP_TOPO file; ranks without a direct link
 * take the store-and-forward time of the topology's best route (its
 * relays' ports are not simulated). Reductions and copies take
 * gamma seconds per byte (timed through the shared schedule driver's
 * hook on the simulator's own clock, clock.h). The closed forms of
 * src/model approximate this machine (docs/simulator.md, "The simulated
 * machine"); duplex factors other than 1 are not
 * simulated.
 *
 * Bytes really move between the ranks' buffers unless the buffers are
 * NULL (timing only), so a run can be checked bit for bit.
 *
 * Rotated (rotate set): when every rank's schedule is rank 0's with each
 * peer shifted by the rank (a ring), every rank does the same thing at the
 * same instants on uniform links, so rank 0's schedule alone is run: its
 * SEND to d meets its own RECV from n - d, the image of rank d's RECV from
 * 0, and each message holds rank 0's send and receive ports, the images
 * of the sender's and the receiver's. Memory and time are one rank's.
 */
#ifndef HOP_SIM_SIMNET_H
#define HOP_SIM_SIMNET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "coll/sched.h"
#include "sim/clock.h"
#include "sim/sim_match.h"

struct hop_topo;
struct hop_simnet_heap;
struct hop_simnet_msg;
struct hop_simnet_port;
struct hop_simnet_route;

struct hop_simnet {
	/* caller */
	int nranks;
	struct hop_sched *s;    /* nranks schedules, built and started */
	double alpha;           /* seconds per message */
	double beta;            /* bytes per second */
	double gamma;           /* seconds per byte of a reduce or copy */
	double eager;           /* bytes; a larger message costs
				 * 1 + HOP_MODEL_RNDV_ALPHAS alphas (0: one) */
	const struct hop_topo *topo; /* per-link alpha/beta, or NULL */
	/* link classes (no topo): rank r on host host_of[r]; a message
	 * between two ranks of one host takes class_alpha/beta[0] (intra),
	 * between hosts [1] (inter). NULL: alpha and beta above for all */
	const int *host_of;
	double class_alpha[2], class_beta[2];
	FILE *trace;            /* one line per message (start end src -> dst
				 * tag bytes), or NULL */
	int rotate;             /* s holds rank 0's schedule alone, and every
				 * rank r runs its rotation (peer d -> r + d):
				 * a message rank 0 -> d stands for all r ->
				 * r + d, which by symmetry start and end
				 * together; uniform links only (no topo,
				 * trace), and no data */
	/* results */
	double time;            /* virtual seconds to the last completion */
	uint64_t messages, bytes, events_run;
	char err[256];
	/* private */
	struct hop_simnet_port *tx, *rx;  /* per rank */
	struct hop_simnet_msg *msg;       /* matched messages */
	int nmsg, msg_cap, msg_free;
	int *dirty;                       /* ports to arbitrate: 2 r (+1 rx) */
	int ndirty, dirty_cap;
	struct hop_simnet_heap *events;   /* by virtual time */
	uint64_t seq;
	struct hop_sim_match match;    /* posted, unmatched SEND/RECV */
	struct hop_simnet_route *routes;  /* HOP_SIMNET_ROUTES cached routes */
	struct hop_sim_clock clock;       /* when each step ended */
};

#define HOP_SIMNET_ROUTES 4096

/*
 * hop_simnet_run() - Run every schedule of @net to completion in virtual
 * time (hop_sched_start() must have been called on each).
 * Return: 0; HOP_ERR_INTERNAL when schedules deadlock or disagree on a
 * message (size, peer), HOP_ERR_INVALID_ARG when a message has no route
 * in @topo, with @net->err naming the rank, step, peer and tag;
 * HOP_ERR_NO_MEMORY.
 */
int hop_simnet_run(struct hop_simnet *net);

/* Free what hop_simnet_run() allocated (not the schedules). */
void hop_simnet_free(struct hop_simnet *net);

#endif /* HOP_SIM_SIMNET_H */
