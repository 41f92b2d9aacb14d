/*
 * net_dev.c - the plugin's device: a description of the endpoint hop's
 * configuration makes its connections use, read from sysfs, so NCCL's
 * topology search can place it (pciPath) and rank it (speed).
 *
 * On verbs (HOP_TRANSPORT=verbs, or auto with an active RDMA port) it is
 * the port hop opens: the first device (HOP_IB_DEVICE if set) whose port
 * HOP_IB_PORT (default 1) is ACTIVE, named "HCA:port", its speed the
 * port's rate (active width x active speed), its guid the node GUID.
 * Otherwise it is the interface of hop's rendezvous and tcp traffic:
 * HOP_SOCKET_IFNAME, else the first non-loopback IPv4 interface that is
 * up, else "lo"; speed from /sys/class/net, guid from the MAC address.
 * pciPath is the sysfs device the port or interface sits on, NULL for a
 * virtual one (NCCL then places it by the CPU). latency is the alpha of
 * the link profile HOP_PROFILE names, when one is set (NCCL adds it to its
 * own estimate of each step); 0, as NCCL's own plugins report, otherwise.
 */
#include <dirent.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_hop.h"

#define SYS_IB "/sys/class/infiniband"
#define SYS_NET "/sys/class/net"
#define NOMINAL_MBPS 10000 /* what NCCL assumes of a NIC without a speed */

struct hn_dev {
	char name[64];
	char *pci;           /* realpath of the sysfs device, or NULL */
	uint64_t guid;
	int speed;           /* Mbit/s */
	int port;
	float latency;       /* us, from the link profile; 0 without one */
};

static struct hn_dev dev0;
static pthread_once_t dev0_once = PTHREAD_ONCE_INIT;

/* The first line of @dir/@file into @buf; 0, or -1 when unreadable. */
static int read_line(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX + 32];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (!(f = fopen(path, "r")))
		return -1;
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static char *device_path(const char *dir)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/device", dir);
	return realpath(path, NULL);
}

/* "100 Gb/sec (4X EDR)" -> 100000 Mbit/s; 0 when it is not a rate. */
static int rate_mbps(const char *rate)
{
	double gbps;

	if (sscanf(rate, "%lf Gb/sec", &gbps) != 1 || gbps <= 0 ||
	    gbps > INT_MAX / 1000)
		return 0;
	return (int)(gbps * 1000);
}

/* Hex digits of @s (separators skipped) as a number: GUIDs, MACs. */
static uint64_t hex_id(const char *s)
{
	uint64_t v = 0;

	for (; *s; s++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			*s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			*s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;

		if (d >= 0)
			v = v << 4 | (uint64_t)d;
	}
	return v;
}

/* @hca's port @port into @d when it is ACTIVE; 1 then, else 0. */
static int ib_port(const char *hca, int port, struct hn_dev *d)
{
	char dir[PATH_MAX], pdir[PATH_MAX + 32], line[128];

	snprintf(dir, sizeof(dir), SYS_IB "/%s", hca);
	snprintf(pdir, sizeof(pdir), "%s/ports/%d", dir, port);
	if (read_line(pdir, "state", line, sizeof(line)) ||
	    !strstr(line, "ACTIVE"))
		return 0;
	snprintf(d->name, sizeof(d->name), "%s:%d", hca, port);
	d->port = port;
	if (!read_line(pdir, "rate", line, sizeof(line)))
		d->speed = rate_mbps(line);
	if (!read_line(dir, "node_guid", line, sizeof(line)))
		d->guid = hex_id(line);
	d->pci = device_path(dir);
	return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The RDMA port hop's verbs provider would open; 1 when there is one. */
static int ib_pick(struct hn_dev *d)
{
	const char *want = getenv("HOP_IB_DEVICE");
	const char *p = getenv("HOP_IB_PORT");
	int port = p && *p ? atoi(p) : 1, found = 0, n;
	struct dirent **l;

	if ((n = scandir(SYS_IB, &l, NULL, by_name)) < 0)
		return 0;
	for (int i = 0; i < n; i++) {
		const char *hca = l[i]->d_name;

		if (!found && hca[0] != '.' && (!want || !*want ||
						 !strcmp(want, hca)))
			found = ib_port(hca, port, d);
		free(l[i]);
	}
	free(l);
	return found;
}

/* The interface hop's rendezvous (and tcp provider) would use. */
static void if_pick(struct hn_dev *d)
{
	const char *want = getenv("HOP_SOCKET_IFNAME");
	char dir[PATH_MAX], line[64];
	struct ifaddrs *ifs, *i;

	snprintf(d->name, sizeof(d->name), "lo");
	if (want && *want) {
		snprintf(d->name, sizeof(d->name), "%s", want);
	} else if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i; i = i->ifa_next) {
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    (i->ifa_flags & IFF_UP) &&
			    !(i->ifa_flags & IFF_LOOPBACK)) {
				snprintf(d->name, sizeof(d->name), "%s",
					 i->ifa_name);
				break;
			}
		}
		freeifaddrs(ifs);
	}
	snprintf(dir, sizeof(dir), SYS_NET "/%s", d->name);
	if (!read_line(dir, "speed", line, sizeof(line)))
		d->speed = atoi(line); /* -1 or absent for virtual ones */
	if (!read_line(dir, "address", line, sizeof(line)))
		d->guid = hex_id(line);
	d->pci = device_path(dir);
	d->port = 1;
}

/* The measured alpha of @transport's link, when a profile is loaded. */
static float profile_latency(const char *transport)
{
	hop_link_estimate_t est;
	int ret = hop_link_estimate(transport, &est);

	if (ret) {
		HN_WARN("device latency: %s (%s); reporting 0", est.detail,
			hop_strerror(ret));
		return 0;
	}
	return est.from_profile ? (float)est.alpha_us : 0;
}

static void dev0_probe(void)
{
	const char *t = getenv("HOP_TRANSPORT");
	int verbs_ok = !t || !*t || !strcmp(t, "auto") || !strcmp(t, "verbs");
	int ib = verbs_ok && ib_pick(&dev0);

	if (!ib)
		if_pick(&dev0);
	dev0.latency = profile_latency(ib ? "verbs" : t && *t ? t : "tcp");
	if (dev0.speed <= 0)
		dev0.speed = NOMINAL_MBPS;
	if (!dev0.guid)
		dev0.guid = 0x686f70; /* "hop": loopback's MAC is all zero */
	HN_INFO("device 0: %s, %d Mb/s, pciPath %s, guid 0x%llx, port %d, "
		"latency %.2f us", dev0.name, dev0.speed,
		dev0.pci ? dev0.pci : "NULL", (unsigned long long)dev0.guid,
		dev0.port, (double)dev0.latency);
}

ncclResult_t hn_getProperties(int dev, struct hn_props *props)
{
	if (hn_check_dev("getProperties", dev))
		return ncclInternalError;
	if (!props) {
		HN_WARN("getProperties: props is NULL");
		return ncclInternalError;
	}
	pthread_once(&dev0_once, dev0_probe);
	memset(props, 0, sizeof(*props));
	props->name = dev0.name;
	props->pciPath = dev0.pci;
	props->guid = dev0.guid;
	props->ptrSupport = NCCL_PTR_HOST;
	props->speed = dev0.speed;
	props->port = dev0.port;
	props->latency = dev0.latency;
	props->maxComms = 65536;
	props->maxRecvs = HN_MAX_RECVS;
	props->maxP2pBytes = HN_MAX_BYTES;
	return ncclSuccess;
}

/* Unload: the one allocation the device keeps. */
__attribute__((destructor)) static void dev0_free(void)
{
	free(dev0.pci);
	dev0.pci = NULL;
}
