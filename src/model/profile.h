/*
 * profile.h - the link profile hop-probe measures and the cost model loads
 * (HOP_PROFILE): per rank pair, alpha and its parts, beta, R^2, the duplex
 * factor and the memory bandwidth, plus the size sweep. hop-probe writes
 * and reads all of it as JSON (format "hop-probe-profile", version 1;
 * tools/probe/profile_json.h, docs/probe.md); libhop reads the link
 * profile below, the part the cost model uses, in a line format.
 *
 * Units: times in microseconds (_us), bandwidths in GB/s = 1e9 bytes/s
 * (_GBps), sizes in bytes. A measurement that was not taken is NaN in the
 * structs and null in the file.
 */
#ifndef HOP_MODEL_PROFILE_H
#define HOP_MODEL_PROFILE_H

#include <stddef.h>
#include <stdio.h>

#define HOP_PROFILE_FORMAT "hop-probe-profile"
#define HOP_PROFILE_VERSION 1
#define HOP_PROFILE_MAX_SIZES 48
#define HOP_PROFILE_MAX_LINKS 16
#define HOP_PROFILE_NAME 16

/* The largest alpha and beta a profile or a topology file may give: beyond
 * them alpha or beta in SI units (or a time computed from them) is no longer
 * a finite double. */
#define HOP_LINK_MAX_ALPHA_US 1e9   /* 1000 s */
#define HOP_LINK_MAX_BETA_GBPS 1e6  /* 1 PB/s */

/* median and 99th percentile of one measurement */
struct hop_pstat {
	double median_us;
	double p99_us;
};

struct hop_profile_point {
	double size;            /* bytes */
	double median_us;       /* one-way time T(m) */
	double p99_us;
};

struct hop_profile_agg {
	int links;              /* d */
	double gbps;            /* measured aggregate bandwidth */
	double model_gbps;      /* min(d * beta, beta_mem) */
};

/*
 * struct hop_profile_pair - one measured pair a -> b. Plain data (no
 * pointers): hop-probe ships it between ranks as bytes.
 */
struct hop_profile_pair {
	int a, b;
	char provider[HOP_PROFILE_NAME];
	/* the link class of the pair (enum hop_link_class: 0 intra, 1 inter,
	 * from the two ranks' host identities), -1 when the file says none */
	int link_class;
	/* the model's numbers: T(m) = alpha_us + m / (beta_GBps * 1e3) */
	double alpha_us;        /* fitted intercept */
	double beta_gbps;       /* 1 / fitted slope */
	double r2;
	double beta_mem_gbps;   /* memcpy bandwidth on rank a */
	double duplex_factor;   /* t_both / t_one: 1 full duplex, 2 serial */
	/* alpha_sw + alpha_dma + alpha_sync + alpha_wire = one-way tiny write */
	struct hop_pstat sw, dma, sync, wire;
	struct hop_pstat sync_cts;  /* + rendezvous clear-to-send handshake */
	struct hop_pstat sync_step; /* + per step of an N-rank ring */
	int ring_ranks;             /* N of sync_step */
	double alpha_sum_us;        /* sw + dma + sync + wire */
	double alpha_diff_pct;      /* 100 (sum - alpha) / alpha */
	/* raw measurements behind the parts (optional in the file) */
	struct hop_pstat post_inline, post_noninline, post_to_completion;
	struct hop_pstat oneway_inline, oneway_noninline, oneway_mem;
	double timer_overhead_us;
	/* duplex (optional) */
	double duplex_size, duplex_one_us, duplex_both_us;
	/* 2-hop store-and-forward over unequal links (optional) */
	int saf_relay, saf_dest;
	double saf_size, saf_beta1_gbps, saf_beta2_gbps, saf_gbps,
		saf_harmonic_gbps;
	/* aggregate over d links out of rank a (optional) */
	int nagg;
	struct hop_profile_agg agg[HOP_PROFILE_MAX_LINKS];
	/* the sweep */
	int nsizes;
	struct hop_profile_point pt[HOP_PROFILE_MAX_SIZES];
};

struct hop_profile {
	int version;
	char provider[HOP_PROFILE_NAME];
	char hop_version[HOP_PROFILE_NAME];
	char host[64];
	int nranks;
	int npairs;
	struct hop_profile_pair *pairs; /* owned; hop_profile_free() */
};

/* Fill @pair with "not measured" (NaN, 0 counts, -1 ranks). */
void hop_profile_pair_init(struct hop_profile_pair *pair);

/*
 * The link profile HOP_PROFILE names: what the cost model prices with,
 * per measured pair, one line each; hop-probe --save-profile writes it.
 *
 *   hop-link-profile 1
 *   provider shm
 *   nranks 3
 *   # pair a b provider alpha_us beta_GBps beta_mem_GBps duplex_factor
 *   pair 0 1 shm 0.53 17.4 66.1 1.05
 *   pair 1 2 shm 0.55 17.1 - - intra
 *   pair 0 2 tcp 31.0 0.117 - - inter
 *   end
 *
 * Fields are separated by blanks; '#' starts a comment line; '-' is a
 * value not measured (beta_mem_GBps and duplex_factor only). The reader
 * is strict: the header first, nranks before the pairs, ranks in
 * [0, nranks), a != b, alpha_us in [0, HOP_LINK_MAX_ALPHA_US], beta_GBps
 * in (0, HOP_LINK_MAX_BETA_GBPS], the others > 0, at least one pair, and
 * the "end" line last (a truncated file fails). Fields of the full
 * profile the file does not hold are NaN (hop_profile_pair_init()).
 * Errors: "line L: field: what" (load: "<path>: line L: ...").
 */
#define HOP_PROFILE_LINK_FORMAT "hop-link-profile"
#define HOP_PROFILE_LINK_VERSION 2

/* Version 2 adds an optional last field to a pair line, the pair's link
 * class: "intra" (both ranks on one host) or "inter" (two hosts). A pair
 * without it (every pair of a version 1 file) has link_class -1: what the
 * model makes of such a pair, docs/model-hosts.md "Link classes". The writer
 * writes version 1 when no pair has a class, so older readers read it. */
#define HOP_PROFILE_LINK_V1 1
/* The name of link class @c ("intra", "inter"), "-" for any other. */
const char *hop_profile_class_name(int c);
/* The class named @s, or -1. */
int hop_profile_class_lookup(const char *s);

/* Write @p as a link profile to @f. 0, HOP_ERR_INVALID_ARG, HOP_ERR_SYSTEM. */
int hop_profile_link_write(const struct hop_profile *p, FILE *f);

/* Parse a link profile (@len bytes of @text) into @p (zeroed first; free
 * with hop_profile_free() on success; nothing to free on failure).
 * Return: 0, HOP_ERR_PARSE, HOP_ERR_NO_MEMORY, HOP_ERR_INVALID_ARG. */
int hop_profile_link_parse(const char *text, size_t len,
			   struct hop_profile *p, char *err, size_t errlen);

/* hop_profile_link_parse() of the file @path; the message starts with
 * @path. Also HOP_ERR_SYSTEM (open/read). */
int hop_profile_link_load(const char *path, struct hop_profile *p,
			  char *err, size_t errlen);

void hop_profile_free(struct hop_profile *p);

/* The pair (a, b) or (b, a) of @p, or NULL. */
const struct hop_profile_pair *hop_profile_find(const struct hop_profile *p,
						int a, int b);

/* Predicted one-way time of @bytes on @pair: alpha + m / beta, in us. */
double hop_profile_predict_us(const struct hop_profile_pair *pair,
			      double bytes);

#endif /* HOP_MODEL_PROFILE_H */
