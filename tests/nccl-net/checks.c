/*
 * checks.c - the plugin's answers to bad arguments and unsupported
 * requests, each a specific NCCL result plus a warning through NCCL's
 * logger that names what was wrong; and one connection made inside this
 * process (listen, connect and accept from one thread, so both ends of a
 * hop communicator live in one process), carrying a message each way.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

/* @call must fail with @want and log a warning containing @word. */
#define EXPECT(call, want, word)                                          \
	do {                                                              \
		ncclResult_t r_;                                          \
		char w_[H_WARN_LEN];                                      \
		h_warn_clear();                                           \
		h_quiet = 1;                                              \
		r_ = (call);                                              \
		h_quiet = 0;                                              \
		if (r_ != (want))                                         \
			FAIL("%s returned %d, want %d", #call, (int)r_,   \
			     (int)(want));                                \
		h_last_warn(w_);                                          \
		if (!strstr(w_, (word)))                                  \
			FAIL("%s: the warning '%s' does not say '%s'",    \
			     #call, w_, (word));                          \
	} while (0)

static int connect_self(struct harness *h, void *l, void *handle, void **s,
			void **r)
{
	*s = *r = NULL;
	while (!*s || !*r) {
		if (deadline_passed(h))
			FAIL("in-process connection: still %s after the "
			     "deadline", *s ? "not accepted" : "not connected");
		if (!*s)
			CHECK_RES(h->net->connect(0, handle, s, NULL));
		if (!*r)
			CHECK_RES(h->net->accept(l, r, NULL));
		usleep(1000);
	}
	CHECK_RES(h->net->closeListen(l));
	return 0;
}

/* One message of @len bytes from @s to @r, received into a larger buffer. */
static int one_message(struct harness *h, void *s, void *r, int len, int tag)
{
	uint8_t *out = malloc((size_t)len), *in = calloc(1, (size_t)len + 64);
	void *mo = NULL, *mi = NULL, *rs = NULL, *rr = NULL, *data[1];
	int ds = 0, dr = 0, sizes[1] = { -1 }, ssz[1] = { -1 }, cap[1], tags[1];

	if (!out || !in)
		FAIL("out of memory");
	for (int i = 0; i < len; i++)
		/* unsigned: tag reaches INT_MAX - 1, and int would overflow */
		out[i] = (uint8_t)((unsigned)i * 7u + (unsigned)tag);
	CHECK_RES(h->net->regMr(s, out, (size_t)len, NCCL_PTR_HOST, &mo));
	CHECK_RES(h->net->regMr(r, in, (size_t)len + 64, NCCL_PTR_HOST, &mi));
	data[0] = in;
	cap[0] = len + 64;
	tags[0] = tag;
	while (!rr)
		CHECK_RES(h->net->irecv(r, 1, data, cap, tags, &mi, &rr));
	while (!rs)
		CHECK_RES(h->net->isend(s, out, len, tag, mo, &rs));
	while (!ds || !dr) {
		if (deadline_passed(h))
			FAIL("in-process message of %d B: not done in time", len);
		if (!ds)
			CHECK_RES(h->net->test(rs, &ds, ssz));
		if (!dr)
			CHECK_RES(h->net->test(rr, &dr, sizes));
	}
	if (sizes[0] != len || ssz[0] != len)
		FAIL("in-process message: test() reported %d B received, %d B "
		     "sent; %d B were sent", sizes[0], ssz[0], len);
	if (memcmp(in, out, (size_t)len))
		FAIL("in-process message of %d B arrived corrupted", len);
	CHECK_RES(h->net->deregMr(s, mo));
	CHECK_RES(h->net->deregMr(r, mi));
	free(out);
	free(in);
	return 0;
}

/*
 * A message larger than the receive posted for it: NCCL's README calls a
 * size mismatch a user error, ncclInvalidUsage, and so must test() on the
 * receive. The send's own outcome is not specified; it must end, though.
 */
static int truncated(struct harness *h, void *s, void *r)
{
	static uint8_t out[100], in[50];
	void *mo = NULL, *mi = NULL, *rs = NULL, *rr = NULL, *data[1] = { in };
	int cap[1] = { (int)sizeof(in) }, tags[1] = { 9 }, done = 0;
	ncclResult_t res = ncclSuccess;
	char warn[H_WARN_LEN];

	CHECK_RES(h->net->regMr(s, out, sizeof(out), NCCL_PTR_HOST, &mo));
	CHECK_RES(h->net->regMr(r, in, sizeof(in), NCCL_PTR_HOST, &mi));
	while (!rr)
		CHECK_RES(h->net->irecv(r, 1, data, cap, tags, &mi, &rr));
	while (!rs)
		CHECK_RES(h->net->isend(s, out, sizeof(out), 9, mo, &rs));
	h_quiet = 1;
	h_warn_clear();
	while (res == ncclSuccess && !done && !deadline_passed(h))
		res = h->net->test(rr, &done, NULL);
	for (int sd = 0; !sd && !deadline_passed(h);)
		if (h->net->test(rs, &sd, NULL) != ncclSuccess)
			break;
	h_quiet = 0;
	if (res != ncclInvalidUsage)
		FAIL("a 100 B message into a 50 B receive: test() returned %d "
		     "(done %d), want ncclInvalidUsage (%d)", (int)res, done,
		     (int)ncclInvalidUsage);
	h_last_warn(warn);
	printf("nccl_net_test r%d: truncated receive: ncclInvalidUsage, '%s'\n",
	       h->o.rank, warn);
	CHECK_RES(h->net->deregMr(s, mo));
	CHECK_RES(h->net->deregMr(r, mi));
	return 0;
}

static int bad_transfers(struct harness *h, void *s, void *r)
{
	static uint8_t buf[256];
	void *mh = NULL, *req = (void *)1, *data[9], *mhs[9];
	int sizes[9], tags[9], big = h->props.maxRecvs + 1;

	EXPECT(h->net->regMr(s, buf, 64, NCCL_PTR_CUDA, &mh), ncclInternalError,
	       "memory type");
	EXPECT(h->net->regMr(s, NULL, 64, NCCL_PTR_HOST, &mh),
	       ncclInternalError, "NULL");
	EXPECT(h->net->regMrDmaBuf(s, buf, 64, NCCL_PTR_DMABUF, 0, 3, &mh),
	       ncclInternalError, "DMA-BUF");
	CHECK_RES(h->net->regMr(s, buf, 64, NCCL_PTR_HOST, &mh));
	EXPECT(h->net->isend(s, buf + 32, 64, 1, mh, &req), ncclInternalError,
	       "outside");
	EXPECT(h->net->isend(s, buf, 8, -5, mh, &req), ncclInternalError,
	       "tag -5");
	EXPECT(h->net->isend(s, buf, 8, 0x7fffffff, mh, &req),
	       ncclInternalError, "reserved");
	EXPECT(h->net->isend(r, buf, 8, 1, mh, &req), ncclInternalError,
	       "send comm");
	EXPECT(h->net->isend(s, buf, 8, 1, NULL, &req), ncclInternalError,
	       "mhandle");
	if (req)
		FAIL("a failed isend left the request non-NULL");
	for (int i = 0; i < 9; i++) {
		data[i] = buf;
		sizes[i] = 8;
		tags[i] = i;
		mhs[i] = mh;
	}
	EXPECT(h->net->irecv(r, 0, data, sizes, tags, mhs, &req),
	       ncclInternalError, "out of range");
	if (big <= 9)
		EXPECT(h->net->irecv(r, big, data, sizes, tags, mhs, &req),
		       ncclInternalError, "out of range");
	/* mh belongs to the send comm */
	EXPECT(h->net->irecv(r, 1, data, sizes, tags, mhs, &req),
	       ncclInternalError, "not a registration of this comm");
	req = (void *)1;
	CHECK_RES(h->net->iflush(r, 1, data, sizes, mhs, &req));
	if (req)
		FAIL("iflush on host memory returned a request");
	EXPECT(h->net->test(NULL, (int[1]){ 0 }, NULL), ncclInternalError,
	       "request is NULL");
	EXPECT(h->net->deregMr(r, mh), ncclInternalError, "not a live");
	CHECK_RES(h->net->deregMr(s, mh));
	EXPECT(h->net->isend(s, buf, -1, 1, mh, &req), ncclInternalError,
	       "size");
	if (h->o.version >= 7) /* v6 has no offload slots */
		EXPECT(h->net->getDeviceMr(s, mh, &req), ncclInternalError,
		       "offload");
	EXPECT(h->net->closeSend(r), ncclInternalError, "not a live send");
	return 0;
}

/*
 * The logger takes lines from the plugin's threads (hop's warnings from
 * its progress thread) while this thread resets and reads the last
 * warning (EXPECT, truncated()). Here a warning comes from another thread
 * with nothing but the logger itself ordering it against the reset and
 * the read, so ThreadSanitizer sees any unguarded access on every run,
 * not only when the plugin's thread happens to warn meanwhile.
 */
static atomic_int warn_step; /* relaxed: orders nothing by itself */

static void *warn_thread(void *arg)
{
	(void)arg;
	while (atomic_load_explicit(&warn_step, memory_order_relaxed) != 1)
		sched_yield();
	h_logger(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, "%s",
		 "NET/hop: a warning from another thread");
	atomic_store_explicit(&warn_step, 2, memory_order_relaxed);
	return NULL;
}

static int logger_threads(struct harness *h)
{
	char warn[H_WARN_LEN];
	pthread_t t;
	int e;

	atomic_store_explicit(&warn_step, 0, memory_order_relaxed);
	if ((e = pthread_create(&t, NULL, warn_thread, NULL)))
		FAIL("pthread_create: %s", strerror(e));
	h_quiet = 1;
	h_warn_clear();
	atomic_store_explicit(&warn_step, 1, memory_order_relaxed);
	while (atomic_load_explicit(&warn_step, memory_order_relaxed) != 2 &&
	       !deadline_passed(h))
		sched_yield();
	h_last_warn(warn);
	h_quiet = 0;
	atomic_store_explicit(&warn_step, 1, memory_order_relaxed);
	pthread_join(t, NULL);
	if (!strstr(warn, "from another thread"))
		FAIL("a warning logged by another thread was not kept: '%s'",
		     warn);
	return 0;
}

int run_checks(struct harness *h)
{
	ncclNetProperties_v8_t p;
	uint8_t handle[NCCL_NET_HANDLE_MAXSIZE] = { 0 };
	void *l = NULL, *s = NULL, *r = NULL;
	int rc;

	char nodev[32];

	if (logger_threads(h))
		return -1;
	snprintf(nodev, sizeof(nodev), "device %d", h->ndev);
	EXPECT(h->net->getProperties(h->ndev, &p), ncclInternalError, nodev);
	EXPECT(h->net->getProperties(-1, &p), ncclInternalError, "device -1");
	EXPECT(h->net->getProperties(0, NULL), ncclInternalError, "NULL");
	EXPECT(h->net->listen(0, NULL, &l), ncclInternalError, "handle");
	/* a handle with one flipped bit is refused before any network use */
	CHECK_RES(h->net->listen(0, handle, &l));
	handle[9] ^= 0x10;
	EXPECT(h->net->connect(0, handle, &s, NULL), ncclInternalError,
	       "checksum");
	handle[9] ^= 0x10;
	if (connect_self(h, l, handle, &s, &r))
		return -1;
	rc = bad_transfers(h, s, r);
	if (rc == 0)
		rc = one_message(h, s, r, 1000, 3);
	if (rc == 0)
		rc = one_message(h, s, r, 1 << 20, 0x7ffffffe);
	if (rc == 0) /* last: hop may fail the comm with the receive */
		rc = truncated(h, s, r);
	CHECK_RES(h->net->closeSend(s));
	CHECK_RES(h->net->closeRecv(r));
	if (rc == 0)
		printf("nccl_net_test r%d: argument and rule checks passed\n",
		       h->o.rank);
	return rc;
}
