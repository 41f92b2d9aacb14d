/*
 * coll_fbox_cma.c - coll_fbox's large mode for AllGather and AllToAll:
 * the fast boxes' CMA form (src/coll/fbox_cma.c) where every rank reads
 * its block of every peer's send buffer straight into its receive buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hop/hop.h>

#define TEST_NAME "coll_fbox"
static hop_comm_t *comm;
static int rank, nranks;
#include "rank_check.h"
#include "coll_fbox.h"

/* The smallest power of two payload bytes (from 2 KiB) of @kind that the
 * plan puts in the CMA form; 0 when none does up to 64 MiB. */
static size_t cma_from(int kind, size_t per)
{
	for (size_t b = 2048; b <= (64u << 20); b *= 2)
		if (takes(kind, b / 4 / per, HOP_FLOAT32, "fbox-cma"))
			return b;
	return 0;
}

/*
 * AllGather and AllToAll: with the form on (@cma), for each kind that
 * takes it at some size, every dtype just above the smallest payload
 * that does and at twice that, one of them in place; each rank late in
 * turn, in place and not;
 * checked against every rank's inputs. With it off, no size takes it.
 */
void coll_fbox_cma_gathers(hop_comm_t *c, int cma, uint64_t *salt)
{
	static const int kinds[2] = { HOP_KIND_ALLGATHER, HOP_KIND_ALLTOALL };
	int taken = 0;

	comm = c;
	rank = hop_comm_rank(c);
	nranks = hop_comm_size(c);
	for (int k = 0; k < 2; k++) {
		int kind = kinds[k];
		size_t per = n_blocks(kind) ? (size_t)nranks : 1;
		size_t from = cma_from(kind, per);

		if (from && !cma)
			FAIL("kind %d takes the CMA form, expected off", kind);
		if (!from)
			continue;
		taken++;
		/* the receive buffer holds N blocks */
		if (2 * from * (size_t)nranks / per > GATHER_BUFB)
			FAIL("kind %d takes the CMA form from %zu B, beyond "
			     "the buffers", kind, from);
		for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++) {
			size_t es = hop_dtype_size(dt);
			const size_t counts[] = { from / es / per + 1,
						  2 * from / es / per - 1 };

			/* in place at one of the two, turning with the
			 * dtype: the references of MiBs are slow under ASan */
			for (int i = 0; i < 2; i++) {
				if (!takes(kind, counts[i], dt, "fbox-cma"))
					FAIL("kind %d of %zu elements of dtype "
					     "%d is not in the CMA form", kind,
					     counts[i], dt);
				one_gather(kind, counts[i], dt, HOP_SUM,
					   (i + dt) & 1, (*salt)++, 0);
			}
		}
		for (int slow = 0; slow < nranks; slow++)
			for (int inplace = 0; inplace < 2; inplace++)
				one_gather(kind, from / 4 / per + 3,
					   HOP_FLOAT32, HOP_SUM, inplace,
					   (*salt)++, rank == slow ? 2000 : 0);
	}
	/* where the form is on, an AllToAll takes it (an AllGather of 2
	 * ranks is one exchange, which the schedule prices lower) */
	if (cma && !taken)
		FAIL("neither AllGather nor AllToAll takes the CMA form");
}
