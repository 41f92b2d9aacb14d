/*
 * test_core_copy - hop_copy() and hop_move() (src/core/copy.h) against a
 * byte loop: every piece size, lengths around the piece, the buffers'
 * alignments, distances between the ends on both sides of HOP_COPY_NEAR
 * (pieces below it, one memcpy() above), lengths on both sides of the
 * size from which copies are whole, overlap both ways, and nothing
 * written outside the range.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/copy.h"

#define AREA 80000
#define GUARD 64

static _Alignas(4096) uint8_t area[AREA];
static uint8_t want[AREA];

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

/* the reference: a byte loop that copies as memmove() defines it */
static void ref_move(uint8_t *d, const uint8_t *s, size_t n)
{
	if (d < s)
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	else
		for (size_t i = n; i-- > 0;)
			d[i] = s[i];
}

/* hop_copy() of @n bytes from area + @so to the first place past it,
 * GUARD bytes apart, whose distance from it modulo 4096 is @dist */
static void copy_once(size_t n, size_t so, size_t dist, unsigned seed)
{
	size_t dof = (so + n + GUARD + 4095) / 4096 * 4096 + so % 4096 + dist;

	if (dof + n + GUARD > AREA)
		return;
	fill(area, AREA, seed);
	memcpy(want, area, AREA);
	ref_move(want + dof, want + so, n);
	hop_copy(area + dof, area + so, n);
	assert_int_equal((dof - so) % 4096, dist);
	assert_memory_equal(area, want, AREA);
}

static const size_t pieces[] = { 0, 1, 7, 64, 2048 };
static const size_t lens[] = { 0, 1, 63, 2047, 2048, 2049, 4096 + 5,
			       3 * 2048, 65536 + 17 };
static const size_t offs[] = { 0, 1, 8, 16, 24, 4080 };
/* dst - src modulo 4096 */
static const size_t dists[] = { 0, 8, 16, 24, HOP_COPY_NEAR - 1,
				HOP_COPY_NEAR, 100, 4088 };

/* whole copies from these lengths: all of lens[] in pieces, and
 * lens[] on both sides of the bound */
static const size_t belows[] = { HOP_COPY_PIECED_BELOW_DEFAULT, 2049 };

static void test_copy_apart(void **state)
{
	(void)state;
	for (size_t p = 0; p < 2 * sizeof(pieces) / sizeof(*pieces); p++) {
		hop_copy_set_piece(pieces[p / 2]);
		atomic_store(&hop_copy_pieced_below, belows[p % 2]);
		for (size_t l = 0; l < sizeof(lens) / sizeof(*lens); l++) {
			for (size_t o = 0; o < sizeof(offs) / sizeof(*offs); o++) {
				for (size_t k = 0; k < sizeof(dists) / sizeof(*dists); k++)
					copy_once(lens[l], GUARD + offs[o], dists[k],
						  (unsigned)(p + l + o + k));
			}
		}
	}
	hop_copy_set_piece(HOP_COPY_PIECE_DEFAULT);
}

static void test_move_overlap(void **state)
{
	static const long shifts[] = { -4097, -2049, -16, -1, 0, 1, 8, 16,
				       2048, 2049, 5000 };

	(void)state;
	for (size_t p = 0; p < sizeof(pieces) / sizeof(*pieces); p++) {
		hop_copy_set_piece(pieces[p]);
		for (size_t l = 0; l < sizeof(lens) / sizeof(*lens); l++) {
			for (size_t k = 0; k < sizeof(shifts) / sizeof(*shifts); k++) {
				size_t n = lens[l], so = 6000;
				size_t dof = (size_t)((long)so + shifts[k]);

				if (dof + n + GUARD > AREA || so + n > AREA)
					continue;
				fill(area, AREA, (unsigned)(p * 31 + l + k));
				memcpy(want, area, AREA);
				ref_move(want + dof, want + so, n);
				hop_move(area + dof, area + so, n);
				assert_memory_equal(area, want, AREA);
			}
		}
	}
	hop_copy_set_piece(HOP_COPY_PIECE_DEFAULT);
}

/* the piece the library reads is the one set; 0 means one memcpy(); the
 * bound is the L2 cache's size as sysconf() reports it */
static void test_piece_setting(void **state)
{
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	(void)state;
	hop_copy_set_piece(0);
	assert_int_equal(atomic_load(&hop_copy_pieced_below),
			 l2 > 0 ? (size_t)l2 : HOP_COPY_PIECED_BELOW_DEFAULT);
	assert_true(atomic_load(&hop_copy_piece) == SIZE_MAX);
	hop_copy_set_piece(4096);
	assert_int_equal(atomic_load(&hop_copy_piece), 4096);
	hop_copy_set_piece(HOP_COPY_PIECE_DEFAULT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_apart),
		cmocka_unit_test(test_move_overlap),
		cmocka_unit_test(test_piece_setting),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
