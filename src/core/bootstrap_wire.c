/*
 * bootstrap_wire.c - the bootstrap's message header codec (a pure parser
 * the fuzzer calls), socket reads and writes that each carry a deadline,
 * and the failure paths shared by rendezvous and collectives.
 */
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bs_int.h"
#include "core_int.h"
#include "wire.h"

static const char *const type_names[] = {
	[0] = "?",
	[HOP_BS_HELLO] = "HELLO",     [HOP_BS_READY] = "READY",
	[HOP_BS_REJECT] = "REJECT",   [HOP_BS_ABORT] = "ABORT",
	[HOP_BS_GATHER] = "GATHER",   [HOP_BS_START] = "START",
	[HOP_BS_BARRIER] = "BARRIER", [HOP_BS_RELEASE] = "RELEASE",
	[HOP_BS_LINK] = "LINK",       [HOP_BS_BLOCK] = "BLOCK",
	[HOP_BS_FAIL] = "FAIL",
};

const char *hop_bs_type_name(unsigned type)
{
	return type <= HOP_BS_TYPE_MAX ? type_names[type] : "?";
}

void hop_bs_hdr_pack(uint8_t out[HOP_BS_HDR_LEN], uint16_t type,
		     uint16_t seq, uint32_t rank, uint32_t len)
{
	hop_put_be32(out, HOP_BS_MAGIC);
	out[4] = (uint8_t)(type >> 8);
	out[5] = (uint8_t)type;
	out[6] = (uint8_t)(seq >> 8);
	out[7] = (uint8_t)seq;
	hop_put_be32(out + 8, rank);
	hop_put_be32(out + 12, len);
}

static int parse_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int parse_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return HOP_ERR_PROTOCOL;
}

int hop_bs_hdr_parse(const void *buf, size_t buflen, uint32_t max_len,
		     struct hop_bs_hdr *out, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	struct hop_bs_hdr h;

	if (!p || buflen < HOP_BS_HDR_LEN)
		return parse_err(err, errlen, "truncated bootstrap header: "
				 "%zu of %d bytes", p ? buflen : 0,
				 HOP_BS_HDR_LEN);
	h.magic = hop_get_be32(p);
	h.type = (uint16_t)(p[4] << 8 | p[5]);
	h.flags = (uint16_t)(p[6] << 8 | p[7]);
	h.rank = hop_get_be32(p + 8);
	h.len = hop_get_be32(p + 12);
	if (h.magic != HOP_BS_MAGIC)
		return parse_err(err, errlen, "bad bootstrap magic 0x%08x "
				 "(expected 0x%08x): not a hop peer", h.magic,
				 HOP_BS_MAGIC);
	if (h.type == 0 || h.type > HOP_BS_TYPE_MAX)
		return parse_err(err, errlen, "unknown bootstrap message type "
				 "%u", (unsigned)h.type);
	if (max_len > HOP_BS_MAX_MSG)
		max_len = HOP_BS_MAX_MSG;
	if (h.len > max_len)
		return parse_err(err, errlen, "bootstrap %s message of %u "
				 "bytes exceeds the %u expected",
				 hop_bs_type_name(h.type), h.len, max_len);
	if (out)
		*out = h;
	return 0;
}

void hop_bs_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

ssize_t hop_bs_sendv(int fd, const uint8_t *hdr, const void *payload,
		     size_t len, size_t done)
{
	struct iovec iov[2];
	struct msghdr mh = { .msg_iov = iov };

	if (done < HOP_BS_HDR_LEN) {
		iov[0].iov_base = (uint8_t *)(uintptr_t)hdr + done;
		iov[0].iov_len = HOP_BS_HDR_LEN - done;
		iov[1].iov_base = (void *)(uintptr_t)payload;
		iov[1].iov_len = len;
		mh.msg_iovlen = len ? 2 : 1;
	} else {
		iov[0].iov_base = (uint8_t *)(uintptr_t)payload +
				  (done - HOP_BS_HDR_LEN);
		iov[0].iov_len = HOP_BS_HDR_LEN + len - done;
		mh.msg_iovlen = 1;
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL);
}

int hop_bs_send(int fd, uint16_t type, uint16_t seq, uint32_t rank,
		const void *payload, size_t len, uint64_t deadline_ns,
		int watch_in, size_t *sent)
{
	uint8_t hdr[HOP_BS_HDR_LEN];
	size_t total = HOP_BS_HDR_LEN + len, done = 0;

	hop_bs_hdr_pack(hdr, type, seq, rank, (uint32_t)len);
	if (sent)
		*sent = 0;
	while (done < total) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		ssize_t n = hop_bs_sendv(fd, hdr, payload, len, done);
		int r;

		if (n > 0) {
			done += (size_t)n;
			if (sent)
				*sent = done;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return errno == ECONNRESET ? -EPIPE : -errno;
		if (watch_in)
			pfd.events |= POLLIN;
		r = poll(&pfd, 1, hop_deadline_ms_left(deadline_ns));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0 && hop_deadline_passed(deadline_ns))
			return -ETIMEDOUT;
		if (watch_in && (pfd.revents & (POLLIN | POLLHUP)))
			return 1;
	}
	return 0;
}

int hop_bs_send_counted(struct hop_bootstrap *bs, int fd, uint16_t type,
			uint32_t rank, const void *payload, size_t len,
			uint64_t deadline_ns, int watch_in)
{
	size_t sent = 0;
	int ret = hop_bs_send(fd, type, bs->seq, rank, payload, len,
			      deadline_ns, watch_in, &sent);

	bs->tx_bytes += sent;
	return ret;
}

int hop_bs_recv(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
	uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n = recv(fd, p + done, len - done, 0);
		int r;

		if (n > 0) {
			done += (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return errno == EPIPE ? -ECONNRESET : -errno;
		r = poll(&pfd, 1, hop_deadline_ms_left(deadline_ns));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0 && hop_deadline_passed(deadline_ns))
			return -ETIMEDOUT;
	}
	return 0;
}

size_t hop_bs_reason_pack(uint8_t *buf, int code, const char *reason)
{
	size_t n = strnlen(reason, HOP_BS_REASON_MAX);

	hop_put_be32(buf, (uint32_t)-code);
	memcpy(buf + 4, reason, n);
	return 4 + n;
}

int hop_bs_reason_unpack(const uint8_t *buf, size_t len, char *reason,
			 size_t rlen)
{
	uint32_t c;
	size_t n = 0;

	if (len < 4) {
		snprintf(reason, rlen, "(no reason given)");
		return HOP_ERR_BOOTSTRAP;
	}
	c = hop_get_be32(buf);
	for (size_t i = 4; i < len && n + 1 < rlen; i++) /* printable only */
		reason[n++] = (buf[i] >= 0x20 && buf[i] < 0x7f) ? (char)buf[i] : '?';
	reason[n] = '\0';
	/* only codes hop knows; anything else is a bootstrap failure */
	if (c == 0 || c > 0x7fffffffu || /* -(int)c must not overflow */
	    strcmp(hop_err_name(-(int)c), "HOP_ERR_UNKNOWN") == 0)
		return HOP_ERR_BOOTSTRAP;
	return -(int)c;
}

void hop_bs_rank_list(const uint8_t *missing, int nranks, char *buf,
		      size_t len, int *count)
{
	size_t o = 0;
	int n = 0, shown = 0;

	buf[0] = '\0';
	for (int r = 0; r < nranks; r++) {
		int e = r;

		if (!missing[r])
			continue;
		while (e + 1 < nranks && missing[e + 1])
			e++;
		n += e - r + 1;
		if (o + 24 < len) {
			if (e == r)
				o += (size_t)snprintf(buf + o, len - o, "%s%d",
						      o ? "," : "", r);
			else
				o += (size_t)snprintf(buf + o, len - o,
						      "%s%d-%d", o ? "," : "",
						      r, e);
			shown = n;
		}
		r = e;
	}
	if (shown < n && o + 1 < len)
		snprintf(buf + o, len - o, ",... (%d more)", n - shown);
	if (count)
		*count = n;
}

void hop_bs_secs(int ms, char *buf, size_t len)
{
	snprintf(buf, len, "%g", ms / 1000.0);
}

int hop_bs_fail(struct hop_bootstrap *bs, int code, const char *fmt, ...)
{
	va_list ap;

	if (bs->failed) /* the first cause is kept */
		return code;
	va_start(ap, fmt);
	vsnprintf(bs->err, sizeof(bs->err), fmt, ap);
	va_end(ap);
	bs->failed = code;
	return code;
}

int hop_bs_root_abort(struct hop_bootstrap *bs, int code, const char *fmt, ...)
{
	uint8_t payload[4 + HOP_BS_REASON_MAX];
	char reason[HOP_BS_REASON_MAX + 1];
	uint64_t deadline = hop_deadline_after(1000);
	size_t plen;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	plen = hop_bs_reason_pack(payload, code, reason);
	for (int r = 1; r < bs->nranks && bs->peers; r++) {
		struct hop_bs_peer *p = &bs->peers[r];

		if (p->fd < 0 || p->tx_broken)
			continue;
		if (hop_bs_send_counted(bs, p->fd, HOP_BS_ABORT, 0, payload,
					plen, deadline, 0))
			p->tx_broken = 1;
	}
	return hop_bs_fail(bs, code, "%s", reason);
}

int hop_bs_peer_recv(struct hop_bootstrap *bs, uint16_t type, void *buf,
		     size_t len, uint64_t deadline_ns, const char *what)
{
	uint8_t hdr[HOP_BS_HDR_LEN], rbuf[4 + HOP_BS_REASON_MAX];
	char root[32], msg[256], secs[32];
	struct hop_bs_hdr h;
	uint32_t max = len > sizeof(rbuf) ? (uint32_t)len : sizeof(rbuf);
	int ret;

	hop_sockaddr_str(&bs->root_addr, root, sizeof(root));
	hop_bs_secs(bs->timeout_ms, secs, sizeof(secs));
	ret = hop_bs_recv(bs->fd, hdr, sizeof(hdr), deadline_ns);
	if (ret == -ETIMEDOUT)
		return hop_bs_fail(bs, HOP_ERR_TIMEOUT, "rank %d: %s: no answer "
				   "from rank 0 (%s) within %s s", bs->rank,
				   what, root, secs);
	if (ret)
		return hop_bs_fail(bs, HOP_ERR_BOOTSTRAP, "rank %d: %s: rank 0 "
				   "(%s) closed the bootstrap connection (%s)",
				   bs->rank, what, root, strerror(-ret));
	if ((ret = hop_bs_hdr_parse(hdr, sizeof(hdr), max, &h, msg,
				    sizeof(msg))))
		return hop_bs_fail(bs, ret, "rank %d: %s: from rank 0 (%s): %s",
				   bs->rank, what, root, msg);
	if (h.type == HOP_BS_REJECT || h.type == HOP_BS_ABORT) {
		if (h.len > sizeof(rbuf))
			return hop_bs_fail(bs, HOP_ERR_PROTOCOL, "rank %d: %s: "
					   "%u-byte %s from rank 0", bs->rank,
					   what, h.len, hop_bs_type_name(h.type));
		if ((ret = hop_bs_recv(bs->fd, rbuf, h.len, deadline_ns)))
			return hop_bs_fail(bs, HOP_ERR_BOOTSTRAP, "rank %d: %s: "
					   "rank 0 (%s) failed the bootstrap",
					   bs->rank, what, root);
		ret = hop_bs_reason_unpack(rbuf, h.len, msg, sizeof(msg));
		bs->aborted = 1;
		if (h.type == HOP_BS_REJECT)
			return hop_bs_fail(bs, ret, "rank %d: rank 0 (%s) "
					   "rejected us: %s", bs->rank, root, msg);
		return hop_bs_fail(bs, ret, "rank %d: aborted by rank 0: %s",
				   bs->rank, msg);
	}
	if (h.type != type || h.flags != bs->seq || h.len != len)
		return hop_bs_fail(bs, HOP_ERR_PROTOCOL, "rank %d: %s: expected "
				   "%s #%u of %zu bytes from rank 0, got %s #%u "
				   "of %u bytes", bs->rank, what,
				   hop_bs_type_name(type), (unsigned)bs->seq,
				   len, hop_bs_type_name(h.type),
				   (unsigned)h.flags, h.len);
	if (len && (ret = hop_bs_recv(bs->fd, buf, len, deadline_ns)))
		return hop_bs_fail(bs, ret == -ETIMEDOUT ? HOP_ERR_TIMEOUT :
				   HOP_ERR_BOOTSTRAP, "rank %d: %s: receiving "
				   "%zu bytes from rank 0 (%s): %s", bs->rank,
				   what, len, root, strerror(-ret));
	return 0;
}
