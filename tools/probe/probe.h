/*
 * probe.h - hop-probe's internals: options, the measuring context that
 * drives a provider's ops directly, the measurements and the reports.
 *
 * Every rank runs the same sequence of phases; a phase names its active
 * ranks and the others wait at the next barrier. Measurements of a pair
 * land in a struct hop_profile_pair on its initiator (rank a), which is
 * gathered to rank 0 for the reports.
 */
#ifndef HOP_TOOLS_PROBE_H
#define HOP_TOOLS_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/fit.h"
#include "probe/profile_json.h"

struct hop_comm;
struct hop_prov;
struct hop_prov_ops;
struct hop_prov_mr;

#define PROBE_MAX_SIZE ((size_t)1 << 30)
#define PROBE_PHASE_TIMEOUTS 30 /* phase barriers wait 30 x HOP_TIMEOUT */

struct probe_opts {
	char transport[16];     /* "" = HOP_TRANSPORT / auto */
	int pair_a, pair_b;     /* -1: every neighbour pair (r, r+1) */
	size_t min_size, max_size;
	int iters, warmup;
	double budget_mb;       /* bytes moved per size (large sizes get fewer iterations) */
	const char *json, *csv, *svg, *save_profile;
	int quiet;
	int no_pin;             /* --no-pin */
};

/* one posted-write target: a peer's registered receive buffer */
struct probe_remote {
	uint64_t addr;
	uint64_t key;
	uint64_t len;
};

struct probe_ctx {
	struct hop_comm *comm;
	const struct hop_prov_ops *ops;
	struct hop_prov *prov;
	const struct probe_opts *opt;
	int rank, nranks;
	int inline_ok;          /* max_inline >= 1 */
	size_t max_inline;
	int poll_every;         /* memory-polling loop: provider polls per spin */
	size_t buflen;
	uint8_t *src, *dst;     /* src: local source; dst: peers write here */
	int dst_from_prov;      /* dst came from ops->mem_alloc */
	struct hop_prov_mr *src_mr, *dst_mr;
	struct probe_remote *rem; /* nranks entries */
	double timer_us;        /* cost of one hop_now_ns() read, subtracted */
	/* completion bookkeeping (filled by probe_poll) */
	uint64_t *imm_count;    /* per peer: RECV_IMM seen */
	uint64_t *imm_used;     /* per peer: RECV_IMM consumed by a wait */
	uint8_t *dirty;         /* per peer: posted to since the last barrier */
	uint32_t *last_imm;
	uint64_t writes_done;   /* local WRITE completions */
	uint64_t sig_posted;    /* signalled writes posted */
	uint64_t sends_done;
	uint64_t foreign;       /* completions that were not the probe's */
	uint64_t wr_seq;
	uint64_t idle_since;    /* spin(): start of the current idle stretch */
	int msg_peer;           /* last RECV (post_send) message, -1 none */
	uint8_t msg[64];
	uint32_t msg_len;
	double *samples;        /* scratch, max_samples doubles */
	size_t max_samples;
	char err[512];
};

/* measure.c: context, primitives, latency measurements */
int probe_ctx_open(struct probe_ctx *c, struct hop_comm *comm,
		   const struct probe_opts *opt);
void probe_ctx_close(struct probe_ctx *c);
int probe_barrier(struct probe_ctx *c);
int probe_allgather(struct probe_ctx *c, const void *mine, void *all,
		    size_t len);
int probe_poll(struct probe_ctx *c);
int probe_write(struct probe_ctx *c, int peer, int use_mr, size_t off,
		size_t len, size_t roff, uint32_t imm, unsigned flags);
/* write from any registered buffer (@mr NULL: inline) */
int probe_write_buf(struct probe_ctx *c, int peer, struct hop_prov_mr *mr,
		    const void *buf, size_t len, size_t roff, uint32_t imm,
		    unsigned flags);
int probe_pingpong(struct probe_ctx *c, int a, int b, size_t len, int inl,
		   int mode, size_t n, size_t warm, double *out);
enum { PP_IMM = 0, PP_MEM = 1 };
size_t probe_inline_len(const struct probe_ctx *c);
/* wait for the next immediate from @peer (each is consumed once) */
int probe_next_imm(struct probe_ctx *c, int peer, const char *what);
int probe_wait_writes(struct probe_ctx *c, uint64_t target);
int probe_wait_byte(struct probe_ctx *c, size_t at, uint8_t v, int peer);
int probe_pair_sync(struct probe_ctx *c, int peer);
int probe_send_msg(struct probe_ctx *c, int peer, const void *buf,
		   size_t len);
int probe_wait_msg(struct probe_ctx *c, int peer, void *buf, size_t len);
size_t probe_iters(const struct probe_ctx *c, size_t size);
double probe_elapsed_us(const struct probe_ctx *c, uint64_t t0,
			uint64_t t1);
void probe_stat_set(struct hop_pstat *dst, const struct hop_stats *st);

/* Latency part of one pair (a initiates, b responds); fills @q on a. */
int probe_pair_latency(struct probe_ctx *c, int a, int b,
		       struct hop_profile_pair *q);

/* measure_bw.c: the sweep, link effects, ring step, memory bandwidth */
int probe_sweep(struct probe_ctx *c, int a, int b,
		struct hop_profile_pair *q);
int probe_duplex(struct probe_ctx *c, int a, int b,
		 struct hop_profile_pair *q);
int probe_store_forward(struct probe_ctx *c, int a, int b,
			struct hop_profile_pair *q);
int probe_aggregate(struct probe_ctx *c, int src, struct hop_profile_pair *q);
int probe_saf_dest(const struct probe_ctx *c, int a, int b);
int probe_ring_step(struct probe_ctx *c, struct hop_pstat *out);
double probe_beta_mem(const struct probe_ctx *c);

/* report.c: the fit and its consistency check, the outputs */
void probe_finish_pair(struct hop_profile_pair *q, struct hop_fit *fit,
		       struct hop_alpha_check *chk);
void report_table(FILE *f, const struct hop_profile *p);
int report_csv(FILE *f, const struct hop_profile *p);
int report_svg(FILE *f, const struct hop_profile *p);
int report_to_file(const char *path, const struct hop_profile *p,
		   int (*fn)(FILE *, const struct hop_profile *));

#endif /* HOP_TOOLS_PROBE_H */
