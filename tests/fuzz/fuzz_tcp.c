/*
 * fuzz_tcp.c - the tcp provider's wire parsers (src/transport/tcp/
 * tcp_wire.c) on arbitrary bytes: the 40-byte operation header
 * (tcp_hdr_parse) and the connection hello (tcp_hello_parse).
 *
 * Beyond "no crash" it checks the promises the receive path relies on: an
 * accepted header has a known op, flags legal for it, a SEND no longer
 * than HOP_PROV_SEND_MAX, a WRITE no longer than TCP_MAX_WRITE whose
 * address range does not wrap; and pack(parse(x)) == x.
 */
#include "transport/tcp/tcp.h"
#include "fuzz_common.h"

static void hdr_case(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size), again[TCP_HDR_LEN];
	struct tcp_hdr h;
	char why[160];
	int ret;

	memset(&h, 0xa5, sizeof(h));
	why[0] = '\0';
	ret = tcp_hdr_parse(buf, size, &h, why, sizeof(why));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PROTOCOL, "code %d", ret);
	fuzz_check_reason(why, sizeof(why), ret);
	if (ret == 0) {
		FUZZ_CHECK(size >= TCP_HDR_LEN, "accepted %zu bytes", size);
		switch (h.op) {
		case TCP_OP_WRITE:
			FUZZ_CHECK(!(h.flags & ~TCP_F_IMM), "flags 0x%x", h.flags);
			FUZZ_CHECK(h.len <= TCP_MAX_WRITE, "len %llu",
				   (unsigned long long)h.len);
			FUZZ_CHECK(h.raddr + h.len >= h.raddr, "range wraps");
			break;
		case TCP_OP_SEND:
			FUZZ_CHECK(h.len <= HOP_PROV_SEND_MAX && !h.flags,
				   "send len %llu flags 0x%x",
				   (unsigned long long)h.len, h.flags);
			break;
		case TCP_OP_BYE:
			FUZZ_CHECK(h.len == 0, "bye with a payload");
			break;
		case TCP_OP_REJECT:
			FUZZ_CHECK(h.len == 0 && h.imm > 0,
				   "reject with a payload or no code");
			break;
		default:
			FUZZ_CHECK(0, "accepted op %u", h.op);
		}
		tcp_hdr_pack(&h, again);
		FUZZ_CHECK(memcmp(again, buf, TCP_HDR_LEN) == 0,
			   "pack(parse(x)) != x");
	}
	free(buf);
}

static void hello_case(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size), again[TCP_HELLO_LEN];
	struct tcp_hello h;
	char why[160];
	int ret;

	why[0] = '\0';
	ret = tcp_hello_parse(buf, size, &h, why, sizeof(why));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PROTOCOL, "code %d", ret);
	fuzz_check_reason(why, sizeof(why), ret);
	if (ret == 0) {
		FUZZ_CHECK(size >= TCP_HELLO_LEN && h.version == TCP_HELLO_VERSION,
			   "accepted version %u of %zu bytes", h.version, size);
		tcp_hello_pack(&h, again);
		FUZZ_CHECK(memcmp(again, buf, TCP_HELLO_LEN) == 0,
			   "pack(parse(x)) != x");
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hdr_case(data, size);
	hello_case(data, size);
	/* a stream of back-to-back headers, as the receive path sees it */
	for (size_t off = TCP_HDR_LEN; off < size && off <= 16 * TCP_HDR_LEN;
	     off += TCP_HDR_LEN)
		hdr_case(data + off, size - off);
	return 0;
}
