/*
 * example.h - a hop provider plugin built outside hop, against the
 * installed <hop/provider.h> only: one-sided writes with immediate, small
 * sends and completions over UNIX-domain SOCK_SEQPACKET sockets, one per
 * pair of ranks (so it runs on one host).
 *
 * Every operation travels as messages of one header plus up to EX_FRAG
 * payload bytes (fewer with HOP_PROV_EXAMPLE_FRAG=N, read through
 * ctx->config()); SEQPACKET keeps message boundaries and per-connection
 * order, which gives hop's ordering rule (a RECV_IMM implies every earlier
 * write is in place) for free. The target checks each fragment against its
 * own region table (key, bounds, access) before it copies a byte; a
 * violation fails the target and sends REJECT, which fails the writer with
 * HOP_ERR_OUT_OF_BOUNDS. Posts queue per peer and go out as the socket
 * takes them, from post_* and poll, so no call ever blocks.
 */
#ifndef HOP_EXAMPLE_PROVIDER_H
#define HOP_EXAMPLE_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <hop/provider.h>

#define EX_NAME "example"
#define EX_FRAG (48u << 10)     /* max payload bytes per message (< socket buffer) */
#define EX_MAX_MR 4096          /* live regions per rank */
#define EX_SQ_MAX 4096          /* posts queued per peer before HOP_PROV_AGAIN */
#define EX_INLINE 256           /* max_inline() */
#define EX_RX_BUDGET 64         /* messages read per peer per poll */
#define EX_HELLO_MAGIC 0x68657831u /* "hex1" */

enum ex_opcode { EX_WRITE = 1, EX_SEND, EX_BYE, EX_REJECT };
enum { EX_F_IMM = 1, EX_F_LAST = 2 };

/* Wire header; both ends are one host, so native byte order. */
struct ex_hdr {
	uint8_t op;             /* enum ex_opcode */
	uint8_t flags;          /* EX_F_* */
	uint16_t pad;
	uint32_t imm;           /* WRITE|IMM: the immediate; REJECT: -code */
	uint64_t rkey;
	uint64_t raddr;         /* of this fragment */
	uint64_t total;         /* WRITE, last fragment: bytes of the write */
};

/* A post waiting for (or being pushed into) its peer's socket. */
struct ex_op {
	struct ex_op *next;
	struct ex_hdr hdr;      /* template; raddr advances per fragment */
	const uint8_t *src;     /* the caller's bytes, or inl */
	size_t len, off;
	int started;            /* a first message went out (len 0 too) */
	int cqe_op;             /* HOP_CQE_WRITE/SEND when signaled, else 0 */
	uint64_t wr_id;
	uint8_t inl[];          /* copy of inline writes and sends */
};

struct ex_peer {
	int fd;                 /* -1: self, closed or failed */
	int bye;                /* it closed its communicator in order */
	struct ex_op *sq_head, *sq_tail;
	unsigned sq_len;
};

struct ex_region {
	uint64_t addr, len;
	uint32_t gen;           /* part of the key: stale keys never match */
	unsigned access;
	int live;
};

struct ex_mr {
	struct hop_prov_mr pub; /* first: hop sees this */
	uint32_t slot;
};

struct hop_prov {
	const struct hop_prov_ctx *ctx;
	int rank, nranks;
	struct ex_peer *peers;
	struct ex_region *mrs;  /* EX_MAX_MR slots */
	uint32_t *free_slots, nfree;
	struct hop_cqe *cq;     /* ring of completions not yet polled */
	uint32_t cq_cap, cq_head, cq_count;
	uint8_t *rx;            /* one received message */
	size_t frag;            /* payload bytes per message: HOP_PROV_EXAMPLE_FRAG */
	int closing;
};

/* example_conn.c: open, close, failure of a peer */
int ex_open(const struct hop_prov_ctx *ctx, struct hop_prov **out);
void ex_close(struct hop_prov *prov);
int ex_peer_lost(struct hop_prov *prov, int peer, int err);

/* example_data.c: the data path */
struct hop_cqe *ex_cq_push(struct hop_prov *prov);
int ex_flush(struct hop_prov *prov, int peer);

#endif /* HOP_EXAMPLE_PROVIDER_H */
