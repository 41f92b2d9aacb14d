/*
 * net_xfer.c - the NCCL net plugin's data path: registrations (host memory
 * only), isend/irecv on hop's tag-matched point-to-point calls with a fixed
 * request pool per comm, test, and the slots a host plugin does not serve.
 *
 * Registration is bookkeeping only: hop registers (and caches) the buffers
 * of large messages itself on verbs, and hop_mem_register() would touch
 * the hop comm from whatever thread NCCL registers on. The handle still
 * lets isend/irecv check that a buffer lies inside what NCCL registered.
 */
#include <stdlib.h>

#include "net_hop.h"

static struct hn_req *req_get(struct hn_comm *c, int send, int n)
{
	struct hn_req *r;

	if (c->nfree == 0)
		return NULL;
	r = &c->req[c->free_idx[--c->nfree]];
	r->magic = HN_REQ_MAGIC;
	r->send = send;
	r->n = n;
	r->comm = c;
	for (int i = 0; i < HN_MAX_RECVS; i++) {
		r->sub[i] = NULL;
		r->sizes[i] = 0;
	}
	return r;
}

static void req_put(struct hn_req *r)
{
	struct hn_comm *c = r->comm;

	r->magic = 0;
	c->free_idx[c->nfree++] = (int)(r - c->req);
}

ncclResult_t hn_regMr(void *comm, void *data, size_t size, int type,
		      void **mhandle)
{
	struct hn_comm *c = hn_comm_check(comm, 0);
	struct hn_mr *m;

	if (!c || !mhandle) {
		HN_WARN("regMr: %s", c ? "mhandle is NULL"
				       : "comm is not a live send/recv comm");
		return ncclInternalError;
	}
	*mhandle = NULL;
	if (type != NCCL_PTR_HOST) {
		HN_WARN("regMr: memory type %d is not supported (host memory, "
			"NCCL_PTR_HOST, only)", type);
		return ncclInternalError;
	}
	if (!data && size) {
		HN_WARN("regMr: data is NULL with size %zu", size);
		return ncclInternalError;
	}
	if (!(m = calloc(1, sizeof(*m)))) {
		HN_WARN("regMr: out of memory");
		return ncclSystemError;
	}
	m->magic = HN_MR_MAGIC;
	m->comm = c;
	m->addr = (uintptr_t)data;
	m->size = size;
	m->next = c->mrs;
	c->mrs = m;
	*mhandle = m;
	return ncclSuccess;
}

ncclResult_t hn_regMrDmaBuf(void *comm, void *data, size_t size, int type,
			    uint64_t offset, int fd, void **mhandle)
{
	(void)comm, (void)data, (void)size, (void)type, (void)offset, (void)fd;
	if (mhandle)
		*mhandle = NULL;
	HN_WARN("regMrDmaBuf: DMA-BUF is not supported (host memory only)");
	return ncclInternalError;
}

ncclResult_t hn_deregMr(void *comm, void *mhandle)
{
	struct hn_comm *c = hn_comm_check(comm, 0);
	struct hn_mr **pp;

	if (!c) {
		HN_WARN("deregMr: comm is not a live send/recv comm");
		return ncclInternalError;
	}
	for (pp = &c->mrs; *pp; pp = &(*pp)->next) {
		if (*pp == mhandle) {
			struct hn_mr *m = *pp;

			*pp = m->next;
			m->magic = 0;
			free(m);
			return ncclSuccess;
		}
	}
	HN_WARN("deregMr: mhandle %p is not a live registration of this comm",
		mhandle);
	return ncclInternalError;
}

/* A buffer's checks: size, tag, pointer, and that its handle covers it. */
static ncclResult_t check_buf(struct hn_comm *c, const char *call, int i,
			      const void *data, size_t size, int tag,
			      const struct hn_mr *m)
{
	uintptr_t a = (uintptr_t)data;

	if (size > HN_MAX_BYTES) {
		HN_WARN("%s: buffer %d: size %zu is over the plugin's "
			"maxP2pBytes, %u", call, i, size, HN_MAX_BYTES);
		return ncclInternalError;
	}
	if (tag < 0 || tag == HN_IDLE_TAG) {
		HN_WARN("%s: buffer %d: tag %d is %s", call, i, tag,
			tag < 0 ? "negative" : "reserved by the plugin");
		return ncclInternalError;
	}
	if (!data && size) {
		HN_WARN("%s: buffer %d: data is NULL with size %zu", call, i,
			size);
		return ncclInternalError;
	}
	if (!m && size == 0)
		return ncclSuccess; /* nothing to cover */
	if (!m || m->magic != HN_MR_MAGIC || m->comm != c) {
		HN_WARN("%s: buffer %d: mhandle %p is not a registration of "
			"this comm", call, i, (const void *)m);
		return ncclInternalError;
	}
	if (size && (a < m->addr || size > m->size ||
		     a - m->addr > m->size - size)) {
		HN_WARN("%s: buffer %d [%p, +%zu) lies outside its "
			"registration [%p, +%zu)", call, i, data, size,
			(void *)m->addr, m->size);
		return ncclInternalError;
	}
	return ncclSuccess;
}

ncclResult_t hn_isend(void *sendComm, void *data, size_t size, int tag,
		      void *mhandle, void **request)
{
	struct hn_comm *c = hn_comm_check(sendComm, HN_SEND_MAGIC);
	struct hn_req *r;
	ncclResult_t res;
	int ret;

	if (!c || !request) {
		HN_WARN("isend: %s", c ? "request is NULL"
				       : "sendComm is not a live send comm");
		return ncclInternalError;
	}
	*request = NULL;
	if ((res = check_buf(c, "isend", 0, data, size, tag, mhandle)))
		return res;
	if (!(r = req_get(c, 1, 1)))
		return ncclSuccess; /* pool full: NCCL calls again later */
	pthread_mutex_lock(&c->lock);
	c->active_ns = hn_now_ns();
	ret = hop_isend(c->hc, data, size, c->peer, tag, &r->sub[0]);
	res = ret ? hn_fail(c, "isend", ret) : ncclSuccess;
	pthread_mutex_unlock(&c->lock);
	if (ret) {
		req_put(r);
		return res;
	}
	r->sizes[0] = (int)size;
	*request = r;
	return ncclSuccess;
}

static ncclResult_t check_recv(struct hn_comm *c, int n, void **data,
			       const size_t *sizes, int *tags, void **mhandles)
{
	ncclResult_t res;

	if (n < 1 || n > HN_MAX_RECVS) {
		HN_WARN("irecv: n %d is out of range 1..%d (maxRecvs)", n,
			HN_MAX_RECVS);
		return ncclInternalError;
	}
	if (!data || !sizes || !tags || !mhandles) {
		HN_WARN("irecv: the %s array is NULL", !data ? "data" :
			!sizes ? "sizes" : !tags ? "tags" : "mhandles");
		return ncclInternalError;
	}
	for (int i = 0; i < n; i++)
		if ((res = check_buf(c, "irecv", i, data[i], sizes[i], tags[i],
				     mhandles[i])))
			return res;
	return ncclSuccess;
}

ncclResult_t hn_irecv(void *recvComm, int n, void **data,
		      const size_t *sizes, int *tags, void **mhandles,
		      void **request)
{
	struct hn_comm *c = hn_comm_check(recvComm, HN_RECV_MAGIC);
	struct hn_req *r;
	ncclResult_t res;
	int ret;

	if (!c || !request) {
		HN_WARN("irecv: %s", c ? "request is NULL"
				       : "recvComm is not a live receive comm");
		return ncclInternalError;
	}
	*request = NULL;
	if ((res = check_recv(c, n, data, sizes, tags, mhandles)))
		return res;
	if (!(r = req_get(c, 0, n)))
		return ncclSuccess; /* pool full: NCCL calls again later */
	pthread_mutex_lock(&c->lock);
	c->active_ns = hn_now_ns();
	for (int i = 0; i < n; i++) {
		ret = hop_irecv(c->hc, data[i], sizes[i], c->peer,
				tags[i], &r->sub[i]);
		if (ret) {
			/*
			 * The receives posted before this one cannot be taken
			 * back: the request stays out of the pool and closeRecv
			 * cancels them with the hop comm.
			 */
			res = hn_fail(c, "irecv", ret);
			pthread_mutex_unlock(&c->lock);
			return res;
		}
	}
	pthread_mutex_unlock(&c->lock);
	*request = r;
	return ncclSuccess;
}

ncclResult_t hn_iflush(void *recvComm, int n, void **data, int *sizes,
		       void **mhandles, void **request)
{
	(void)n, (void)data, (void)sizes, (void)mhandles;
	if (!hn_comm_check(recvComm, HN_RECV_MAGIC) || !request) {
		HN_WARN("iflush: %s", request ? "recvComm is not a live "
			"receive comm" : "request is NULL");
		return ncclInternalError;
	}
	/* host memory is coherent once received: nothing to flush */
	*request = NULL;
	return ncclSuccess;
}

ncclResult_t hn_test(void *request, int *done, int *sizes)
{
	struct hn_req *r = request;
	int pending = 0;

	if (!r || r->magic != HN_REQ_MAGIC || !done) {
		HN_WARN("test: %s", !done ? "done is NULL" : r ? "request is "
			"not a live request" : "request is NULL");
		return ncclInternalError;
	}
	*done = 0;
	pthread_mutex_lock(&r->comm->lock);
	r->comm->active_ns = hn_now_ns();
	for (int i = 0; i < r->n; i++) {
		hop_status_t st;
		int d = 0, ret;

		if (!r->sub[i])
			continue;
		ret = hop_test(&r->sub[i], &d, &st);
		if (ret) { /* the request stays out: close cleans it up */
			ncclResult_t res = hn_fail(r->comm, r->send ?
						   "test (send)" :
						   "test (receive)", ret);

			pthread_mutex_unlock(&r->comm->lock);
			return res;
		}
		if (!d)
			pending++;
		else if (!r->send)
			r->sizes[i] = (int)st.bytes;
	}
	pthread_mutex_unlock(&r->comm->lock);
	if (pending)
		return ncclSuccess;
	*done = 1;
	if (sizes)
		for (int i = 0; i < r->n; i++)
			sizes[i] = r->sizes[i];
	req_put(r);
	return ncclSuccess;
}

ncclResult_t hn_getDeviceMr(void *comm, void *mhandle, void **dptr_mhandle)
{
	(void)comm, (void)mhandle;
	if (dptr_mhandle)
		*dptr_mhandle = NULL;
	HN_WARN("getDeviceMr: no device offload (netDeviceType is HOST)");
	return ncclInternalError;
}

ncclResult_t hn_irecvConsumed(void *recvComm, int n, void *request)
{
	(void)recvComm, (void)n, (void)request;
	HN_WARN("irecvConsumed: no device offload (netDeviceType is HOST)");
	return ncclInternalError;
}
