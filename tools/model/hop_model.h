/*
 * hop_model.h - hop-model's subcommands and the helpers they share.
 */
#ifndef HOP_TOOLS_MODEL_H
#define HOP_TOOLS_MODEL_H

#include <stddef.h>

#include "model/model.h"

#define HM_MAX_LIST 256

/* "8:256M" (powers of 2), "1K:1G:4" (factor 4), "8,1K,1M" or "64K". */
int hm_parse_sizes(const char *opt, const char *spec, size_t *out, int max,
		   int *n);
/* "8" or "2,4,8,65536", each in [lo, hi]. */
int hm_parse_ints(const char *opt, const char *spec, long lo, long hi,
		  long *out, int max, int *n);
/* "12.5": a finite number >= @min (> @min when @open). */
int hm_parse_double(const char *opt, const char *s, double min, int open,
		    double *out);
/* Print @seconds with a unit chosen for it ("12.3 us", "4.56 ms"). */
const char *hm_time(double seconds, char *buf, size_t len);

/* Link options (link_opts.c): getopt codes, and the long options. */
enum {
	HM_OPT_PROFILE = 0x100, HM_OPT_PROVIDER, HM_OPT_ALPHA, HM_OPT_BETA,
	HM_OPT_GAMMA, HM_OPT_DUPLEX, HM_OPT_MINCHUNK, HM_OPT_EAGER,
	HM_OPT_MAXCHUNK,
};
#define HM_LINK_NFIELDS 7
#define HM_LINK_LONGOPTS                                                     \
	{ "profile", required_argument, NULL, HM_OPT_PROFILE },              \
	{ "provider", required_argument, NULL, HM_OPT_PROVIDER },            \
	{ "alpha-us", required_argument, NULL, HM_OPT_ALPHA },               \
	{ "beta-GBps", required_argument, NULL, HM_OPT_BETA },               \
	{ "gamma-ns", required_argument, NULL, HM_OPT_GAMMA },               \
	{ "duplex", required_argument, NULL, HM_OPT_DUPLEX },                \
	{ "min-chunk", required_argument, NULL, HM_OPT_MINCHUNK },           \
	{ "eager", required_argument, NULL, HM_OPT_EAGER },                  \
	{ "max-chunk", required_argument, NULL, HM_OPT_MAXCHUNK }

struct hm_link_opts {
	const char *profile, *provider;
	double v[HM_LINK_NFIELDS];      /* alpha us, beta GB/s, gamma ns, duplex, min chunk, eager, max chunk B */
	int have[HM_LINK_NFIELDS];
};
/* Take getopt code @c: 1 taken, 0 not a link option, -1 bad value
 * (message printed). */
int hm_link_opt(struct hm_link_opts *lo, int c, const char *arg);
/* The link the options describe: 0, 1 (a file could not be used) or 2
 * (usage), the message printed with "hop-model @cmd: ". */
int hm_link_load(const char *cmd, const struct hm_link_opts *lo,
		 struct hop_model_link *l, char *src, size_t srclen);
/* Apply the per-field overrides of @lo (--alpha-us, ...) to @l; 1 when
 * there was one, else 0. */
int hm_link_overrides(const char *cmd, const struct hm_link_opts *lo,
		      struct hop_model_link *l);
/* "# link: SRC: alpha ..., beta ..." */
void hm_print_link(const struct hop_model_link *l, const char *src);

/* Placement options (place_opts.c). */
enum {
	HM_OPT_HOSTS = 0x140, HM_OPT_PPN, HM_OPT_MAP, HM_OPT_INTRA_PROV,
	HM_OPT_INTER_PROV, HM_OPT_INTRA_ALPHA, HM_OPT_INTER_ALPHA,
	HM_OPT_INTRA_BETA, HM_OPT_INTER_BETA,
};
#define HM_PLACE_LONGOPTS                                                    \
	{ "hosts", required_argument, NULL, HM_OPT_HOSTS },                  \
	{ "ppn", required_argument, NULL, HM_OPT_PPN },                      \
	{ "map", required_argument, NULL, HM_OPT_MAP },                      \
	{ "intra-provider", required_argument, NULL, HM_OPT_INTRA_PROV },    \
	{ "inter-provider", required_argument, NULL, HM_OPT_INTER_PROV },    \
	{ "intra-alpha-us", required_argument, NULL, HM_OPT_INTRA_ALPHA },   \
	{ "inter-alpha-us", required_argument, NULL, HM_OPT_INTER_ALPHA },   \
	{ "intra-beta-GBps", required_argument, NULL, HM_OPT_INTRA_BETA },   \
	{ "inter-beta-GBps", required_argument, NULL, HM_OPT_INTER_BETA }

struct hm_place_opts {
	int given;                      /* --hosts or --ppn seen */
	long hosts;
	long ppn[HM_MAX_LIST];
	int nppn;
	int cyclic;
	const char *prov[2];            /* per class; NULL: shm, tcp */
	double alpha_us[2], beta_gbps[2];
	int have_alpha[2], have_beta[2];
};

/* A placement and the link of each class. */
struct hm_place {
	int *host_of;                   /* per rank; free() it */
	struct hop_model_place pl;
	struct hop_model_link links[2];
	int cyclic;
};

/* Take getopt code @c: 1 taken, 0 not a placement option, -1 bad value. */
int hm_place_opt(struct hm_place_opts *po, int c, const char *arg);
/* Build the placement and its links: 0, 1 (a file could not be used) or
 * 2 (usage), the message printed. */
int hm_place_build(const char *cmd, const struct hm_place_opts *po,
		   const struct hm_link_opts *lo, struct hm_place *out,
		   char *src, size_t srclen);
/* "# placement: ..." and the two links. */
void hm_print_place(const struct hm_place *p, const char *src);

/* predict's tables for placement @p (predict_place.c); 0 or 1. */
int hm_predict_place(const struct hm_place *p, const int *kinds, int nk,
		     const size_t *sizes, int ns, int csv);

int hm_predict(int argc, char **argv);
int hm_sim(int argc, char **argv);
int hm_route(int argc, char **argv);

#endif /* HOP_TOOLS_MODEL_H */
