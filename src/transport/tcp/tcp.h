/*
 * tcp.h - private header of the tcp provider.
 *
 * One stream socket per peer pair (the lower rank connects, the higher
 * accepts). Every operation is a 40-byte little-endian header, then its
 * payload:
 *
 *   off size field
 *    0   4   magic   TCP_MAGIC
 *    4   1   op      TCP_OP_WRITE | TCP_OP_SEND | TCP_OP_BYE | TCP_OP_REJECT
 *    5   1   flags   TCP_F_IMM (WRITE only)
 *    6   2   rsvd    0
 *    8   4   imm     immediate (WRITE with TCP_F_IMM), error (REJECT), else 0
 *   12   4   rsvd2   0
 *   16   8   len     payload bytes (SEND <= HOP_PROV_SEND_MAX, BYE 0)
 *   24   8   raddr   target address (WRITE), else 0
 *   32   8   rkey    target region key (WRITE), else 0
 *
 * Writes are sent from their source with one sendmsg (header + payload
 * iovecs) and received straight into the target region after the key,
 * bounds and access are checked against the local MR table. A write that
 * fails the check (or a malformed header) fails the target's comm; the
 * target then sends REJECT (imm = the hop error, negated) and closes, so
 * the writer fails with the same code naming the target. Deregistering a
 * region while a write's payload is still arriving into it ends the same
 * way (tcp_rx_cut()), before another byte is received.
 */
#ifndef HOP_TRANSPORT_TCP_H
#define HOP_TRANSPORT_TCP_H

#include <stddef.h>
#include <poll.h>
#include <stdint.h>
#include <sys/uio.h>

#include "transport/emu.h"
#include "transport/prov_common.h"

#define TCP_MAGIC 0x54504f48u   /* "HOPT" little-endian */
#define TCP_HELLO_MAGIC 0x48504f48u /* "HOPH" */
#define TCP_HDR_LEN 40
#define TCP_HELLO_LEN 32
#define TCP_MAX_WRITE (1ull << 40) /* largest single write accepted */

enum tcp_op {
	TCP_OP_WRITE = 1,
	TCP_OP_SEND = 2,
	TCP_OP_BYE = 3,         /* orderly close: EOF after it is not a failure */
	TCP_OP_REJECT = 4,      /* the target refused our data; it closes */
};
#define TCP_F_IMM 0x01

struct tcp_hdr {
	uint8_t op;
	uint8_t flags;
	uint32_t imm;
	uint64_t len;
	uint64_t raddr;
	uint64_t rkey;
};

/* Pack @h into @buf (TCP_HDR_LEN bytes). */
void tcp_hdr_pack(const struct tcp_hdr *h, uint8_t *buf);

/*
 * tcp_hdr_parse() - Decode and validate one header (pure: the receiver and
 * the fuzzer use it). Checks the length of @buf, magic, op, flags allowed
 * for the op, reserved fields, the payload length for the op and the
 * write's address range. Return 0 or HOP_ERR_PROTOCOL with a reason in @why.
 */
int tcp_hdr_parse(const void *buf, size_t buflen, struct tcp_hdr *out,
		  char *why, size_t whylen);

/* Connection hello: magic, version, rank, nranks, secret. */
struct tcp_hello {
	uint32_t version;
	uint32_t rank;
	uint32_t nranks;
	uint8_t secret[16];
};
#define TCP_HELLO_VERSION 1
void tcp_hello_pack(const struct tcp_hello *h, uint8_t *buf);
int tcp_hello_parse(const void *buf, size_t buflen, struct tcp_hello *out,
		    char *why, size_t whylen);

/* ------------------------------------------------------------------ */

/* One queued operation. Writes point at their source; sends and unregistered
 * writes (<= TCP_INLINE) are copied into @data at post. */
#define TCP_INLINE 256
struct tcp_sqe {
	uint8_t hdr[TCP_HDR_LEN];
	const uint8_t *payload;
	size_t len;             /* payload bytes */
	size_t off;             /* bytes of header + payload already sent */
	uint64_t wr_id;
	uint8_t signaled;
	uint8_t op;             /* HOP_CQE_WRITE / HOP_CQE_SEND */
	uint8_t data[TCP_INLINE];
};

#define TCP_SQ_DEPTH 512        /* posts queued per peer before AGAIN */
#define TCP_RX_BUF (64u << 10)  /* staging for headers and small payloads */
#define TCP_RX_DIRECT (16u << 10) /* payload left >= this: recv into place */
#define TCP_IOV_MAX 64
#define TCP_RX_BUDGET (4u << 20) /* bytes read from one peer per poll */
/*
 * Bounds on what is queued to one peer ahead of a new post. The stream
 * delivers in post order (contract 1), so a small send, e.g. the
 * clear-to-send a rank answers while its own rendezvous writes stream,
 * waits behind every byte queued before it. Unbounded (whole messages in
 * the SQ, up to 8 MiB unsent in the socket), that answer reaches the
 * peer only after this rank's whole message, and an exchange between two
 * hosts runs one direction after the other (half duplex). So a
 * registered write waits (HOP_PROV_AGAIN: the caller keeps it) while
 * TCP_SQ_BULK bytes are queued in the SQ, and a socket to another host
 * holds at most TCP_UNSENT_MAX bytes not yet sent (TCP_NOTSENT_LOWAT;
 * tcp_conn.c says why not on loopback). Bytes in flight are not limited
 * (window and rate stay the kernel's). A later send then waits behind
 * these and at most one write (HOP_RNDV_CHUNK).
 */
#define TCP_SQ_BULK (256u << 10)
#define TCP_UNSENT_MAX (256u << 10)

enum tcp_rx_state { TCP_RX_HDR = 0, TCP_RX_PAYLOAD, TCP_RX_DISCARD };

struct tcp_peer {
	int fd;                 /* -1 when not connected (self, closed, or
				 * lazy and not used yet) */
	int rank;
	int bye;                /* peer announced an orderly close */
	int ever;               /* has been connected (lazy: a later fd < 0
				 * means lost, not "not yet") */
	uint64_t recv_dial_at;  /* lazy: a receive waits on it; dial then */
	/* send queue: ring of TCP_SQ_DEPTH entries */
	struct tcp_sqe *sq;
	uint32_t sq_head, sq_count;
	size_t sq_bytes;        /* queued bytes not handed to the socket yet */
	/* receive */
	uint8_t *rx;            /* TCP_RX_BUF bytes */
	size_t rx_head, rx_tail;
	int rx_state;
	struct tcp_hdr cur;
	uint8_t *dst;           /* where the payload goes */
	uint64_t left;          /* payload bytes still to receive */
	struct hop_cqe msg;     /* RECV being assembled */
};

struct hop_prov {
	const struct hop_prov_ctx *ctx;
	int rank, nranks;
	struct tcp_peer *peers;
	struct pollfd *pfd;     /* wait(): one per peer */
	struct hop_mrtab_owner mrs;
	struct hop_cqring cq;
	uint32_t sq_busy;       /* peers with a non-empty send queue */
	int closing;
	int epfd;               /* epoll set of peers (many peers), or -1 */
	uint32_t rr;            /* first peer the next poll looks at */
	struct hop_emu_mr *mrs_live;   /* freed by close() */
	struct tcp_lazy *lazy;  /* HOP_CONNECT=lazy, else NULL */
	int recv_dials;         /* peers with recv_dial_at set */
};

#define TCP_MR_MAGIC 0x74636d72u /* "tcmr" */

/* CQ entries kept at most before the receive path stops reading. */
#define TCP_CQ_HIGH 4096

/* Listening address of a rank, as allgathered at open. */
struct tcp_addr {
	uint32_t ip;    /* network order */
	uint16_t port;  /* network order */
	uint16_t pad;
};

/* tcp_conn.c */

/* TCP_HS_IDLE: a lazy outgoing slot nobody wants dialled (yet) */
enum tcp_hs_state { TCP_HS_FREE = 0, TCP_HS_CONNECTING, TCP_HS_SEND,
		    TCP_HS_RECV, TCP_HS_DONE, TCP_HS_IDLE };

/* One handshake in progress. */
struct tcp_hs {
	int fd;
	int peer;               /* expected (outgoing) or claimed (incoming) */
	int outgoing;
	int state;
	uint64_t retry_at;      /* outgoing: reconnect time after a refusal */
	uint64_t since;         /* incoming: accepted at; lazy outgoing:
				 * first wanted at */
	int resets;             /* outgoing: closed by the other end */
	int refused;            /* outgoing: the last attempt was refused */
	uint8_t out[TCP_HELLO_LEN];
	size_t outoff;
	uint8_t in[TCP_HELLO_LEN];
	size_t inoff;
};

/* A set of handshakes: all pairs at open (eager), or the pairs being
 * connected on first use (lazy, where outgoing slot r dials rank r). */
struct tcp_hs_set {
	struct hop_prov *prov;
	const uint8_t *secret;
	const struct tcp_addr *addrs;
	int lfd;
	int lazy;
	struct tcp_hs *hs;      /* nout outgoing, then the incoming slots */
	int nout, nhs;
	int strangers;          /* incoming connections closed unauthenticated */
	struct pollfd *pfd;     /* nhs + 1: one pass's poll set */
	int *map;               /* pfd index -> hs index, -1: the listener */
};

int tcp_hs_set_init(struct tcp_hs_set *set, struct hop_prov *prov, int lfd,
		    const struct tcp_addr *addrs, const uint8_t *secret,
		    int lazy);
void tcp_hs_set_fini(struct tcp_hs_set *set);
/* Is rank @r's socket connected, or being answered (lazy)? */
int tcp_hs_claimed(const struct tcp_hs_set *set, int r);
/*
 * tcp_hs_pass() - One round of every handshake of @set: dial what is due,
 * close silent strangers, poll for up to @timeout_ms, step what is ready
 * (accepting from the listener last), hand finished sockets to their
 * peers. Returns how many finished, or a negative hop code (comm failed).
 */
int tcp_hs_pass(struct tcp_hs_set *set, int timeout_ms);
/* The sockets of @set's handshakes in progress into @pfd (their slots in
 * @map unless NULL); returns how many. */
int tcp_hs_pollfds(const struct tcp_hs_set *set, struct pollfd *pfd,
		   int *map);
void tcp_tune(int fd);

/*
 * tcp_connect_all() - Connect every pair under @deadline: dial the higher
 * ranks' @addrs, accept the lower ranks on @lfd, exchange and check hellos
 * (impostors are dropped with a warning). Sets prov->peers[r].fd.
 */
int tcp_connect_all(struct hop_prov *prov, int lfd,
		    const struct tcp_addr *addrs, const uint8_t *secret,
		    uint64_t deadline);

/* tcp_lazy.c: HOP_CONNECT=lazy, pairs connected on first use */
/* how long a receive waits on a peer before dialling it (ops->connect) */
#define TCP_RECV_DIAL_MS 200
/* epoll tag of the listening socket (peers are tagged with their rank) */
#define TCP_EV_LISTEN UINT32_MAX
int tcp_lazy_open(struct hop_prov *prov, int lfd,
		  const struct tcp_addr *addrs);
void tcp_lazy_close(struct hop_prov *prov);
/* close(): let connects still holding queued posts finish (bounded). */
void tcp_lazy_flush(struct hop_prov *prov);
/* A post to @peer is queued while it is not connected: dial it. */
int tcp_lazy_want(struct hop_prov *prov, int peer);
/* Move the handshakes on without blocking (@listen: the listener is
 * readable, else only when some are in progress). 0 or a hop code. */
int tcp_lazy_progress(struct hop_prov *prov, int listen);
/* Add the listener and handshake sockets to @pfd (prov->pfd has room
 * for them); lower *@timeout_us to the next redial. Returns how many. */
int tcp_lazy_pollfds(struct hop_prov *prov, struct pollfd *pfd,
		     int *timeout_us);
/* Allocate @p's send queue and staging buffer if not yet (lazy: on
 * first use). 0 or HOP_ERR_NO_MEMORY, the comm failed. */
int tcp_peer_mem(struct hop_prov *prov, struct tcp_peer *p);
/* A socket was handed to peer @r: watch it (epoll), mark it used; on
 * failure @fd is closed, or owned by the peer (closed with it). */
int tcp_peer_attach(struct hop_prov *prov, int r, int fd);

/* tcp_ep.c */
int tcp_usable(const struct hop_prov_ctx *ctx, char *why, size_t whylen);
int tcp_open(const struct hop_prov_ctx *ctx, struct hop_prov **out);
void tcp_close(struct hop_prov *prov);
/* Drop @p's socket and send queue: the peer is gone in order (its BYE, or
 * our own close), so nothing queued has a reader. */
void tcp_peer_forget(struct hop_prov *prov, struct tcp_peer *p);
/* Fail the comm because of @p (EOF/reset/protocol) and drop the socket. */
int tcp_peer_fail(struct hop_prov *prov, struct tcp_peer *p, int code,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* As tcp_peer_fail(), first telling @p why with a REJECT notice. */
int tcp_peer_reject(struct hop_prov *prov, struct tcp_peer *p, int code,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* tcp_mr.c */
void tcp_mr_free_all(struct hop_prov *prov);
int tcp_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out);
int tcp_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *mr);

/* tcp_post.c */
int tcp_post_write(struct hop_prov *prov, int peer, struct hop_prov_mr *lmr,
		   const void *laddr, size_t len, uint64_t raddr,
		   uint64_t rkey, uint32_t imm, unsigned flags, uint64_t wr_id);
int tcp_post_send(struct hop_prov *prov, int peer, const void *buf,
		  size_t len, unsigned flags, uint64_t wr_id);
size_t tcp_max_inline(const struct hop_prov *prov);

/* tcp_progress.c */
int tcp_tx_progress(struct hop_prov *prov, struct tcp_peer *p);
/* Region @key was deregistered: a write into it whose payload is still
 * arriving is cut off (its sender is rejected and the comm fails), so no
 * further byte of it lands. */
void tcp_rx_cut(struct hop_prov *prov, uint64_t key);
int tcp_poll(struct hop_prov *prov, struct hop_cqe *cqe, int max);
void tcp_wait(struct hop_prov *prov, int timeout_us);

#endif /* HOP_TRANSPORT_TCP_H */
