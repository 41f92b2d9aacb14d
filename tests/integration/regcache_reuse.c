/*
 * regcache_reuse.c - a cached registration must not outlive the memory it
 * was made for. Two ranks; rank 0 sends a rendezvous-sized message from a
 * buffer to rank 1's buffer, both ranks then give their buffer's pages
 * back to the kernel and get new ones at the same address, and the
 * transfer is repeated with another pattern:
 *
 *   free      malloc()ed, free()d (glibc unmaps a block this large), new
 *             pages mapped at the same address (MAP_FIXED_NOREPLACE)
 *   munmap    mmap()ed, munmap()ed, mapped again at the same address
 *   dontneed  mmap()ed, madvise(MADV_DONTNEED)
 *
 * On verbs a stale registration makes the HCA read or write the old pages:
 * rank 1 sees wrong bytes. On every provider the second transfer must
 * register anew on both ranks (the cache's miss counter moves), which a
 * cache that kept the old registration fails even where addresses alone
 * would carry the data (tcp, shm).
 *
 * Prints "regcache_reuse: rank R passed MODE ..." on success.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hop/hop.h>

#include "core/core.h"
#include "p2p/p2p_priv.h"

static hop_comm_t *comm;
static int rank;

#define TEST_NAME "regcache_reuse"
#include "rank_check.h"

#define LEN (4u << 20)  /* above glibc's largest mmap threshold start */
#define TAG 7

static uintptr_t page_down(uintptr_t a)
{
	return a & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
}

static uintptr_t page_up(uintptr_t a)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (a + pg - 1) & ~(uintptr_t)(pg - 1);
}

static unsigned char pattern(size_t i, int round)
{
	return (unsigned char)((i * 131u) ^ (i >> 9) ^ (unsigned)(round * 77 + 1));
}

/* Rank 0 sends @buf filled for @round; rank 1 receives and checks it. */
static void transfer(unsigned char *buf, int round, const char *mode)
{
	if (rank == 0) {
		for (size_t i = 0; i < LEN; i++)
			buf[i] = pattern(i, round);
		OK(hop_send(comm, buf, LEN, 1, TAG));
		return;
	}
	memset(buf, 0xee, LEN);
	OK(hop_recv(comm, buf, LEN, 0, TAG, NULL));
	for (size_t i = 0; i < LEN; i++)
		if (buf[i] != pattern(i, round))
			FAIL("%s: round %d: byte %zu of %u is 0x%02x, sent 0x%02x "
			     "(the registration of the old pages was used)",
			     mode, round, i, LEN, buf[i], pattern(i, round));
}

/* Map fresh pages over [a, a + len), which must be unmapped now; -1 if
 * it is still mapped and @may_be_mapped. */
static int remap_at(void *a, size_t len, const char *mode, int may_be_mapped)
{
	void *p = mmap(a, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED && errno == EEXIST && may_be_mapped)
		return -1;
	if (p == MAP_FAILED || p != a)
		FAIL("%s: mapping %zu B again at %p: %s", mode, len, a,
		     p == MAP_FAILED ? strerror(errno) : "another address");
	return 0;
}

/* The buffer for round 1 at the address of round 0's, new pages; NULL
 * when free() kept the block mapped (a sanitizer's or valgrind's
 * allocator), which leaves nothing to test. */
static unsigned char *renew(unsigned char *buf, const char *mode,
			    void **map, size_t *maplen)
{
	if (!strcmp(mode, "free")) {
		uintptr_t lo = page_down((uintptr_t)buf);

		*maplen = page_up((uintptr_t)buf + LEN) - lo;
		free(buf);
		if (remap_at((void *)lo, *maplen, mode, 1))
			return NULL;
		*map = (void *)lo;
	} else if (!strcmp(mode, "munmap")) {
		if (munmap(buf, LEN))
			FAIL("munmap: %s", strerror(errno));
		remap_at(buf, LEN, mode, 0);
	} else if (madvise(buf, LEN, MADV_DONTNEED)) {
		FAIL("madvise: %s", strerror(errno));
	}
	return buf;
}

static void run(const char *mode)
{
	struct hop_regcache *rc = &comm->p2p->rc;
	void *map = NULL;
	size_t maplen = 0;
	unsigned char *buf;
	uint64_t misses;

	if (!strcmp(mode, "free")) {
		buf = malloc(LEN);
	} else {
		buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		map = buf;
		maplen = LEN;
		if (buf == MAP_FAILED)
			buf = NULL;
	}
	if (!buf)
		FAIL("%s: no %u B buffer", mode, LEN);
	transfer(buf, 0, mode);
	OK(hop_barrier(comm));
	if (!(buf = renew(buf, mode, &map, &maplen))) {
		OK(hop_barrier(comm));
		printf("regcache_reuse: rank %d passed %s (not tested: this "
		       "malloc keeps freed blocks mapped)\n", rank, mode);
		return;
	}
	misses = rc->misses;
	transfer(buf, 1, mode);
	if (rc->misses == misses)
		FAIL("%s: the second transfer reused the registration of the "
		     "old pages (%llu misses, %llu invalidations, %zu cached)",
		     mode, (unsigned long long)misses,
		     (unsigned long long)rc->invalidations, rc->count);
	OK(hop_barrier(comm));
	printf("regcache_reuse: rank %d passed %s (%llu hits, %llu misses, "
	       "%llu invalidations, %s)\n", rank, mode,
	       (unsigned long long)rc->hits, (unsigned long long)rc->misses,
	       (unsigned long long)rc->invalidations,
	       rc->mon ? "watched" : rc->max ? "not watched" : "not cached");
	munmap(map, maplen);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: regcache_reuse free|munmap|dontneed...\n");
		return 2;
	}
	rank = -1;
	if (hop_comm_init_env(&comm) != HOP_SUCCESS) {
		fprintf(stderr, "regcache_reuse: init failed: %s\n",
			hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	if (hop_comm_size(comm) != 2)
		FAIL("runs on 2 ranks");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "free") && strcmp(argv[i], "munmap") &&
		    strcmp(argv[i], "dontneed"))
			FAIL("unknown mode %s", argv[i]);
		run(argv[i]);
	}
	hop_comm_destroy(comm);
	return 0;
}
