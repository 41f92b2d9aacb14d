/*
 * copy_distance - time one copy of SIZE bytes (default 64 KiB) at each
 * distance dst - src modulo 4096 from -64 to +64 bytes, by memcpy(),
 * by hop_copy() and by process_vm_readv() of this process. The record
 * docs/results/2026-12-07-copy-pieces.md comes from it.
 *
 *   tests/bench/copy_distance [SIZE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>

#include "core/copy.h"

enum { REPS = 200, SPAN = 64, STEP = 8 };

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static void copy_memcpy(void *d, const void *s, size_t n)
{
	memcpy(d, s, n);
}

/* ns per copy of @n bytes by @copy */
static double time_copy(void (*copy)(void *, const void *, size_t),
			char *d, const char *s, size_t n)
{
	double t0 = now_ns();

	for (int k = 0; k < REPS; k++) {
		copy(d, s, n);
		__asm__ volatile("" : : "r"(d) : "memory");
	}
	return (now_ns() - t0) / REPS;
}

static double time_cma(char *d, const char *s, size_t n)
{
	struct iovec l = { d, n }, r = { (void *)s, n };
	double t0 = now_ns();

	for (int k = 0; k < REPS; k++)
		if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)n)
			return -1;
	return (now_ns() - t0) / REPS;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 65536;
	size_t area = (n + 4 * 4096 - 1) / 4096 * 4096; /* >= n + 3 pages */
	char *a, *b;

	if (n == 0 || n > (1ul << 30)) {
		fprintf(stderr, "copy_distance: SIZE '%s' is not 1..1G bytes\n",
			argv[1]);
		return 1;
	}
	a = aligned_alloc(4096, area);
	b = aligned_alloc(4096, area);
	if (!a || !b) {
		fprintf(stderr, "copy_distance: cannot allocate 2 x %zu B\n",
			area);
		free(a);
		free(b);
		return 1;
	}
	memset(a, 1, area);
	memset(b, 2, area);
	printf("# %zu B per copy, ns per copy (mean of %d copies)\n", n,
	       REPS);
	printf("# dst-src  memcpy  hop_copy  process_vm_readv\n");
	for (long o = -SPAN; o <= SPAN; o += STEP) {
		const char *s = a + 4096;
		char *d = b + 4096 + o;

		printf("%9ld %7.0f %9.0f %17.0f\n", o,
		       time_copy(copy_memcpy, d, s, n),
		       time_copy(hop_copy, d, s, n), time_cma(d, s, n));
	}
	free(a);
	free(b);
	return 0;
}
