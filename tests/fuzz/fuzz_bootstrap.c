/*
 * fuzz_bootstrap.c - the bootstrap's wire parsers (src/core) on arbitrary
 * bytes: the 16-byte message header (hop_bs_hdr_parse) with several length
 * limits, the REJECT/ABORT reason codec (hop_bs_reason_unpack), the unique
 * id (hop_id_decode_msg and hop_unique_id_from_string, the id arriving by
 * environment) and the missing-rank list printed on a timeout.
 *
 * The HELLO payload itself is decoded inline in bootstrap_root.c's
 * hello_read() (fixed 32 bytes behind a header whose length must equal
 * 32), the ring's LINK in bootstrap_ring.c's link_check() (24 bytes, the
 * same way): the header check that guards them is what this harness
 * drives.
 */
#include <arpa/inet.h>

#include "core/bs_int.h"
#include "core/core_int.h"
#include "fuzz_common.h"

/* The id checksum (FNV-1a 64 over bytes 0..119, big-endian at 120), so
 * the fuzzer gets past it and exercises the checks behind it. */
static void id_fix_sum(uint8_t *b)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 120; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	for (int i = 127; i >= 120; i--, h >>= 8)
		b[i] = (uint8_t)h;
}

static void hdr_case(const uint8_t *data, size_t size, uint32_t max)
{
	uint8_t *buf = fuzz_dup(data, size);
	struct hop_bs_hdr h;
	char err[160];
	int ret;

	memset(&h, 0xa5, sizeof(h));
	err[0] = '\0';
	ret = hop_bs_hdr_parse(buf, size, max, &h, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PROTOCOL, "code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	if (ret == 0) {
		uint8_t again[HOP_BS_HDR_LEN];

		FUZZ_CHECK(size >= HOP_BS_HDR_LEN, "accepted %zu bytes", size);
		FUZZ_CHECK(h.magic == HOP_BS_MAGIC, "magic 0x%x", h.magic);
		FUZZ_CHECK(h.type >= 1 && h.type <= HOP_BS_TYPE_MAX, "type %u",
			   h.type);
		FUZZ_CHECK(h.len <= max && h.len <= HOP_BS_MAX_MSG,
			   "len %u > max %u", h.len, max);
		hop_bs_hdr_pack(again, h.type, h.flags, h.rank, h.len);
		FUZZ_CHECK(memcmp(again, buf, HOP_BS_HDR_LEN) == 0,
			   "pack(parse(x)) != x");
		FUZZ_CHECK(strcmp(hop_bs_type_name(h.type), "?") != 0,
			   "no name for type %u", h.type);
	}
	/* a NULL error buffer is allowed */
	FUZZ_CHECK(hop_bs_hdr_parse(buf, size, max, NULL, NULL, 0) == ret,
		   "result depends on the error buffer");
	free(buf);
}

static void reason_case(const uint8_t *data, size_t size, size_t rlen)
{
	uint8_t *buf = fuzz_dup(data, size);
	char *reason = malloc(rlen);
	int code;

	if (!reason)
		abort();
	code = hop_bs_reason_unpack(buf, size, reason, rlen);
	FUZZ_CHECK(code < 0 && code >= HOP_ERR_INTERNAL, "code %d", code);
	FUZZ_CHECK(memchr(reason, '\0', rlen) != NULL, "reason unterminated");
	for (const char *c = reason; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f, "unprintable 0x%02x",
			   (unsigned char)*c);
	free(reason);
	free(buf);
}

static void id_case(const uint8_t *data, size_t size, int fix)
{
	hop_unique_id_t id, again;
	struct hop_id_info info;
	char err[160], str[2 * HOP_UNIQUE_ID_BYTES + 1];
	int ret;

	memset(&id, 0, sizeof(id));
	memcpy(id.internal, data, size < sizeof(id) ? size : sizeof(id));
	if (fix)
		id_fix_sum((uint8_t *)id.internal);
	err[0] = '\0';
	ret = hop_id_decode_msg(&id, &info, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_INVALID_ARG, "code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	FUZZ_CHECK(hop_unique_id_to_string(&id, str, sizeof(str)) == 0, "hex");
	FUZZ_CHECK(hop_unique_id_from_string(str, &again) == (ret ? HOP_ERR_INVALID_ARG : 0),
		   "string and binary decoders disagree");
	if (ret == 0) {
		FUZZ_CHECK(info.addr.sin_family == AF_INET && info.addr.sin_port,
			   "accepted an id without an IPv4 port");
		hop_id_encode(&info, &again);
		FUZZ_CHECK(memcmp(&again, &id, sizeof(id)) == 0,
			   "encode(decode(id)) != id");
	}
}

static void id_string_case(const uint8_t *data, size_t size)
{
	char *s = fuzz_strdup(data, size);
	hop_unique_id_t id;
	struct hop_id_info info;
	int ret;

	memset(&id, 0x5a, sizeof(id));
	ret = hop_unique_id_from_string(s, &id);
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_INVALID_ARG, "code %d", ret);
	if (ret == 0)
		FUZZ_CHECK(hop_id_decode(&id, &info) == 0,
			   "from_string accepted an id decode rejects");
	free(s);
}

static void rank_list_case(const uint8_t *data, size_t size, size_t blen)
{
	char *buf = malloc(blen);
	int count = -1, expect = 0;

	if (!buf)
		abort();
	for (size_t i = 0; i < size; i++)
		expect += data[i] != 0;
	hop_bs_rank_list(data, (int)size, buf, blen, &count);
	FUZZ_CHECK(memchr(buf, '\0', blen) != NULL, "list unterminated");
	FUZZ_CHECK(count == expect, "count %d, expected %d", count, expect);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t max[] = { 0, HOP_BS_HELLO_LEN,
					4 + HOP_BS_REASON_MAX, 1u << 20,
					UINT32_MAX };

	for (size_t i = 0; i < sizeof(max) / sizeof(max[0]); i++)
		hdr_case(data, size, max[i]);
	/* the payload after a header, as a REJECT/ABORT reason */
	if (size <= 4 + HOP_BS_REASON_MAX) {
		reason_case(data, size, 256);
		reason_case(data, size, 1);
	}
	id_case(data, size, 0);
	id_case(data, size, 1);
	id_string_case(data, size);
	if (size > 0 && size <= 4096)
		rank_list_case(data, size, size % 2 ? 64 : 256);
	return 0;
}
