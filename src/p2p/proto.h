/*
 * proto.h - the wire formats of the channel protocol (pure encode/decode,
 * unit-tested without a provider).
 *
 * Eager message: one write into the receiver's slot, HOP_EAGER_HDR bytes of
 * header then the payload, with an immediate naming the slot:
 *
 *   off size field
 *    0   4   len      payload bytes (<= eager_size)
 *    4   4   magic    HOP_EAGER_MAGIC (top bit clear: never an LL flag)
 *    8   8   tag      64-bit internal tag (HOP_TAG)
 *   16   4   sig      collective signature, 0 for user traffic
 *   20   4   seq      per-pair eager sequence number (slot = seq % slots)
 *   24   2   credits  slots the sender returns to the receiver (piggyback)
 *   26   1   type     HOP_MSG_EAGER
 *   27   1   flags    0
 *   28   4   src      sending rank (checked)
 *
 * The same message may instead be written without an immediate, in the
 * memory-polled "LL" form (after NCCL's low-latency protocol): every 8-byte
 * word of the slot holds 4 bytes of the message (header + payload, zero
 * padded) and a 4-byte flag, hop_ll_flag(seq), whose top bit is set. The
 * receiver polls the slot of the next sequence number: a word whose flag
 * is the expected one holds valid data whatever order the bytes of the
 * write landed in, because 8-byte aligned words are written whole (NIC DMA,
 * memcpy). A stale slot carries an older sequence number's flag, or, from
 * a write with immediate, the magic (top bit clear) where the flag would be.
 *
 * Control messages (post_send, <= HOP_PROV_SEND_MAX bytes): an 8-byte
 * common part {type u8, 3 zero bytes, credits u32} then the body of the
 * type (RTS, CTS, NAK, CREDIT, PUT, ADVERT). Fields are in host byte order: every
 * rank of a job runs on the same architecture.
 *
 * Immediates: the top 4 bits are the kind (HOP_IMM_EAGER: low bits are the
 * slot; HOP_IMM_RNDV: low bits are the receiver's rendezvous id;
 * HOP_IMM_DIRECT: a message written into an advertised receive, bits 22-27
 * its advert slot, bits 0-21 the sender's eager sequence number then).
 */
#ifndef HOP_P2P_PROTO_H
#define HOP_P2P_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define HOP_EAGER_HDR 32u
#define HOP_EAGER_MAGIC 0x68656772u /* "hegr" */

enum hop_msg_type {
	HOP_MSG_EAGER = 1,
	HOP_MSG_RTS,    /* request to send: tag, len, sig, sender's id, seq */
	HOP_MSG_CTS,    /* clear to send: where to write */
	HOP_MSG_NAK,    /* receiver refuses a message (truncation, mismatch) */
	HOP_MSG_CREDIT, /* eager slots returned */
	HOP_MSG_PUT,    /* a put's data is in place: imm, len */
	HOP_MSG_ADVERT, /* a posted receive: where its message may go (advert.c) */
	HOP_MSG_TYPE_MAX
};

struct hop_eager_hdr {
	uint64_t tag;
	uint32_t len;
	uint32_t sig;
	uint32_t seq;
	uint16_t credits;
	uint8_t type;
	uint8_t flags;
	uint32_t src;
};

void hop_eager_hdr_encode(void *dst, const struct hop_eager_hdr *h);

/*
 * hop_eager_hdr_decode() - Decode and validate the header of a slot.
 * @written: bytes the completion says were written (header + payload).
 * @eager_size: largest payload allowed.
 * Return: 0 or HOP_ERR_PROTOCOL with the reason in @err.
 */
int hop_eager_hdr_decode(const void *src, size_t written, size_t eager_size,
			 struct hop_eager_hdr *h, char *err, size_t errlen);

/* Largest message (header + payload) sent in the LL form; it takes twice
 * its size, rounded up to 8 bytes, in the slot. */
#define HOP_LL_MAX 256u

static inline uint32_t hop_ll_flag(uint32_t seq)
{
	return seq | 0x80000000u;
}

/* Bytes the LL form of a @msg_len-byte message takes. */
static inline size_t hop_ll_bytes(size_t msg_len)
{
	return (msg_len + 3) / 4 * 8;
}

/* Largest message (header + payload) whose LL form fits @room bytes. */
static inline size_t hop_ll_max_msg(size_t room)
{
	return room / 8 * 4 < HOP_LL_MAX ? room / 8 * 4 : HOP_LL_MAX;
}

/* hop_ll_encode() - The LL form of @msg (@len bytes) into the 8-byte
 * aligned @dst (hop_ll_bytes(@len) bytes), each word flagged @flag. */
void hop_ll_encode(void *dst, const void *msg, size_t len, uint32_t flag);

/*
 * hop_ll_read() - Read the LL form of an eager message from @slot
 * (8-byte aligned, @slot_bytes long, written concurrently by a peer).
 * @flag: hop_ll_flag() of the sequence number expected there.
 * @msg: receives the message (header + payload), at most HOP_LL_MAX bytes.
 * Return: 1 with the message in @msg and its length in @len; 0 when the
 * message is not (completely) there yet; HOP_ERR_PROTOCOL with the reason
 * in @err when the first word carries the flag but a length that no LL
 * message can have.
 */
int hop_ll_read(const void *slot, size_t slot_bytes, uint32_t flag,
		void *msg, size_t *len, char *err, size_t errlen);

#define HOP_NO_ID 0xffffffffu   /* NAK of an eager message: no sender id */

struct hop_ctl {
	uint8_t type;
	uint32_t credits;
	union {
		struct {
			uint64_t tag, len;
			uint32_t sig, sid;
			/* the sender's next eager sequence number at the
			 * post: eager messages below it came first */
			uint32_t seq;
		} rts;
		struct {
			uint64_t addr, key;
			uint32_t sid, rid;
		} cts;
		struct {
			uint64_t tag, slen, rlen;
			int32_t code;
			uint32_t sid, ssig, rsig;
		} nak;
		struct {
			uint64_t len;
			uint32_t imm;
		} put;
		struct {
			uint64_t addr, key, len, tag;
			uint32_t sig;
			/* messages from the sender matched or kept before
			 * the receive was posted, and the advertised
			 * receives of the tag posted before it */
			uint32_t seq, ahead;
			uint32_t slot;  /* < HOP_ADV_SLOTS */
		} adv;
	} u;
};

#define HOP_CTL_MAX 56u

/* Encode @m into @buf (HOP_CTL_MAX bytes); returns the bytes used. */
size_t hop_ctl_encode(const struct hop_ctl *m, void *buf);
/* Decode and validate; 0 or HOP_ERR_PROTOCOL with the reason in @err. */
int hop_ctl_decode(const void *buf, size_t len, struct hop_ctl *m, char *err,
		   size_t errlen);
const char *hop_msg_name(unsigned type);

#define HOP_IMM_EAGER 1u
#define HOP_IMM_RNDV 2u
#define HOP_IMM_DIRECT 3u
/* a put of one write: its value is the put's immediate, the completion's
 * length the put's (put.c) */
#define HOP_IMM_PUT 4u
#define HOP_IMM_VAL_MASK 0x0fffffffu
/* Advertised receives per sender and its slots in HOP_IMM_DIRECT. */
#define HOP_ADV_SLOTS 64u
#define HOP_IMM_SEQ_BITS 22
#define HOP_IMM_SEQ_MASK ((1u << HOP_IMM_SEQ_BITS) - 1)

static inline uint32_t hop_imm_make(uint32_t kind, uint32_t val)
{
	return (kind << 28) | (val & HOP_IMM_VAL_MASK);
}
static inline uint32_t hop_imm_kind(uint32_t imm) { return imm >> 28; }
static inline uint32_t hop_imm_val(uint32_t imm) { return imm & HOP_IMM_VAL_MASK; }

#endif /* HOP_P2P_PROTO_H */
