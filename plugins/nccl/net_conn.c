/*
 * net_conn.c - the NCCL net plugin's table (ncclNetPlugin_v8), its device,
 * and connection set-up: listen/connect/accept without blocking, each
 * connection a 2-rank hop communicator created on a background thread.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_hop.h"

static ncclDebugLogger_t hn_logger;

/* Connects in progress, found again by the handle NCCL passes each call. */
static struct hn_conn *pending;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

void hn_log(ncclDebugLogLevel level, const char *file, int line,
	    const char *fmt, ...)
{
	char msg[HN_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (hn_logger)
		hn_logger(level, NCCL_NET, file, line, "NET/hop: %s", msg);
	else if (level == NCCL_LOG_WARN)
		fprintf(stderr, "NET/hop: %s\n", msg);
}

ncclResult_t hn_result(int code)
{
	switch (code) {
	case HOP_SUCCESS:
		return ncclSuccess;
	case HOP_ERR_INVALID_ARG:
	case HOP_ERR_INVALID_HANDLE:
	case HOP_ERR_OUT_OF_BOUNDS:
		return ncclInvalidArgument;
	case HOP_ERR_PEER_FAILED:
	case HOP_ERR_TRUNCATED:
	case HOP_ERR_MISMATCH:
	case HOP_ERR_PROTOCOL:
	case HOP_ERR_AUTH:
		return ncclRemoteError;
	case HOP_ERR_NO_MEMORY:
	case HOP_ERR_NOT_SUPPORTED:
	case HOP_ERR_INTERNAL:
		return ncclInternalError;
	default: /* timeouts, transport, bootstrap, config, failed comm */
		return ncclSystemError;
	}
}

ncclResult_t hn_fail(struct hn_comm *c, const char *call, int ret)
{
	HN_WARN("%s: %s (%s)", call, hop_comm_last_error(c ? c->hc : NULL),
		hop_err_name(ret));
	return hn_result(ret);
}

struct hn_comm *hn_comm_new(hop_comm_t *hc, int send)
{
	struct hn_comm *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return NULL;
	c->magic = send ? HN_SEND_MAGIC : HN_RECV_MAGIC;
	c->hc = hc;
	c->peer = 1 - hop_comm_rank(hc);
	for (int i = 0; i < HN_MAX_REQS; i++)
		c->free_idx[c->nfree++] = HN_MAX_REQS - 1 - i;
	pthread_mutex_init(&c->lock, NULL);
	if ((ret = hop_irecv(hc, NULL, 0, c->peer, HN_IDLE_TAG, &c->idle))) {
		HN_WARN("posting the progress receive: %s",
			hop_comm_last_error(hc));
		goto err_free;
	}
	if (hn_drain_add(c))
		goto err_free;
	return c;
err_free:
	pthread_mutex_destroy(&c->lock);
	free(c);
	return NULL;
}

void hn_comm_free(struct hn_comm *c)
{
	int leaked = 0;

	while (c->mrs) {
		struct hn_mr *m = c->mrs;

		c->mrs = m->next;
		m->magic = 0;
		free(m);
		leaked++;
	}
	if (leaked)
		HN_INFO("close: freed %d registration(s) NCCL did not "
			"deregister", leaked);
	hn_drain_remove(c); /* the drainer no longer touches c */
	hop_comm_destroy(c->hc); /* cancels requests still running */
	pthread_mutex_destroy(&c->lock);
	c->magic = 0;
	free(c);
}

struct hn_comm *hn_comm_check(void *p, uint32_t magic)
{
	struct hn_comm *c = p;

	if (!c || (c->magic != HN_SEND_MAGIC && c->magic != HN_RECV_MAGIC))
		return NULL;
	return magic && c->magic != magic ? NULL : c;
}

static ncclResult_t hn_init(ncclDebugLogger_t logFunction)
{
	const char *t = getenv("HOP_TRANSPORT");

	hn_logger = logFunction;
	HN_INFO("hop %s, HOP_TRANSPORT=%s, host memory only", hop_version(),
		t && *t ? t : "auto");
	return ncclSuccess;
}

static ncclResult_t hn_devices(int *ndev)
{
	if (!ndev) {
		HN_WARN("devices: ndev is NULL");
		return ncclInvalidArgument;
	}
	*ndev = 1; /* hop picks the transport and device per connection */
	return ncclSuccess;
}

static ncclResult_t check_dev(const char *call, int dev)
{
	if (dev == 0)
		return ncclSuccess;
	HN_WARN("%s: device %d does not exist (the plugin has 1 device, 0)",
		call, dev);
	return ncclInvalidArgument;
}

static ncclResult_t hn_getProperties(int dev, ncclNetProperties_v8_t *props)
{
	static char name[] = "hop";

	if (check_dev("getProperties", dev))
		return ncclInvalidArgument;
	if (!props) {
		HN_WARN("getProperties: props is NULL");
		return ncclInvalidArgument;
	}
	memset(props, 0, sizeof(*props));
	props->name = name;
	props->pciPath = NULL;   /* not one NIC: NCCL places it by the CPU */
	props->guid = 0x686f70;  /* "hop" */
	props->ptrSupport = NCCL_PTR_HOST;
	props->regIsGlobal = 0;
	props->speed = 10000;    /* nominal (see docs/nccl.md) */
	props->port = 1;
	props->latency = 0;
	props->maxComms = 65536;
	props->maxRecvs = HN_MAX_RECVS;
	props->netDeviceType = NCCL_NET_DEVICE_HOST;
	props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
	return ncclSuccess;
}

static void *conn_main(void *arg)
{
	struct hn_conn *cn = arg;

	cn->ret = hop_comm_init_rank(&cn->comm, 2, cn->id, cn->rank);
	if (cn->ret)
		snprintf(cn->err, sizeof(cn->err), "%s", hop_last_init_error());
	atomic_store(&cn->finished, 1);
	return NULL;
}

static struct hn_conn *conn_start(const hop_unique_id_t *id, int rank,
				  const char *call)
{
	struct hn_conn *cn = calloc(1, sizeof(*cn));
	int e;

	if (!cn) {
		HN_WARN("%s: out of memory", call);
		return NULL;
	}
	cn->id = *id;
	cn->rank = rank;
	if ((e = pthread_create(&cn->thread, NULL, conn_main, cn))) {
		HN_WARN("%s: pthread_create: %s", call, strerror(e));
		free(cn);
		return NULL;
	}
	return cn;
}

/* Join @cn's thread; its comm, or NULL with the NCCL result in *@res. */
static hop_comm_t *conn_finish(struct hn_conn *cn, const char *call,
			       ncclResult_t *res)
{
	hop_comm_t *hc;

	/* the thread writes cn->comm: read it only once it has ended */
	pthread_join(cn->thread, NULL);
	hc = cn->comm;
	*res = hn_result(cn->ret);
	if (cn->ret)
		HN_WARN("%s: %s", call, cn->err);
	free(cn);
	return hc;
}

/* Wrap a finished connection's hop comm; NULL when out of memory. */
static struct hn_comm *conn_wrap(hop_comm_t *hc, int send, const char *call)
{
	struct hn_comm *c = hn_comm_new(hc, send);

	if (!c) {
		HN_WARN("%s: setting up the comm failed", call);
		hop_comm_destroy(hc);
		return NULL;
	}
	HN_INFO("%s: connected as rank %d over %s", call, hop_comm_rank(hc),
		hop_comm_transport(hc));
	return c;
}

struct hn_listen {
	uint32_t magic;
	struct hn_conn *conn; /* NULL once accepted */
};

static ncclResult_t hn_listen(int dev, void *handle, void **listenComm)
{
	struct hn_listen *l;
	hop_unique_id_t id;
	int ret;

	if (check_dev("listen", dev))
		return ncclInvalidArgument;
	if (!handle || !listenComm) {
		HN_WARN("listen: %s is NULL", handle ? "listenComm" : "handle");
		return ncclInvalidArgument;
	}
	*listenComm = NULL;
	if ((ret = hop_get_unique_id(&id))) {
		HN_WARN("listen: %s", hop_last_init_error());
		return hn_result(ret);
	}
	if (!(l = calloc(1, sizeof(*l)))) {
		HN_WARN("listen: out of memory");
		return ncclSystemError;
	}
	/* rank 0 starts now: the peer may connect before NCCL calls accept */
	if (!(l->conn = conn_start(&id, 0, "listen"))) {
		free(l);
		return ncclSystemError;
	}
	_Static_assert(sizeof(id) <= NCCL_NET_HANDLE_MAXSIZE,
		       "a hop unique id must fit NCCL's handle");
	memcpy(handle, &id, sizeof(id));
	l->magic = HN_LISTEN_MAGIC;
	*listenComm = l;
	return ncclSuccess;
}

/* The pending connect to @id, taken off the list when finished. */
static struct hn_conn *pending_find(const hop_unique_id_t *id, int *finished)
{
	struct hn_conn **pp, *cn = NULL;

	pthread_mutex_lock(&pending_lock);
	for (pp = &pending; *pp; pp = &(*pp)->next) {
		if (memcmp(&(*pp)->id, id, sizeof(*id)) == 0) {
			cn = *pp;
			*finished = atomic_load(&cn->finished);
			if (*finished)
				*pp = cn->next;
			break;
		}
	}
	pthread_mutex_unlock(&pending_lock);
	return cn;
}

static ncclResult_t hn_connect(int dev, void *handle, void **sendComm,
			       ncclNetDeviceHandle_v8_t **sendDevComm)
{
	struct hn_conn *cn;
	hop_unique_id_t id;
	hop_comm_t *hc;
	char hex[2 * HOP_UNIQUE_ID_BYTES + 1];
	ncclResult_t res;
	int finished = 0;

	(void)sendDevComm; /* host device: NCCL asks for no offload */
	if (check_dev("connect", dev))
		return ncclInvalidArgument;
	if (!handle || !sendComm) {
		HN_WARN("connect: %s is NULL", handle ? "sendComm" : "handle");
		return ncclInvalidArgument;
	}
	*sendComm = NULL;
	memcpy(&id, handle, sizeof(id));
	if (!(cn = pending_find(&id, &finished))) {
		/* a round trip through the string form checks the checksum */
		hop_unique_id_to_string(&id, hex, sizeof(hex));
		if (hop_unique_id_from_string(hex, &id)) {
			HN_WARN("connect: the handle is not one listen() made "
				"(bad magic or checksum)");
			return ncclInvalidArgument;
		}
		if (!(cn = conn_start(&id, 1, "connect")))
			return ncclSystemError;
		pthread_mutex_lock(&pending_lock);
		cn->next = pending;
		pending = cn;
		pthread_mutex_unlock(&pending_lock);
		return ncclSuccess;
	}
	if (!finished)
		return ncclSuccess;
	if (!(hc = conn_finish(cn, "connect", &res)))
		return res;
	*sendComm = conn_wrap(hc, 1, "connect");
	return *sendComm ? ncclSuccess : ncclSystemError;
}

static struct hn_listen *listen_check(void *p, const char *call)
{
	struct hn_listen *l = p;

	if (!l || l->magic != HN_LISTEN_MAGIC) {
		HN_WARN("%s: listenComm is %s", call,
			l ? "not a live listen comm" : "NULL");
		return NULL;
	}
	return l;
}

static ncclResult_t hn_accept(void *listenComm, void **recvComm,
			      ncclNetDeviceHandle_v8_t **recvDevComm)
{
	struct hn_listen *l = listen_check(listenComm, "accept");
	hop_comm_t *hc;
	ncclResult_t res;

	(void)recvDevComm;
	if (!l)
		return ncclInvalidArgument;
	if (!recvComm) {
		HN_WARN("accept: recvComm is NULL");
		return ncclInvalidArgument;
	}
	*recvComm = NULL;
	if (!l->conn) {
		HN_WARN("accept: this listen comm already accepted its "
			"connection (one per listen)");
		return ncclInvalidUsage;
	}
	if (!atomic_load(&l->conn->finished))
		return ncclSuccess;
	hc = conn_finish(l->conn, "accept", &res);
	l->conn = NULL;
	if (!hc)
		return res;
	*recvComm = conn_wrap(hc, 0, "accept");
	return *recvComm ? ncclSuccess : ncclSystemError;
}

static ncclResult_t close_comm(void *p, uint32_t magic, const char *call)
{
	struct hn_comm *c = hn_comm_check(p, magic);

	if (!c) {
		HN_WARN("%s: not a live %s comm", call,
			magic == HN_SEND_MAGIC ? "send" : "receive");
		return ncclInvalidArgument;
	}
	hn_comm_free(c);
	return ncclSuccess;
}

static ncclResult_t hn_closeSend(void *sendComm)
{
	return close_comm(sendComm, HN_SEND_MAGIC, "closeSend");
}

static ncclResult_t hn_closeRecv(void *recvComm)
{
	return close_comm(recvComm, HN_RECV_MAGIC, "closeRecv");
}

static ncclResult_t hn_closeListen(void *listenComm)
{
	struct hn_listen *l = listen_check(listenComm, "closeListen");
	ncclResult_t res;

	if (!l)
		return ncclInvalidArgument;
	/* never accepted: wait for rank 0's join (bounded by HOP_TIMEOUT) */
	if (l->conn)
		hop_comm_destroy(conn_finish(l->conn, "closeListen", &res));
	l->magic = 0;
	free(l);
	return ncclSuccess;
}

/* Unload: connects NCCL abandoned still own a thread and maybe a comm. */
__attribute__((destructor)) static void hn_fini(void)
{
	ncclResult_t res;

	pthread_mutex_lock(&pending_lock);
	while (pending) {
		struct hn_conn *cn = pending;

		pending = cn->next;
		hop_comm_destroy(conn_finish(cn, "unload", &res));
	}
	pthread_mutex_unlock(&pending_lock);
	hn_drain_fini();
}

/* Not const: NCCL's loaders take it as a writable ncclNet_v8_t *. */
__attribute__((visibility("default"))) ncclNet_v8_t ncclNetPlugin_v8 = {
	.name = "hop",
	.init = hn_init,
	.devices = hn_devices,
	.getProperties = hn_getProperties,
	.listen = hn_listen,
	.connect = hn_connect,
	.accept = hn_accept,
	.regMr = hn_regMr,
	.regMrDmaBuf = hn_regMrDmaBuf,
	.deregMr = hn_deregMr,
	.isend = hn_isend,
	.irecv = hn_irecv,
	.iflush = hn_iflush,
	.test = hn_test,
	.closeSend = hn_closeSend,
	.closeRecv = hn_closeRecv,
	.closeListen = hn_closeListen,
	.getDeviceMr = hn_getDeviceMr,
	.irecvConsumed = hn_irecvConsumed,
};
