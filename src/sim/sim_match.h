/*
 * sim_match.h - the simulators' matching of posted SENDs and RECVs (sim.c
 * and hop-model's simnet.c): the p2p layer's rule, a step meets the first
 * waiting step of the other kind with the same (source, destination,
 * tag), in posting order.
 *
 * Waiting steps sit in a hash table that doubles whenever they outnumber
 * its buckets, so it stays as small as the steps that wait. Its hash keeps
 * ranks that post the same tag to the same relative peer (a ring step, a
 * recursive-doubling round: what a run posts at one instant, in rank
 * order) in neighbouring buckets, so those posts walk the table in order
 * rather than missing the cache on every one (a 4096-rank ring keeps 16
 * million receives waiting).
 */
#ifndef HOP_SIM_MATCH_H
#define HOP_SIM_MATCH_H

#include <stddef.h>
#include <stdint.h>

struct hop_sched;

struct hop_sim_wait {
	int src, dst;
	uint32_t tag;
	int is_send;
	int rank, step;         /* the posting rank's step */
	int next;               /* bucket chain in posting order, or free list */
};

struct hop_sim_match {
	struct hop_sim_wait *wait;
	int nwait, wait_cap, wait_free, live;
	int *bucket;            /* a power of two, >= live when it can */
	int nbucket;
};

/*
 * hop_sim_match_post() - Post step @step of rank @rank (a SEND when
 * @is_send) from @src to @dst with @tag.
 * Return: 1 when it met a waiting partner, which is removed and returned
 * in @prank/@pstep; 0 when it waits; HOP_ERR_NO_MEMORY.
 */
int hop_sim_match_post(struct hop_sim_match *m, int src, int dst,
			  uint32_t tag, int is_send, int rank, int step,
			  int *prank, int *pstep);

/* A waiting step of rank @rank, or NULL. */
const struct hop_sim_wait *
hop_sim_match_waiting(const struct hop_sim_match *m, int rank);

/* Write to @err (@len bytes) why rank @rank's schedule @s did not finish:
 * how far it got and one step it waits for, with its peer and tag. */
void hop_sim_match_report_stuck(const struct hop_sim_match *m,
				const struct hop_sched *s, int rank,
				char *err, size_t len);

/* Index of a slot of the growable array @arr (*n used of *cap elements
 * of @size): the head of the free list *@free_head, linked through the
 * int at @next_off, else a new one (@free_head may be NULL); -1 when out
 * of memory. */
int hop_sim_slot_new(void **arr, int *n, int *cap, int *free_head,
			size_t size, size_t next_off);

/* Free everything; @m is then empty and reusable. */
void hop_sim_match_free(struct hop_sim_match *m);

#endif /* HOP_SIM_MATCH_H */
