/*
 * proto.c - encode/decode of eager headers and control messages (proto.h).
 * Pure functions: no provider, no communicator.
 */
#include <stdio.h>
#include <string.h>

#include <hop/common.h>

#include "p2p/proto.h"

#define PUT(buf, off, v) memcpy((unsigned char *)(buf) + (off), &(v), sizeof(v))
#define GET(buf, off, v) memcpy(&(v), (const unsigned char *)(buf) + (off), sizeof(v))

void hop_eager_hdr_encode(void *dst, const struct hop_eager_hdr *h)
{
	uint32_t magic = HOP_EAGER_MAGIC;

	PUT(dst, 0, h->len);
	PUT(dst, 4, magic);
	PUT(dst, 8, h->tag);
	PUT(dst, 16, h->sig);
	PUT(dst, 20, h->seq);
	PUT(dst, 24, h->credits);
	PUT(dst, 26, h->type);
	PUT(dst, 27, h->flags);
	PUT(dst, 28, h->src);
}

int hop_eager_hdr_decode(const void *src, size_t written, size_t eager_size,
			 struct hop_eager_hdr *h, char *err, size_t errlen)
{
	uint32_t magic;

	if (written < HOP_EAGER_HDR) {
		snprintf(err, errlen, "eager write of %zu bytes is shorter than "
			 "its %u-byte header", written, HOP_EAGER_HDR);
		return HOP_ERR_PROTOCOL;
	}
	GET(src, 0, h->len);
	GET(src, 4, magic);
	GET(src, 8, h->tag);
	GET(src, 16, h->sig);
	GET(src, 20, h->seq);
	GET(src, 24, h->credits);
	GET(src, 26, h->type);
	GET(src, 27, h->flags);
	GET(src, 28, h->src);
	if (magic != HOP_EAGER_MAGIC || h->type != HOP_MSG_EAGER ||
	    h->flags != 0) {
		snprintf(err, errlen, "eager slot holds no valid header (magic "
			 "0x%08x, type %u, flags %u)", magic, h->type, h->flags);
		return HOP_ERR_PROTOCOL;
	}
	if (h->len > eager_size) {
		snprintf(err, errlen, "eager payload of %u bytes exceeds the "
			 "slot size %zu", h->len, eager_size);
		return HOP_ERR_PROTOCOL;
	}
	if ((size_t)h->len + HOP_EAGER_HDR != written) {
		snprintf(err, errlen, "eager header says %u payload bytes but "
			 "%zu bytes were written", h->len, written);
		return HOP_ERR_PROTOCOL;
	}
	return 0;
}

/*
 * The LL form is on the critical path of every small message on verbs, at
 * both ends: whole words go with a fixed-size copy (one load and one store
 * each), and only the last, partial word byte by byte. A copy of variable
 * size per word cost ~40 instructions a word, ~400 for a 2-byte message.
 */
static uint32_t ll_piece(const unsigned char *m, size_t n)
{
	unsigned char b[4] = { 0, 0, 0, 0 };
	uint32_t piece;

	if (n >= 4) {
		memcpy(&piece, m, 4);
		return piece;
	}
	for (size_t k = 0; k < n; k++)
		b[k] = m[k];
	memcpy(&piece, b, 4);
	return piece;
}

static void ll_unpiece(unsigned char *m, uint32_t piece, size_t n)
{
	unsigned char b[4];

	if (n >= 4) {
		memcpy(m, &piece, 4);
		return;
	}
	memcpy(b, &piece, 4);
	for (size_t k = 0; k < n; k++)
		m[k] = b[k];
}

void hop_ll_encode(void *dst, const void *msg, size_t len, uint32_t flag)
{
	const unsigned char *m = msg;
	uint64_t *w = dst;

	for (size_t i = 0; i < len; i += 4)
		w[i / 4] = (uint64_t)flag << 32 | ll_piece(m + i, len - i);
}

int hop_ll_read(const void *slot, size_t slot_bytes, uint32_t flag,
		void *msg, size_t *len, char *err, size_t errlen)
{
	/* one load per word: its data and flag come from the same write */
	const volatile uint64_t *w = slot;
	unsigned char *m = msg;
	uint64_t word = w[0];
	size_t total, max = hop_ll_max_msg(slot_bytes);

	if ((uint32_t)(word >> 32) != flag)
		return 0;
	total = (size_t)(uint32_t)word + HOP_EAGER_HDR;
	if (max < HOP_EAGER_HDR || (uint32_t)word > max - HOP_EAGER_HDR) {
		snprintf(err, errlen, "LL eager message declares %u payload "
			 "bytes, more than the %zu an LL message can carry",
			 (uint32_t)word,
			 max < HOP_EAGER_HDR ? 0 : max - HOP_EAGER_HDR);
		return HOP_ERR_PROTOCOL;
	}
	for (size_t i = 0; i < total; i += 4) {
		if (i)
			word = w[i / 4];
		if ((uint32_t)(word >> 32) != flag)
			return 0;       /* the rest is still on its way */
		ll_unpiece(m + i, (uint32_t)word, total - i);
	}
	*len = total;
	return 1;
}

static const size_t ctl_len[HOP_MSG_TYPE_MAX] = {
	[HOP_MSG_RTS] = 8 + 28,
	[HOP_MSG_CTS] = 8 + 24,
	[HOP_MSG_NAK] = 8 + 40,
	[HOP_MSG_CREDIT] = 8,
	[HOP_MSG_PUT] = 8 + 12,
	[HOP_MSG_ADVERT] = 8 + 48,
};

const char *hop_msg_name(unsigned type)
{
	static const char *const names[HOP_MSG_TYPE_MAX] = {
		[HOP_MSG_EAGER] = "EAGER", [HOP_MSG_RTS] = "RTS",
		[HOP_MSG_CTS] = "CTS",     [HOP_MSG_NAK] = "NAK",
		[HOP_MSG_CREDIT] = "CREDIT", [HOP_MSG_PUT] = "PUT",
		[HOP_MSG_ADVERT] = "ADVERT",
	};

	return type < HOP_MSG_TYPE_MAX && names[type] ? names[type] : "?";
}

size_t hop_ctl_encode(const struct hop_ctl *m, void *buf)
{
	unsigned char *b = buf;

	memset(b, 0, 8);
	b[0] = m->type;
	PUT(b, 4, m->credits);
	switch (m->type) {
	case HOP_MSG_RTS:
		PUT(b, 8, m->u.rts.tag);
		PUT(b, 16, m->u.rts.len);
		PUT(b, 24, m->u.rts.sig);
		PUT(b, 28, m->u.rts.sid);
		PUT(b, 32, m->u.rts.seq);
		break;
	case HOP_MSG_CTS:
		PUT(b, 8, m->u.cts.addr);
		PUT(b, 16, m->u.cts.key);
		PUT(b, 24, m->u.cts.sid);
		PUT(b, 28, m->u.cts.rid);
		break;
	case HOP_MSG_NAK:
		PUT(b, 8, m->u.nak.tag);
		PUT(b, 16, m->u.nak.slen);
		PUT(b, 24, m->u.nak.rlen);
		PUT(b, 32, m->u.nak.code);
		PUT(b, 36, m->u.nak.sid);
		PUT(b, 40, m->u.nak.ssig);
		PUT(b, 44, m->u.nak.rsig);
		break;
	case HOP_MSG_PUT:
		PUT(b, 8, m->u.put.len);
		PUT(b, 16, m->u.put.imm);
		break;
	case HOP_MSG_ADVERT:
		PUT(b, 8, m->u.adv.addr);
		PUT(b, 16, m->u.adv.key);
		PUT(b, 24, m->u.adv.len);
		PUT(b, 32, m->u.adv.tag);
		PUT(b, 40, m->u.adv.sig);
		PUT(b, 44, m->u.adv.seq);
		PUT(b, 48, m->u.adv.ahead);
		PUT(b, 52, m->u.adv.slot);
		break;
	default:
		break;
	}
	return m->type < HOP_MSG_TYPE_MAX ? ctl_len[m->type] : 8;
}

int hop_ctl_decode(const void *buf, size_t len, struct hop_ctl *m, char *err,
		   size_t errlen)
{
	const unsigned char *b = buf;

	if (len < 8) {
		snprintf(err, errlen, "control message of %zu bytes is too "
			 "short", len);
		return HOP_ERR_PROTOCOL;
	}
	memset(m, 0, sizeof(*m));
	m->type = b[0];
	if (m->type == HOP_MSG_EAGER || m->type >= HOP_MSG_TYPE_MAX ||
	    m->type == 0 || b[1] || b[2] || b[3]) {
		snprintf(err, errlen, "control message of unknown type %u",
			 m->type);
		return HOP_ERR_PROTOCOL;
	}
	if (len != ctl_len[m->type]) {
		snprintf(err, errlen, "%s message of %zu bytes (expected %zu)",
			 hop_msg_name(m->type), len, ctl_len[m->type]);
		return HOP_ERR_PROTOCOL;
	}
	GET(b, 4, m->credits);
	switch (m->type) {
	case HOP_MSG_RTS:
		GET(b, 8, m->u.rts.tag);
		GET(b, 16, m->u.rts.len);
		GET(b, 24, m->u.rts.sig);
		GET(b, 28, m->u.rts.sid);
		GET(b, 32, m->u.rts.seq);
		break;
	case HOP_MSG_CTS:
		GET(b, 8, m->u.cts.addr);
		GET(b, 16, m->u.cts.key);
		GET(b, 24, m->u.cts.sid);
		GET(b, 28, m->u.cts.rid);
		break;
	case HOP_MSG_NAK:
		GET(b, 8, m->u.nak.tag);
		GET(b, 16, m->u.nak.slen);
		GET(b, 24, m->u.nak.rlen);
		GET(b, 32, m->u.nak.code);
		GET(b, 36, m->u.nak.sid);
		GET(b, 40, m->u.nak.ssig);
		GET(b, 44, m->u.nak.rsig);
		if (m->u.nak.code >= 0) {
			snprintf(err, errlen, "NAK carries no error code (%d)",
				 (int)m->u.nak.code);
			return HOP_ERR_PROTOCOL;
		}
		break;
	case HOP_MSG_PUT:
		GET(b, 8, m->u.put.len);
		GET(b, 16, m->u.put.imm);
		break;
	case HOP_MSG_ADVERT:
		GET(b, 8, m->u.adv.addr);
		GET(b, 16, m->u.adv.key);
		GET(b, 24, m->u.adv.len);
		GET(b, 32, m->u.adv.tag);
		GET(b, 40, m->u.adv.sig);
		GET(b, 44, m->u.adv.seq);
		GET(b, 48, m->u.adv.ahead);
		GET(b, 52, m->u.adv.slot);
		if (m->u.adv.slot >= HOP_ADV_SLOTS ||
		    m->u.adv.ahead >= HOP_ADV_SLOTS) {
			snprintf(err, errlen, "ADVERT names slot %u with %u "
				 "ahead (at most %u)", m->u.adv.slot,
				 m->u.adv.ahead, HOP_ADV_SLOTS - 1);
			return HOP_ERR_PROTOCOL;
		}
		break;
	default:
		break;
	}
	return 0;
}
