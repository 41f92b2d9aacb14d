/*
 * copy.c - the piece hop_copy() copies in (copy.h says why).
 */
#include <stdint.h>

#include "copy.h"

_Atomic size_t hop_copy_piece = HOP_COPY_PIECE_DEFAULT;

void hop_copy_set_piece(size_t piece)
{
	atomic_store_explicit(&hop_copy_piece, piece ? piece : SIZE_MAX,
			      memory_order_relaxed);
}
