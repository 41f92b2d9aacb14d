/*
 * copy.h - hop_copy(), the copy a payload takes between a user's buffer
 * and a ring, slot, bounce or scratch buffer.
 *
 * glibc copies 2 KiB and more with rep movsb on processors with fast
 * short rep movsb (FSRM). On the AMD EPYC development VM a rep movsb
 * whose destination lies 8-24 bytes past its source modulo 4096 runs
 * about 15 times slower: a 64 KiB memcpy() takes 35-38 us there against
 * 1.6-2.8 us at any other distance (tests/bench/copy_distance,
 * docs/results/2026-12-07-copy-pieces.md). Which distance a copy gets
 * depends on where malloc() put the user's buffer and where a ring entry
 * lies, so the same program ran fast or slow from one run to the next.
 * hop_copy() makes such a copy in pieces below glibc's threshold, which
 * take its vector loop, at a call per piece. glibc stops using rep movsb
 * at the L2 cache's size on AMD (512 KiB here: a 512 KiB copy at distance
 * 16 takes 18 us, one byte less 312 us), and its large-copy loop beats
 * the pieces from there (8 MiB: 1.0 against 2.2 ms), so a copy that large,
 * and every copy at another distance, is one memcpy(). The piece's size is
 * a variable, or the compiler inlines the constant-size copy as rep movsq,
 * which is as slow; it is atomic, as communicators initialised on several
 * threads at once each set it.
 */
#ifndef HOP_CORE_COPY_H
#define HOP_CORE_COPY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Default piece; HOP_COPY_PIECE sets it per process (0: one memcpy). */
#define HOP_COPY_PIECE_DEFAULT 2048
/* A destination less than this many bytes past its source, modulo 4096,
 * is copied in pieces (the slow distances measured are 8-24). */
#define HOP_COPY_NEAR 64
/* Copies this large or larger are one memcpy() where the L2 cache's size
 * is unknown */
#define HOP_COPY_PIECED_BELOW_DEFAULT (512u << 10)
extern _Atomic size_t hop_copy_piece;
extern _Atomic size_t hop_copy_pieced_below;

/* Set the piece from HOP_COPY_PIECE's value: 0 copies in one memcpy.
 * Also reads the L2 cache's size, below which copies may go in pieces. */
void hop_copy_set_piece(size_t piece);

/* memcpy(@dst, @src, @n), in pieces of hop_copy_piece when @dst lies
 * less than HOP_COPY_NEAR bytes past @src modulo 4096 and @n is below
 * hop_copy_pieced_below; the ranges must not overlap. */
static inline void hop_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	if ((((uintptr_t)d - (uintptr_t)s) & 4095) >= HOP_COPY_NEAR ||
	    n >= atomic_load_explicit(&hop_copy_pieced_below,
				      memory_order_relaxed)) {
		memcpy(d, s, n);
		return;
	}
	const size_t piece = atomic_load_explicit(&hop_copy_piece,
						  memory_order_relaxed);
	for (; n > piece; n -= piece) {
		memcpy(d, s, piece);
		d += piece;
		s += piece;
	}
	memcpy(d, s, n);
}

/* memmove(@dst, @src, @n): hop_copy() unless the ranges overlap */
static inline void hop_move(void *dst, const void *src, size_t n)
{
	uintptr_t d = (uintptr_t)dst, s = (uintptr_t)src;

	if (d == s)
		return;
	if (d + n <= s || s + n <= d)
		hop_copy(dst, src, n);
	else
		memmove(dst, src, n);
}

#endif /* HOP_CORE_COPY_H */
