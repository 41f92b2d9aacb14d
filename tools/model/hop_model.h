/*
 * hop_model.h - hop-model's subcommands and the helpers they share.
 */
#ifndef HOP_TOOLS_MODEL_H
#define HOP_TOOLS_MODEL_H

#include <stddef.h>

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

int hm_predict(int argc, char **argv);
int hm_route(int argc, char **argv);

#endif /* HOP_TOOLS_MODEL_H */
