/*
 * id.c - the unique id: encoding, hex strings, the rendezvous listener made
 * by hop_get_unique_id() and its hand-over to rank 0 in the same process.
 *
 * Layout of the 128 opaque bytes (multi-byte fields big-endian):
 *   0  magic "HOPI"        4  version (u16)      6  family (u16, AF_INET)
 *   8  IPv4 address        12 port (u16)         14 zero (u16)
 *   16 secret (16 bytes)   32..119 zero          120 FNV-1a 64 of bytes 0..119
 * FNV-1a is a bijection of its state for each input byte, so any change
 * confined to one byte, a flipped bit in particular, changes the checksum.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <hop/comm.h>

#include "core.h"
#include "core_int.h"
#include "hash.h"

#define ID_SUM_OFF 120
#define ID_TABLE_MAX 64

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
	uint64_t v = 0;

	for (int i = 0; i < bytes; i++)
		v = (v << 8) | p[i];
	return v;
}

void hop_id_encode(const struct hop_id_info *info, hop_unique_id_t *id)
{
	uint8_t *b = (uint8_t *)id->internal;

	memset(b, 0, HOP_UNIQUE_ID_BYTES);
	put_be(b, HOP_ID_MAGIC, 4);
	put_be(b + 4, info->version ? info->version : HOP_ID_VERSION, 2);
	put_be(b + 6, AF_INET, 2);
	memcpy(b + 8, &info->addr.sin_addr.s_addr, 4); /* already big-endian */
	memcpy(b + 12, &info->addr.sin_port, 2);
	memcpy(b + 16, info->secret, HOP_SECRET_BYTES);
	put_be(b + ID_SUM_OFF, hop_fnv1a64(HOP_FNV1A64_INIT, b, ID_SUM_OFF), 8);
}

static int id_err(char *err, size_t errlen, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return HOP_ERR_INVALID_ARG;
}

int hop_id_decode_msg(const hop_unique_id_t *id, struct hop_id_info *info,
		      char *err, size_t errlen)
{
	const uint8_t *b;
	uint32_t version;

	if (!id || !info)
		return id_err(err, errlen, "unique id: NULL argument");
	b = (const uint8_t *)id->internal;
	if (get_be(b, 4) != HOP_ID_MAGIC)
		return id_err(err, errlen, "not a hop unique id (bad magic)");
	if (get_be(b + ID_SUM_OFF, 8) !=
	    hop_fnv1a64(HOP_FNV1A64_INIT, b, ID_SUM_OFF))
		return id_err(err, errlen, "unique id is corrupted (bad checksum)");
	version = (uint32_t)get_be(b + 4, 2);
	if (version != HOP_ID_VERSION) {
		if (err && errlen)
			snprintf(err, errlen, "unique id has version %u; this "
				 "hop speaks version %u", version, HOP_ID_VERSION);
		return HOP_ERR_INVALID_ARG;
	}
	if (get_be(b + 6, 2) != AF_INET)
		return id_err(err, errlen, "unique id: address family is not IPv4");
	for (int i = 14; i < ID_SUM_OFF; i++) {
		if (i == 16) /* the secret */
			i += HOP_SECRET_BYTES;
		if (b[i])
			return id_err(err, errlen, "unique id: reserved bytes "
				      "are not zero (made by a newer hop?)");
	}
	memset(info, 0, sizeof(*info));
	info->version = version;
	info->addr.sin_family = AF_INET;
	memcpy(&info->addr.sin_addr.s_addr, b + 8, 4);
	memcpy(&info->addr.sin_port, b + 12, 2);
	memcpy(info->secret, b + 16, HOP_SECRET_BYTES);
	if (info->addr.sin_port == 0)
		return id_err(err, errlen, "unique id: port is 0");
	return 0;
}

int hop_id_decode(const hop_unique_id_t *id, struct hop_id_info *info)
{
	return hop_id_decode_msg(id, info, NULL, 0);
}

int hop_unique_id_to_string(const hop_unique_id_t *id, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *b;

	if (!id || !buf || len < 2 * HOP_UNIQUE_ID_BYTES + 1)
		return HOP_ERR_INVALID_ARG;
	b = (const uint8_t *)id->internal;
	for (int i = 0; i < HOP_UNIQUE_ID_BYTES; i++) {
		buf[2 * i] = hex[b[i] >> 4];
		buf[2 * i + 1] = hex[b[i] & 15];
	}
	buf[2 * HOP_UNIQUE_ID_BYTES] = '\0';
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int hop_unique_id_from_string(const char *str, hop_unique_id_t *id)
{
	hop_unique_id_t tmp;
	struct hop_id_info info;

	if (!str || !id || strlen(str) != 2 * HOP_UNIQUE_ID_BYTES)
		return HOP_ERR_INVALID_ARG;
	for (int i = 0; i < HOP_UNIQUE_ID_BYTES; i++) {
		int hi = hexval(str[2 * i]), lo = hexval(str[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return HOP_ERR_INVALID_ARG;
		tmp.internal[i] = (char)(hi << 4 | lo);
	}
	if (hop_id_decode(&tmp, &info))
		return HOP_ERR_INVALID_ARG;
	*id = tmp;
	return 0;
}

int hop_random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

			if (fd < 0)
				return -errno;
			n = read(fd, p, len);
			close(fd);
			if (n <= 0)
				return -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void hop_sockaddr_str(const struct sockaddr_in *sa, char *buf, size_t len)
{
	char ip[INET_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET, &sa->sin_addr, ip, sizeof(ip));
	snprintf(buf, len, "%s:%u", ip, (unsigned)ntohs(sa->sin_port));
}

int hop_fd_nonblock_cloexec(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	fl = fcntl(fd, F_GETFD);
	if (fl < 0 || fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

/* Bridges and veth pairs of container hosts rarely reach other hosts. */
static int is_virtual_if(const char *name)
{
	static const char *const pfx[] = { "docker", "virbr", "veth", "br-" };

	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (strncmp(name, pfx[i], strlen(pfx[i])) == 0)
			return 1;
	return 0;
}

int hop_pick_ipv4(const char *ifname, int prefer_loopback,
		  struct in_addr *out, char *err, size_t errlen)
{
	struct ifaddrs *ifa, *i;
	struct in_addr first = { 0 }, first_virt = { 0 };
	int found = 0, found_virt = 0;

	if (!(ifname && *ifname) && prefer_loopback) {
		out->s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	if (getifaddrs(&ifa) < 0) {
		snprintf(err, errlen, "getifaddrs: %s", strerror(errno));
		return HOP_ERR_SYSTEM;
	}
	for (i = ifa; i; i = i->ifa_next) {
		struct in_addr a;

		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
			continue;
		a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
		if (ifname && *ifname) {
			if (strcmp(i->ifa_name, ifname) == 0) {
				*out = a;
				freeifaddrs(ifa);
				return 0;
			}
			continue;
		}
		if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (is_virtual_if(i->ifa_name)) {
			if (!found_virt++)
				first_virt = a;
		} else if (!found++) {
			first = a;
		}
	}
	if (ifname && *ifname) {
		size_t o = 0;
		char have[200] = "";

		for (i = ifa; i && o + 1 < sizeof(have); i = i->ifa_next)
			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
				o += (size_t)snprintf(have + o, sizeof(have) - o,
						      "%s%s", o ? ", " : "",
						      i->ifa_name);
		freeifaddrs(ifa);
		snprintf(err, errlen, "HOP_SOCKET_IFNAME='%s': no interface of "
			 "that name has an IPv4 address (interfaces with one: %s)",
			 ifname, have[0] ? have : "none");
		return HOP_ERR_CONFIG;
	}
	freeifaddrs(ifa);
	if (found)
		*out = first;
	else if (found_virt)
		*out = first_virt;
	else
		out->s_addr = htonl(INADDR_LOOPBACK);
	return 0;
}

int hop_id_listen(const char *ifname, int prefer_loopback,
		  struct hop_id_info *info, int *fdp, char *err, size_t errlen)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sa);
	char where[64];
	int fd, ret;

	if ((ret = hop_pick_ipv4(ifname, prefer_loopback, &sa.sin_addr, err,
				 errlen)))
		return ret;
	hop_sockaddr_str(&sa, where, sizeof(where));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return HOP_ERR_SYSTEM;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, SOMAXCONN) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &slen) < 0) {
		snprintf(err, errlen, "rendezvous listener on %s: %s", where,
			 strerror(errno));
		close(fd);
		return HOP_ERR_SYSTEM;
	}
	memset(info, 0, sizeof(*info));
	info->version = HOP_ID_VERSION;
	info->addr = sa;
	if ((ret = hop_random_bytes(info->secret, HOP_SECRET_BYTES))) {
		snprintf(err, errlen, "getrandom: %s", strerror(-ret));
		close(fd);
		return HOP_ERR_SYSTEM;
	}
	*fdp = fd;
	return 0;
}

/* Listeners made by hop_get_unique_id() waiting for rank 0 in-process. */
static struct {
	int fd;
	uint8_t secret[HOP_SECRET_BYTES];
	uint64_t stamp;
} id_table[ID_TABLE_MAX];
static int id_table_used;
static uint64_t id_stamp;
static pthread_mutex_t id_lock = PTHREAD_MUTEX_INITIALIZER;

static void id_table_put(int fd, const uint8_t *secret)
{
	int slot = 0;

	pthread_mutex_lock(&id_lock);
	if (id_table_used < ID_TABLE_MAX) {
		slot = id_table_used++;
	} else {
		/* evict the oldest: rank 0 will bind the address itself */
		for (int i = 1; i < ID_TABLE_MAX; i++)
			if (id_table[i].stamp < id_table[slot].stamp)
				slot = i;
		HOP_WARN("more than %d unique ids are waiting for their rank 0; "
			 "closing the oldest listener", ID_TABLE_MAX);
		close(id_table[slot].fd);
	}
	id_table[slot].fd = fd;
	memcpy(id_table[slot].secret, secret, HOP_SECRET_BYTES);
	id_table[slot].stamp = ++id_stamp;
	pthread_mutex_unlock(&id_lock);
}

int hop_id_take_listener(const uint8_t secret[HOP_SECRET_BYTES])
{
	int fd = -1;

	pthread_mutex_lock(&id_lock);
	for (int i = 0; i < id_table_used; i++) {
		if (memcmp(id_table[i].secret, secret, HOP_SECRET_BYTES) == 0) {
			fd = id_table[i].fd;
			id_table[i] = id_table[--id_table_used];
			break;
		}
	}
	pthread_mutex_unlock(&id_lock);
	return fd;
}

int hop_get_unique_id(hop_unique_id_t *id)
{
	return hop_get_unique_id_with(id, NULL);
}

int hop_get_unique_id_with(hop_unique_id_t *id, const char *const *settings)
{
	struct hop_config cfg;
	struct hop_id_info info;
	char err[HOP_MSG_LEN];
	int fd, ret;

	if (!id) {
		hop_set_init_error("hop_get_unique_id: id is NULL");
		return HOP_ERR_INVALID_ARG;
	}
	hop_log_init();
	if ((ret = hop_config_load_with(&cfg, settings, err, sizeof(err)))) {
		hop_set_init_error("hop_get_unique_id: %s", err);
		return ret;
	}
	if ((ret = hop_id_listen(cfg.socket_ifname, 0, &info, &fd, err,
				 sizeof(err)))) {
		hop_set_init_error("hop_get_unique_id: %s", err);
		return ret;
	}
	id_table_put(fd, info.secret);
	hop_id_encode(&info, id);
	hop_sockaddr_str(&info.addr, err, sizeof(err));
	HOP_INFO("unique id: rank 0 will listen on %s", err);
	return 0;
}
