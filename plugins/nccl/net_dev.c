/*
 * net_dev.c - the plugin's devices, one per endpoint hop can run a
 * connection on, read from sysfs so NCCL's topology search can place each
 * (pciPath) and rank it (speed), and use several as rails.
 *
 * On verbs (HOP_TRANSPORT=verbs, or auto with an active RDMA port) a device
 * is an ACTIVE port: every port of every RDMA device, or only those of
 * HOP_IB_DEVICE and HOP_IB_PORT when set, named "HCA:port", its speed the
 * port's rate (active width x active speed), its guid the node GUID.
 * Otherwise a device is an interface for hop's rendezvous and tcp
 * traffic: HOP_SOCKET_IFNAME, else every non-loopback IPv4 interface that
 * is up, else "lo"; speed from /sys/class/net, guid from the MAC address.
 * pciPath is the sysfs device the port or interface sits on, NULL for a
 * virtual one (NCCL then places it by the CPU). latency is the alpha of
 * the link profile HOP_PROFILE names, when one is set (NCCL adds it to its
 * own estimate of each step); 0, as NCCL's own plugins report, otherwise.
 *
 * Each device carries the hop settings (hop_comm_init_rank_with()) that
 * put a connection's communicator on it: HOP_IB_DEVICE and HOP_IB_PORT, or
 * HOP_SOCKET_IFNAME. A port whose GIDs name a netdev with an IPv4 address
 * (RoCE, or IPoIB) also sets HOP_SOCKET_IFNAME to it: rdma_cm binds the
 * bootstrap address, and a port of a second rail cannot connect from the
 * first rail's address.
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

#define MAX_DEVS 16
#define SETTING_LEN (sizeof("HOP_SOCKET_IFNAME=") + 64)

struct hn_dev {
	char name[64];
	char *pci;           /* realpath of the sysfs device, or NULL */
	uint64_t guid;
	int speed;           /* Mbit/s */
	int port;
	float latency;       /* us, from the link profile; 0 without one */
	char set[3][SETTING_LEN];  /* "" when unused */
	const char *settings[4]; /* set[] as hop_comm_init_rank_with() takes */
};

static struct hn_dev devs[MAX_DEVS];
static int ndevs;
static pthread_once_t devs_once = PTHREAD_ONCE_INIT;

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

static int has_ipv4(const char *ifname)
{
	struct ifaddrs *ifs, *i;
	int found = 0;

	if (getifaddrs(&ifs))
		return 0;
	for (i = ifs; i && !found; i = i->ifa_next)
		found = i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			!strcmp(i->ifa_name, ifname);
	freeifaddrs(ifs);
	return found;
}

/* The netdev (with an IPv4 address) that port directory @pdir's GIDs are
 * on, into @name; 0, or -1 when there is none (IB without IPoIB). */
static int port_netdev(const char *pdir, char *name, size_t len)
{
	char dir[PATH_MAX + 64], idx[16];

	snprintf(dir, sizeof(dir), "%s/gid_attrs/ndevs", pdir);
	for (int i = 0; i < 16; i++) {
		snprintf(idx, sizeof(idx), "%d", i);
		if (!read_line(dir, idx, name, len) && name[0] &&
		    has_ipv4(name))
			return 0;
	}
	return -1;
}

/* @hca's port @port into @d when it is ACTIVE; 1 then, else 0. */
static int ib_port(const char *hca, int port, struct hn_dev *d)
{
	char dir[PATH_MAX], pdir[PATH_MAX + 32], line[128], ndev[IF_NAMESIZE];

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
	snprintf(d->set[0], sizeof(d->set[0]), "HOP_IB_DEVICE=%.63s", hca);
	snprintf(d->set[1], sizeof(d->set[1]), "HOP_IB_PORT=%d", port);
	if (!port_netdev(pdir, ndev, sizeof(ndev)))
		snprintf(d->set[2], sizeof(d->set[2]),
			 "HOP_SOCKET_IFNAME=%s", ndev);
	return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* The ACTIVE ports of @hca (only @want_port when > 0) into devs[]. */
static void ib_ports(const char *hca, int want_port)
{
	char dir[PATH_MAX];
	struct dirent **l;
	int n;

	snprintf(dir, sizeof(dir), SYS_IB "/%s/ports", hca);
	if ((n = scandir(dir, &l, NULL, by_name)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		int port = atoi(l[i]->d_name);

		if (port > 0 && (want_port <= 0 || port == want_port) &&
		    ndevs < MAX_DEVS && ib_port(hca, port, &devs[ndevs]))
			ndevs++;
		free(l[i]);
	}
	free(l);
}

/* Every RDMA port hop's verbs provider could open, as devices. */
static void ib_scan(void)
{
	const char *want = getenv("HOP_IB_DEVICE");
	const char *p = getenv("HOP_IB_PORT");
	int port = p && *p ? atoi(p) : 0, n;
	struct dirent **l;

	if ((n = scandir(SYS_IB, &l, NULL, by_name)) < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *hca = l[i]->d_name;

		if (hca[0] != '.' && (!want || !*want || !strcmp(want, hca)))
			ib_ports(hca, port);
		free(l[i]);
	}
	free(l);
}

/* Interface @name as a device, unless it is one already. */
static void if_add(const char *name)
{
	char dir[PATH_MAX], line[64];
	struct hn_dev *d;

	for (int i = 0; i < ndevs; i++)
		if (!strcmp(devs[i].name, name))
			return;
	if (ndevs == MAX_DEVS)
		return;
	d = &devs[ndevs++];
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(dir, sizeof(dir), SYS_NET "/%s", d->name);
	if (!read_line(dir, "speed", line, sizeof(line)))
		d->speed = atoi(line); /* -1 or absent for virtual ones */
	if (!read_line(dir, "address", line, sizeof(line)))
		d->guid = hex_id(line);
	d->pci = device_path(dir);
	d->port = 1;
	snprintf(d->set[0], sizeof(d->set[0]), "HOP_SOCKET_IFNAME=%.63s",
		 name);
}

/* The interfaces hop's rendezvous (and tcp provider) could use. */
static void if_scan(void)
{
	const char *want = getenv("HOP_SOCKET_IFNAME");
	struct ifaddrs *ifs, *i;

	if (want && *want) {
		if_add(want);
		return;
	}
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i; i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
			    (i->ifa_flags & IFF_UP) &&
			    !(i->ifa_flags & IFF_LOOPBACK))
				if_add(i->ifa_name);
		freeifaddrs(ifs);
	}
	if (!ndevs)
		if_add("lo");
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

static void devs_probe(void)
{
	const char *t = getenv("HOP_TRANSPORT");
	int verbs_ok = !t || !*t || !strcmp(t, "auto") || !strcmp(t, "verbs");
	float latency;

	if (verbs_ok)
		ib_scan();
	latency = profile_latency(ndevs ? "verbs" : t && *t ? t : "tcp");
	if (!ndevs)
		if_scan();
	for (int i = 0; i < ndevs; i++) {
		struct hn_dev *d = &devs[i];

		if (d->speed <= 0)
			d->speed = NOMINAL_MBPS;
		if (!d->guid)
			d->guid = 0x686f70; /* "hop": loopback's MAC is zero */
		d->latency = latency;
		for (int k = 0, n = 0; k < 3; k++)
			if (d->set[k][0])
				d->settings[n++] = d->set[k];
		HN_INFO("device %d: %s, %d Mb/s, pciPath %s, guid 0x%llx, "
			"port %d, latency %.2f us (%s%s%s%s%s)", i, d->name,
			d->speed, d->pci ? d->pci : "NULL",
			(unsigned long long)d->guid, d->port,
			(double)d->latency, d->set[0], d->set[1][0] ? " " : "",
			d->set[1], d->set[2][0] ? " " : "", d->set[2]);
	}
}

int hn_dev_count(void)
{
	pthread_once(&devs_once, devs_probe);
	return ndevs;
}

const char *const *hn_dev_settings(int dev)
{
	return dev >= 0 && dev < hn_dev_count() ? devs[dev].settings : NULL;
}

ncclResult_t hn_getProperties(int dev, struct hn_props *props)
{
	struct hn_dev *d;

	if (hn_check_dev("getProperties", dev))
		return ncclInternalError;
	if (!props) {
		HN_WARN("getProperties: props is NULL");
		return ncclInternalError;
	}
	d = &devs[dev];
	memset(props, 0, sizeof(*props));
	props->name = d->name;
	props->pciPath = d->pci;
	props->guid = d->guid;
	props->ptrSupport = NCCL_PTR_HOST;
	props->speed = d->speed;
	props->port = d->port;
	props->latency = d->latency;
	props->maxComms = 65536;
	props->maxRecvs = HN_MAX_RECVS;
	props->maxP2pBytes = HN_MAX_BYTES;
	return ncclSuccess;
}

/* Unload: the allocations the devices keep. */
__attribute__((destructor)) static void devs_free(void)
{
	for (int i = 0; i < ndevs; i++) {
		free(devs[i].pci);
		devs[i].pci = NULL;
	}
}
