/*
 * nccl_net.h - NCCL's network plugin ABI, versions 6 to 12: the types a
 * host-memory plugin exports and the harness (tests/nccl-net) drives.
 * NCCL dlopens libnccl-net-<NCCL_NET_PLUGIN>.so and looks up
 * "ncclNetPlugin_v<N>", newest first; docs/nccl.md lists which NCCL
 * release looks for which N.
 *
 * The declarations follow NCCL's ext-net example headers
 * (plugins/net/example/nccl/ in NCCL 2.30, ext-net/example/nccl/ before),
 * each cited where it is declared. Only the layout matters to NCCL: member
 * order and types are the ABI, so nothing here may be reordered.
 */
#ifndef HOP_NCCL_NET_H
#define HOP_NCCL_NET_H

#include <stddef.h>
#include <stdint.h>

/* err.h. NCCL's README: ncclSystemError for system and network failures,
 * ncclInternalError when NCCL misuses the plugin (bad arguments too),
 * ncclInvalidUsage for user errors (configuration, size mismatch). */
typedef enum {
	ncclSuccess = 0,
	ncclUnhandledCudaError = 1,
	ncclSystemError = 2,
	ncclInternalError = 3,
	ncclInvalidArgument = 4,
	ncclInvalidUsage = 5,
	ncclRemoteError = 6,
	ncclInProgress = 7,
} ncclResult_t;

/* common.h: the logger init() receives, its levels and subsystems. */
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

/* common.h (v10 on): the profiler callback init() receives. */
typedef ncclResult_t (*ncclProfilerCallback_t)(void **eHandle, int type,
					       void *phandle, int64_t pluginId,
					       void *extData);

/* net.h */
#define NCCL_NET_HANDLE_MAXSIZE 128
#define NCCL_NET_MAX_REQUESTS 32
#define NCCL_MAX_NET_SIZE_BYTES (1ll << 40)
#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4

/* net_device.h */
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
} ncclNetDeviceHandle_v7_t; /* the same type in every later version */
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;

/* net_v6.h */
typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
} ncclNetProperties_v6_t;

/* net_v7.h */
typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v7_t;

/* net_v8.h */
typedef struct {
	char *name;
	char *pciPath;
	uint64_t guid;
	int ptrSupport;
	int regIsGlobal;
	int speed;
	int port;
	float latency;
	int maxComms;
	int maxRecvs;
	ncclNetDeviceType netDeviceType;
	int netDeviceVersion;
} ncclNetProperties_v8_t;

/* net_v9.h to net_v12.h: the properties' fields up to the virtual NIC */
#define HN_PROPS_V9_HEAD                                                      \
	char *name;                                                           \
	char *pciPath;                                                        \
	uint64_t guid;                                                        \
	int ptrSupport;                                                       \
	int regIsGlobal;                                                      \
	int forceFlush;                                                       \
	int speed;                                                            \
	int port;                                                             \
	float latency;                                                        \
	int maxComms;                                                         \
	int maxRecvs;                                                         \
	ncclNetDeviceType netDeviceType;                                      \
	int netDeviceVersion

/* net_v9.h, net_v10.h, net_v11.h: 4 devices per virtual NIC */
#define NCCL_NET_MAX_DEVS_PER_NIC_V9 4
typedef struct {
	int ndevs;
	int devs[NCCL_NET_MAX_DEVS_PER_NIC_V9];
} ncclNetVDeviceProps_v9_t;

/* net_v9.h; net_v10.h's ncclNetProperties_v10_t is the same layout */
typedef struct {
	HN_PROPS_V9_HEAD;
	ncclNetVDeviceProps_v9_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
} ncclNetProperties_v9_t;
typedef ncclNetProperties_v9_t ncclNetProperties_v10_t;

/* net_v10.h: connect()'s per-communicator config (v11, v12 alike) */
typedef struct {
	int trafficClass;
} ncclNetCommConfig_v10_t;

/* net_v11.h */
typedef struct {
	HN_PROPS_V9_HEAD;
	ncclNetVDeviceProps_v9_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
	int maxMultiRequestSize;
} ncclNetProperties_v11_t;

/* net_v11.h: setNetAttr()'s argument (v12 alike); hop leaves it NULL */
typedef struct ncclNetAttr_v11 ncclNetAttr_v11_t;

/* net_v12.h: 8 devices per virtual NIC, rail and plane ids */
#define NCCL_NET_MAX_DEVS_PER_NIC_V12 8
#define NCCL_NET_ID_UNDEF -1
typedef struct {
	int ndevs;
	int devs[NCCL_NET_MAX_DEVS_PER_NIC_V12];
} ncclNetVDeviceProps_v12_t;

typedef struct {
	HN_PROPS_V9_HEAD;
	ncclNetVDeviceProps_v12_t vProps;
	size_t maxP2pBytes;
	size_t maxCollBytes;
	int maxMultiRequestSize;
	int16_t railId;
	int16_t planeId;
} ncclNetProperties_v12_t;

/*
 * The slots every version shares, after init, devices, getProperties,
 * listen, connect and accept (whose signatures differ): regMr's size is an
 * int before v8, isend/irecv sizes are size_t from v9 and carry a
 * profiler handle from v10.
 */
#define HN_NET_TAIL(regMrSize, dataSize, sendPh, recvPh)                        \
	ncclResult_t (*regMr)(void *comm, void *data, regMrSize size,         \
			      int type, void **mhandle);                      \
	ncclResult_t (*regMrDmaBuf)(void *comm, void *data, size_t size,      \
				    int type, uint64_t offset, int fd,        \
				    void **mhandle);                          \
	ncclResult_t (*deregMr)(void *comm, void *mhandle);                   \
	ncclResult_t (*isend)(void *sendComm, void *data, dataSize size,      \
			      int tag, void *mhandle, sendPh                  \
			      void **request);                                \
	ncclResult_t (*irecv)(void *recvComm, int n, void **data,             \
			      dataSize *sizes, int *tags, void **mhandles,    \
			      recvPh void **request);                         \
	ncclResult_t (*iflush)(void *recvComm, int n, void **data,            \
			       int *sizes, void **mhandles, void **request);  \
	ncclResult_t (*test)(void *request, int *done, int *sizes);           \
	ncclResult_t (*closeSend)(void *sendComm);                            \
	ncclResult_t (*closeRecv)(void *recvComm);                            \
	ncclResult_t (*closeListen)(void *listenComm)
/* v7 on, after closeListen: device offload (NCCL never calls them for
 * a HOST device) */
#define HN_NET_OFFLOAD                                                        \
	ncclResult_t (*getDeviceMr)(void *comm, void *mhandle,                \
				    void **dptr_mhandle);                     \
	ncclResult_t (*irecvConsumed)(void *recvComm, int n, void *request)
#define HN_NO_PHANDLE
#define HN_PHANDLE void *phandle,
#define HN_PHANDLES void **phandles,

/* net_v7.h to net_v9.h: the slots up to accept */
#define HN_NET_HEAD_V7(props_t)                                               \
	const char *name;                                                     \
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);                  \
	ncclResult_t (*devices)(int *ndev);                                   \
	ncclResult_t (*getProperties)(int dev, props_t *props);               \
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);     \
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm,       \
				ncclNetDeviceHandle_v7_t **sendDevComm);      \
	ncclResult_t (*accept)(void *listenComm, void **recvComm,             \
			       ncclNetDeviceHandle_v7_t **recvDevComm)

/* net_v6.h */
typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v6_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, void *handle, void **sendComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm);
	HN_NET_TAIL(int, int, HN_NO_PHANDLE, HN_NO_PHANDLE);
} ncclNet_v6_t;

/* net_v7.h */
typedef struct {
	HN_NET_HEAD_V7(ncclNetProperties_v7_t);
	HN_NET_TAIL(int, int, HN_NO_PHANDLE, HN_NO_PHANDLE);
	HN_NET_OFFLOAD;
} ncclNet_v7_t;

/* net_v8.h */
typedef struct {
	HN_NET_HEAD_V7(ncclNetProperties_v8_t);
	HN_NET_TAIL(size_t, int, HN_NO_PHANDLE, HN_NO_PHANDLE);
	HN_NET_OFFLOAD;
} ncclNet_v8_t;

/* net_v9.h */
typedef struct {
	HN_NET_HEAD_V7(ncclNetProperties_v9_t);
	HN_NET_TAIL(size_t, size_t, HN_NO_PHANDLE, HN_NO_PHANDLE);
	HN_NET_OFFLOAD;
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v9_t *props);
} ncclNet_v9_t;

/* net_v10.h */
typedef struct {
	const char *name;
	ncclResult_t (*init)(ncclDebugLogger_t logFunction,
			     ncclProfilerCallback_t profFunction);
	ncclResult_t (*devices)(int *ndev);
	ncclResult_t (*getProperties)(int dev, ncclNetProperties_v10_t *props);
	ncclResult_t (*listen)(int dev, void *handle, void **listenComm);
	ncclResult_t (*connect)(int dev, ncclNetCommConfig_v10_t *config,
				void *handle, void **sendComm,
				ncclNetDeviceHandle_v7_t **sendDevComm);
	ncclResult_t (*accept)(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v7_t **recvDevComm);
	HN_NET_TAIL(size_t, size_t, HN_PHANDLE, HN_PHANDLES);
	HN_NET_OFFLOAD;
	ncclResult_t (*makeVDevice)(int *d, ncclNetVDeviceProps_v9_t *props);
} ncclNet_v10_t;

/* net_v11.h and net_v12.h: init per communicator, with a context */
#define HN_NET_V11(props_t, vprops_t)                                         \
	const char *name;                                                     \
	ncclResult_t (*init)(void **ctx, uint64_t commId,                     \
			     ncclNetCommConfig_v10_t *config,                 \
			     ncclDebugLogger_t logFunction,                   \
			     ncclProfilerCallback_t profFunction);            \
	ncclResult_t (*devices)(int *ndev);                                   \
	ncclResult_t (*getProperties)(int dev, props_t *props);               \
	ncclResult_t (*listen)(void *ctx, int dev, void *handle,              \
			       void **listenComm);                            \
	ncclResult_t (*connect)(void *ctx, int dev, void *handle,             \
				void **sendComm,                              \
				ncclNetDeviceHandle_v7_t **sendDevComm);      \
	ncclResult_t (*accept)(void *listenComm, void **recvComm,             \
			       ncclNetDeviceHandle_v7_t **recvDevComm);       \
	HN_NET_TAIL(size_t, size_t, HN_PHANDLE, HN_PHANDLES);                              \
	HN_NET_OFFLOAD;                                                       \
	ncclResult_t (*makeVDevice)(int *d, vprops_t *props);                 \
	ncclResult_t (*finalize)(void *ctx);                                  \
	ncclResult_t (*setNetAttr)(void *ctx, ncclNetAttr_v11_t *netAttr)

typedef struct {
	HN_NET_V11(ncclNetProperties_v11_t, ncclNetVDeviceProps_v9_t);
} ncclNet_v11_t;

typedef struct {
	HN_NET_V11(ncclNetProperties_v12_t, ncclNetVDeviceProps_v12_t);
} ncclNet_v12_t;

#endif /* HOP_NCCL_NET_H */
