/*
 * comm_agree.h - the per-process "auto" inputs every rank must share,
 * agreed once at init (comm_agree.c says which and how).
 */
#ifndef HOP_CORE_COMM_AGREE_H
#define HOP_CORE_COMM_AGREE_H

#include <stdint.h>

#include "core/core.h" /* struct hop_agreed_link */

struct hop_comm;

/* What one rank contributes (plain bytes, same layout on every rank). */
struct hop_agree_rec {
	uint32_t local_ranks;   /* ranks of its host sharing its cores */
	uint32_t usable_cores;  /* the cores of their masks together */
	uint64_t eager;         /* its HOP_EAGER_SIZE, resolved alone */
	uint8_t eager_auto;     /* 1: HOP_EAGER_SIZE=auto */
	uint8_t has_links;      /* 1: @link holds its cost-model links */
	uint8_t pad[6];
	struct hop_agreed_link link[2]; /* per enum hop_link_class */
};

/* This rank's record: after transport selection (local_ranks and
 * usable_cores, the provider's name) and the cost model's
 * own links (comm->model_link, set by the api layer from HOP_PROFILE). */
void hop_agree_local(const struct hop_comm *comm, struct hop_agree_rec *rec);

/* The fold every rank computes from the @n gathered records: the largest
 * ranks/cores ratio (exactly, as the pair), the smallest eager size of the
 * ranks that asked for auto (eager_auto 0 when none did), and per link
 * class the slowest link of the ranks that gave one (largest alpha, gamma,
 * duplex and min_chunk, smallest beta and max_chunk, 0 = no bound;
 * has_links 0 when none did). Max and min do not depend on the order, so
 * every rank folds the same bytes. */
void hop_agree_fold(const struct hop_agree_rec *all, int n,
		    struct hop_agree_rec *out);

/*
 * hop_comm_agree() - Exchange the records once (bootstrap) and freeze the
 * fold on @comm: model_ranks/model_cores, model_link when some rank gave
 * links, and cfg.eager_size when this rank asked for auto. Before the provider opens (it sizes its slots).
 * Return: 0, or the bootstrap's error (set on @comm with hop_set_error).
 */
int hop_comm_agree(struct hop_comm *comm, uint64_t deadline);

#endif /* HOP_CORE_COMM_AGREE_H */
