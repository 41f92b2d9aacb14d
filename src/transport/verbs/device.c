/*
 * device.c - device, port and GID choice of the verbs provider.
 *
 * HOP_IB_DEVICE names the device (default: the first with an ACTIVE
 * HOP_IB_PORT); HOP_IB_GID_INDEX overrides the GID, which is otherwise
 * chosen by vrb_gid_choose(). When nothing fits, the error lists every
 * device, port state and GID seen, so the reader knows what to set.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/verbs/verbs.h"

/* ------------------------------------------------------------------ */
/* pure                                                               */

static int gid_is_zero(const uint8_t *raw)
{
	for (int i = 0; i < 16; i++)
		if (raw[i])
			return 0;
	return 1;
}

static int gid_is_v4mapped(const uint8_t *raw)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return memcmp(raw, pfx, 12) == 0;
}

static int gid_is_linklocal(const uint8_t *raw)
{
	return raw[0] == 0xfe && (raw[1] & 0xc0) == 0x80;
}

static int gid_score(const struct vrb_gid *g, uint32_t pref_ipv4)
{
	int v4 = gid_is_v4mapped(g->raw);

	switch (g->type) {
	case VRB_GID_ROCE_V2:
		if (v4)
			return pref_ipv4 && !memcmp(g->raw + 12, &pref_ipv4, 4) ? 100 : 90;
		return gid_is_linklocal(g->raw) ? 50 : 70;
	case VRB_GID_ROCE_V1:
		return v4 ? 40 : 30;
	case VRB_GID_IB:
		return 20;
	default:
		return 0;
	}
}

void vrb_gid_str(const uint8_t raw[16], char *buf, size_t len)
{
	if (gid_is_v4mapped(raw)) {
		snprintf(buf, len, "::ffff:%u.%u.%u.%u", raw[12], raw[13], raw[14],
			 raw[15]);
		return;
	}
	if (!inet_ntop(AF_INET6, raw, buf, (socklen_t)len) && len)
		buf[0] = '\0';
}

const char *vrb_gid_type_str(int type)
{
	switch (type) {
	case VRB_GID_IB:
		return "IB";
	case VRB_GID_ROCE_V1:
		return "RoCE v1";
	case VRB_GID_ROCE_V2:
		return "RoCE v2";
	default:
		return "unknown";
	}
}

int vrb_gid_choose(const struct vrb_gid *g, int n, int override,
		   uint32_t pref_ipv4, char *why, size_t whylen)
{
	int best = -1, best_score = 0;

	if (why && whylen)
		why[0] = '\0';
	if (override >= 0) {
		for (int i = 0; i < n; i++)
			if (g[i].index == override && !gid_is_zero(g[i].raw))
				return override;
		snprintf(why, whylen,
			 "HOP_IB_GID_INDEX=%d is not a valid GID of this port",
			 override);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		int s;

		if (gid_is_zero(g[i].raw))
			continue;
		s = gid_score(&g[i], pref_ipv4);
		if (s > best_score ||
		    (s == best_score && s > 0 && g[i].index < g[best].index)) {
			best = i;
			best_score = s;
		}
	}
	if (best < 0) {
		snprintf(why, whylen, "no usable GID (table empty or all zero)");
		return -1;
	}
	return g[best].index;
}

int vrb_mtu_from_bytes(int bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	case 4096:
		return IBV_MTU_4096;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------------ */
/* device                                                             */

static void appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;

	if (used + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static const char *port_state_str(enum ibv_port_state s)
{
	return ibv_port_state_str(s);
}

static void gid_put(struct vrb_gid *g, const struct ibv_gid_entry *e)
{
	g->index = (int)e->gid_index;
	g->type = e->gid_type == IBV_GID_TYPE_ROCE_V2 ? VRB_GID_ROCE_V2 :
		  e->gid_type == IBV_GID_TYPE_ROCE_V1 ? VRB_GID_ROCE_V1 : VRB_GID_IB;
	memcpy(g->raw, e->gid.raw, 16);
}

/*
 * Read the valid GIDs of @port into @g (at most @max); returns the count.
 * One ibv_query_gid_table() call (rxe's table has 1024 slots, and a query
 * per slot is a system call each), else slot by slot.
 */
static int read_gids(struct ibv_context *ctx, int port, int tbl_len,
		     struct vrb_gid *g, int max)
{
	struct ibv_device_attr da;
	struct ibv_gid_entry *t;
	size_t cap;
	ssize_t got;
	int n = 0;

	if (!ibv_query_device(ctx, &da) && tbl_len > 0 &&
	    (cap = (size_t)da.phys_port_cnt * (size_t)tbl_len) > 0 &&
	    (t = calloc(cap, sizeof(*t)))) {
		got = ibv_query_gid_table(ctx, t, cap, 0);
		for (ssize_t i = 0; i < got && n < max; i++)
			if (t[i].port_num == (uint32_t)port && !gid_is_zero(t[i].gid.raw))
				gid_put(&g[n++], &t[i]);
		free(t);
		if (got >= 0)
			return n;
	}
	for (int i = 0; i < tbl_len && n < max; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0))
			continue;       /* empty slot (ENODATA) */
		if (!gid_is_zero(e.gid.raw))
			gid_put(&g[n++], &e);
	}
	return n;
}

static void list_gids(const struct vrb_gid *g, int n, char *buf, size_t len)
{
	if (!n)
		appendf(buf, len, " no GIDs");
	for (int i = 0; i < n; i++) {
		char s[64];

		vrb_gid_str(g[i].raw, s, sizeof(s));
		appendf(buf, len, " [%d] %s %s", g[i].index, s,
			vrb_gid_type_str(g[i].type));
	}
}

#define VRB_MAX_GIDS 128

/*
 * Check @port of @ctx: ACTIVE and (on Ethernet) a GID that fits. On
 * success fill the port fields of @prov (when not NULL) and return 1; else
 * append what was seen to @seen and return 0.
 */
static int port_fits(struct ibv_context *ctx, int port, const struct vrb_cfg *cfg,
		     uint32_t pref_ipv4, struct hop_prov *prov, char *seen,
		     size_t seenlen)
{
	struct vrb_gid g[VRB_MAX_GIDS];
	struct ibv_port_attr pa;
	char why[128];
	int n, idx;

	if (ibv_query_port(ctx, (uint8_t)port, &pa)) {
		appendf(seen, seenlen, "; %s port %d: ibv_query_port: %s",
			ibv_get_device_name(ctx->device), port, strerror(errno));
		return 0;
	}
	n = read_gids(ctx, port, pa.gid_tbl_len, g, VRB_MAX_GIDS);
	if (pa.state != IBV_PORT_ACTIVE) {
		appendf(seen, seenlen, "; %s port %d: %s", ibv_get_device_name(ctx->device),
			port, port_state_str(pa.state));
		return 0;
	}
	idx = vrb_gid_choose(g, n, cfg->ib_gid_index, pref_ipv4, why, sizeof(why));
	if (idx < 0 && pa.link_layer == IBV_LINK_LAYER_INFINIBAND &&
	    cfg->ib_gid_index < 0) {
		idx = 0;        /* IB: LID routing needs no GID */
	}
	if (idx < 0) {
		appendf(seen, seenlen, "; %s port %d: ACTIVE %s, %s; GIDs:",
			ibv_get_device_name(ctx->device), port,
			pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "IB", why);
		list_gids(g, n, seen, seenlen);
		return 0;
	}
	if (prov) {
		prov->port = port;
		prov->gid_index = idx;
		prov->lid = pa.lid;
		prov->link_layer = pa.link_layer;
		prov->active_mtu = pa.active_mtu;
		prov->max_msg = pa.max_msg_sz;
		if (ibv_query_gid(ctx, (uint8_t)port, idx, &prov->gid))
			memset(&prov->gid, 0, sizeof(prov->gid));
	}
	return 1;
}

/* Names of every device, for messages. */
static void list_devices(struct ibv_device **l, int num, char *buf, size_t len)
{
	for (int i = 0; i < num; i++)
		appendf(buf, len, "%s%s", i ? ", " : "", ibv_get_device_name(l[i]));
}

/*
 * The first device of @l (the one HOP_IB_DEVICE names, if set) with a
 * port that fits, opened; NULL when none does.
 * *@matched counts the devices HOP_IB_DEVICE let through; @seen collects
 * why each one was passed over. @pref_ipv4 and @prov go to port_fits().
 */
static struct ibv_context *open_fitting(struct ibv_device **l, int num,
					const struct vrb_cfg *cfg,
					uint32_t pref_ipv4,
					struct hop_prov *prov, int *matched,
					char *seen, size_t seenlen)
{
	for (int i = 0; i < num; i++) {
		struct ibv_context *ctx;

		if (cfg->ib_device[0] && strcmp(cfg->ib_device, ibv_get_device_name(l[i])))
			continue;
		(*matched)++;
		ctx = ibv_open_device(l[i]);
		if (!ctx) {
			appendf(seen, seenlen, "; %s: ibv_open_device: %s",
				ibv_get_device_name(l[i]), strerror(errno));
			continue;
		}
		if (port_fits(ctx, cfg->ib_port, cfg, pref_ipv4, prov, seen,
			      seenlen))
			return ctx;
		ibv_close_device(ctx);
	}
	return NULL;
}

void vrb_cfg_load(const struct hop_prov_ctx *ctx, struct vrb_cfg *cfg)
{
	static const struct {
		const char *var;
		size_t off;
		int dflt;
	} ints[] = {
#define VRB_INT(v, f, d) { v, offsetof(struct vrb_cfg, f), d }
		VRB_INT("HOP_IB_PORT", ib_port, 1),
		VRB_INT("HOP_IB_GID_INDEX", ib_gid_index, -1),
		VRB_INT("HOP_IB_TIMEOUT", ib_timeout, 18),
		VRB_INT("HOP_IB_RETRY_CNT", ib_retry_cnt, 7),
		VRB_INT("HOP_IB_MTU", ib_mtu, 0),
		VRB_INT("HOP_IB_SIGNAL_EVERY", ib_signal_every, 16),
		VRB_INT("HOP_IB_LIVENESS_MS", ib_liveness_ms, 1000),
		VRB_INT("HOP_YIELD_US", yield_us, -1),
		VRB_INT("HOP_SPIN", spin_count, -1),
#undef VRB_INT
	};

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		*(int *)(void *)((char *)cfg + ints[i].off) =
			(int)hop_prov_setting_int(ctx, ints[i].var, ints[i].dflt);
	hop_prov_setting_str(ctx, "HOP_IB_DEVICE", cfg->ib_device,
			     sizeof(cfg->ib_device), "");
	if (!hop_prov_setting_str(ctx, "HOP_IB_CM", cfg->ib_cm,
				  sizeof(cfg->ib_cm), NULL))
		snprintf(cfg->ib_cm, sizeof(cfg->ib_cm), "rdmacm");
	hop_prov_setting_str(ctx, "HOP_SOCKET_IFNAME", cfg->socket_ifname,
			     sizeof(cfg->socket_ifname), "");
	/* "" (eager) when unset or when this hop has no such setting */
	hop_prov_setting_str(ctx, "HOP_CONNECT", cfg->connect,
			     sizeof(cfg->connect), "");
	cfg->timeout_ms = ctx->timeout_ms;
}

int vrb_usable(const struct hop_prov_ctx *ctx, char *why, size_t whylen)
{
	struct vrb_cfg cfgv, *cfg = &cfgv;
	struct ibv_device **l;
	struct ibv_context *dev;
	char seen[1024] = "";
	int num = 0, matched = 0;

	vrb_cfg_load(ctx, cfg);
	l = ibv_get_device_list(&num);
	if (!l || num == 0) {
		snprintf(why, whylen,
			 "no RDMA devices found (ibv_get_device_list returned 0)");
		if (l)
			ibv_free_device_list(l);
		return 0;
	}
	dev = open_fitting(l, num, cfg, 0, NULL, &matched, seen, sizeof(seen));
	if (dev) {
		ibv_close_device(dev);
	} else if (!matched) {
		char names[256] = "";

		list_devices(l, num, names, sizeof(names));
		snprintf(why, whylen, "HOP_IB_DEVICE=%s not found; devices: %s",
			 cfg->ib_device, names);
	} else {
		snprintf(why, whylen, "no ACTIVE port %d with a usable GID%s",
			 cfg->ib_port, seen);
	}
	ibv_free_device_list(l);
	return dev != NULL;
}

int vrb_dev_open(struct hop_prov *prov, uint32_t pref_ipv4)
{
	const struct vrb_cfg *cfg = &prov->cfg;
	struct ibv_device **l;
	struct ibv_context *dev;
	char seen[1024] = "", names[256] = "";
	int num = 0, matched = 0;

	l = ibv_get_device_list(&num);
	if (!l || num == 0) {
		if (l)
			ibv_free_device_list(l);
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
				     "verbs: rank %d: no RDMA devices found "
				     "(ibv_get_device_list returned 0)", prov->rank);
	}
	dev = open_fitting(l, num, cfg, pref_ipv4, prov, &matched, seen,
			   sizeof(seen));
	if (dev) {
		prov->ctx = dev;
		prov->ctx_owned = 1;
		snprintf(prov->devname, sizeof(prov->devname), "%s",
			 ibv_get_device_name(dev->device));
		ibv_free_device_list(l);
		return 0;
	}
	list_devices(l, num, names, sizeof(names));
	ibv_free_device_list(l);
	if (!matched)
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
				     "verbs: rank %d: HOP_IB_DEVICE=%s not found; devices: %s",
				     prov->rank, cfg->ib_device, names);
	return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
			     "verbs: rank %d: no device with an ACTIVE port %d and a "
			     "usable GID (devices: %s%s)", prov->rank, cfg->ib_port,
			     names, seen);
}

int vrb_port_setup(struct hop_prov *prov, uint32_t pref_ipv4)
{
	const struct vrb_cfg *cfg = &prov->cfg;
	struct ibv_device_attr da;
	char seen[1024] = "";

	if (ibv_query_device(prov->ctx, &da))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_TRANSPORT,
				     "verbs: rank %d: ibv_query_device(%s): %s",
				     prov->rank, prov->devname, strerror(errno));
	if (!port_fits(prov->ctx, prov->port, cfg, pref_ipv4, prov, seen, sizeof(seen)))
		return prov->pctx->fail_comm(prov->pctx, HOP_ERR_NO_DEVICE,
				     "verbs: rank %d: %s port %d does not fit%s",
				     prov->rank, prov->devname, prov->port, seen);
	prov->rd_atom = da.max_qp_rd_atom > 0 ? 1 : 0;
	prov->retry_cnt = vrb_retry_cnt(cfg->ib_retry_cnt, da.vendor_id);
	if (prov->retry_cnt != cfg->ib_retry_cnt)
		HOP_PROV_INFO(prov->pctx, "rank %d: %s is Soft-RoCE, which retries forever "
			 "with retry_cnt 7: using %d so a dead link fails",
			 prov->rank, prov->devname, prov->retry_cnt);
	prov->mtu = prov->active_mtu;
	if (cfg->ib_mtu) {
		int want = vrb_mtu_from_bytes(cfg->ib_mtu);

		if (!want)
			return prov->pctx->fail_comm(prov->pctx, HOP_ERR_CONFIG,
					     "verbs: HOP_IB_MTU=%d is not one of 256, 512, "
					     "1024, 2048, 4096", cfg->ib_mtu);
		if (want > prov->active_mtu)
			HOP_PROV_WARN(prov->pctx, "HOP_IB_MTU=%d exceeds the active MTU %d of %s "
				 "port %d; using %d", cfg->ib_mtu,
				 128 << prov->active_mtu, prov->devname, prov->port,
				 128 << prov->active_mtu);
		else
			prov->mtu = want;
	}
	{
		char g[64];

		vrb_gid_str(prov->gid.raw, g, sizeof(g));
		HOP_PROV_INFO(prov->pctx, "rank %d: %s port %d gid[%d] %s lid %u mtu %d",
			 prov->rank, prov->devname, prov->port, prov->gid_index, g,
			 prov->lid, 128 << prov->mtu);
	}
	return 0;
}
