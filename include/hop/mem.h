/*
 * hop/mem.h - memory registration: a region a peer can write into with
 * hop_put(), described to that peer by a hop_rkey_t.
 *
 * Life cycle: hop_mem_register() -> hop_mr_rkey() -> ship the key to peers
 * (any means, e.g. hop_send) -> peers hop_put() into it -> hop_mem_deregister().
 */
#ifndef HOP_MEM_H
#define HOP_MEM_H

#include <hop/comm.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Opaque registered memory region. */
typedef struct hop_mr hop_mr_t;

/** Access rights of a region. Local reads/writes are always allowed. */
enum hop_access {
	HOP_ACCESS_LOCAL = 0,           /* source of hop_put only */
	HOP_ACCESS_REMOTE_WRITE = 1u << 0, /* peers may hop_put into it */
	HOP_ACCESS_REMOTE_READ = 1u << 1,  /* reserved: peers may read it */
};

/**
 * struct hop_rkey - what a peer needs to write into a region: plain data,
 * safe to copy and send. Every write through it is bounds-checked.
 */
typedef struct hop_rkey {
	uint64_t addr;   /* start of the region in its owner's address space */
	uint64_t len;    /* length in bytes */
	uint64_t key;    /* provider key (verbs rkey, or table slot+generation) */
	uint32_t owner;  /* rank that registered the region */
	uint32_t access; /* enum hop_access bits */
} hop_rkey_t;

/**
 * hop_mem_register() - Register @len bytes at @buf on @comm.
 * @comm:   communicator.
 * @buf:    start of the region; not NULL unless @len is 0.
 * @len:    length in bytes; may be 0. [@buf, @buf + @len) must fit the
 *          address space (HOP_ERR_INVALID_ARG when it wraps or @len
 *          exceeds PTRDIFF_MAX).
 * @access: enum hop_access bits; only what peers need.
 * @mr:     receives the region; NULL on failure.
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_NO_MEMORY, HOP_ERR_TRANSPORT,
 * HOP_ERR_COMM_FAILED.
 */
HOP_EXPORT int hop_mem_register(hop_comm_t *comm, void *buf, size_t len,
				unsigned access, hop_mr_t **mr);

/**
 * hop_mem_deregister() - Release @mr. Later writes by peers through its key
 * fail on the writer's side with HOP_ERR_OUT_OF_BOUNDS or are dropped by
 * the target with a warning; they never land in the old memory.
 * @comm: the communicator @mr was registered on.
 * @mr:   region; NULL is accepted and ignored.
 * Return: 0, HOP_ERR_INVALID_HANDLE (not a live region of @comm).
 */
HOP_EXPORT int hop_mem_deregister(hop_comm_t *comm, hop_mr_t *mr);

/**
 * hop_mr_rkey() - The key peers use to write into @mr.
 * @mr:   a live region.
 * @rkey: receives the key.
 * Return: 0 or HOP_ERR_INVALID_ARG.
 */
HOP_EXPORT int hop_mr_rkey(const hop_mr_t *mr, hop_rkey_t *rkey);

#ifdef __cplusplus
}
#endif
#endif /* HOP_MEM_H */
