/*
 * hop/model.h - what hop's cost model assumes of a link, for programs that
 * place or rank hop beside other transports (the NCCL plugin's device
 * latency, a scheduler's estimate).
 *
 * The model prices a message of m bytes at alpha + m / beta. The numbers
 * come from the link profile HOP_PROFILE names (written by hop-probe,
 * docs/probe.md) when it is set, else from the transport's built-in
 * defaults (docs/model.md).
 */
#ifndef HOP_MODEL_H
#define HOP_MODEL_H

#include <hop/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** struct hop_link_estimate - one link as the cost model sees it. */
typedef struct hop_link_estimate {
	double alpha_us;   /* per-message time, microseconds */
	double beta_GBps;  /* bandwidth, 1e9 bytes per second */
	int from_profile;  /* 1: measured (HOP_PROFILE), 0: built-in */
	char detail[160];  /* where the numbers came from, or what failed */
} hop_link_estimate_t;

/**
 * hop_link_estimate() - The link the cost model would use for @transport.
 * @transport: "verbs", "tcp", "shm", a plugin's name, or NULL / "auto"
 *             (tcp's defaults). A profile, when loaded, gives its own
 *             provider's numbers whatever @transport says.
 * @out:       receives the estimate; on failure, detail names the problem.
 * Return: 0, HOP_ERR_INVALID_ARG (@out NULL), HOP_ERR_CONFIG (a HOP_*
 * variable a communicator would refuse, HOP_PROFILE included: named in
 * @out->detail), or the profile reader's error (HOP_ERR_PARSE,
 * HOP_ERR_SYSTEM, HOP_ERR_NO_MEMORY) naming the file and line in
 * @out->detail.
 */
HOP_EXPORT int hop_link_estimate(const char *transport,
				 hop_link_estimate_t *out);

#ifdef __cplusplus
}
#endif
#endif /* HOP_MODEL_H */
