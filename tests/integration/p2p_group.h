/*
 * p2p_group.h - what p2p_group.c shares with its error and timeout cases
 * (p2p_group_errors.c).
 */
#ifndef HOP_TESTS_P2P_GROUP_H
#define HOP_TESTS_P2P_GROUP_H

#include <stddef.h>

#include <hop/hop.h>

#define TEST_NAME "p2p_group"
#include "rank_check.h"

extern hop_comm_t *comm;
extern int rank, size;

void *xmalloc(size_t n);
void check_status(const hop_status_t *st, int src, int tag, size_t bytes,
		  int error, const char *what);

/* Bad arguments: specific codes, messages naming them. */
void test_errors(void);
/* Every rank's group waits for a message no rank sends: hop_group_end()
 * returns at HOP_TIMEOUT, naming the operation still pending. */
void test_timeout(void);

#endif
