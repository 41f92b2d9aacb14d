/*
 * nccl_net_test - drives an NCCL net plugin the way NCCL's proxy thread
 * does, without a GPU: init, devices, getProperties (checked against
 * NCCL's selection rules), argument checks, listen/connect/accept loops,
 * then random traffic both ways with every byte and every reported size
 * checked, then close. --net-version N drives ncclNetPlugin_vN with that
 * version's layouts (default 12, the newest).
 *
 * usage: nccl_net_test PLUGIN.so [--rank 0|1 --addr HOST:PORT]
 *                      [--conns K] [--msgs N] [--max-size B] [--seed S]
 *                      [--timeout S] [--die-after N] [--timeouts 1]
 *                      [--teardown 1] [--selection 1] [--net-version 6..12]
 * Without --rank it forks: parent and child are the two ends. With --rank
 * (one process per host, e.g. in the SoftRoCE VMs) rank 0 listens on PORT
 * for the handle exchange and rank 1 connects to HOST:PORT. The transport
 * is the plugin's: HOP_TRANSPORT. Exit 0 when everything was verified.
 * --die-after N: rank 1 exits without closing after N receives; rank 0
 * passes when a plugin call then reports the failure. --timeouts 1: one
 * process, connect and accept with no peer must fail after HOP_TIMEOUT.
 * --teardown 1: one process, closeListen of a listen nobody connected to
 * returns promptly, and a connect left unfinished does not hold unload.
 * --selection 1: one process, only the device checks (no traffic).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "harness.h"

int h_rank;
ncclResult_t h_last_res;
atomic_int h_quiet; /* main thread sets it; set-up threads log */
atomic_int h_hop_lines;

/*
 * NCCL's logger takes lines from every thread; so does this one (hop's
 * own lines come from the plugin's progress thread too, warnings among
 * them). What it keeps is read and reset only under its lock.
 */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char last_warn[H_WARN_LEN];
static char transport[H_TRANSPORT_LEN];

void h_logger(ncclDebugLogLevel level, unsigned long flags, const char *file,
	      int line, const char *fmt, ...)
{
	char msg[H_WARN_LEN];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&log_lock);
	if (!strncmp(msg, "NET/hop: hop r", 14))
		h_hop_lines++; /* hop's own log, through the plugin */
	if (level == NCCL_LOG_WARN)
		snprintf(last_warn, sizeof(last_warn), "%s", msg);
	if (strstr(msg, "connected as rank"))
		sscanf(strstr(msg, " over ") ? strstr(msg, " over ") : "",
		       " over %15s", transport);
	/* the plugin's "connected ... over <transport>" lines show the provider */
	if ((level == NCCL_LOG_WARN && !h_quiet) || strstr(msg, " over ") ||
	    getenv("NCCL_NET_TEST_VERBOSE"))
		fprintf(stderr, "nccl_net_test r%d: [%s:%d] %s\n", h_rank,
			file, line, msg);
	pthread_mutex_unlock(&log_lock);
}

void h_last_warn(char buf[H_WARN_LEN])
{
	pthread_mutex_lock(&log_lock);
	memcpy(buf, last_warn, H_WARN_LEN);
	pthread_mutex_unlock(&log_lock);
}

void h_warn_clear(void)
{
	pthread_mutex_lock(&log_lock);
	last_warn[0] = '\0';
	pthread_mutex_unlock(&log_lock);
}

void h_last_transport(char buf[H_TRANSPORT_LEN])
{
	pthread_mutex_lock(&log_lock);
	memcpy(buf, transport, H_TRANSPORT_LEN);
	pthread_mutex_unlock(&log_lock);
}

static int usage(void)
{
	fprintf(stderr, "usage: nccl_net_test PLUGIN.so [--rank 0|1 --addr "
		"HOST:PORT] [--conns K] [--msgs N] [--max-size B] [--seed S] "
		"[--timeout S] [--die-after N] [--timeouts 1] [--teardown 1] "
		"[--selection 1] [--net-version 6..12]\n");
	return 2;
}

static int parse(int argc, char **argv, struct opts *o, const char **addr)
{
	o->plugin = argv[1];
	o->rank = -1;
	o->nconns = 2;
	o->msgs = 300;
	o->max_size = 4 << 20;
	o->seed = 12345;
	o->timeout_s = 300;
	o->version = NEWEST_VERSION;
	for (int i = 2; i < argc; i += 2) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		long n;

		if (!v)
			return -1;
		n = strtol(v, NULL, 0);
		if (!strcmp(a, "--rank") && (n == 0 || n == 1))
			o->rank = (int)n;
		else if (!strcmp(a, "--addr"))
			*addr = v;
		else if (!strcmp(a, "--conns") && n >= 1 && n <= MAX_CONNS)
			o->nconns = (int)n;
		else if (!strcmp(a, "--msgs") && n >= 1 && n <= 1000000)
			o->msgs = (int)n;
		else if (!strcmp(a, "--max-size") && n >= 0 && n <= (1 << 30))
			o->max_size = (int)n;
		else if (!strcmp(a, "--seed"))
			o->seed = (uint64_t)strtoull(v, NULL, 0);
		else if (!strcmp(a, "--timeout") && n >= 1)
			o->timeout_s = (int)n;
		else if (!strcmp(a, "--die-after") && n >= 1)
			o->die_after = (int)n;
		else if (!strcmp(a, "--timeouts"))
			o->timeouts = n != 0;
		else if (!strcmp(a, "--teardown"))
			o->teardown = n != 0;
		else if (!strcmp(a, "--selection"))
			o->selection = n != 0;
		else if (!strcmp(a, "--net-version") && n >= 6 &&
			 n <= NEWEST_VERSION)
			o->version = (int)n;
		else
			return -1;
	}
	if ((o->timeouts || o->teardown || o->selection) &&
	    (*addr || o->rank >= 0))
		return -1; /* one process, no peer */
	return (o->rank < 0) == (*addr == NULL) ? 0 : -1;
}

static int load(struct harness *h, void **dl)
{
	int ndev = 0;

	if (!(*dl = dlopen(h->o.plugin, RTLD_NOW | RTLD_LOCAL)))
		FAIL("dlopen %s: %s", h->o.plugin, dlerror());
	if (version_load(h, *dl, h->o.version))
		return -1;
	CHECK_RES(h->net->init(h_logger));
	if (check_selection(h))
		return -1;
	CHECK_RES(h->net->devices(&ndev));
	if (ndev < 1)
		FAIL("devices() reported %d devices", ndev);
	h->ndev = ndev;
	CHECK_RES(h->net->getProperties(0, &h->props));
	if (!(h->props.ptrSupport & NCCL_PTR_HOST) || h->props.maxRecvs < 1 ||
	    !h->props.name || h->props.maxComms < 2 * h->o.nconns + 1 ||
	    h->props.netDeviceType != NCCL_NET_DEVICE_HOST)
		FAIL("device 0's properties are unusable: ptrSupport %d, "
		     "maxRecvs %d, maxComms %d, netDeviceType %d",
		     h->props.ptrSupport, h->props.maxRecvs,
		     h->props.maxComms, (int)h->props.netDeviceType);
	printf("nccl_net_test r%d: plugin '%s' v%d, device '%s', maxRecvs %d, "
	       "%d Mb/s\n", h->o.rank, h->net->name, h->o.version,
	       h->props.name, h->props.maxRecvs, h->props.speed);
	return 0;
}

/* One process's whole run; 0 when everything checked out. */
static int run(struct harness *h)
{
	void *dl = NULL;
	int rc = load(h, &dl);

	if (rc == 0 && h->o.selection)
		goto unload; /* load() checked every device */
	if (rc == 0 && (h->o.timeouts || h->o.teardown)) {
		rc = h->o.timeouts ? run_timeouts(h) : run_teardown(h);
		goto unload;
	}
	if (rc == 0)
		rc = run_checks(h);
	if (rc == 0)
		rc = connect_all(h);
	if (rc == 0)
		rc = rails_start(h);
	if (rc == 0 && !h_hop_lines) {
		fprintf(stderr, "nccl_net_test r%d: FAIL: hop's own log lines "
			"(info: the transport chosen) did not reach NCCL's "
			"logger\n", h->o.rank);
		rc = -1;
	}
	if (rc == 0) {
		rc = run_traffic(h);
		if (rc == 0)
			rc = rails_check(h);
		if (h->o.die_after)
			rc = peer_died(h, rc);
	}
	if (close_all(h, rc != 0 || h->o.die_after))
		rc = -1;
unload:
	if (dl && version_finalize(h))
		rc = -1;
	/* dlopen keeps libhop loaded: unload runs the plugin's destructor */
	if (dl)
		dlclose(dl);
	return rc;
}

int main(int argc, char **argv)
{
	struct harness h;
	const char *addr = NULL;
	int child = 0, rc, status = 0;

	memset(&h, 0, sizeof(h));
	h.fd = -1;
	/*
	 * Message buffers come and go by the hundred; keep freed ones in
	 * the heap (NCCL reuses fixed buffers) so page faults of fresh
	 * mappings do not dominate what the run measures.
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 512 << 20);
	if (argc < 2 || parse(argc, argv, &h.o, &addr))
		return usage();
	h.deadline = now_ns() + (uint64_t)h.o.timeout_s * 1000000000ull;
	if (h.o.timeouts || h.o.teardown || h.o.selection) {
		h.o.rank = 0;
		rc = 0;
	} else if (addr) {
		h_rank = h.o.rank;
		rc = link_tcp(&h, addr);
	} else {
		rc = link_fork(&h, &child);
	}
	if (rc == 0)
		rc = run(&h);
	if (child > 0) {
		if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			rc = -1;
	}
	printf("nccl_net_test r%d: %s\n", h.o.rank, rc ? "FAILED" : "PASSED");
	return rc ? 1 : 0;
}
