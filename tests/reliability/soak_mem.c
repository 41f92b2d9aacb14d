/*
 * soak_mem.c - the memory the soak watches: the live heap (glibc) and
 * resident pages (/proc/self/statm).
 */
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#include "soak.h"

/* Bytes malloc has handed out and not got back (glibc), in KiB. */
long soak_heap_kib(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
	struct mallinfo2 mi = mallinfo2();

	return (long)((mi.uordblks + mi.hblkhd) >> 10);
#else
	return -1;
#endif
}

/*
 * Resident memory of this process in KiB from /proc/self/statm: the
 * private part (resident - shared) when @private, else all of it. The
 * shared part is the peers' shm segments and rings this rank maps: their
 * pages count as resident once first touched, which happens as ring
 * positions are first reached, so only the private part can show a leak.
 */
long soak_rss_kib(int private)
{
	long pages = -1, rss = -1, shared = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld %ld", &pages, &rss, &shared) != 3)
			rss = -1;
		fclose(f);
	}
	if (rss < 0)
		return -1;
	if (private)
		rss -= shared;
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}
