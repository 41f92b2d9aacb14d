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
/* "# link: SRC: alpha ..., beta ..." */
void hm_print_link(const struct hop_model_link *l, const char *src);

int hm_predict(int argc, char **argv);
int hm_sim(int argc, char **argv);
int hm_route(int argc, char **argv);

#endif /* HOP_TOOLS_MODEL_H */
