/*
 * coll.h - what the rest of hop needs from the collectives layer.
 *
 * A collective call is compiled into a schedule (sched.h) and run by the
 * progress engine through hop_p2p_*; blocking calls start and then wait,
 * i-calls return a hop_request_t whose hop_test()/hop_wait() land here.
 */
#ifndef HOP_COLL_COLL_H
#define HOP_COLL_COLL_H

struct hop_comm;
struct hop_coll_op;

int hop_coll_init(struct hop_comm *comm);
void hop_coll_fini(struct hop_comm *comm);

/* Advance @op; *@done = 1 once finished. Returns 0 or the op's error. */
int hop_coll_test(struct hop_comm *comm, struct hop_coll_op *op, int *done);
/* Block until @op finishes or the deadline passes. */
int hop_coll_wait(struct hop_comm *comm, struct hop_coll_op *op);
/* Give @op's resources back (after done, or to cancel). */
void hop_coll_release(struct hop_comm *comm, struct hop_coll_op *op);

#endif /* HOP_COLL_COLL_H */
