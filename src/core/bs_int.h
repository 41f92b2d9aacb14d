/*
 * bs_int.h - the bootstrap's private state and wire format, shared by
 * bootstrap.c (rendezvous), bootstrap_coll.c (allgather, barrier),
 * bootstrap_ring.c (the ring the allgather's data travel on) and
 * bootstrap_wire.c (header codec, socket I/O with deadlines).
 *
 * Wire: every message is a 16-byte header (struct hop_bs_hdr, big-endian:
 * magic, type, flags = operation sequence number, sender rank, payload
 * length) followed by exactly len payload bytes. Ranks form a star around
 * rank 0 for control, and a ring (rank r -> rank r + 1 mod n) for data:
 *   peer -> 0  HELLO   {version, nranks, pid, ring port, secret[16]}
 *   0 -> peer  READY   {ipv4, port of rank r + 1's ring listener} once
 *                      every rank arrived, or REJECT {code, reason}
 *   r -> r+1   LINK    {version, nranks, secret[16]}: opens the ring link
 *   peer -> 0  GATHER  {its len bytes} |  BARRIER {}
 *   0 -> peer  START   {}              |  RELEASE {}
 *   r -> r+1   BLOCK   {n * len bytes: every rank's}, from rank 0 round
 *                      the ring back to it, once per allgather
 *   peer -> 0  FAIL    {code, reason}: the ring broke here
 *   0 -> peer  ABORT   {code, reason}  instead of any reply when failing
 * Rank 0 thus sends and receives O(n) bytes per operation (its ring
 * traffic included: n len each way), as every rank sends n len.
 */
#ifndef HOP_CORE_BS_INT_H
#define HOP_CORE_BS_INT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bootstrap.h"
#include "core.h"

#define HOP_BS_MAGIC 0x484f5042u   /* "HOPB" */
#define HOP_BS_VERSION 3u
#define HOP_BS_HDR_LEN 16
#define HOP_BS_HELLO_LEN 32
#define HOP_BS_READY_LEN 8
#define HOP_BS_LINK_LEN 24
#define HOP_BS_REASON_MAX 400       /* text of REJECT / ABORT */
#define HOP_BS_SCRATCH 16384       /* rank 0 reads the table back in
				       pieces this large */
#define HOP_BS_GRACE_MS 2000        /* peers wait this much past their
				       deadline for rank 0's verdict */
#ifndef HOP_BS_MAX_PENDING           /* a test builds a small one */
#define HOP_BS_MAX_PENDING 256      /* unidentified connections at rank 0
				       (docs/security.md) */
#endif
#define HOP_BS_SILENT_MS 2000       /* then one may be dropped for another */
#define HOP_BS_FD_RESERVE 32        /* descriptors rank 0 keeps for what
				       follows the rendezvous */
#define HOP_BS_EMFILE_GRACE_MS 100  /* out of descriptors: a connection this
				       old without HELLO may be dropped */

enum hop_bs_type {
	HOP_BS_HELLO = 1,
	HOP_BS_READY,
	HOP_BS_REJECT,
	HOP_BS_ABORT,
	HOP_BS_GATHER,
	HOP_BS_START,
	HOP_BS_BARRIER,
	HOP_BS_RELEASE,
	HOP_BS_LINK,
	HOP_BS_BLOCK,
	HOP_BS_FAIL,
	HOP_BS_TYPE_MAX = HOP_BS_FAIL,
};

/* rank 0's view of another rank */
struct hop_bs_peer {
	int fd;                         /* -1 until it arrived */
	struct sockaddr_in addr;        /* for messages */
	uint32_t pid;                   /* from its HELLO, for messages */
	uint16_t ring_port;             /* its ring listener, from its HELLO */
	int tx_broken;                  /* a send stopped mid-message */
	size_t got;                     /* entry: message bytes received */
	uint8_t hdr[HOP_BS_HDR_LEN];
};

struct hop_bootstrap {
	int rank, nranks;
	int fd;                         /* peers: socket to rank 0 */
	struct hop_bs_peer *peers;      /* rank 0: nranks entries */
	struct sockaddr_in root_addr;
	struct in_addr local_addr;
	uint8_t secret[HOP_SECRET_BYTES];
	int lfd;                        /* ring listener until linked, or -1 */
	int left, right;                /* ring links from r - 1, to r + 1 */
	struct sockaddr_in right_addr;  /* rank r + 1's ring listener */
	int timeout_ms;                 /* cfg.timeout_ms, for messages */
	uint16_t seq;                   /* operations done, mod 2^16 */
	uint64_t tx_bytes;              /* bytes this rank sent, headers too */
	int failed;                     /* sticky error code, 0 if none */
	int aborted;                    /* the failure is rank 0's verdict */
	char err[HOP_MSG_LEN];
};

/* Record the first failure of @bs (sticky); returns @code. */
int hop_bs_fail(struct hop_bootstrap *bs, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Serialise a header into 16 bytes. */
void hop_bs_hdr_pack(uint8_t out[HOP_BS_HDR_LEN], uint16_t type,
		     uint16_t seq, uint32_t rank, uint32_t len);
const char *hop_bs_type_name(unsigned type);

/*
 * hop_bs_send() - Send header + @len bytes of @payload on non-blocking
 * @fd before @deadline_ns. With @watch_in, stop when input arrives (rank 0
 * has something to say: ABORT) and return 1. *@sent (may be NULL) counts
 * the bytes written. Return: 0, 1, -ETIMEDOUT or -errno (-EPIPE: closed).
 */
int hop_bs_send(int fd, uint16_t type, uint16_t seq, uint32_t rank,
		const void *payload, size_t len, uint64_t deadline_ns,
		int watch_in, size_t *sent);

/* hop_bs_send() counting what it wrote in @bs->tx_bytes. */
int hop_bs_send_counted(struct hop_bootstrap *bs, int fd, uint16_t type,
			uint32_t rank, const void *payload, size_t len,
			uint64_t deadline_ns, int watch_in);

/* One sendmsg() of header @hdr + @len bytes of @payload from byte @done
 * of the message: bytes written, or -1 with errno. */
ssize_t hop_bs_sendv(int fd, const uint8_t *hdr, const void *payload,
		     size_t len, size_t done);

/* Read exactly @len bytes before @deadline_ns. Return: 0, -ETIMEDOUT,
 * -ECONNRESET (closed or reset) or -errno. */
int hop_bs_recv(int fd, void *buf, size_t len, uint64_t deadline_ns);

/* REJECT / ABORT payload: code (negated hop code, u32) + reason text. */
size_t hop_bs_reason_pack(uint8_t *buf, int code, const char *reason);
int hop_bs_reason_unpack(const uint8_t *buf, size_t len, char *reason,
			 size_t rlen);

/* "2,5,7-9" (shortened past @len): the ranks r with missing[r] != 0. */
void hop_bs_rank_list(const uint8_t *missing, int nranks, char *buf,
		      size_t len, int *count);

/* Rank 0: send ABORT {code, reason} to every connected rank (best effort,
 * short deadline) and record the failure. */
int hop_bs_root_abort(struct hop_bootstrap *bs, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Peers: receive one message of @type and exactly @len bytes from rank 0,
 * failing on ABORT / REJECT with rank 0's reason. @what names the step. */
int hop_bs_peer_recv(struct hop_bootstrap *bs, uint16_t type, void *buf,
		     size_t len, uint64_t deadline_ns, const char *what);

/* Rank 0's half of hop_bootstrap_open() (bootstrap_root.c). */
int hop_bs_root_open(struct hop_bootstrap *bs, const struct hop_id_info *info,
		     uint64_t deadline_ns);

/* Ring (bootstrap_ring.c). Listen on the local address for rank r - 1's
 * link (bs->lfd); then connect to rank r + 1 and accept rank r - 1, each
 * proving it holds the secret. */
int hop_bs_ring_listen(struct hop_bootstrap *bs);
int hop_bs_ring_link(struct hop_bootstrap *bs, uint64_t deadline_ns);

/* Pass rank 0's @total-byte table @all around the ring (every rank's
 * block, gathered by rank 0) once rank 0 said START; the other ranks
 * receive it into @all. A broken ring is reported to rank 0, whose
 * verdict every rank reports. */
int hop_bs_ring_bcast(struct hop_bootstrap *bs, uint8_t *all, size_t total,
		      uint64_t deadline_ns);

/* Rank 0: rank @r sent FAIL (header @h): read its reason and abort every
 * rank with it. */
int hop_bs_root_failmsg(struct hop_bootstrap *bs, int r,
			const struct hop_bs_hdr *h);

/* Connect a non-blocking socket to @addr before @deadline_ns, retrying
 * while nobody listens there yet; @who names the target in messages. */
int hop_bs_connect(struct hop_bootstrap *bs, const struct sockaddr_in *addr,
		   const char *who, uint64_t deadline_ns, int *out);

/* TCP_NODELAY: bootstrap messages are small and latency-bound. */
void hop_bs_nodelay(int fd);

/* Seconds of @ms for messages: 60000 -> "60", 500 -> "0.5". */
void hop_bs_secs(int ms, char *buf, size_t len);

#endif /* HOP_CORE_BS_INT_H */
