/*
 * versions.c - the harness drives the table of one plugin version
 * (--net-version N, ncclNetPlugin_vN) through that version's own struct
 * layouts and signatures, as NCCL's loader for N does: a shim per slot
 * that differs from v8's converts, and the rest of the harness calls the
 * v8-shaped table h->net. v8's is the plugin's own table.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

static ncclNet_v6_t *t6;
static ncclNet_v7_t *t7;
static ncclNet_v9_t *t9;
static ncclNet_v10_t *t10;
static ncclNet_v11_t *t11; /* v12 too: only the properties differ */
static int version;
static void *ctx;          /* v11 on: what init returned */
static ncclNetCommConfig_v10_t config = { .trafficClass = -1 };
static ncclNet_v8_t shim;

/* The slots v6 to v12 declare alike. */
#define SAME_SLOTS(dst, src)                                                  \
	do {                                                                  \
		(dst).regMrDmaBuf = (src)->regMrDmaBuf;                       \
		(dst).deregMr = (src)->deregMr;                               \
		(dst).iflush = (src)->iflush;                                 \
		(dst).test = (src)->test;                                     \
		(dst).closeSend = (src)->closeSend;                           \
		(dst).closeRecv = (src)->closeRecv;                           \
		(dst).closeListen = (src)->closeListen;                       \
	} while (0)

#define V8_PROPS_FROM(p, q)                                                   \
	do {                                                                  \
		memset((p), 0, sizeof(*(p)));                                 \
		(p)->name = (q).name;                                         \
		(p)->pciPath = (q).pciPath;                                   \
		(p)->guid = (q).guid;                                         \
		(p)->ptrSupport = (q).ptrSupport;                             \
		(p)->speed = (q).speed;                                       \
		(p)->port = (q).port;                                         \
		(p)->latency = (q).latency;                                   \
		(p)->maxComms = (q).maxComms;                                 \
		(p)->maxRecvs = (q).maxRecvs;                                 \
	} while (0)
#define V8_DEVICE_FROM(p, q)                                                  \
	do {                                                                  \
		(p)->netDeviceType = (q).netDeviceType;                       \
		(p)->netDeviceVersion = (q).netDeviceVersion;                 \
	} while (0)

/* v9 to v11 properties: the same head as v12's, a smaller vProps */
#define V12_FROM_V9(full, p)                                                  \
	do {                                                                  \
		memcpy((full), &(p), offsetof(ncclNetProperties_v12_t, vProps)); \
		(full)->vProps.ndevs = (p).vProps.ndevs;                      \
		memcpy((full)->vProps.devs, (p).vProps.devs,                  \
		       sizeof((p).vProps.devs));                              \
		(full)->maxP2pBytes = (p).maxP2pBytes;                        \
		(full)->maxCollBytes = (p).maxCollBytes;                      \
	} while (0)

/* getProperties(dev, NULL) through the version's own slot */
static ncclResult_t props_null(int dev)
{
	switch (version) {
	case 6:
		return t6->getProperties(dev, NULL);
	case 7:
		return t7->getProperties(dev, NULL);
	case 8:
		return shim.getProperties(dev, NULL);
	case 9:
		return t9->getProperties(dev, NULL);
	case 10:
		return t10->getProperties(dev, NULL);
	default:
		return t11->getProperties(dev, NULL);
	}
}

int version_props(int dev, ncclNetProperties_v12_t *full)
{
	ncclResult_t r;

	if (!full)
		return props_null(dev);
	memset(full, 0xff, sizeof(*full)); /* fields a version lacks: -1 */
	switch (version) {
	case 6: {
		ncclNetProperties_v6_t p;

		if ((r = t6->getProperties(dev, &p)))
			return r;
		V8_PROPS_FROM(full, p);
		full->netDeviceType = NCCL_NET_DEVICE_HOST;
		return ncclSuccess;
	}
	case 7: {
		ncclNetProperties_v7_t p;

		if ((r = t7->getProperties(dev, &p)))
			return r;
		V8_PROPS_FROM(full, p);
		V8_DEVICE_FROM(full, p);
		return ncclSuccess;
	}
	case 8: {
		ncclNetProperties_v8_t p;

		if ((r = shim.getProperties(dev, &p)))
			return r;
		V8_PROPS_FROM(full, p);
		V8_DEVICE_FROM(full, p);
		full->regIsGlobal = p.regIsGlobal;
		return ncclSuccess;
	}
	case 9:
	case 10: {
		ncclNetProperties_v9_t p;

		if ((r = t9 ? t9->getProperties(dev, &p)
			    : t10->getProperties(dev, &p)))
			return r;
		V12_FROM_V9(full, p);
		return ncclSuccess;
	}
	case 11: {
		ncclNetProperties_v11_t p;

		if ((r = t11->getProperties(dev, &p)))
			return r;
		V12_FROM_V9(full, p);
		full->maxMultiRequestSize = p.maxMultiRequestSize;
		return ncclSuccess;
	}
	default: /* 12: the superset itself */
		return ((ncclNet_v12_t *)t11)->getProperties(dev, full);
	}
}

static ncclResult_t props_shim(int dev, ncclNetProperties_v8_t *props)
{
	ncclNetProperties_v12_t full;
	ncclResult_t r;

	if ((r = version_props(dev, props ? &full : NULL)))
		return r;
	V8_PROPS_FROM(props, full);
	V8_DEVICE_FROM(props, full);
	props->regIsGlobal = version >= 8 ? full.regIsGlobal : 0;
	return ncclSuccess;
}

static ncclResult_t init_shim(ncclDebugLogger_t log)
{
	if (version == 10)
		return t10->init(log, NULL);
	return t11->init(&ctx, 0x686f70, &config, log, NULL);
}

static ncclResult_t listen_shim(int dev, void *handle, void **listenComm)
{
	return t11->listen(ctx, dev, handle, listenComm);
}

static ncclResult_t connect_shim(int dev, void *handle, void **sendComm,
				 ncclNetDeviceHandle_v7_t **devComm)
{
	switch (version) {
	case 6:
		return t6->connect(dev, handle, sendComm);
	case 10:
		return t10->connect(dev, &config, handle, sendComm, devComm);
	default:
		return t11->connect(ctx, dev, handle, sendComm, devComm);
	}
}

static ncclResult_t accept_v6(void *listenComm, void **recvComm,
			      ncclNetDeviceHandle_v7_t **devComm)
{
	(void)devComm;
	return t6->accept(listenComm, recvComm);
}

static ncclResult_t regMr_int(void *comm, void *data, size_t size, int type,
			      void **mhandle)
{
	if (size > INT_MAX) {
		fprintf(stderr, "nccl_net_test: a v%d regMr of %zu B does not "
			"fit its int size\n", version, size);
		return ncclInternalError;
	}
	return (version == 6 ? t6->regMr : t7->regMr)(comm, data, (int)size,
						       type, mhandle);
}

static ncclResult_t isend_wide(void *sendComm, void *data, int size, int tag,
			       void *mhandle, void **request)
{
	/* a negative size wraps as NCCL's own cast would: the plugin
	 * must refuse the result */
	if (version == 9)
		return t9->isend(sendComm, data, (size_t)size, tag, mhandle,
				 request);
	return (version == 10 ? t10->isend : t11->isend)(
		sendComm, data, (size_t)size, tag, mhandle, NULL, request);
}

static ncclResult_t irecv_wide(void *recvComm, int n, void **data,
			       int *sizes, int *tags, void **mhandles,
			       void **request)
{
	size_t wide[MAX_GROUP];
	int k = sizes ? (n < 0 ? 0 : n > MAX_GROUP ? MAX_GROUP : n) : 0;

	for (int i = 0; i < k; i++)
		wide[i] = (size_t)sizes[i];
	if (version == 9)
		return t9->irecv(recvComm, n, data, sizes ? wide : NULL, tags,
				 mhandles, request);
	return (version == 10 ? t10->irecv : t11->irecv)(
		recvComm, n, data, sizes ? wide : NULL, tags, mhandles, NULL,
		request);
}

/* The v8-shaped table for @v; 0, or -1 when the symbol is missing. */
int version_load(struct harness *h, void *dl, int v)
{
	char sym[32];
	void *t;

	snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
	if (!(t = dlsym(dl, sym)))
		FAIL("%s has no %s: %s", h->o.plugin, sym, dlerror());
	version = v;
	ctx = NULL;
	t6 = t;
	t7 = t;
	t9 = v == 9 ? t : NULL;
	t10 = v == 10 ? t : NULL;
	t11 = t;
	if (v == 8) {
		h->net = t;
		shim = *h->net;
		return 0;
	}
	/* any other version: the slots whose signature differs from v8's go
	 * through a shim converting as NCCL's loader for that version does */
	memset(&shim, 0, sizeof(shim));
	shim.name = t6->name;
	shim.getProperties = props_shim;
	if (v == 6) {
		shim.init = t6->init;
		shim.devices = t6->devices;
		shim.listen = t6->listen;
		shim.connect = connect_shim;
		shim.accept = accept_v6;
		shim.regMr = regMr_int;
		shim.isend = t6->isend;
		shim.irecv = t6->irecv;
		SAME_SLOTS(shim, t6);
	} else if (v == 7) {
		shim.init = t7->init;
		shim.devices = t7->devices;
		shim.listen = t7->listen;
		shim.connect = t7->connect;
		shim.accept = t7->accept;
		shim.regMr = regMr_int;
		shim.isend = t7->isend;
		shim.irecv = t7->irecv;
		SAME_SLOTS(shim, t7);
		shim.getDeviceMr = t7->getDeviceMr;
		shim.irecvConsumed = t7->irecvConsumed;
	} else {
		/* v9 to v12 share the slots read here, at the same offsets */
		ncclNet_v9_t *n = t;

		shim.init = v == 9 ? n->init : init_shim;
		shim.devices = n->devices;
		shim.listen = v <= 10 ? n->listen : listen_shim;
		shim.connect = v == 9 ? n->connect : connect_shim;
		shim.accept = n->accept;
		shim.regMr = n->regMr;
		shim.isend = isend_wide;
		shim.irecv = irecv_wide;
		SAME_SLOTS(shim, n);
		shim.getDeviceMr = n->getDeviceMr;
		shim.irecvConsumed = n->irecvConsumed;
	}
	h->net = &shim;
	return 0;
}

/* v11 on: NCCL ends each init with finalize(ctx). */
int version_finalize(struct harness *h)
{
	(void)h;
	if (version >= 11)
		CHECK_RES(t11->finalize(ctx));
	return 0;
}
