/*
 * emu.h - pieces shared by the providers that emulate verbs in software
 * (tcp, shm): the memory-region table and the completion ring.
 *
 * MR table: a fixed array of slots, each {addr, len, access, generation}
 * under a sequence lock, so the owner may update it while other processes
 * read it (shm publishes its table in the shared segment; tcp keeps it
 * private). A key is (generation << 32) | slot: a slot reused after a
 * deregistration has a new generation, so a stale key is rejected, never
 * resolved to the new region. Slots and generations stay below 2^16, so
 * the mux (mux/mux.h) carries a key in 32 bits; a slot's generation wraps
 * after 65535 reuses.
 *
 * Completion ring: a growable FIFO of struct hop_cqe. Growth happens only
 * when more completions are pending than ever before, so the steady state
 * allocates nothing.
 */
#ifndef HOP_TRANSPORT_EMU_H
#define HOP_TRANSPORT_EMU_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <hop/common.h>

#include "transport/prov_common.h"

/* ------------------------------------------------------------------ */
/* MR table                                                           */

struct hop_mrtab_slot {
	_Atomic uint64_t seq;   /* odd while the owner updates the slot */
	_Atomic uint64_t gen;   /* generation; 0 = never used */
	_Atomic uint64_t addr;
	_Atomic uint64_t len;
	_Atomic uint64_t access; /* HOP_PROV_REMOTE_* | HOP_MRTAB_LIVE */
};

struct hop_mrtab {
	uint32_t nslots;
	uint32_t magic;         /* HOP_MRTAB_MAGIC once initialised */
	struct hop_mrtab_slot slot[];
};

#define HOP_MRTAB_MAGIC 0x6d727462u /* "mrtb" */
#define HOP_MRTAB_LIVE (1ull << 32)  /* in slot.access while registered */

/* Bytes needed for a table of @nslots slots. */
static inline size_t hop_mrtab_size(uint32_t nslots)
{
	return sizeof(struct hop_mrtab) +
	       (size_t)nslots * sizeof(struct hop_mrtab_slot);
}

/*
 * Owner side. The free list is private to the owner (struct
 * hop_mrtab_owner), so a table published in shared memory holds only what
 * readers need.
 */
struct hop_mrtab_owner {
	struct hop_mrtab *tab;
	uint32_t *free;         /* stack of free slot indices */
	uint32_t nfree;
};

#define HOP_MRTAB_MAX_SLOTS 65536u
#define HOP_MRTAB_GEN_MASK 0xffffu

/* Initialise @tab (hop_mrtab_size(nslots) bytes at @mem) and its owner;
 * HOP_ERR_INVALID_ARG past HOP_MRTAB_MAX_SLOTS. */
int hop_mrtab_init(struct hop_mrtab_owner *own, void *mem, uint32_t nslots);
void hop_mrtab_fini(struct hop_mrtab_owner *own);

/* Publish a region; *key receives its key. HOP_ERR_NO_MEMORY when full. */
int hop_mrtab_add(struct hop_mrtab_owner *own, const void *addr, size_t len,
		  unsigned access, uint64_t *key);

/* Retire @key (its slot gets a new generation). HOP_ERR_INVALID_HANDLE when
 * @key is not live. */
int hop_mrtab_remove(struct hop_mrtab_owner *own, uint64_t key);

/*
 * hop_mrtab_check() - Is [raddr, raddr + len) inside the live region @key
 * with all of @need access bits? Safe against a concurrent owner update.
 * Return: 0, or HOP_ERR_OUT_OF_BOUNDS with the reason in @why (unknown
 * slot, stale generation, out of bounds, access).
 */
int hop_mrtab_check(const struct hop_mrtab *tab, uint64_t key, uint64_t raddr,
		    uint64_t len, unsigned need, char *why, size_t whylen);

static inline uint64_t hop_mrtab_key(uint32_t slot, uint32_t gen)
{
	return ((uint64_t)gen << 32) | slot;
}

/* ------------------------------------------------------------------ */
/* Regions handed out by mr_reg (emu_mr.c)                            */

/* A registered region: the key in the MR table, on the provider's list of
 * live regions so close() can free what the user never deregistered. */
struct hop_emu_mr {
	struct hop_prov_mr pub;
	uint32_t magic;         /* the provider's, 0 once deregistered */
	struct hop_emu_mr *prev, *next;
};

/* What a provider lends hop_emu_mr_*() for one call. */
struct hop_emu_mr_set {
	const struct hop_prov_ctx *ctx; /* errors are reported here */
	const char *prov_name;  /* "tcp", "shm": starts every message */
	uint32_t magic;         /* tells this provider's regions apart */
	struct hop_mrtab_owner *tab;
	struct hop_emu_mr **live;
};

/* mr_reg/mr_dereg of a software provider: add/retire the table entry and
 * keep the live list; errors name the provider, the access bits or key. */
int hop_emu_mr_reg(const struct hop_emu_mr_set *set, void *addr, size_t len,
		   unsigned access, struct hop_prov_mr **out);
int hop_emu_mr_dereg(const struct hop_emu_mr_set *set,
		     struct hop_prov_mr *pub);
/* Free every region still on *@live (their keys die with the table). */
void hop_emu_mr_free_all(struct hop_emu_mr **live);

/* ------------------------------------------------------------------ */
/* Completion ring                                                    */

struct hop_cqring {
	struct hop_cqe *e;
	uint32_t cap;           /* power of two */
	uint32_t head;          /* next to pop */
	uint32_t count;
};

int hop_cqring_init(struct hop_cqring *q, uint32_t cap);
void hop_cqring_fini(struct hop_cqring *q);

/* A slot at the tail (the ring grows when full), or NULL out of memory. */
struct hop_cqe *hop_cqring_push(struct hop_cqring *q);

/* Move up to @max completions into @out; returns how many. */
int hop_cqring_pop(struct hop_cqring *q, struct hop_cqe *out, int max);

#endif /* HOP_TRANSPORT_EMU_H */
