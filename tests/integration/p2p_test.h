/*
 * p2p_test.h - what the parts of p2p_test share: the communicator, the
 * failure macros and the byte pattern every message carries.
 */
#ifndef HOP_TESTS_P2P_TEST_H
#define HOP_TESTS_P2P_TEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hop/hop.h>

extern hop_comm_t *comm;
extern int rank, size;

#define FAIL(...)                                                             \
	do {                                                                  \
		fprintf(stderr, "p2p_test rank %d: FAIL %s:%d: ", rank,       \
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

/* Fill @b with the pattern of message @idx of @n bytes from @src to @dst;
 * verify() fails naming the first byte that differs. */
void fill(uint8_t *b, int src, int dst, size_t n, int idx);
void verify(const uint8_t *b, int src, int dst, size_t n, int idx,
	    const char *what);
void *xmalloc(size_t n);

/* p2p_test_errors.c */
void test_errors(void);

#endif
