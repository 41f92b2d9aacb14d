/*
 * example_util.h - the little the examples share: joining the job from the
 * launcher's environment, failing with hop's message, timing, arguments.
 */
#ifndef HOP_EXAMPLE_UTIL_H
#define HOP_EXAMPLE_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hop/hop.h>

static inline void ex_check(hop_comm_t *comm, int rc, const char *what)
{
	if (rc == HOP_SUCCESS)
		return;
	fprintf(stderr, "%s failed: %s (%s)\n", what, hop_err_name(rc),
		comm ? hop_comm_last_error(comm) : hop_last_init_error());
	hop_comm_destroy(comm);
	exit(1);
}

static inline hop_comm_t *ex_join(void)
{
	hop_comm_t *comm = NULL;

	ex_check(NULL, hop_comm_init_env(&comm), "hop_comm_init_env");
	return comm;
}

static inline double ex_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* "--name value" as a positive integer, else @def */
static inline long ex_arg(int argc, char **argv, const char *name, long def)
{
	for (int i = 1; i + 1 < argc; i++) {
		if (strcmp(argv[i], name) == 0) {
			long v = strtol(argv[i + 1], NULL, 10);
			if (v <= 0) {
				fprintf(stderr, "%s must be a positive integer\n", name);
				exit(2);
			}
			return v;
		}
	}
	return def;
}

#endif /* HOP_EXAMPLE_UTIL_H */
