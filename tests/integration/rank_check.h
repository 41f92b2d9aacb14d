/*
 * rank_check.h - failure macros of the multi-process tests. Each names
 * the program (TEST_NAME, defined before the include), the rank, the
 * function and line, and the communicator's last error, then exits 1.
 * The including file has `comm` and `rank` in scope.
 */
#ifndef HOP_TESTS_RANK_CHECK_H
#define HOP_TESTS_RANK_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#include <hop/hop.h>

#define FAIL(...)                                                             \
	do {                                                                  \
		fprintf(stderr, "%s rank %d: FAIL %s:%d: ", TEST_NAME, rank,  \
			__func__, __LINE__);                                  \
		fprintf(stderr, __VA_ARGS__);                                 \
		fprintf(stderr, " (last error: %s)\n",                        \
			hop_comm_last_error(comm));                           \
		exit(1);                                                      \
	} while (0)

#define CHECK_RC(call, want)                                                  \
	do {                                                                  \
		int rc_ = (call);                                             \
		if (rc_ != (want))                                            \
			FAIL("%s returned %s, expected %s", #call,            \
			     hop_err_name(rc_), hop_err_name(want));          \
	} while (0)
#define OK(call) CHECK_RC(call, HOP_SUCCESS)

#endif
