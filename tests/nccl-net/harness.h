/*
 * harness.h - the NCCL net plugin harness: drives libnccl-net-hop.so the
 * way NCCL's proxy thread does (no GPU needed), between two processes.
 */
#ifndef HOP_NCCL_HARNESS_H
#define HOP_NCCL_HARNESS_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "../../plugins/nccl/nccl_net.h"

#define MAX_CONNS 8
#define MAX_GROUP 8          /* largest grouped receive the harness posts */
#define NEWEST_VERSION 12
#define H_RAIL_DEVS 16       /* devices whose rail counters are kept */

struct opts {
	const char *plugin;
	int rank;            /* this process: 0 or 1 */
	int nconns;          /* connections each way */
	int msgs;            /* messages per connection and direction */
	int max_size;        /* largest message, bytes */
	uint64_t seed;
	int timeout_s;       /* the whole run's deadline */
	int die_after;       /* rank 1 exits, unclosed, after so many receives */
	int timeouts;        /* only the set-up deadlines, in one process */
	int teardown;        /* closeListen and abandoned connects, alone */
	int selection;       /* only the device checks, alone */
	int version;         /* the plugin table driven: ncclNetPlugin_v<N> */
};

struct harness {
	struct opts o;
	const ncclNet_v8_t *net;
	ncclNetProperties_v8_t props;
	int ndev;            /* devices() of the plugin; connection k uses k % ndev */
	int fd;              /* to the peer process: handles, results */
	uint64_t deadline;   /* ns, CLOCK_MONOTONIC */
	void *send[MAX_CONNS];
	void *recv[MAX_CONNS];
	int rails;           /* rails rails_check() proves after the traffic */
	int rails_tcp;       /* ... by local addresses (else port counters) */
	uint64_t rail_base[H_RAIL_DEVS][2]; /* sent_pkts, rcvd_pkts before */
};

#define FAIL(...)                                                         \
	do {                                                              \
		fprintf(stderr, "nccl_net_test r%d: FAIL: ", h_rank);     \
		fprintf(stderr, __VA_ARGS__);                             \
		fprintf(stderr, "\n");                                    \
		return -1;                                                \
	} while (0)
#define CHECK_RES(call)                                                   \
	do {                                                              \
		ncclResult_t r_ = (call);                                 \
		if (r_ != ncclSuccess) {                                  \
			h_last_res = r_;                                  \
			FAIL("%s returned %d (%s:%d)", #call, (int)r_,    \
			     __FILE__, __LINE__);                         \
		}                                                         \
	} while (0)

extern int h_rank;
extern ncclResult_t h_last_res; /* of the last call CHECK_RES failed */

uint64_t now_ns(void);
int deadline_passed(const struct harness *h);

/* the logger handed to init(); it keeps the last warning, and the
 * transport of the last connection made. The plugin's threads log too:
 * read and reset what it keeps only through these. */
#define H_WARN_LEN 512
#define H_TRANSPORT_LEN 16
void h_logger(ncclDebugLogLevel level, unsigned long flags, const char *file,
	      int line, const char *fmt, ...);
void h_last_warn(char buf[H_WARN_LEN]);
void h_warn_clear(void);
void h_last_transport(char buf[H_TRANSPORT_LEN]);
extern atomic_int h_quiet;
extern atomic_int h_hop_lines; /* lines of hop's own log the logger received */

/* exchange.c: all of @len bytes to / from the peer before the deadline */
int xsend(struct harness *h, const void *buf, size_t len);
int xrecv(struct harness *h, void *buf, size_t len);
/* the peer link: a forked child (addr NULL) or TCP to rank 0's host:port */
int link_fork(struct harness *h, int *child_pid);
int link_tcp(struct harness *h, const char *addr);

/* connect.c: every connection up both ways, the NCCL way */
int connect_all(struct harness *h);
int close_all(struct harness *h, int failed);

/* rails.c, with NCCL_NET_TEST_RAILS=N: rails_start() after connect_all,
 * rails_check() after the traffic, 0 when over tcp the established
 * connections use N local addresses or more (connections are made by the
 * first message, so only the traffic's count), over verbs when every
 * device's port packet counters rose by its connections' messages. */
int rails_start(struct harness *h);
int rails_check(struct harness *h);

/* traffic.c: random sizes and tags, many in flight, every byte checked */
int run_traffic(struct harness *h);

/* checks.c: argument and rule checks, in this process alone */
int run_checks(struct harness *h);

/* failures.c: a peer that dies mid-traffic, peers that never come,
 * teardown of set-ups nobody finished */
int peer_died(struct harness *h, int traffic_rc);
int run_timeouts(struct harness *h);
int run_teardown(struct harness *h);

/* versions.c: h->net for ncclNetPlugin_v<v> of @dl, shimmed to v8's
 * shape; the properties of @dev in that version's layout, widened to
 * v12's (fields the version lacks are -1); finalize for v11 on */
int version_load(struct harness *h, void *dl, int v);
int version_props(int dev, ncclNetProperties_v12_t *full);
int version_finalize(struct harness *h);

/* select.c: every device's properties pass NCCL's selection rules */
int check_selection(struct harness *h);

#endif /* HOP_NCCL_HARNESS_H */
