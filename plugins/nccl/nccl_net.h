/*
 * nccl_net.h - the parts of NCCL's network plugin ABI (version 8) that a
 * host-memory plugin implements, written from NCCL's documented interface
 * (ext-net: net_v8.h and the types it uses). NCCL dlopens
 * libnccl-net-<NCCL_NET_PLUGIN>.so and looks up the symbol
 * "ncclNetPlugin_v8", a table of the functions below.
 *
 * Only the layout matters to NCCL: member order and types are the ABI, so
 * nothing here may be reordered. The harness (tests/nccl-net) includes this
 * file to drive the plugin the way NCCL's proxy thread does.
 */
#ifndef HOP_NCCL_NET_H
#define HOP_NCCL_NET_H

#include <stddef.h>
#include <stdint.h>

/* Result codes; NCCL treats anything but ncclSuccess as fatal. */
typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,   /* a system call or the network failed */
	ncclInternalError = 3, /* plugin bug or unsupported request */
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,   /* the peer failed or misbehaved */
	ncclInProgress = 7,
} ncclResult_t;

/* Logger NCCL hands to init(); levels and subsystem flags as NCCL's. */
typedef enum {
	NCCL_LOG_NONE = 0,
	NCCL_LOG_VERSION = 1,
	NCCL_LOG_WARN = 2,
	NCCL_LOG_INFO = 3,
	NCCL_LOG_ABORT = 4,
	NCCL_LOG_TRACE = 5,
} ncclDebugLogLevel;

#define NCCL_INIT 1ul
#define NCCL_NET 16ul

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level,
				  unsigned long flags, const char *file,
				  int line, const char *fmt, ...);

/* Bytes NCCL reserves for the handle listen() fills and connect() reads. */
#define NCCL_NET_HANDLE_MAXSIZE 128
/* Requests NCCL may keep in flight per comm; the plugin must take them. */
#define NCCL_NET_MAX_REQUESTS 32

/* Memory kinds of ptrSupport and of regMr's type. */
#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4

/* Device offload: a host plugin says NCCL_NET_DEVICE_HOST. */
typedef enum {
	NCCL_NET_DEVICE_HOST = 0,
	NCCL_NET_DEVICE_UNPACK = 1,
} ncclNetDeviceType;

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0

typedef struct {
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
	void *handle;
	size_t size;
	int needsProxyProgress;
} ncclNetDeviceHandle_v8_t;

typedef struct {
	char *name;       /* for logs */
	char *pciPath;    /* sysfs path of the device, or NULL */
	uint64_t guid;    /* devices with one guid are one NIC */
	int ptrSupport;   /* NCCL_PTR_* bits */
	int regIsGlobal;  /* 1: a registration is valid on every comm */
	int speed;        /* Mbit/s */
	int port;
	float latency;    /* us */
	int maxComms;
	int maxRecvs;     /* largest n of a grouped irecv */
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v8_t;

/*
 * The rules NCCL follows and expects: connect() and accept() never block;
 * they return success with a NULL comm until the connection is up and are
 * called again. isend()/irecv() may return success with a NULL request,
 * meaning "try again later". irecv() receives n messages at once, one per
 * buffer, each matching its tag; test() reports per-buffer sizes.
 */
typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v8_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v8_t **recvDevComm);
	ncclResult_t (*regMr)(void *comm, void *data, size_t size, int type,
			      void **mhandle);
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size,
				    int type, uint64_t offset, int fd,
				    void **mhandle);
	ncclResult_t (*deregMr)(void *comm, void *mhandle);
	ncclResult_t (*isend)(void *sendComm, void *data, int size, int tag,
			      void *mhandle, void **request);
	ncclResult_t (*irecv)(void *recvComm, int n, void **data, int *sizes,
			      int *tags, void **mhandles, void **request);
	ncclResult_t (*iflush)(void *recvComm, int n, void **data, int *sizes,
			       void **mhandles, void **request);
	ncclResult_t (*test)(void *request, int *done, int *sizes);
	ncclResult_t (*closeSend)(void *sendComm);
	ncclResult_t (*closeRecv)(void *recvComm);
	ncclResult_t (*closeListen)(void *listenComm);
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle,
				    void **dptr_mhandle);
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request);
} ncclNet_v8_t;

#endif /* HOP_NCCL_NET_H */
