/*
 * copy.c - the piece hop_copy() copies in (copy.h says why).
 */
#include <stdint.h>
#include <unistd.h>

#include "copy.h"

_Atomic size_t hop_copy_piece = HOP_COPY_PIECE_DEFAULT;
_Atomic size_t hop_copy_pieced_below = HOP_COPY_PIECED_BELOW_DEFAULT;

/* glibc's rep movsb stop on AMD: the L2 cache's size, which sysconf()
 * reads from the same cpuid leaf glibc does */
static size_t l2_size(void)
{
#ifdef _SC_LEVEL2_CACHE_SIZE
	long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);

	if (l2 > 0)
		return (size_t)l2;
#endif
	return HOP_COPY_PIECED_BELOW_DEFAULT;
}

void hop_copy_set_piece(size_t piece)
{
	atomic_store_explicit(&hop_copy_piece, piece ? piece : SIZE_MAX,
			      memory_order_relaxed);
	atomic_store_explicit(&hop_copy_pieced_below, l2_size(),
			      memory_order_relaxed);
}
