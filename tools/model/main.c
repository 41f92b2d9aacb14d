/*
 * main.c - hop-model: predictions of hop's cost model (man/hop-model.1.md).
 *
 *   hop-model predict --nranks N[,N...] --sizes 8:256M [--collective C]
 *                     [--profile FILE | --provider shm|tcp|verbs] ...
 *   hop-model route --topo FILE --from A --to C --size M [--min-chunk B]
 *   hop-model sim --coll C --algo A|auto|all -n N --bytes M [...]
 *
 * Exit status: 0 done, 1 a file or value could not be used, 2 usage.
 */
#include "hop_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "core/config.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hop-model predict --nranks N[,N...] --sizes LO:HI[:F]|S,S...\n"
		"                 [--collective NAME|all] [--profile FILE | --provider shm|tcp|verbs]\n"
		"                 [--alpha-us X] [--beta-GBps X] [--gamma-ns X] [--duplex X]\n"
		"                 [--min-chunk BYTES] [--eager BYTES] [--max-chunk BYTES]\n"
		"                 [--cores C] [--csv]\n"
		"       hop-model route --topo FILE --from A --to C --size M [--min-chunk BYTES]\n"
		"       hop-model sim [--coll NAME] [--algo NAME|auto|all] -n N --bytes SIZE\n"
		"                 [--chunks K] [--depth D] [--root R] [--inplace] [--no-verify [--rotate]]\n"
		"                 [--topo FILE] [--csv] [--trace] [link options as for predict]\n"
		"       hop-model --help | --version\n"
		"Predicts collective times for every algorithm and the one hop picks,\n"
		"the best multi-hop route, or simulates hop's schedules in virtual time;\n"
		"see man hop-model and docs/model.md.\n");
}

int hm_parse_sizes(const char *opt, const char *spec, size_t *out, int max,
		   int *n)
{
	char buf[256], err[256], *save = NULL, *tok;
	size_t lo, hi, f = 2;

	*n = 0;
	if (!spec || strlen(spec) >= sizeof(buf)) {
		fprintf(stderr, "hop-model: %s: missing or too long\n", opt);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	if (strchr(buf, ':')) {
		char *p2 = strchr(buf, ':'), *p3;

		*p2++ = '\0';
		if ((p3 = strchr(p2, ':')))
			*p3++ = '\0';
		if (hop_parse_size(opt, buf, 0, (size_t)1 << 50, &lo, err,
				   sizeof(err)) ||
		    hop_parse_size(opt, p2, lo, (size_t)1 << 50, &hi, err,
				   sizeof(err)) ||
		    (p3 && hop_parse_size(opt, p3, 2, 1024, &f, err,
					  sizeof(err)))) {
			fprintf(stderr, "hop-model: %s (spec '%s')\n", err, spec);
			return -1;
		}
		for (size_t s = lo;; s = s ? s * f : 1) {
			if (*n == max) {
				fprintf(stderr, "hop-model: %s '%s': more than %d "
					"sizes\n", opt, spec, max);
				return -1;
			}
			out[(*n)++] = s;
			if (s >= hi || s > hi / f)
				break;
		}
		return 0;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max) {
			fprintf(stderr, "hop-model: %s: more than %d sizes\n", opt,
				max);
			return -1;
		}
		if (hop_parse_size(opt, tok, 0, (size_t)1 << 50, &out[*n], err,
				   sizeof(err))) {
			fprintf(stderr, "hop-model: %s\n", err);
			return -1;
		}
		(*n)++;
	}
	if (!*n) {
		fprintf(stderr, "hop-model: %s: no size in '%s'\n", opt, spec);
		return -1;
	}
	return 0;
}

int hm_parse_ints(const char *opt, const char *spec, long lo, long hi,
		  long *out, int max, int *n)
{
	char buf[512], err[256], *save = NULL, *tok;

	*n = 0;
	if (!spec || strlen(spec) >= sizeof(buf)) {
		fprintf(stderr, "hop-model: %s: missing or too long\n", opt);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max) {
			fprintf(stderr, "hop-model: %s: more than %d values\n",
				opt, max);
			return -1;
		}
		if (hop_parse_int(opt, tok, lo, hi, &out[*n], err, sizeof(err))) {
			fprintf(stderr, "hop-model: %s\n", err);
			return -1;
		}
		(*n)++;
	}
	if (!*n) {
		fprintf(stderr, "hop-model: %s: no value in '%s'\n", opt, spec);
		return -1;
	}
	return 0;
}

int hm_parse_double(const char *opt, const char *s, double min, int open,
		    double *out)
{
	char *end;
	double v;

	errno = 0;
	v = s ? strtod(s, &end) : NAN;
	if (!s || end == s || *end || errno || !isfinite(v) || v < min ||
	    (open && v <= min)) {
		fprintf(stderr, "hop-model: %s='%s': expected a number %s %g\n",
			opt, s ? s : "", open ? ">" : ">=", min);
		return -1;
	}
	*out = v;
	return 0;
}

const char *hm_time(double s, char *buf, size_t len)
{
	if (!isfinite(s))
		snprintf(buf, len, "-");
	else if (s < 1e-3)
		snprintf(buf, len, "%.2f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, len, "%.3f ms", s * 1e3);
	else
		snprintf(buf, len, "%.3f s", s);
	return buf;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("hop-model (hop) %s\n", hop_version());
		return 0;
	}
	if (!strcmp(argv[1], "predict"))
		return hm_predict(argc - 1, argv + 1);
	if (!strcmp(argv[1], "route"))
		return hm_route(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sim"))
		return hm_sim(argc - 1, argv + 1);
	fprintf(stderr, "hop-model: unknown command '%s' (predict, route or "
		"sim)\n",
		argv[1]);
	usage(stderr);
	return 2;
}
