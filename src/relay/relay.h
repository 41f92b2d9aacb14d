/*
 * relay.h - multi-hop transfers (hop_relay, hop/p2p.h): the plan every
 * rank on the path computes alike (relay_plan.c) and the chunk engine that
 * moves the message through source, relays and destination (relay.c).
 *
 * The pure functions (no comm) are here so the unit test can check them:
 * argument checks of a path, the chunk count choice, chunk boundaries.
 */
#ifndef HOP_P2P_RELAY_H
#define HOP_P2P_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include <hop/p2p.h>

#include "model/model.h"

struct hop_comm;

/* Internal tag space of relay chunks: HOP_CTX_INTERNAL, this hi24, the
 * user's tag in the low 32 bits. */
#define RELAY_TAG_HI 0x524c59   /* "RLY" */

/* Chunks in flight per rank: a relay receives up to this many chunks
 * ahead of the one it is forwarding. */
#define RELAY_WINDOW 8

struct relay_plan {
	int npath;
	int path[HOP_RELAY_MAX_PATH];
	int pos;                /* this rank's index on path, -1 if absent */
	int mode;
	long k;
	size_t len;
	double predicted;
	uint32_t sig;           /* hash of the plan: ranks must agree */
	char model[320];
};

/*
 * relay_check_path() - Validate an explicit path of @npath ranks against
 * a comm of @nranks ranks and the endpoints @src, @dst: 2 .. MAX ranks,
 * each in range, none twice, first == src, last == dst.
 * Return: 0, or HOP_ERR_INVALID_ARG with @err naming the position and the
 * rank that is wrong.
 */
int relay_check_path(const int *path, int npath, int nranks, int src,
		     int dst, char *err, size_t errlen);

/*
 * relay_choose_k() - The chunk count of a transfer of @m bytes over the
 * @h hops @hops: 1 for store-and-forward; else @opt_chunks when > 0, else
 * @env_chunks (HOP_PIPELINE_CHUNKS) when > 0, else the model's exact
 * integer optimum (hop_model_path_kopt: on equal hops the better
 * neighbour of k* = sqrt((h-1) m / (a b)); on unequal hops the slowest
 * stage sets the period), clamped to [1, m / @min_chunk]. Explicit counts
 * are clamped to [1, m] only (every chunk at least one byte).
 */
long relay_choose_k(const struct hop_model_hop *hops, int h, double m,
		    double min_chunk, int mode, long opt_chunks,
		    long env_chunks);

/* Byte offset of chunk @j of @k over @len bytes: chunks differ in size by
 * at most one byte, chunk j spans [off(j), off(j + 1)). */
static inline size_t relay_chunk_off(size_t len, long k, long j)
{
	size_t q = len / (size_t)k, r = len % (size_t)k;

	/* r < k <= 2^20 and j <= k, so r * j cannot overflow */
	return q * (size_t)j + r * (size_t)j / (size_t)k;
}

/* FNV-1a of the plan's size, mode, chunk count and path; never 0 (0 means
 * "no signature" to the channel layer). */
uint32_t relay_plan_sig(const struct relay_plan *pl);

/*
 * relay_plan_make() - Check the arguments of @fn (hop_relay or
 * hop_relay_plan), find the path (explicit, or routed over HOP_TOPO; the
 * direct one when HOP_TOPO is unset), the
 * link parameters of each hop (HOP_TOPO's links, else HOP_PROFILE, else
 * the provider's built-in link), the chunk count and the predicted time.
 * Errors are set on @comm (hop_set_error) with a message naming what is
 * wrong.
 */
int relay_plan_make(struct hop_comm *comm, const char *fn, size_t len,
		    int src, int dst, const int *path, int npath,
		    const hop_relay_opts_t *opts, struct relay_plan *pl);

/* Free what @comm's relays read from HOP_PROFILE and HOP_TOPO
 * (hop_comm_destroy()). */
void relay_env_free(struct hop_comm *comm);

/* Move the message along @pl (this rank is at pl->pos >= 0). */
int relay_run(struct hop_comm *comm, const struct relay_plan *pl, void *buf,
	      int tag);

#endif /* HOP_P2P_RELAY_H */
