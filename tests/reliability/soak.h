/*
 * soak.h - the helpers of tests/reliability/soak.c.
 */
#ifndef HOP_TESTS_SOAK_H
#define HOP_TESTS_SOAK_H

#include <stddef.h>
#include <stdint.h>

#include <hop/hop.h>

/* The input of @rank at element @i of collective @salt (exact in every
 * dtype for @op). */
double soak_value(uint64_t salt, int rank, size_t i, hop_dtype_t t,
		  hop_op_t op);
/* Store @v as element @i of @p in dtype @t. */
void soak_encode(void *p, size_t i, hop_dtype_t t, double v);
/* The reduction by @op of the @n ranks' element @i, with hop's
 * semantics (avg of integers truncates). */
double soak_reduced(uint64_t salt, int n, size_t i, hop_dtype_t t,
		    hop_op_t op);

/* KiB malloc has handed out and not got back (glibc >= 2.33), else -1. */
long soak_heap_kib(void);
/* Resident KiB of this process: only its private pages when @private
 * (the peers' shm segments are shared and count once touched); -1 when
 * /proc/self/statm cannot be read. */
long soak_rss_kib(int private);

#endif /* HOP_TESTS_SOAK_H */
