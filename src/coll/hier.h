/*
 * hier.h - what the hierarchical schedules (hier.c, hier_forms.c) share:
 * the placement of the ranks on hosts, and the composition of one
 * schedule out of phases, each a flat schedule of a sub-group built by
 * the flat builders and appended with its peers, buffers and tags
 * remapped (docs/hierarchical.md).
 */
#ifndef HOP_COLL_HIER_H
#define HOP_COLL_HIER_H

#include "coll/sched.h"

/* Tags: a phase's own in its low HIER_TAG_BITS bits, the phase's number
 * above them, so the two intra-host phases of one collective, which
 * join the same pairs of ranks, never match each other's messages. */
#define HIER_TAG_BITS 27
#define HIER_MAX_PHASES 16 /* 2^(31 - HIER_TAG_BITS) */

/* The ranks of the comm by host. */
struct hier_place {
	int n, H;               /* ranks, hosts */
	int me_h, me_i;         /* this rank's host and index on it */
	int uniform;            /* every host has L ranks */
	int L;
	int sorted;             /* each host's ranks are consecutive: host
				 * order is rank order (block placement) */
	const int *host;        /* [n] */
	int *cnt;               /* [H] ranks of host h */
	int *start;             /* [H] host h's first entry in byhost */
	int *byhost;            /* [n] ranks ordered by (host, rank) */
	int *lidx;              /* [n] index of rank r on its host */
	int *grp;               /* [max(H, n)] a sub-group's comm ranks */
	size_t *vc, *vd;        /* [max(H, n)] a v-phase's counts, displs */
};

/* Fill @p from @a's placement (NULL hosts: one host). 0, or
 * HOP_ERR_NO_MEMORY / HOP_ERR_INTERNAL (a host number out of range). */
int hier_place_init(struct hier_place *p, const struct hop_coll_args *a);
void hier_place_free(struct hier_place *p);

static inline const int *hier_members(const struct hier_place *p, int h)
{
	return p->byhost + p->start[h];
}

/* The leader of host @h: its lowest rank, or @root on root's host
 * (@root -1: none). */
int hier_leader(const struct hier_place *p, int h, int root);
/* p->grp = the leaders of every host (index = host); returns p->grp. */
const int *hier_leaders(struct hier_place *p, int root);
/* p->grp = rail @i: local rank @i of every host (uniform placement). */
const int *hier_rail(struct hier_place *p, int i);

/* Where a phase's buffer is in the whole schedule's buffers. */
struct hier_buf {
	int buf;                /* enum hop_buf_id */
	size_t off;             /* bytes */
};

struct hier_ctx {
	struct hop_sched *s;    /* the schedule being built */
	struct hop_sched sub;   /* one phase, built alone */
	struct hier_place p;
	int join;               /* what the next phase waits for, -1 none */
	int after;              /* and this too (a pipeline's previous
				 * piece in the same phase), -1 none */
	/* the phases' shared scratch region: after what the form reserved
	 * with hop_sched_scratch() before its first phase; a phase's own at
	 * scr_at in it (pieces that run at once need their own) */
	size_t scr0, scr_max, scr_at;
	int started;            /* a phase was appended */
};

/* The args of a phase of @kind on @n ranks (this one @rank). */
struct hop_coll_args hier_args(const struct hier_ctx *c, int kind, int cls,
			       int rank, int n, size_t count);

/* Build phase @ph (its tag region) of @a among @members (comm ranks,
 * index = sub rank) and append it after c->join; its SEND and RECV are
 * @send and @recv. c->join becomes the end of the phase. */
int hier_phase(struct hier_ctx *c, int ph, const struct hop_coll_args *a,
	       const int *members, struct hier_buf send, struct hier_buf recv);

/* Copy @n blocks of @bytes: block k from @src + from[k] * bytes to @dst +
 * to[k] * bytes (NULL = k), after c->join; then join them. */
int hier_copy_blocks(struct hier_ctx *c, struct hier_buf dst,
		     const int *to, struct hier_buf src, const int *from,
		     int n, size_t bytes);

/* The end of steps @first..s->nsteps - 1 that nothing waits for, joined
 * with NOPs of up to three each: c->join. */
void hier_join_from(struct hier_ctx *c, int first);

/* The collectives (hier_forms.c). */
int hier_allreduce(struct hier_ctx *c);
int hier_bcast(struct hier_ctx *c);
int hier_reduce(struct hier_ctx *c);
int hier_allgather(struct hier_ctx *c);
int hier_reducescatter(struct hier_ctx *c);
int hier_barrier(struct hier_ctx *c);

#endif /* HOP_COLL_HIER_H */
