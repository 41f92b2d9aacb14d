/*
 * coll_fbox.h - what the two files of the coll_fbox test share.
 */
#ifndef HOP_TESTS_COLL_FBOX_H
#define HOP_TESTS_COLL_FBOX_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <hop/hop.h>

static inline void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Run failure mode @mode (coll_fbox_fail.c) on @c with its argument
 * @arg: the exit status, or -1 when @mode is not one of them. */
int coll_fbox_failure(hop_comm_t *c, const char *mode, const char *arg);

/* The wide mode (coll_fbox_wide.c) on @c, which it destroys: the exit
 * status. */
int coll_fbox_wide(hop_comm_t *c);

/* The one-cpu mode (coll_fbox_cpu.c) on @c, which it destroys: the exit
 * status. */
int coll_fbox_one_cpu(hop_comm_t *c);

/* coll_fbox.c's checked calls, which coll_fbox_wide.c shares. */
extern unsigned long calls;     /* calls checked */
/* The gathering kinds the fast boxes take, by the bytes they write */
extern const int gather_kinds[3];
/* Does a rank of @kind write N blocks of its count (AllToAll,
 * ReduceScatter)? */
int n_blocks(int kind);
/* Does the plan of this call name @form? */
int takes(int kind, size_t count, hop_dtype_t dt, const char *form);
/* One AllReduce, Reduce (root @root) or Broadcast (from @root), checked;
 * @late: this rank sleeps that many microseconds first. */
void one(int kind, size_t count, hop_dtype_t dt, hop_op_t op, int root,
	 int inplace, uint64_t salt, long late);
/* One AllGather, AllToAll or ReduceScatter (@op) of @count elements per
 * block, checked against every rank's inputs; @late as for one(). Its
 * send and receive buffers hold GATHER_BUFB bytes. */
#define GATHER_BUFB (4u << 20)
void one_gather(int kind, size_t count, hop_dtype_t dt, hop_op_t op,
		int inplace, uint64_t salt, long late);
/* AllReduce, Reduce and Broadcast of @count elements, each root, in place
 * or not, the ones whose result is compared (kinds_at() in coll_fbox.c) */
void kinds_at(size_t count, hop_dtype_t dt, hop_op_t op, uint64_t *salt,
	      long late);

/* The large mode's AllGather and AllToAll (coll_fbox_cma.c) on @c: in
 * the CMA form when @cma, else never in it. */
void coll_fbox_cma_gathers(hop_comm_t *c, int cma, uint64_t *salt);

#endif
