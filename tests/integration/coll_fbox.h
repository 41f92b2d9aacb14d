/*
 * coll_fbox.h - what the two files of the coll_fbox test share.
 */
#ifndef HOP_TESTS_COLL_FBOX_H
#define HOP_TESTS_COLL_FBOX_H

#include <time.h>

#include <hop/hop.h>

static inline void nap_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* Run failure mode @mode (coll_fbox_fail.c) on @c with its argument
 * @arg: the exit status, or -1 when @mode is not one of them. */
int coll_fbox_failure(hop_comm_t *c, const char *mode, const char *arg);

#endif
