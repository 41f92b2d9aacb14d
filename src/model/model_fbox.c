/*
 * model_fbox.c - the cost of the fast boxes' CMA form (src/coll/
 * fbox_cma.c, docs/fastbox.md): blocking calls above 1 KiB among the
 * ranks of one host (every kind but ReduceScatter), each rank reading
 * its peers' buffers by process_vm_readv and writing its results into
 * theirs; and of their wide form (Broadcast, Reduce, AllGather,
 * AllToAll and ReduceScatter through a shared ring per rank).
 * Constants measured on the 2-core development VM, as the fastest of
 * many calls (docs/results/2026-12-06-shm-large.md): a 4 KiB
 * process_vm_readv took 2.6 us, 64 KiB 5.2 us, 16 MiB 3.0 ms.
 */
#include <math.h>

#include "coll/kinds.h"
#include "model/model.h"

#define CMA_SYNC 0.4e-6     /* one round of flags among the ranks */
#define CMA_CALL 2.4e-6     /* one process_vm_readv/writev */
#define CMA_BW 8e9          /* its copy, B/s */
#define CMA_REDUCE 0.15e-9  /* s/B of a local reduction of one operand */
#define CMA_CHUNK 131072.0  /* HOP_FBOX_CMA_CHUNK */
/* The wide form, fitted to the time per call of a loop of 2-rank calls
 * (4 KiB-256 KiB, docs/results/2026-12-06-shm-mid-rooted.md), where a
 * writer's copy into its ring overlaps the readers' work on the call
 * before: a call, a reader's copy out of a peer's ring, and a reduction
 * of a peer's ring data into the receive buffer */
#define WIDE_CALL 0.25e-6
#define WIDE_READ 31e-12    /* s/B */
#define WIDE_REDUCE 66e-12  /* s/B */

/* @bytes read or written by one rank, as chunks of @chunk bytes */
static double cma_read(double bytes, double chunk)
{
	return bytes <= 0 ? 0 : ceil(bytes / chunk) * CMA_CALL + bytes / CMA_BW;
}

double hop_model_fbox_cma_root_weight(int nranks)
{
	/* per byte: the root reads and reduces N-1 operands; the others
	 * that too, then write the result */
	double work = (nranks - 1) * (1 / CMA_BW + CMA_REDUCE);

	return nranks > 1 ? (work + 1 / CMA_BW) / work : 1;
}

double hop_model_fbox_cma(int kind, double bytes, int nranks, int cores)
{
	double n = nranks, seg = ceil(bytes / n), t;
	/* ranks beyond the cores take turns */
	double share = cores > 0 && nranks > cores ? n / cores : 1;

	switch (kind) {
	case HOP_COLL_BROADCAST:
		/* each rank copies (N-1)/N of the buffer: a reader the
		 * segments off the root's, the root its segment to each
		 * reader, in N-1 calls */
		seg = bytes * (n - 1) / n;
		t = 2 * CMA_SYNC + (n - 1) * CMA_CALL + seg / CMA_BW;
		return t * share;
	case HOP_COLL_ALLGATHER:
	case HOP_COLL_ALLTOALL:
		/* a rank reads its block of each peer and copies its own;
		 * @bytes holds an AllToAll's N blocks */
		seg = kind == HOP_COLL_ALLTOALL ? bytes / n : bytes;
		t = 2 * CMA_SYNC + (n - 1) * cma_read(seg, seg) + seg / CMA_BW;
		return t * share;
	case HOP_COLL_REDUCE:
		/* a rank off the root reads N-1 chunks of its segment,
		 * reduces them and writes the result to the root, in the
		 * time the root takes for its larger segment */
		seg = ceil(bytes / (hop_model_fbox_cma_root_weight(nranks) +
				    n - 1));
		t = 2 * CMA_SYNC + (n - 1) * (cma_read(seg, CMA_CHUNK) +
					      seg * CMA_REDUCE) +
		    cma_read(seg, CMA_CHUNK);
		return t * share;
	default: /* HOP_COLL_ALLREDUCE: the same, written to every peer */
		t = 2 * CMA_SYNC + (n - 1) * (2 * cma_read(seg, CMA_CHUNK) +
					      seg * CMA_REDUCE);
		return t * share;
	}
}

double hop_model_fbox_wide(int kind, double bytes, int nranks, int cores)
{
	double n = nranks;
	/* the ranks that work at once, beyond the cores, take turns */
	double busy = kind == HOP_COLL_BROADCAST ? n - 1 : n;
	double share = cores > 0 && busy > cores ? busy / cores : 1;

	if (kind == HOP_COLL_BROADCAST) /* each reader copies it out */
		return WIDE_CALL + bytes * WIDE_READ * share;
	/* every rank copies its payload in and its blocks out: an AllToAll
	 * the N-1 blocks its peers read, one of each peer's, and its own
	 * block from its send buffer straight to its receive buffer
	 * (2N-1 blocks); an AllGather its block and every peer's */
	if (kind == HOP_COLL_ALLTOALL)
		return WIDE_CALL + (2 * n - 1) / n * bytes * WIDE_READ * share;
	/* a ReduceScatter copies its N blocks in, then its block out of
	 * rank 0's and reduces the other N-1 into it */
	if (kind == HOP_COLL_REDUCESCATTER)
		return WIDE_CALL + (bytes + bytes / n) * WIDE_READ * share +
		       (n - 1) * (bytes / n) * WIDE_REDUCE * share;
	if (kind == HOP_COLL_ALLGATHER)
		return WIDE_CALL + (n + 1) * bytes * WIDE_READ * share;
	/* every rank copies its payload in and rank 0's out, and reduces
	 * the other N-1 into it */
	if (kind == HOP_COLL_ALLREDUCE)
		return WIDE_CALL + 2 * bytes * WIDE_READ * share +
		       (n - 1) * bytes * WIDE_REDUCE * share;
	/* the root reduces N-1 peers' data, one after the other */
	return WIDE_CALL + (n - 1) * bytes * WIDE_REDUCE * share;
}
