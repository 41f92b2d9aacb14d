/*
 * net_init.c - the NCCL net plugin's init, logging through NCCL's logger,
 * result codes, its device count, and the send/receive comm objects.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_hop.h"

/* Set by every init (v11 on: one per NCCL communicator) while other
 * threads log: atomic. */
static _Atomic(ncclDebugLogger_t) hn_logger;

void hn_log(ncclDebugLogLevel level, const char *file, int line,
	    const char *fmt, ...)
{
	ncclDebugLogger_t logger = atomic_load(&hn_logger);
	char msg[HN_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (logger)
		logger(level, NCCL_NET, file, line, "NET/hop: %s", msg);
	else if (level == NCCL_LOG_WARN)
		fprintf(stderr, "NET/hop: %s\n", msg);
}

static atomic_int hop_line_set; /* this plugin installed hop_line */

/* A line of hop's own log, to NCCL's logger at the matching level. */
static void hop_line(void *arg, hop_log_severity_t sev, int rank,
		     const char *msg)
{
	ncclDebugLogger_t logger = atomic_load(&hn_logger);
	ncclDebugLogLevel level = sev == HOP_LOG_SEV_WARN ? NCCL_LOG_WARN :
				  sev == HOP_LOG_SEV_INFO ? NCCL_LOG_INFO :
				  NCCL_LOG_TRACE;

	(void)arg;
	if (logger)
		logger(level, NCCL_NET, "hop", 0, "NET/hop: hop r%d: %s", rank,
		       msg);
}

/* Unload: libhop may stay loaded (the program links it too) and must not
 * call into an unmapped plugin. */
__attribute__((destructor)) static void hop_line_remove(void)
{
	if (atomic_load(&hop_line_set))
		hop_log_set_handler(NULL, NULL, HOP_LOG_SEV_WARN);
}

/* Codes as NCCL's ext-net README assigns them (see nccl_net.h). */
ncclResult_t hn_result(int code)
{
	switch (code) {
	case HOP_SUCCESS:
		return ncclSuccess;
	case HOP_ERR_INVALID_ARG:
	case HOP_ERR_INVALID_HANDLE:
	case HOP_ERR_OUT_OF_BOUNDS:
	case HOP_ERR_NOT_SUPPORTED:
	case HOP_ERR_INTERNAL:
		return ncclInternalError;
	case HOP_ERR_TRUNCATED: /* the sizes of the two sides disagree */
	case HOP_ERR_MISMATCH:
	case HOP_ERR_CONFIG:
	case HOP_ERR_NO_DEVICE:
		return ncclInvalidUsage;
	case HOP_ERR_PEER_FAILED:
	case HOP_ERR_PROTOCOL:
	case HOP_ERR_AUTH:
		return ncclRemoteError;
	default: /* memory, timeouts, transport, bootstrap, failed comm */
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

ncclResult_t hn_init(ncclDebugLogger_t logFunction)
{
	const char *t = getenv("HOP_TRANSPORT");

	atomic_store(&hn_logger, logFunction);
	/*
	 * hop's own lines go through NCCL's logger too, which filters them by
	 * NCCL_DEBUG and NCCL_DEBUG_SUBSYS=NET; info is hop's set-up
	 * decisions, a few lines per connection. HOP_DEBUG still overrides.
	 */
	if (logFunction && !hop_log_set_handler(hop_line, NULL,
						HOP_LOG_SEV_INFO))
		atomic_store(&hop_line_set, 1);
	HN_INFO("hop %s, HOP_TRANSPORT=%s, host memory only", hop_version(),
		t && *t ? t : "auto");
	return ncclSuccess;
}

ncclResult_t hn_devices(int *ndev)
{
	if (!ndev) {
		HN_WARN("devices: ndev is NULL");
		return ncclInternalError;
	}
	*ndev = hn_dev_count();
	return ncclSuccess;
}

ncclResult_t hn_check_dev(const char *call, int dev)
{
	int n = hn_dev_count();

	if (dev >= 0 && dev < n)
		return ncclSuccess;
	HN_WARN("%s: device %d does not exist (the plugin has %d, 0..%d)",
		call, dev, n, n - 1);
	return ncclInternalError;
}
