/*
 * bootstrap.h - TCP rendezvous at rank 0 and the out-of-band collectives
 * (allgather, barrier) that providers use to exchange addresses and keys
 * while connecting.
 *
 * Every rank connects to rank 0 and presents the 128-bit secret of the
 * unique id; rank 0 rejects a wrong secret, a rank out of range, a rank seen
 * twice or a different nranks. Every message has a fixed header whose length
 * is checked against the expected size before anything is read. Every call
 * takes a deadline; on expiry the error names the ranks that did not answer.
 */
#ifndef HOP_CORE_BOOTSTRAP_H
#define HOP_CORE_BOOTSTRAP_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include <hop/comm.h>

struct hop_config;
struct hop_bootstrap;

#define HOP_SECRET_BYTES 16
#define HOP_BS_MAX_MSG (64u << 20) /* largest bootstrap payload accepted */

/* Decoded form of struct hop_unique_id (id.c). */
struct hop_id_info {
	uint32_t version;
	struct sockaddr_in addr;        /* rank 0's rendezvous address */
	uint8_t secret[HOP_SECRET_BYTES];
};

/* Encode/decode the opaque id; decode checks magic, version, checksum. */
void hop_id_encode(const struct hop_id_info *info, hop_unique_id_t *id);
int hop_id_decode(const hop_unique_id_t *id, struct hop_id_info *info);

/*
 * hop_bootstrap_open() - Join the rendezvous of @id as @rank of @nranks.
 * Rank 0 uses a listener handed over by hop_get_unique_id() in this process,
 * or one inherited from hop-run (HOP_BOOTSTRAP_FD), or binds the id's
 * address. Others connect (retrying until @deadline_ns).
 * @err: receives the reason on failure (names missing ranks on timeout).
 * Return: 0, HOP_ERR_TIMEOUT, HOP_ERR_AUTH, HOP_ERR_BOOTSTRAP,
 * HOP_ERR_INVALID_ARG, HOP_ERR_SYSTEM.
 */
int hop_bootstrap_open(const hop_unique_id_t *id, int rank, int nranks,
		       const struct hop_config *cfg, uint64_t deadline_ns,
		       struct hop_bootstrap **out, char *err, size_t errlen);

/*
 * hop_bootstrap_allgather() - Every rank contributes @len bytes; @all
 * receives nranks * @len bytes, rank r's at r * @len. @len must be equal on
 * every rank (checked: HOP_ERR_MISMATCH naming the rank that differs).
 * Rank 0 checks every rank's entry, then the blocks travel a ring: every
 * rank sends (nranks - 1) * @len bytes, rank 0 O(nranks) more.
 */
int hop_bootstrap_allgather(struct hop_bootstrap *bs, const void *mine,
			    void *all, size_t len, uint64_t deadline_ns);

/* hop_bootstrap_barrier() - Return once every rank has entered. */
int hop_bootstrap_barrier(struct hop_bootstrap *bs, uint64_t deadline_ns);

/* Message describing the last bootstrap failure ("" if none). */
const char *hop_bootstrap_error(const struct hop_bootstrap *bs);

/* The secret of the id (providers put it in their connection hellos). */
const uint8_t *hop_bootstrap_secret(const struct hop_bootstrap *bs);

/* The local IPv4 address of the chosen interface (providers listen there). */
struct in_addr hop_bootstrap_local_addr(const struct hop_bootstrap *bs);

/* Bytes this rank has sent on bootstrap sockets (headers included). */
uint64_t hop_bootstrap_bytes_sent(const struct hop_bootstrap *bs);

/* Close every socket (logging the bytes sent at info level); safe on NULL. */
void hop_bootstrap_close(struct hop_bootstrap *bs);

/*
 * Pure parsing of one bootstrap message header, for the receiver and the
 * fuzzer: validates magic, type and that @len fits @max. Return 0 or
 * HOP_ERR_PROTOCOL with a reason in @err.
 */
struct hop_bs_hdr {
	uint32_t magic;
	uint16_t type;
	uint16_t flags;
	uint32_t rank;
	uint32_t len;
};
int hop_bs_hdr_parse(const void *buf, size_t buflen, uint32_t max_len,
		     struct hop_bs_hdr *out, char *err, size_t errlen);

#endif /* HOP_CORE_BOOTSTRAP_H */
