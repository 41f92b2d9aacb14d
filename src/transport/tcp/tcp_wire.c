/*
 * tcp_wire.c - encoding and validation of the tcp provider's wire headers
 * and connection hello. Pure functions: no sockets, no comm, so the unit
 * tests and the fuzzer drive them with arbitrary bytes.
 */
#include <stdio.h>
#include <string.h>

#include "core/wire.h"
#include "transport/tcp/tcp.h"

void tcp_hdr_pack(const struct tcp_hdr *h, uint8_t *buf)
{
	hop_put_le32(buf, TCP_MAGIC);
	buf[4] = h->op;
	buf[5] = h->flags;
	buf[6] = buf[7] = 0;
	hop_put_le32(buf + 8, h->imm);
	hop_put_le32(buf + 12, 0);
	hop_put_le64(buf + 16, h->len);
	hop_put_le64(buf + 24, h->raddr);
	hop_put_le64(buf + 32, h->rkey);
}

#define BAD(...)                                                              \
	do {                                                                  \
		snprintf(why, whylen, __VA_ARGS__);                           \
		return HOP_ERR_PROTOCOL;                                      \
	} while (0)

int tcp_hdr_parse(const void *buf, size_t buflen, struct tcp_hdr *out,
		  char *why, size_t whylen)
{
	const uint8_t *b = buf;
	struct tcp_hdr h;
	uint32_t magic;

	if (!buf || buflen < TCP_HDR_LEN)
		BAD("header truncated (%zu of %d bytes)", buf ? buflen : 0,
		    TCP_HDR_LEN);
	magic = hop_get_le32(b);
	if (magic != TCP_MAGIC)
		BAD("bad magic 0x%08x", magic);
	h.op = b[4];
	h.flags = b[5];
	h.imm = hop_get_le32(b + 8);
	h.len = hop_get_le64(b + 16);
	h.raddr = hop_get_le64(b + 24);
	h.rkey = hop_get_le64(b + 32);
	if (b[6] || b[7] || hop_get_le32(b + 12))
		BAD("reserved fields not zero");
	switch (h.op) {
	case TCP_OP_WRITE:
		if (h.flags & ~TCP_F_IMM)
			BAD("unknown flags 0x%02x on a write", h.flags);
		if (!(h.flags & TCP_F_IMM) && h.imm)
			BAD("immediate 0x%x without the IMM flag", h.imm);
		if (h.len > TCP_MAX_WRITE)
			BAD("write length %llu exceeds %llu",
			    (unsigned long long)h.len,
			    (unsigned long long)TCP_MAX_WRITE);
		if (h.raddr + h.len < h.raddr)
			BAD("write range 0x%llx + %llu wraps around",
			    (unsigned long long)h.raddr,
			    (unsigned long long)h.len);
		break;
	case TCP_OP_SEND:
		if (h.flags)
			BAD("flags 0x%02x on a send", h.flags);
		if (h.imm || h.raddr || h.rkey)
			BAD("send with immediate, address or key set");
		if (h.len > HOP_PROV_SEND_MAX)
			BAD("send length %llu exceeds %d",
			    (unsigned long long)h.len, HOP_PROV_SEND_MAX);
		break;
	case TCP_OP_BYE:
		if (h.flags || h.imm || h.raddr || h.rkey || h.len)
			BAD("close notice with fields set");
		break;
	case TCP_OP_REJECT:
		if (h.flags || h.raddr || h.rkey || h.len)
			BAD("reject notice with fields set");
		if (h.imm == 0 || h.imm > 1000)
			BAD("reject notice with error %u", h.imm);
		break;
	default:
		BAD("unknown op %u", h.op);
	}
	*out = h;
	return 0;
}

void tcp_hello_pack(const struct tcp_hello *h, uint8_t *buf)
{
	hop_put_le32(buf, TCP_HELLO_MAGIC);
	hop_put_le32(buf + 4, h->version);
	hop_put_le32(buf + 8, h->rank);
	hop_put_le32(buf + 12, h->nranks);
	memcpy(buf + 16, h->secret, sizeof(h->secret));
}

int tcp_hello_parse(const void *buf, size_t buflen, struct tcp_hello *out,
		    char *why, size_t whylen)
{
	const uint8_t *b = buf;

	if (!buf || buflen < TCP_HELLO_LEN)
		BAD("hello truncated (%zu of %d bytes)", buf ? buflen : 0,
		    TCP_HELLO_LEN);
	if (hop_get_le32(b) != TCP_HELLO_MAGIC)
		BAD("not a hop tcp hello (magic 0x%08x)", hop_get_le32(b));
	out->version = hop_get_le32(b + 4);
	if (out->version != TCP_HELLO_VERSION)
		BAD("hello version %u, expected %u", out->version,
		    TCP_HELLO_VERSION);
	out->rank = hop_get_le32(b + 8);
	out->nranks = hop_get_le32(b + 12);
	memcpy(out->secret, b + 16, sizeof(out->secret));
	return 0;
}
