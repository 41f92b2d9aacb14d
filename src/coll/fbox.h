/*
 * fbox.h - fast boxes: blocking AllReduce, Broadcast and Reduce of up to
 * HOP_FBOX_MAX bytes among ranks of one host, through one shared region
 * the communicator maps at init, without a schedule, request or
 * completion between the caller and the peers' memory.
 *
 * Region: a line of identity, then per rank
 *   [control line: done (the last collective it finished, + 1), failed,
 *    pid, reduced (the CMA form's segment moved, fbox_cma.c)]
 *   [slot 0] .. [slot HOP_FBOX_DEPTH - 1]  (sequence modulo the depth)
 * A slot is a 24-byte header (flag = sequence + 1, kind, op, dtype, root,
 * count) followed by the payload, so up to 40 bytes travel in the line
 * whose flag the reader polls. The writer fills the header and payload,
 * then stores the flag with release semantics.
 *
 * A slot is rewritten HOP_FBOX_DEPTH collectives later; its writer first
 * waits until every rank's done word has passed the collective that last
 * filled it
 * (implied after an AllReduce or a Reduce's root, which read every
 * rank's slot of the collective before: fbox.c keeps that floor).
 *
 * Sequence numbers are the comm's collective sequence (struct hop_coll
 * seq), so the fast and scheduled collectives of a comm interleave in the
 * one order every rank calls them.
 *
 * After every rank's slots, each rank has a wide area of
 * HOP_FBOX_WIDE_RING bytes (fbox_wide.c): a Broadcast or Reduce of up to
 * HOP_FBOX_WIDE_MAX bytes copies its data there, into a ring, and its
 * slot carries the offset.
 */
#ifndef HOP_COLL_FBOX_H
#define HOP_COLL_FBOX_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <hop/hop.h>

#include "coll/kinds.h"

struct hop_comm;
struct hop_coll_call;

#define HOP_FBOX_MAX 1024       /* payload bytes of a slot */
#define HOP_FBOX_LINE 64
/* Ranks a flat read serves: each rank reads every other rank's line,
 * which log-depth schedules beat beyond a few lines per call */
#define HOP_FBOX_RANKS 8
/* Slots per rank: how many collectives a writer may run ahead of a slow
 * reader (a Broadcast root, Reduce senders), so ranks sharing cores do
 * many calls per time slice (4 ranks on 2 cores, 8 B Broadcast: 8 slots
 * 8 us a call, 32 slots 2-6 us, 256 slots about 1 us, as each switch of
 * a core between ranks costs several us on a VM). 278 KiB per rank, of
 * which a small call touches one line a slot. */
#define HOP_FBOX_DEPTH 256

struct hop_fbox_ctrl {
	alignas(HOP_FBOX_LINE) _Atomic uint64_t done;
	_Atomic int32_t failed; /* the code this rank failed with, or 0 */
	int32_t pid;
	/* the rank whose call this rank's mismatched, or whose process
	 * was gone (written before @failed), or -1: bystanders name it */
	int32_t cause_peer;
	/* CMA form: the collective + 1 whose segment this rank reduced and
	 * wrote to the peers */
	_Atomic uint64_t reduced;
	/* the last collective + 1 this rank finished (pending checks of
	 * Broadcast headers aside): it reads no peer's wide data of it */
	_Atomic uint64_t wread;
	/* the CPU this rank ran on when it last began a wait, or -1: a
	 * waiter on the same CPU yields to it at once (fbox.c) */
	_Atomic int32_t cpu;
};

struct hop_fbox_hdr {
	_Atomic uint64_t flag;  /* sequence + 1; stored last */
	uint64_t count;
	int32_t root;
	uint8_t kind, op, dtype, rsvd;
	uint8_t data[];
};
#define HOP_FBOX_HDR 24
_Static_assert(offsetof(struct hop_fbox_hdr, data) == HOP_FBOX_HDR,
	       "fbox header");
#define HOP_FBOX_SLOT                                                         \
	((HOP_FBOX_HDR + HOP_FBOX_MAX + HOP_FBOX_LINE - 1) &                  \
	 ~(size_t)(HOP_FBOX_LINE - 1))
#define HOP_FBOX_STRIDE (HOP_FBOX_LINE + HOP_FBOX_DEPTH * HOP_FBOX_SLOT)

/* The wide area of a rank: a ring its Broadcasts, Reduces, AllGathers,
 * AllToAlls and ReduceScatters of up to HOP_FBOX_WIDE_MAX bytes of
 * payload copy their data into (at least two in flight); a call of b
 * bytes cycles through at most HOP_FBOX_WIDE_AHEAD x b of it, so small
 * calls stay in cache */
#define HOP_FBOX_WIDE_RING (512u << 10)
#define HOP_FBOX_WIDE_MAX (HOP_FBOX_WIDE_RING / 2)
#define HOP_FBOX_WIDE_AHEAD 8
/* ring entries not yet known to be read: each at least a slot's size */
#define HOP_FBOX_WIDE_ENTRIES (HOP_FBOX_WIDE_RING / HOP_FBOX_MAX)

/* The largest payload of @kind the wide form takes among @n ranks. Every
 * rank of an AllReduce reduces all N-1 peers' data, N times the work of
 * the CMA form, which splits it: at 4 ranks on 2 cores the wide form won
 * up to 64 KiB and lost at 256 KiB (352 against 187 us), so it stops
 * where a rank would reduce more than the ring's half. */
static inline size_t hop_fbox_wide_max(int kind, int n)
{
	return kind == HOP_COLL_ALLREDUCE && n > 1
		       ? HOP_FBOX_WIDE_MAX / (size_t)(n - 1)
		       : HOP_FBOX_WIDE_MAX;
}

/* The form of a call (hop_fbox_takes()) */
enum {
	HOP_FBOX_FORM_NONE,     /* the scheduled path */
	HOP_FBOX_FORM_SLOT,     /* the payload in the slot */
	HOP_FBOX_FORM_WIDE,     /* the payload in the wide area */
	HOP_FBOX_FORM_CMA,      /* the peers' buffers by CMA */
};

struct hop_fbox {
	uint8_t *base;          /* the mapped region */
	size_t len;
	int rank, nranks;
	uint64_t seq;           /* the comm's sequence, widened to 64 bits */
	uint64_t last_w[HOP_FBOX_DEPTH]; /* flag this rank last wrote per slot */
	uint64_t floor;         /* every rank's done is at least this */
	/* Broadcast readers' checks of another reader's header that was not
	 * written yet (fbox.c), for collectives pend_lo .. pend_hi - 1 (an
	 * entry per slot, peer -1 where none): made at later calls, and this
	 * rank's done word stays at pend_lo until then, so no peer rewrites
	 * a slot before it was checked. */
	uint64_t pend_lo, pend_hi;
	struct hop_fbox_pend {
		const char *fn;
		int peer, kind, root;
		size_t count;
		hop_dtype_t dtype;
		hop_op_t op;
	} pend[HOP_FBOX_DEPTH];
	/* The signature (hop_coll_signature()) of the last call of each kind
	 * the fast boxes take, with what it hashes that
	 * a call varies: a loop of like calls does not hash each one. */
	struct hop_fbox_sig {
		size_t count;
		int root;
		hop_dtype_t dtype;
		hop_op_t op;
		uint32_t sig;   /* 0: none yet */
	} sig[HOP_COLL_KIND_COUNT];
	/* CMA form (fbox_cma.c): every rank may read every other rank's
	 * memory by process_vm_readv (agreed at init) */
	int cma;
	/* The wide ring (fbox_wide.c): where the next entry may start, and
	 * the entries written and not yet known to be read by every peer,
	 * oldest first (circular, @whead the oldest) */
	size_t wide_off;        /* the wide areas' offset in the region */
	size_t wpos;
	unsigned whead, wcount;
	uint64_t wfloor;        /* every peer's wread is at least this */
	struct hop_fbox_went {
		uint32_t off;
		uint64_t flag;
	} went[HOP_FBOX_WIDE_ENTRIES];
	/* the last form chosen per kind, for its bytes */
	struct hop_fbox_memo {
		size_t bytes;
		int form;       /* 0: none yet */
	} memo[HOP_COLL_KIND_COUNT];
	/* 3 chunks: a peer's, this rank's own, a Reduce's result off the
	 * root */
	uint8_t *chunk;
	/* an AllToAll in place: the send blocks its peers read */
	uint8_t *copy;
	size_t copy_len;
};

/* The CMA form's unit of reading and reducing: the chunk read, this
 * rank's own and the destination's stay in L2 */
#define HOP_FBOX_CMA_CHUNK (128u << 10)

static inline struct hop_fbox_ctrl *hop_fbox_ctrl(const struct hop_fbox *fb,
						  int r)
{
	return (struct hop_fbox_ctrl *)(fb->base + HOP_FBOX_LINE +
					(size_t)r * HOP_FBOX_STRIDE);
}

static inline struct hop_fbox_hdr *hop_fbox_slot(const struct hop_fbox *fb,
						 int r, uint64_t seq)
{
	return (struct hop_fbox_hdr *)((uint8_t *)hop_fbox_ctrl(fb, r) +
				       HOP_FBOX_LINE +
				       (size_t)(seq % HOP_FBOX_DEPTH) *
					       HOP_FBOX_SLOT);
}

/*
 * hop_fbox_init() - Map the fast boxes of @comm when every rank is on
 * this host, shm connects them, nobody set HOP_FBOX=0 and the comm is not
 * derived; every rank decides alike (two bootstrap exchanges). A region
 * that cannot be made leaves the comm on the scheduled path (logged);
 * only a failed exchange is an error. fbox_seg.c.
 */
int hop_fbox_init(struct hop_comm *comm);
void hop_fbox_fini(struct hop_comm *comm);

/* Does a rank of @kind write N blocks of its count (AllToAll,
 * ReduceScatter), where every other kind writes one? */
static inline int hop_fbox_n_blocks(int kind)
{
	return kind == HOP_COLL_ALLTOALL || kind == HOP_COLL_REDUCESCATTER;
}

/* The bytes a rank writes to its slot for a call of @kind whose count is
 * @per bytes. */
static inline size_t hop_fbox_payload(int kind, size_t per, int nranks)
{
	return hop_fbox_n_blocks(kind) ? per * (size_t)nranks : per;
}

/* The form (HOP_FBOX_FORM_SLOT ..) a call of @kind writing @bytes
 * (hop_fbox_payload()) on @comm takes, or HOP_FBOX_FORM_NONE (0): up to
 * HOP_FBOX_MAX in the slots; larger, in the wide area (up to
 * HOP_FBOX_WIDE_MAX, an AllReduce up to that / (N-1)) or by CMA
 * (every kind but ReduceScatter, when every rank can reach its peers),
 * whichever the model prices lowest, when that is at or below the
 * scheduled algorithm it would choose. Blocking calls only; the same on
 * every rank. */
int hop_fbox_takes(struct hop_comm *comm, int kind, size_t bytes);

/* Run @c, writing @bytes per rank (hop_fbox_payload()),
 * through the fast boxes in @form: 0 or the error (comm failed on a
 * mismatch, a timeout, a dead peer, an abort). fbox.c. */
int hop_fbox_run(struct hop_comm *comm, const struct hop_coll_call *c,
		 size_t bytes, int form);

/* Seconds the cost model charges a fast-box call of @form (hop_coll_plan)
 * on @nranks ranks sharing @cores cores (0: unknown). */
double hop_fbox_predict(int form, int kind, size_t bytes, int nranks,
			int cores);

/* "fbox", "fbox-wide" or "fbox-cma": the name of @form. */
const char *hop_fbox_form(int form);

#endif /* HOP_COLL_FBOX_H */
