/*
 * bad_input_rig.h - the communicator and follower behind test_bad_input.c
 * (bad_input_rig.c).
 */
#ifndef HOP_TESTS_BAD_INPUT_RIG_H
#define HOP_TESTS_BAD_INPUT_RIG_H

#include <stdint.h>
#include <string.h>

#include "core/core.h"

enum { CMD_CONT = 0, CMD_STOP, CMD_SEND, CMD_RKEY };
#define TAG_DATA 7
#define TAG_RKEY 8
#define IMM_PUT 0x1234u
#define CHECK_R0 1000   /* rank 0's marker in the command allreduce */
#define CHECK_R1 1      /* rank 1's */

/* Rank 0's end of the 2-rank communicator, between setup and teardown. */
extern hop_comm_t *g_comm;

/* The byte at @i of everything the follower sends or checks. */
uint8_t pattern(size_t i);
/* One command allreduce; returns the follower's result of the previous
 * command through *@prev. */
int command(int cmd, int arg, int *prev);
/* A correct collective right after a bad call: the comm still works, and
 * the follower's last command ended with @follower_ret. */
void still_works_follower(int follower_ret);
#define still_works() still_works_follower(0)

/* cmocka group setups (a fresh follower per transport) and teardown. */
int setup_tcp(void **state);
int setup_shm(void **state);
int comm_teardown(void **state);

/* The call returned @code and left a message containing @sub. */
#define expect_err(call, code, sub)                                           \
	do {                                                                  \
		int r_ = (call);                                              \
		const char *m_ = hop_comm_last_error(g_comm);                 \
		if (r_ != (code))                                             \
			fail_msg("%s returned %s, expected %s (%s)", #call,  \
				 hop_err_name(r_), hop_err_name(code), m_);   \
		if (!strstr(m_, (sub)))                                       \
			fail_msg("%s: message '%s' lacks '%s'", #call, m_,   \
				 (sub));                                      \
	} while (0)

#endif
