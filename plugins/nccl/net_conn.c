/*
 * net_conn.c - connection set-up and teardown of the NCCL net plugin:
 * listen/connect/accept without blocking, each connection a 2-rank hop
 * communicator created on a background thread; close calls that return
 * promptly whatever state the set-up is in.
 *
 * A connection's communicator runs on the device NCCL chose for it
 * (hn_dev_settings()).
 *
 * A set-up thread runs code of this plugin until hop_comm_init_rank_with()
 * returns (at worst after HOP_TIMEOUT), so it holds a dlopen reference to
 * the plugin, dropped when NCCL collects the result. A connect NCCL
 * abandons keeps the plugin mapped after NCCL's dlclose instead of holding
 * dlclose (or exit) until the thread ends; when the destructor runs while
 * such a thread is still out, the process is exiting and it is left to
 * exit with the process.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net_hop.h"

/* Connects in progress, found again by the handle NCCL passes each call. */
static struct hn_conn *pending;
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;

/* How long closeListen waits for its own rank 1 before leaving it. */
#define CLOSE_GRACE_NS 2000000000ull

static void *conn_main(void *arg)
{
	struct hn_conn *cn = arg;

	cn->ret = hop_comm_init_rank_with(&cn->comm, 2, cn->id, cn->rank,
					  cn->settings);
	if (cn->ret)
		snprintf(cn->err, sizeof(cn->err), "%s", hop_last_init_error());
	atomic_store(&cn->finished, 1);
	return NULL;
}

/* A reference keeping this plugin mapped while a set-up thread runs. */
static void *plugin_ref(void)
{
	Dl_info info;

	if (!dladdr((void *)conn_main, &info) || !info.dli_fname)
		return NULL;
	return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
}

static struct hn_conn *conn_start(const hop_unique_id_t *id, int rank,
				  const char *const *settings,
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
	cn->settings = settings;
	cn->lib = plugin_ref();
	if ((e = pthread_create(&cn->thread, NULL, conn_main, cn))) {
		HN_WARN("%s: pthread_create: %s", call, strerror(e));
		if (cn->lib)
			dlclose(cn->lib);
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
	if (cn->lib) /* NCCL's own reference keeps the plugin mapped */
		dlclose(cn->lib);
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

static void pending_push(struct hn_conn *cn)
{
	pthread_mutex_lock(&pending_lock);
	cn->next = pending;
	pending = cn;
	pthread_mutex_unlock(&pending_lock);
}

/* The pending connect to @id, taken off the list when finished. */
static struct hn_conn *pending_find(const hop_unique_id_t *id, int *finished)
{
	struct hn_conn **pp, *cn = NULL;

	pthread_mutex_lock(&pending_lock);
	for (pp = &pending; *pp; pp = &(*pp)->next) {
		if (!(*pp)->orphan &&
		    memcmp(&(*pp)->id, id, sizeof(*id)) == 0) {
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

struct hn_listen {
	uint32_t magic;
	struct hn_conn *conn; /* NULL once accepted */
};

ncclResult_t hn_listen(int dev, void *handle, void **listenComm)
{
	struct hn_listen *l;
	hop_unique_id_t id;
	int ret;

	if (hn_check_dev("listen", dev))
		return ncclInternalError;
	if (!handle || !listenComm) {
		HN_WARN("listen: %s is NULL", handle ? "listenComm" : "handle");
		return ncclInternalError;
	}
	*listenComm = NULL;
	if ((ret = hop_get_unique_id_with(&id, hn_dev_settings(dev)))) {
		HN_WARN("listen: %s", hop_last_init_error());
		return hn_result(ret);
	}
	if (!(l = calloc(1, sizeof(*l)))) {
		HN_WARN("listen: out of memory");
		return ncclSystemError;
	}
	/* rank 0 starts now: the peer may connect before NCCL calls accept */
	if (!(l->conn = conn_start(&id, 0, hn_dev_settings(dev), "listen"))) {
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

ncclResult_t hn_connect(int dev, void *handle, void **sendComm)
{
	struct hn_conn *cn;
	hop_unique_id_t id;
	hop_comm_t *hc;
	char hex[2 * HOP_UNIQUE_ID_BYTES + 1];
	ncclResult_t res;
	int finished = 0;

	if (hn_check_dev("connect", dev))
		return ncclInternalError;
	if (!handle || !sendComm) {
		HN_WARN("connect: %s is NULL", handle ? "sendComm" : "handle");
		return ncclInternalError;
	}
	*sendComm = NULL;
	memcpy(&id, handle, sizeof(id));
	if (!(cn = pending_find(&id, &finished))) {
		/* a round trip through the string form checks the checksum */
		hop_unique_id_to_string(&id, hex, sizeof(hex));
		if (hop_unique_id_from_string(hex, &id)) {
			HN_WARN("connect: the handle is not one listen() made "
				"(bad magic or checksum)");
			return ncclInternalError;
		}
		if (!(cn = conn_start(&id, 1, hn_dev_settings(dev),
					"connect")))
			return ncclSystemError;
		pending_push(cn);
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

ncclResult_t hn_accept(void *listenComm, void **recvComm)
{
	struct hn_listen *l = listen_check(listenComm, "accept");
	hop_comm_t *hc;
	ncclResult_t res;

	if (!l)
		return ncclInternalError;
	if (!recvComm) {
		HN_WARN("accept: recvComm is NULL");
		return ncclInternalError;
	}
	*recvComm = NULL;
	if (!l->conn) {
		HN_WARN("accept: this listen comm already accepted its "
			"connection (one per listen)");
		return ncclInternalError;
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
		return ncclInternalError;
	}
	hn_comm_free(c);
	return ncclSuccess;
}

ncclResult_t hn_closeSend(void *sendComm)
{
	return close_comm(sendComm, HN_SEND_MAGIC, "closeSend");
}

ncclResult_t hn_closeRecv(void *recvComm)
{
	return close_comm(recvComm, HN_RECV_MAGIC, "closeRecv");
}

static int wait_finished(struct hn_conn *cn, uint64_t ns)
{
	uint64_t end = hn_now_ns() + ns;

	while (!atomic_load(&cn->finished) && hn_now_ns() < end) {
		struct timespec ms = { 0, 1000000 };

		nanosleep(&ms, NULL);
	}
	return atomic_load(&cn->finished);
}

/*
 * A listen nobody connected to: its rank 0 waits for a rank 1 until
 * HOP_TIMEOUT, and hop has no way to call that off. This process
 * therefore joins as rank 1 itself, which completes the set-up at once,
 * and destroys both ends. Should the real peer have got in first, rank 1
 * of this process finds the rendezvous closed; it is then left to the
 * unload (CLOSE_GRACE_NS) rather than waited for.
 */
static void close_unaccepted(struct hn_conn *rank0)
{
	struct hn_conn *self = NULL;
	ncclResult_t res;

	if (!atomic_load(&rank0->finished))
		self = conn_start(&rank0->id, 1, rank0->settings,
				  "closeListen");
	hop_comm_destroy(conn_finish(rank0, "closeListen", &res));
	if (!self)
		return;
	if (wait_finished(self, CLOSE_GRACE_NS)) {
		hop_comm_destroy(conn_finish(self, "closeListen", &res));
		return;
	}
	HN_INFO("closeListen: the peer took the connection first; the "
		"plugin's own rank 1 ends with its HOP_TIMEOUT");
	self->orphan = 1;
	pending_push(self);
}

ncclResult_t hn_closeListen(void *listenComm)
{
	struct hn_listen *l = listen_check(listenComm, "closeListen");

	if (!l)
		return ncclInternalError;
	if (l->conn)
		close_unaccepted(l->conn);
	l->magic = 0;
	free(l);
	return ncclSuccess;
}

/*
 * Unload or exit. A set-up thread still out holds a reference to the
 * plugin, so this runs with one only at process exit: such threads end
 * with the process. Finished ones are joined and their comms destroyed.
 */
__attribute__((destructor)) static void hn_fini(void)
{
	struct hn_conn **pp;

	pthread_mutex_lock(&pending_lock);
	for (pp = &pending; *pp;) {
		struct hn_conn *cn = *pp;

		if (!atomic_load(&cn->finished)) {
			pp = &cn->next;
			continue;
		}
		*pp = cn->next;
		pthread_join(cn->thread, NULL);
		hop_comm_destroy(cn->comm);
		free(cn); /* its dlopen reference goes with the process */
	}
	pthread_mutex_unlock(&pending_lock);
	hn_drain_fini();
}
