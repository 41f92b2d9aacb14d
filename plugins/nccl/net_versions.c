/*
 * net_versions.c - the plugin tables NCCL looks up, ncclNetPlugin_v6 to
 * ncclNetPlugin_v12, each a thin adapter over the one implementation
 * (net_init.c, net_conn.c, net_xfer.c): NCCL takes the newest its loader
 * knows, so one library serves every NCCL from 2.13 on (docs/nccl.md).
 *
 * What differs between versions: the properties struct; int sizes before
 * v8 (regMr) and v9 (isend/irecv); a device-offload handle from v7 (NCCL
 * asks for none from a HOST device); a profiler callback and handles from
 * v10; from v11 an init per communicator returning a context, passed to
 * listen and connect and ended by finalize.
 */
#include <string.h>

#include "net_hop.h"

/*
 * getProperties of version @ver: the fields every version has, then
 * @extra, statements filling what @ver adds (p: the version's struct,
 * s: struct hn_props, dev: the device).
 */
#define HN_GET_PROPERTIES(ver, extra)                                         \
	static ncclResult_t getProperties_##ver(int dev,                      \
						ncclNetProperties_##ver##_t *p) \
	{                                                                     \
		struct hn_props s;                                            \
		ncclResult_t r = hn_getProperties(dev, p ? &s : NULL);        \
                                                                              \
		if (r)                                                        \
			return r;                                             \
		memset(p, 0, sizeof(*p));                                     \
		p->name = s.name;                                             \
		p->pciPath = s.pciPath;                                       \
		p->guid = s.guid;                                             \
		p->ptrSupport = s.ptrSupport;                                 \
		p->speed = s.speed;                                           \
		p->port = s.port;                                             \
		p->latency = s.latency;                                       \
		p->maxComms = s.maxComms;                                     \
		p->maxRecvs = s.maxRecvs;                                     \
		extra                                                         \
		return ncclSuccess;                                           \
	}

#define HN_HOST_DEVICE                                                        \
	p->netDeviceType = NCCL_NET_DEVICE_HOST;                              \
	p->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
/* v9 on: the device is its own single-member virtual NIC; no flush */
#define HN_V9_FIELDS                                                          \
	HN_HOST_DEVICE                                                        \
	p->regIsGlobal = 0;                                                   \
	p->forceFlush = 0;                                                    \
	p->vProps.ndevs = 1;                                                  \
	p->vProps.devs[0] = dev;                                              \
	p->maxP2pBytes = s.maxP2pBytes;                                       \
	p->maxCollBytes = s.maxP2pBytes;

HN_GET_PROPERTIES(v6, (void)dev;)
HN_GET_PROPERTIES(v7, (void)dev; HN_HOST_DEVICE)
HN_GET_PROPERTIES(v8, (void)dev; HN_HOST_DEVICE p->regIsGlobal = 0;)
HN_GET_PROPERTIES(v9, HN_V9_FIELDS)
HN_GET_PROPERTIES(v11, HN_V9_FIELDS p->maxMultiRequestSize = 1;)
HN_GET_PROPERTIES(v12, HN_V9_FIELDS p->maxMultiRequestSize = 1;
		  p->railId = NCCL_NET_ID_UNDEF;
		  p->planeId = NCCL_NET_ID_UNDEF;)

/* An int size of an older version; negative ones are NCCL's mistake. */
static int size_ok(const char *call, int i, int size)
{
	if (size >= 0)
		return 1;
	HN_WARN("%s: buffer %d: size %d is negative", call, i, size);
	return 0;
}

static ncclResult_t regMr_int(void *comm, void *data, int size, int type,
			      void **mhandle)
{
	if (!size_ok("regMr", 0, size))
		return ncclInternalError;
	return hn_regMr(comm, data, (size_t)size, type, mhandle);
}

static ncclResult_t isend_int(void *sendComm, void *data, int size, int tag,
			      void *mhandle, void **request)
{
	if (request)
		*request = NULL;
	if (!size_ok("isend", 0, size))
		return ncclInternalError;
	return hn_isend(sendComm, data, (size_t)size, tag, mhandle, request);
}

static ncclResult_t irecv_int(void *recvComm, int n, void **data, int *sizes,
			      int *tags, void **mhandles, void **request)
{
	size_t wide[HN_MAX_RECVS];
	int ok = sizes && n >= 1 && n <= HN_MAX_RECVS;

	if (request)
		*request = NULL;
	for (int i = 0; ok && i < n; i++) {
		if (!size_ok("irecv", i, sizes[i]))
			return ncclInternalError;
		wide[i] = (size_t)sizes[i];
	}
	/* a bad n or NULL sizes: hn_irecv says what is wrong */
	return hn_irecv(recvComm, n, data, ok ? wide : NULL, tags, mhandles,
			request);
}

static ncclResult_t isend_ph(void *sendComm, void *data, size_t size, int tag,
			     void *mhandle, void *phandle, void **request)
{
	(void)phandle; /* the profiler's: the plugin reports no events */
	return hn_isend(sendComm, data, size, tag, mhandle, request);
}

static ncclResult_t irecv_ph(void *recvComm, int n, void **data, size_t *sizes,
			     int *tags, void **mhandles, void **phandles,
			     void **request)
{
	(void)phandles;
	return hn_irecv(recvComm, n, data, sizes, tags, mhandles, request);
}

static ncclResult_t irecv_wide(void *recvComm, int n, void **data,
			       size_t *sizes, int *tags, void **mhandles,
			       void **request)
{
	return hn_irecv(recvComm, n, data, sizes, tags, mhandles, request);
}

/* v7 on: the offload handles stay untouched (a HOST device offloads
 * nothing, and NCCL asks for nothing). */
static ncclResult_t connect_dev(int dev, void *handle, void **sendComm,
				ncclNetDeviceHandle_v7_t **sendDevComm)
{
	(void)sendDevComm;
	return hn_connect(dev, handle, sendComm);
}

static ncclResult_t accept_dev(void *listenComm, void **recvComm,
			       ncclNetDeviceHandle_v7_t **recvDevComm)
{
	(void)recvDevComm;
	return hn_accept(listenComm, recvComm);
}

static ncclResult_t connect_v10(int dev, ncclNetCommConfig_v10_t *config,
				void *handle, void **sendComm,
				ncclNetDeviceHandle_v7_t **sendDevComm)
{
	(void)config; /* a traffic class: hop's providers have none to set */
	return connect_dev(dev, handle, sendComm, sendDevComm);
}

static ncclResult_t init_v10(ncclDebugLogger_t logFunction,
			     ncclProfilerCallback_t profFunction)
{
	(void)profFunction;
	return hn_init(logFunction);
}

/* v11 on: one context per NCCL communicator; the plugin needs no state
 * of its own per communicator, so every context is the same token. */
static char ctx_token;

static ncclResult_t init_v11(void **ctx, uint64_t commId,
			     ncclNetCommConfig_v10_t *config,
			     ncclDebugLogger_t logFunction,
			     ncclProfilerCallback_t profFunction)
{
	(void)commId, (void)config, (void)profFunction;
	if (!ctx) {
		HN_WARN("init: ctx is NULL");
		return ncclInternalError;
	}
	*ctx = &ctx_token;
	return hn_init(logFunction);
}

static int ctx_ok(const char *call, void *ctx)
{
	if (ctx == &ctx_token)
		return 1;
	HN_WARN("%s: ctx %p is not one init() returned", call, ctx);
	return 0;
}

static ncclResult_t finalize_v11(void *ctx)
{
	return ctx_ok("finalize", ctx) ? ncclSuccess : ncclInternalError;
}

static ncclResult_t listen_v11(void *ctx, int dev, void *handle,
			       void **listenComm)
{
	if (!ctx_ok("listen", ctx))
		return ncclInternalError;
	return hn_listen(dev, handle, listenComm);
}

static ncclResult_t connect_v11(void *ctx, int dev, void *handle,
				void **sendComm,
				ncclNetDeviceHandle_v7_t **sendDevComm)
{
	if (!ctx_ok("connect", ctx))
		return ncclInternalError;
	return connect_dev(dev, handle, sendComm, sendDevComm);
}

/* The slots with one signature in every version. */
#define HN_COMMON_SLOTS                                                       \
	.name = "hop", .devices = hn_devices,                                 \
	.regMrDmaBuf = hn_regMrDmaBuf, .deregMr = hn_deregMr,                 \
	.iflush = hn_iflush, .test = hn_test, .closeSend = hn_closeSend,      \
	.closeRecv = hn_closeRecv, .closeListen = hn_closeListen
#define HN_OFFLOAD_SLOTS                                                      \
	.getDeviceMr = hn_getDeviceMr, .irecvConsumed = hn_irecvConsumed
/* makeVDevice and setNetAttr stay NULL: NCCL then uses the physical
 * devices as they are and sets no attributes. */

/* Not const: NCCL's loaders take them as writable pointers. */
#define HN_EXPORT __attribute__((visibility("default")))

HN_EXPORT ncclNet_v6_t ncclNetPlugin_v6 = {
	HN_COMMON_SLOTS, .init = hn_init, .getProperties = getProperties_v6,
	.listen = hn_listen, .connect = hn_connect, .accept = hn_accept,
	.regMr = regMr_int, .isend = isend_int, .irecv = irecv_int,
};

HN_EXPORT ncclNet_v7_t ncclNetPlugin_v7 = {
	HN_COMMON_SLOTS, HN_OFFLOAD_SLOTS, .init = hn_init,
	.getProperties = getProperties_v7, .listen = hn_listen,
	.connect = connect_dev, .accept = accept_dev, .regMr = regMr_int,
	.isend = isend_int, .irecv = irecv_int,
};

HN_EXPORT ncclNet_v8_t ncclNetPlugin_v8 = {
	HN_COMMON_SLOTS, HN_OFFLOAD_SLOTS, .init = hn_init,
	.getProperties = getProperties_v8, .listen = hn_listen,
	.connect = connect_dev, .accept = accept_dev, .regMr = hn_regMr,
	.isend = isend_int, .irecv = irecv_int,
};

HN_EXPORT ncclNet_v9_t ncclNetPlugin_v9 = {
	HN_COMMON_SLOTS, HN_OFFLOAD_SLOTS, .init = hn_init,
	.getProperties = getProperties_v9, .listen = hn_listen,
	.connect = connect_dev, .accept = accept_dev, .regMr = hn_regMr,
	.isend = hn_isend, .irecv = irecv_wide,
};

HN_EXPORT ncclNet_v10_t ncclNetPlugin_v10 = {
	HN_COMMON_SLOTS, HN_OFFLOAD_SLOTS, .init = init_v10,
	.getProperties = getProperties_v9, .listen = hn_listen,
	.connect = connect_v10, .accept = accept_dev, .regMr = hn_regMr,
	.isend = isend_ph, .irecv = irecv_ph,
};

/* v11 and v12 differ in their properties only */
#define HN_V11_SLOTS(getProperties_fn)                                        \
	HN_COMMON_SLOTS, HN_OFFLOAD_SLOTS, .init = init_v11,                  \
	.getProperties = getProperties_fn, .listen = listen_v11,              \
	.connect = connect_v11, .accept = accept_dev, .regMr = hn_regMr,      \
	.isend = isend_ph, .irecv = irecv_ph, .finalize = finalize_v11

HN_EXPORT ncclNet_v11_t ncclNetPlugin_v11 = { HN_V11_SLOTS(getProperties_v11) };

HN_EXPORT ncclNet_v12_t ncclNetPlugin_v12 = { HN_V11_SLOTS(getProperties_v12) };
