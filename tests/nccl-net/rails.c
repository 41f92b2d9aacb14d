/*
 * rails.c - with NCCL_NET_TEST_RAILS=N, proof that the plugin's devices are
 * separate rails: connection k runs on device k % ndev, so N devices must
 * each have carried their connections' traffic.
 *
 * Over tcp a device is an interface: the established connections must use
 * N local addresses or more once the traffic ran (the test runs in a private
 * network namespace, where nothing else holds a connection, and hop's own
 * bootstrap sockets are closed once a communicator is made). Over verbs a
 * device is "HCA:port": the port's own packet counters (hw_counters/
 * sent_pkts, rcvd_pkts, which count RoCE packets of every QP on it) must
 * each rise, across the traffic, by at least the messages this process sent
 * and received on the device's connections; a plugin that ran them all on
 * one port leaves the others' counters where they were. The VM pair is the
 * only place this runs, one process per VM, so no other process moves the
 * counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define SYS_IB "/sys/class/infiniband"
#define NCOUNTERS 2

static const char *const counter_names[NCOUNTERS] = { "sent_pkts",
						       "rcvd_pkts" };

static int rails_wanted(void)
{
	const char *v = getenv("NCCL_NET_TEST_RAILS");

	return v && *v ? atoi(v) : 0;
}

/* The local IPv4 addresses of established tcp connections in /proc/net/tcp
 * (other than loopback's), at most @max distinct ones into @addrs. */
static int established_locals(unsigned *addrs, int max)
{
	FILE *f = fopen("/proc/net/tcp", "r");
	char line[256];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned local, port, st, i;

		if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X", &local, &port,
			   &st) != 3 || st != 1 /* ESTABLISHED */ ||
		    (local & 0xff) == 127)
			continue;
		for (i = 0; i < (unsigned)n && addrs[i] != local; i++)
			;
		if (i == (unsigned)n && n < max)
			addrs[n++] = local;
	}
	fclose(f);
	return n;
}

static int tcp_rails(struct harness *h, int want)
{
	unsigned addrs[16];
	int n = established_locals(addrs, 16);

	if (n < want)
		FAIL("connections over %d devices use %d local address(es), "
		     "want %d: the devices are not separate rails", h->ndev,
		     n, want);
	printf("nccl_net_test r%d: %d connections each way over %d devices "
	       "use %d local addresses (rails)\n", h->o.rank, h->o.nconns,
	       h->ndev, n);
	return 0;
}

/* Device @dev's counter @c ("HCA:port" -> its port's hw_counters). */
static int port_counter(struct harness *h, int dev, int c, uint64_t *val)
{
	ncclNetProperties_v8_t p;
	char hca[64], path[256];
	unsigned long long v;
	int port, ok;
	FILE *f;

	CHECK_RES(h->net->getProperties(dev, &p));
	if (!p.name || sscanf(p.name, "%63[^:]:%d", hca, &port) != 2)
		FAIL("device %d is named '%s', not HCA:port", dev,
		     p.name ? p.name : "(null)");
	snprintf(path, sizeof(path), SYS_IB "/%s/ports/%d/hw_counters/%s",
		 hca, port, counter_names[c]);
	if (!(f = fopen(path, "r")))
		FAIL("device %d (%s): cannot read %s", dev, p.name, path);
	ok = fscanf(f, "%llu", &v) == 1;
	fclose(f);
	if (!ok)
		FAIL("device %d (%s): %s holds no number", dev, p.name, path);
	*val = v;
	return 0;
}

static int read_counters(struct harness *h, uint64_t (*out)[NCOUNTERS])
{
	for (int d = 0; d < h->ndev; d++)
		for (int c = 0; c < NCOUNTERS; c++)
			if (port_counter(h, d, c, &out[d][c]))
				return -1;
	return 0;
}

int rails_start(struct harness *h)
{
	char transport[H_TRANSPORT_LEN];
	int want = rails_wanted();

	h->rails = 0;
	if (want <= 0)
		return 0;
	if (h->ndev < want || h->ndev > H_RAIL_DEVS)
		FAIL("NCCL_NET_TEST_RAILS=%d, but the plugin has %d device(s)",
		     want, h->ndev);
	if (h->o.nconns < h->ndev)
		FAIL("NCCL_NET_TEST_RAILS=%d: --conns %d leaves device(s) "
		     "without a connection", want, h->o.nconns);
	h_last_transport(transport);
	h->rails = want;
	h->rails_tcp = strcmp(transport, "verbs") != 0;
	return h->rails_tcp ? 0 : read_counters(h, h->rail_base);
}

int rails_check(struct harness *h)
{
	uint64_t now[H_RAIL_DEVS][NCOUNTERS];

	if (!h->rails)
		return 0;
	if (h->rails_tcp)
		return tcp_rails(h, h->rails);
	if (read_counters(h, now))
		return -1;
	for (int d = 0; d < h->ndev; d++) {
		ncclNetProperties_v8_t p;
		/* connections k with k % ndev == d, each o.msgs each way */
		uint64_t conns = (uint64_t)((h->o.nconns - d + h->ndev - 1) /
					    h->ndev);
		uint64_t msgs = conns * (uint64_t)h->o.msgs;
		uint64_t sent = now[d][0] - h->rail_base[d][0];
		uint64_t rcvd = now[d][1] - h->rail_base[d][1];

		CHECK_RES(h->net->getProperties(d, &p));
		printf("nccl_net_test r%d: rail %d %s: %llu connection(s), "
		       "%llu messages each way; sent_pkts +%llu, rcvd_pkts "
		       "+%llu\n", h->o.rank, d, p.name,
		       (unsigned long long)conns, (unsigned long long)msgs,
		       (unsigned long long)sent, (unsigned long long)rcvd);
		if (sent < msgs || rcvd < msgs)
			FAIL("device %d (%s) carried fewer packets (sent %llu, "
			     "received %llu) than its connections' %llu "
			     "messages each way: its traffic went elsewhere",
			     d, p.name, (unsigned long long)sent,
			     (unsigned long long)rcvd,
			     (unsigned long long)msgs);
	}
	printf("nccl_net_test r%d: %d connections each way over %d verbs "
	       "devices, every device's packets counted (rails)\n",
	       h->o.rank, h->o.nconns, h->ndev);
	return 0;
}
