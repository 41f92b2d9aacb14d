/*
 * p2p_test.h - what the parts of p2p_test share: the communicator, the
 * failure macros (rank_check.h) and the byte pattern every message
 * carries.
 */
#ifndef HOP_TESTS_P2P_TEST_H
#define HOP_TESTS_P2P_TEST_H

#include <stddef.h>
#include <stdint.h>

#include <hop/hop.h>

#define TEST_NAME "p2p_test"
#include "rank_check.h"

extern hop_comm_t *comm;
extern int rank, size;

/* Fill @b with the pattern of message @idx of @n bytes from @src to @dst;
 * verify() fails naming the first byte that differs. */
void fill(uint8_t *b, int src, int dst, size_t n, int idx);
void verify(const uint8_t *b, int src, int dst, size_t n, int idx,
	    const char *what);
void *xmalloc(size_t n);

/* p2p_test_errors.c */
void test_errors(void);

#endif
