/*
 * fuzz_p2p.c - the channel protocol's decoders (src/p2p/proto.c) on
 * arbitrary bytes: the eager slot header (written by a peer into our
 * memory, so nothing in it is trusted) and the control messages (RTS, CTS,
 * NAK, CREDIT, PUT). An accepted eager header must promise no more
 * payload than was written and than a slot holds; an accepted control
 * message has a known type and re-encodes to the same bytes.
 */
#include <hop/common.h>

#include "p2p/proto.h"
#include "fuzz_common.h"

static void eager_case(const uint8_t *data, size_t size, size_t written,
		       size_t eager_size)
{
	uint8_t *buf = fuzz_dup(data, size);
	struct hop_eager_hdr h;
	char err[160];
	int ret;

	if (written > size)
		written = size;
	err[0] = '\0';
	ret = hop_eager_hdr_decode(buf, written, eager_size, &h, err,
				   sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PROTOCOL, "code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	if (ret == 0) {
		FUZZ_CHECK(written >= HOP_EAGER_HDR, "accepted %zu bytes",
			   written);
		FUZZ_CHECK(h.len <= eager_size, "len %u > slot %zu", h.len,
			   eager_size);
		FUZZ_CHECK(HOP_EAGER_HDR + (size_t)h.len <= written,
			   "len %u but only %zu bytes written", h.len, written);
		FUZZ_CHECK(h.type == HOP_MSG_EAGER, "type %u", h.type);
	}
	free(buf);
}

static void ctl_case(const uint8_t *data, size_t size)
{
	uint8_t *buf = fuzz_dup(data, size), again[HOP_CTL_MAX];
	struct hop_ctl m;
	char err[160];
	int ret;

	err[0] = '\0';
	ret = hop_ctl_decode(buf, size, &m, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PROTOCOL, "code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	if (ret == 0) {
		size_t n;

		FUZZ_CHECK(m.type > HOP_MSG_EAGER && m.type < HOP_MSG_TYPE_MAX,
			   "type %u", m.type);
		n = hop_ctl_encode(&m, again);
		FUZZ_CHECK(n <= HOP_CTL_MAX && n <= size, "encoded %zu of %zu",
			   n, size);
		FUZZ_CHECK(memcmp(again, buf, n) == 0, "encode(decode(x)) != x");
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint32_t w = fuzz_take32(&in);

	eager_case(data, size, size, 8192);
	eager_case(data, size, size, 0);
	eager_case(in.p, in.n, w % (in.n + 1), 64);
	ctl_case(data, size);
	return 0;
}
