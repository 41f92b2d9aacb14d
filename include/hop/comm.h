/*
 * hop/comm.h - communicators: creation through a unique id (NCCL's shape) or
 * from the launcher's environment, destruction, abort and error reporting.
 *
 * Life cycle: one rank calls hop_get_unique_id() and ships the id to the
 * others by any means (or a launcher puts it in HOP_UNIQUE_ID); every rank
 * calls hop_comm_init_rank(); ranks then communicate; every rank calls
 * hop_comm_destroy(). A communicator is used by one thread at a time, except
 * hop_comm_abort(), which may be called from any thread: a call made while
 * another thread is inside a call on the same communicator is refused with
 * HOP_ERR_INVALID_ARG, naming both calls, and the running call is not
 * disturbed. A destroyed communicator is refused by every call with
 * HOP_ERR_INVALID_HANDLE (its storage is kept, so this is safe).
 */
#ifndef HOP_COMM_H
#define HOP_COMM_H

#include <hop/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque communicator. */
typedef struct hop_comm hop_comm_t;

#define HOP_UNIQUE_ID_BYTES 128

/**
 * struct hop_unique_id - rendezvous address of rank 0 plus a random 128-bit
 * secret that every rank must present. Treat it as opaque bytes; it is
 * checksummed, so a corrupted id is rejected with HOP_ERR_INVALID_ARG.
 */
typedef struct hop_unique_id {
	char internal[HOP_UNIQUE_ID_BYTES];
} hop_unique_id_t;

/**
 * hop_get_unique_id() - Create a unique id for a new communicator.
 * @id: receives the id; unchanged on failure.
 *
 * Binds the rendezvous listener of the rank that will be rank 0 (this
 * process), on HOP_SOCKET_IFNAME's address or the first non-loopback IPv4
 * address (loopback when HOP_SOCKET_IFNAME=lo or no other exists). The
 * listener is handed to the hop_comm_init_rank(rank=0) call made in this
 * process with the same id.
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_SYSTEM or HOP_ERR_CONFIG.
 */
HOP_EXPORT int hop_get_unique_id(hop_unique_id_t *id);

/**
 * hop_unique_id_to_string() - Hex-encode @id for an environment variable.
 * @id:  the id.
 * @buf: receives a NUL-terminated string.
 * @len: size of @buf; at least 2 * HOP_UNIQUE_ID_BYTES + 1.
 * Return: 0 or HOP_ERR_INVALID_ARG.
 */
HOP_EXPORT int hop_unique_id_to_string(const hop_unique_id_t *id, char *buf,
				       size_t len);

/**
 * hop_unique_id_from_string() - Decode a string made by
 * hop_unique_id_to_string(), checking its checksum.
 * Return: 0 or HOP_ERR_INVALID_ARG (wrong length, bad hex, bad checksum).
 */
HOP_EXPORT int hop_unique_id_from_string(const char *str, hop_unique_id_t *id);

/**
 * hop_comm_init_rank() - Join a communicator of @nranks ranks as @rank.
 * @comm:   receives the communicator; NULL on failure.
 * @nranks: number of ranks, 1 to 65536.
 * @id:     the unique id, identical on every rank.
 * @rank:   this rank, 0 to @nranks - 1.
 *
 * Collective: blocks until every rank has joined and the transport has
 * connected every pair, or until HOP_TIMEOUT expires; the timeout error
 * names the ranks that never arrived. The transport is HOP_TRANSPORT
 * (verbs, tcp, shm or auto; default auto).
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_TIMEOUT, HOP_ERR_AUTH,
 * HOP_ERR_BOOTSTRAP, HOP_ERR_NO_DEVICE, HOP_ERR_TRANSPORT, HOP_ERR_CONFIG.
 * On failure the reason is printed at HOP_DEBUG=warn and is available from
 * hop_last_init_error().
 */
HOP_EXPORT int hop_comm_init_rank(hop_comm_t **comm, int nranks,
				  hop_unique_id_t id, int rank);

/**
 * hop_get_unique_id_with(), hop_comm_init_rank_with() - The same, with
 * @settings applying to this id or communicator only.
 * @settings: NULL, or a NULL-terminated array of "HOP_NAME=value" strings
 *            that take precedence over the environment, e.g.
 *            { "HOP_IB_DEVICE=mlx5_1", "HOP_TRANSPORT=verbs", NULL }, so
 *            that one process can run communicators on different devices,
 *            interfaces or transports. Any variable of docs/config.md's
 *            table that hop reads at init may be given; values are checked
 *            as in the environment.
 * Return: as hop_get_unique_id() / hop_comm_init_rank(); HOP_ERR_CONFIG
 * when an entry is not NAME=value, is given twice, names no hop variable,
 * or names one hop reads once per process (the message names the entry).
 */
HOP_EXPORT int hop_get_unique_id_with(hop_unique_id_t *id,
				      const char *const *settings);
HOP_EXPORT int hop_comm_init_rank_with(hop_comm_t **comm, int nranks,
				       hop_unique_id_t id, int rank,
				       const char *const *settings);

/**
 * hop_comm_init_env() - Join a communicator described by the environment.
 * @comm: receives the communicator; NULL on failure.
 *
 * Rank and size come from HOP_RANK / HOP_SIZE, else OMPI_COMM_WORLD_RANK /
 * OMPI_COMM_WORLD_SIZE, else PMI_RANK / PMI_SIZE, else SLURM_PROCID /
 * SLURM_NTASKS. The rendezvous comes from HOP_UNIQUE_ID (as made by
 * hop_unique_id_to_string(), set by hop-run), else from HOP_ADDR=host:port
 * (rank 0 listens there) with the secret HOP_SECRET (32 hex digits; when
 * unset, one derived from the job id of the launcher, with a warning).
 * Return: as hop_comm_init_rank(), plus HOP_ERR_CONFIG when the
 * environment does not describe a job.
 */
HOP_EXPORT int hop_comm_init_env(hop_comm_t **comm);

/**
 * hop_last_init_error() - Message of the last failed init in this thread.
 * Return: a thread-local string, "" when none failed.
 */
HOP_EXPORT const char *hop_last_init_error(void);

/**
 * hop_comm_destroy() - Release @comm and everything registered on it.
 * @comm: a communicator; NULL is accepted and ignored.
 *
 * Not collective: it does not wait for peers. Outstanding requests are
 * cancelled. Memory regions still registered are deregistered. The
 * endpoints a communicator made by init shares with those derived from
 * it (hop_comm_split(), hop_comm_dup()) stay open until the last of them
 * is destroyed, in any order; each handle is invalid once destroyed.
 * Return: 0; HOP_ERR_INVALID_HANDLE when @comm was already destroyed;
 * HOP_ERR_INVALID_ARG (nothing destroyed) while another thread is inside a
 * call on @comm.
 */
HOP_EXPORT int hop_comm_destroy(hop_comm_t *comm);

/**
 * hop_comm_abort() - Fail @comm from any thread.
 * @comm: the communicator.
 *
 * Every call waiting on @comm returns HOP_ERR_ABORTED promptly, and every
 * later call returns HOP_ERR_COMM_FAILED. Peers notice through their own
 * deadlines or the transport's disconnect. The communicator must still be
 * destroyed with hop_comm_destroy(). Aborting a derived communicator
 * fails it alone; aborting one made by init fails every communicator
 * sharing its endpoints (docs/comm.md).
 * Return: 0 or HOP_ERR_INVALID_ARG.
 */
HOP_EXPORT int hop_comm_abort(hop_comm_t *comm);

/** Color of hop_comm_split() for a rank that joins no new communicator. */
#define HOP_UNDEFINED (-1)

/**
 * hop_comm_split() - Partition @comm into communicators by @color.
 * @comm:    the parent; every rank of it calls hop_comm_split().
 * @color:   ranks with the same color form one communicator; from 0, or
 *           HOP_UNDEFINED to join none.
 * @key:     orders the ranks of the new communicator; equal keys keep the
 *           order of their ranks in @comm.
 * @newcomm: receives the new communicator; NULL with HOP_UNDEFINED and on
 *           failure.
 *
 * Collective over @comm (one allgather of it, in its order among @comm's
 * collectives). The new communicator opens no connection: it shares the
 * endpoints of the communicator made by init that @comm descends from,
 * with a tag space, rank numbering, collective sequence and error state
 * of its own. Its traffic never matches @comm's or another's. Point to
 * point, collectives and hop_coll_plan() work on it; one-sided calls
 * (hop_mem_register(), hop_put(), hop_wait_imm()) and hop_relay() return
 * HOP_ERR_NOT_SUPPORTED. At most 63 derived communicators live at once on
 * a rank (per communicator made by init). Failure, abort and destruction
 * across a family: docs/comm.md.
 * Return: 0; HOP_ERR_INVALID_HANDLE (NULL or destroyed @comm),
 * HOP_ERR_INVALID_ARG (NULL @newcomm, a negative @color other than
 * HOP_UNDEFINED, another thread inside a call on @comm or on a
 * communicator sharing its endpoints), HOP_ERR_NO_MEMORY (out of memory,
 * or no communicator id free on every member: the message says which),
 * HOP_ERR_COMM_FAILED, and the errors of hop_allgather() on @comm
 * (HOP_ERR_MISMATCH when other ranks run another collective,
 * HOP_ERR_TIMEOUT, HOP_ERR_PEER_FAILED, HOP_ERR_ABORTED).
 */
HOP_EXPORT int hop_comm_split(hop_comm_t *comm, int color, int key,
			      hop_comm_t **newcomm);

/**
 * hop_comm_split_host() - Split @comm into one communicator per host,
 * ranks in @comm's order.
 * @comm:    the parent; every rank of it calls this.
 * @newcomm: receives the ranks of @comm on this host.
 *
 * A host is what the providers treat as one for shared memory (one boot
 * of one machine, by boot id and host name). As hop_comm_split().
 * Return: as hop_comm_split().
 */
HOP_EXPORT int hop_comm_split_host(hop_comm_t *comm, hop_comm_t **newcomm);

/**
 * hop_comm_dup() - A communicator of the same ranks, in the same order,
 * with a tag space of its own (a library's traffic kept apart from the
 * caller's).
 * @comm:    the parent; every rank of it calls this.
 * @newcomm: receives the copy.
 * Return: as hop_comm_split().
 */
HOP_EXPORT int hop_comm_dup(hop_comm_t *comm, hop_comm_t **newcomm);

/** hop_comm_rank() - This rank in @comm, or -1 when @comm is NULL or
 * destroyed. */
HOP_EXPORT int hop_comm_rank(const hop_comm_t *comm);

/** hop_comm_size() - Number of ranks of @comm, or -1 when @comm is NULL or
 * destroyed. */
HOP_EXPORT int hop_comm_size(const hop_comm_t *comm);

/**
 * hop_comm_transport() - Name of the provider @comm runs on ("tcp",
 * "shm", "verbs"; "INTRA+INTER" such as "shm+tcp" when the pairs inside a
 * host and across hosts use different ones), or "none" when @comm is NULL
 * or destroyed.
 */
HOP_EXPORT const char *hop_comm_transport(const hop_comm_t *comm);

/**
 * hop_comm_last_error() - Message describing the last error on @comm,
 * naming the argument, rank, peer or size at fault.
 * Return: a string owned by @comm, "" when no call has failed; for a NULL
 * or destroyed @comm, or a call refused because another thread was inside
 * one, a string of the calling thread saying so.
 */
HOP_EXPORT const char *hop_comm_last_error(const hop_comm_t *comm);

#ifdef __cplusplus
}
#endif
#endif /* HOP_COMM_H */
