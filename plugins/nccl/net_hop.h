/*
 * net_hop.h - private to the NCCL net plugin (libnccl-net-hop.so).
 *
 * Each NCCL connection is one 2-rank hop communicator: the listener is rank
 * 0, the connector rank 1, and the 128-byte NCCL handle is the hop unique
 * id. hop_comm_init_rank() blocks, so it runs on a thread of its own while
 * NCCL keeps calling connect()/accept(), which return a NULL comm until the
 * thread is done. Send and receive comms carry a fixed pool of requests; a
 * full pool makes isend()/irecv() return a NULL request (NCCL retries).
 */
#ifndef HOP_NCCL_NET_HOP_H
#define HOP_NCCL_NET_HOP_H

#include <pthread.h>
#include <stdatomic.h>

#include <hop/hop.h>

#include "nccl_net.h"

/* Largest n of a grouped irecv (NCCL's own IB plugin also takes 8). */
#define HN_MAX_RECVS 8
/*
 * Requests per comm. NCCL's ext-net README: a send comm must take
 * maxRecvs x NCCL_NET_MAX_REQUESTS sends, so that NCCL_NET_MAX_REQUESTS
 * grouped receives of maxRecvs each can be matched at once.
 */
#define HN_MAX_REQS (HN_MAX_RECVS * NCCL_NET_MAX_REQUESTS)
/* Largest message: test() reports sizes as int; NCCL's own cap (1 GiB). */
#define HN_MAX_BYTES (1u << 30)
#define HN_MSG_LEN 512

enum hn_magic {
	HN_LISTEN_MAGIC = 0x484e4c53, /* "HNLS" */
	HN_SEND_MAGIC = 0x484e5344,   /* "HNSD" */
	HN_RECV_MAGIC = 0x484e5256,   /* "HNRV" */
	HN_MR_MAGIC = 0x484e4d52,     /* "HNMR" */
	HN_REQ_MAGIC = 0x484e5251,    /* "HNRQ" */
};

/* A communicator being created by a background thread. */
struct hn_conn {
	hop_unique_id_t id;
	int rank;                 /* 0: listener (accept), 1: connector */
	const char *const *settings; /* its device's (hn_dev_settings()) */
	pthread_t thread;
	atomic_int finished;      /* set by the thread as its last act */
	int ret;                  /* hop_comm_init_rank()'s result */
	hop_comm_t *comm;
	char err[HN_MSG_LEN];     /* hop_last_init_error() of the thread */
	void *lib;                /* a dlopen reference to this plugin */
	int orphan;               /* nobody will collect it: unload does */
	struct hn_conn *next;     /* pending connects (net_conn.c) */
};

struct hn_comm;

/* One NCCL request: a send, or a group of n receives. */
struct hn_req {
	uint32_t magic;           /* HN_REQ_MAGIC while handed out */
	int send;
	int n;
	struct hn_comm *comm;
	hop_request_t *sub[HN_MAX_RECVS]; /* NULL once complete */
	int sizes[HN_MAX_RECVS];  /* sent size, or bytes received */
};

struct hn_mr {
	uint32_t magic;
	struct hn_comm *comm;
	uintptr_t addr;
	size_t size;
	struct hn_mr *next;
};

/* Reserved: the drainer's receive that never matches (net_drain.c). */
#define HN_IDLE_TAG HOP_TAG_MAX

/* A send or receive comm (one direction of one NCCL connection). */
struct hn_comm {
	uint32_t magic;           /* HN_SEND_MAGIC or HN_RECV_MAGIC */
	hop_comm_t *hc;
	int peer;                 /* the other rank of the 2-rank comm */
	pthread_mutex_t lock;     /* held around every hop call on hc */
	hop_request_t *idle;      /* receive of HN_IDLE_TAG: progress handle */
	uint64_t active_ns;       /* last isend/irecv/test (under lock) */
	uint64_t polled_ns;       /* last drainer poll (under lock) */
	struct hn_comm *next_live; /* the drainer's list */
	int nfree;
	int free_idx[HN_MAX_REQS];
	struct hn_req req[HN_MAX_REQS];
	struct hn_mr *mrs;        /* live registrations, freed at close */
};

/* Logging through NCCL's logger (stderr for warnings before init()). */
void hn_log(ncclDebugLogLevel level, const char *file, int line,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define HN_WARN(...) hn_log(NCCL_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define HN_INFO(...) hn_log(NCCL_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)

/* A device's properties, copied into each version's struct (net_versions.c). */
struct hn_props {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int speed;                /* Mbit/s */
	int port;
	float latency;            /* us */
	int maxComms;
	int maxRecvs;
	size_t maxP2pBytes;
};

/* The NCCL result for a hop result code. */
ncclResult_t hn_result(int hop_code);
/* Log what failed on @c's hop comm and return the NCCL result for @ret. */
ncclResult_t hn_fail(struct hn_comm *c, const char *call, int ret);

/* A new send or receive comm around the 2-rank hop comm @hc. */
struct hn_comm *hn_comm_new(hop_comm_t *hc, int send);
/* Destroy @c's hop comm (cancelling what runs), registrations, @c. */
void hn_comm_free(struct hn_comm *c);
/* net_dev.c: the devices (probed once), and the hop settings that put a
 * connection on device @dev (NULL for no such device). */
int hn_dev_count(void);
const char *const *hn_dev_settings(int dev);
/* Success when @dev is a device of the plugin; else a warning naming @call. */
ncclResult_t hn_check_dev(const char *call, int dev);
/* @c when it is a live comm of kind @magic (0: either), else NULL. */
struct hn_comm *hn_comm_check(void *c, uint32_t magic);

/* net_drain.c: progress of comms NCCL is not calling. */
uint64_t hn_now_ns(void);
int hn_drain_add(struct hn_comm *c);
void hn_drain_remove(struct hn_comm *c);
void hn_drain_fini(void);

/*
 * The one implementation every version's table adapts (net_versions.c).
 * net_conn.c: init, devices, connection set-up and teardown.
 */
ncclResult_t hn_init(ncclDebugLogger_t logFunction);
ncclResult_t hn_devices(int *ndev);
ncclResult_t hn_getProperties(int dev, struct hn_props *props);
ncclResult_t hn_listen(int dev, void *handle, void **listenComm);
ncclResult_t hn_connect(int dev, void *handle, void **sendComm);
ncclResult_t hn_accept(void *listenComm, void **recvComm);
ncclResult_t hn_closeSend(void *sendComm);
ncclResult_t hn_closeRecv(void *recvComm);
ncclResult_t hn_closeListen(void *listenComm);

/* net_xfer.c: the data path and registrations. */
ncclResult_t hn_regMr(void *comm, void *data, size_t size, int type,
		      void **mhandle);
ncclResult_t hn_regMrDmaBuf(void *comm, void *data, size_t size, int type,
			    uint64_t offset, int fd, void **mhandle);
ncclResult_t hn_deregMr(void *comm, void *mhandle);
ncclResult_t hn_isend(void *sendComm, void *data, size_t size, int tag,
		      void *mhandle, void **request);
ncclResult_t hn_irecv(void *recvComm, int n, void **data,
		      const size_t *sizes, int *tags, void **mhandles,
		      void **request);
ncclResult_t hn_iflush(void *recvComm, int n, void **data, int *sizes,
		       void **mhandles, void **request);
ncclResult_t hn_test(void *request, int *done, int *sizes);
ncclResult_t hn_getDeviceMr(void *comm, void *mhandle, void **dptr_mhandle);
ncclResult_t hn_irecvConsumed(void *recvComm, int n, void *request);

#endif /* HOP_NCCL_NET_HOP_H */
