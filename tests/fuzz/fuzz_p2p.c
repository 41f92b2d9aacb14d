/*
 * fuzz_p2p.c - the channel protocol's decoders (src/p2p/proto.c) on
 * arbitrary bytes: the eager slot header (written by a peer into our
 * memory, so nothing in it is trusted) and the control messages (RTS, CTS,
 * NAK, CREDIT, PUT). An accepted eager header must promise no more
 * payload than was written and than a slot holds; an accepted control
 * message has a known type and re-encodes to the same bytes. The LL form
 * of an eager slot is read from the same bytes: an accepted message fits
 * HOP_LL_MAX and the slot, and its words all carried the flag.
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

static void ll_case(const uint8_t *data, size_t size, size_t slot_bytes)
{
	size_t words = size / 8, len = 0;
	uint64_t *slot = calloc(words + 1, 8);
	unsigned char out[HOP_LL_MAX];
	uint32_t flag;
	char err[160];
	int ret;

	if (!slot)
		return;
	memcpy(slot, data, words * 8);
	flag = words ? (uint32_t)(slot[0] >> 32) : hop_ll_flag(0);
	if (slot_bytes > words * 8)
		slot_bytes = words * 8;
	err[0] = '\0';
	ret = slot_bytes >= 8 ? hop_ll_read(slot, slot_bytes, flag, out, &len,
					    err, sizeof(err)) : 0;
	FUZZ_CHECK(ret == 0 || ret == 1 || ret == HOP_ERR_PROTOCOL, "code %d",
		   ret);
	if (ret < 0)
		fuzz_check_reason(err, sizeof(err), ret);
	if (ret == 1) {
		FUZZ_CHECK(len >= HOP_EAGER_HDR && len <= HOP_LL_MAX &&
			   hop_ll_bytes(len) <= slot_bytes, "LL length %zu in a "
			   "%zu-byte slot", len, slot_bytes);
		for (size_t i = 0; i < hop_ll_bytes(len) / 8; i++)
			FUZZ_CHECK((uint32_t)(slot[i] >> 32) == flag,
				   "word %zu accepted without its flag", i);
	}
	free(slot);
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
	ll_case(data, size, 8192);
	ll_case(data, size, 96);
	return 0;
}
