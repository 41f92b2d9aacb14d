/*
 * select.c - every device's properties, in the driven version's layout,
 * against what NCCL's topology search and proxy set-up accept (NCCL 2.30,
 * src/graph/topo.cc ncclTopoPopulateNics/ncclTopoAddNet, src/graph/xml.cc
 * ncclTopoFillNet, src/transport/net.cc sendProxySetup):
 * - a name, unique among the devices (NCCL finds NICs by name);
 * - speed > 0 Mb/s (NCCL replaces anything else by a guessed 10 Gb/s);
 * - pciPath NULL (placed by the CPU) or a path that resolves under /sys,
 *   ending in the bus id when it is a PCI device;
 * - ptrSupport host memory only: CUDA or DMA-BUF would make NCCL hand the
 *   plugin GPU buffers (GPUDirect);
 * - v7 on: a HOST device, with no offload version;
 * - v9 on: maxP2pBytes in (0, NCCL_MAX_NET_SIZE_BYTES] (sendProxySetup
 *   fails otherwise) and at most INT_MAX (test() reports int sizes); the
 *   device is its own one-member virtual NIC;
 * - v11 on: maxMultiRequestSize >= 1; v12: rail and plane -1 or >= 0.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define MAX_DEVS 64

/*
 * NCCL reads @pci's subsystem; for a PCI device it copies the last path
 * component, a bus id, into a 32-byte buffer; anything else (virtio, a
 * virtual device) it places by the CPU.
 */
static int check_path(int d, const char *pci)
{
	char sub[PATH_MAX + 16], *real, *sys;
	const char *id;
	unsigned dom, bus, dev, fn;
	int ok;

	if (!pci)
		return 0;
	if (!(real = realpath(pci, NULL)))
		FAIL("device %d: pciPath '%s' does not resolve", d, pci);
	ok = strncmp(real, "/sys/", 5) == 0;
	free(real);
	if (!ok)
		FAIL("device %d: pciPath '%s' is not under /sys", d, pci);
	snprintf(sub, sizeof(sub), "%s/subsystem", pci);
	if (!(sys = realpath(sub, NULL)))
		return 0; /* no subsystem: NCCL places it by the CPU */
	ok = strcmp(strrchr(sys, '/'), "/pci") != 0;
	free(sys);
	id = strrchr(pci, '/') + 1;
	if (!ok && (strlen(id) >= 32 || sscanf(id, "%x:%x:%x.%x", &dom, &bus,
						   &dev, &fn) != 4))
		FAIL("device %d: pciPath '%s' is a PCI device without a bus "
		     "id as its last component", d, pci);
	return 0;
}

static int check_one(struct harness *h, int d, const ncclNetProperties_v12_t *p)
{
	int v = h->o.version;

	if (!p->name || !*p->name)
		FAIL("device %d has no name", d);
	if (p->speed <= 0)
		FAIL("device %d (%s): speed %d Mb/s; NCCL wants > 0", d,
		     p->name, p->speed);
	if (check_path(d, p->pciPath))
		return -1;
	if (p->ptrSupport != NCCL_PTR_HOST)
		FAIL("device %d (%s): ptrSupport 0x%x, want NCCL_PTR_HOST only",
		     d, p->name, (unsigned)p->ptrSupport);
	if (p->maxComms < 1 || p->maxRecvs < 1 || p->maxRecvs > MAX_GROUP ||
	    p->latency < 0)
		FAIL("device %d (%s): maxComms %d, maxRecvs %d, latency %.1f",
		     d, p->name, p->maxComms, p->maxRecvs, (double)p->latency);
	if (v >= 7 && (p->netDeviceType != NCCL_NET_DEVICE_HOST ||
		       p->netDeviceVersion != NCCL_NET_DEVICE_INVALID_VERSION))
		FAIL("device %d (%s): netDeviceType %d version %d, want HOST 0",
		     d, p->name, (int)p->netDeviceType, p->netDeviceVersion);
	if (v >= 9 && (p->maxP2pBytes == 0 ||
		       p->maxP2pBytes > (size_t)NCCL_MAX_NET_SIZE_BYTES ||
		       p->maxP2pBytes > INT_MAX))
		FAIL("device %d (%s): maxP2pBytes %zu", d, p->name,
		     p->maxP2pBytes);
	if (v >= 9 && (p->vProps.ndevs != 1 || p->vProps.devs[0] != d))
		FAIL("device %d (%s): vProps %d devices, first %d; want itself",
		     d, p->name, p->vProps.ndevs, p->vProps.devs[0]);
	if (v >= 11 && p->maxMultiRequestSize < 1)
		FAIL("device %d (%s): maxMultiRequestSize %d", d, p->name,
		     p->maxMultiRequestSize);
	if (v >= 12 && (p->railId < -1 || p->planeId < -1))
		FAIL("device %d (%s): railId %d planeId %d", d, p->name,
		     p->railId, p->planeId);
	return 0;
}

int check_selection(struct harness *h)
{
	const char *lat = getenv("NCCL_NET_TEST_LATENCY");
	double want_latency = lat && *lat ? atof(lat) : -1;
	ncclNetProperties_v12_t p;
	char *names[MAX_DEVS];
	int ndev = 0;

	CHECK_RES(h->net->devices(&ndev));
	if (ndev < 1 || ndev > MAX_DEVS)
		FAIL("devices() reported %d devices", ndev);
	for (int d = 0; d < ndev; d++) {
		CHECK_RES(version_props(d, &p));
		if (check_one(h, d, &p))
			return -1;
		if (want_latency >= 0 &&
		    fabs((double)p.latency - want_latency) > 1e-3)
			FAIL("device %d (%s): latency %.3f us, want %.3f us "
			     "(NCCL_NET_TEST_LATENCY: HOP_PROFILE's alpha)", d,
			     p.name, (double)p.latency, want_latency);
		names[d] = p.name;
		for (int e = 0; e < d; e++)
			if (!strcmp(names[e], p.name))
				FAIL("devices %d and %d are both '%s'", e, d,
				     p.name);
		printf("nccl_net_test r%d: v%d device %d '%s': %d Mb/s, pciPath "
		       "%s, guid 0x%llx, port %d, latency %.1f us: NCCL's "
		       "selection accepts it\n", h->o.rank, h->o.version, d,
		       p.name, p.speed, p.pciPath ? p.pciPath : "NULL",
		       (unsigned long long)p.guid, p.port, (double)p.latency);
	}
	return 0;
}
