/*
 * plan.c - hop_coll_plan(): the choice a collective would make, through
 * hop_coll_choose(), the function the collectives call.
 */
#include <stdint.h>

#include "coll/coll_int.h"
#include "coll/fbox.h"

/* The public kinds are the model's: one number, no table to keep. */
_Static_assert((int)HOP_KIND_BROADCAST == HOP_COLL_BROADCAST &&
		       (int)HOP_KIND_REDUCE == HOP_COLL_REDUCE &&
		       (int)HOP_KIND_ALLREDUCE == HOP_COLL_ALLREDUCE &&
		       (int)HOP_KIND_ALLGATHER == HOP_COLL_ALLGATHER &&
		       (int)HOP_KIND_REDUCESCATTER == HOP_COLL_REDUCESCATTER &&
		       (int)HOP_KIND_BARRIER == HOP_COLL_BARRIER &&
		       (int)HOP_KIND_ALLTOALL == HOP_COLL_ALLTOALL &&
		       (int)HOP_KIND_ALLTOALLV == HOP_COLL_ALLTOALLV &&
		       (int)HOP_KIND_GATHER == HOP_COLL_GATHER &&
		       (int)HOP_KIND_SCATTER == HOP_COLL_SCATTER &&
		       (int)HOP_KIND_ALLGATHERV == HOP_COLL_ALLGATHERV &&
		       (int)HOP_KIND_REDUCESCATTERV == HOP_COLL_REDUCESCATTERV &&
		       (int)HOP_KIND_REDUCESCATTERV + 1 == HOP_COLL_KIND_COUNT,
	       "hop_coll_kind_t follows enum hop_coll_kind");

static int plan_run(struct hop_comm *comm, int kind, size_t count,
		    hop_dtype_t dtype, hop_coll_plan_t *plan)
{
	struct hop_coll_choice ch;
	size_t es, fbytes;
	int form;

	if (!plan)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "hop_coll_plan: plan is NULL");
	if (kind < 0 || kind >= HOP_COLL_KIND_COUNT)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "hop_coll_plan: "
				     "kind %d is not a collective (0..%d)", kind,
				     HOP_COLL_KIND_COUNT - 1);
	if (kind == HOP_COLL_BARRIER) {
		count = 0;
		dtype = HOP_UINT8;
	}
	if (!(es = hop_dtype_size(dtype)))
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "hop_coll_plan"
				     "(%s): invalid dtype %d",
				     hop_coll_kind_name(kind), (int)dtype);
	if (count > SIZE_MAX / es / (size_t)comm->nranks)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG, "hop_coll_plan"
				     "(%s): count %zu of %s times %d ranks "
				     "overflows size_t", hop_coll_kind_name(kind),
				     count, hop_dtype_name(dtype),
				     comm->nranks);
	if (!comm->coll)
		return hop_set_error(comm, HOP_ERR_INVALID_HANDLE, "hop_coll_plan"
				     ": collectives not initialised");
	hop_coll_choose(comm, kind, count, dtype, &ch);
	plan->algo = hop_coll_algo_name(ch.algo);
	plan->chunk_bytes = ch.chunk_bytes;
	plan->depth = ch.depth;
	plan->predicted_us = ch.predicted * 1e6;
	plan->forced = comm->coll->tune.forced[kind] != HOP_ALGO_AUTO;
	plan->sub_algo[0] = hop_coll_algo_name(ch.sub_algo[0]);
	plan->sub_algo[1] = hop_coll_algo_name(ch.sub_algo[1]);
	fbytes = hop_fbox_payload(kind, count * es, comm->nranks);
	if ((form = hop_fbox_takes(comm, kind, fbytes))) {
		/* what the blocking call runs (the i-forms: the above) */
		plan->algo = hop_fbox_form(form);
		plan->chunk_bytes = fbytes;
		plan->depth = 1;
		plan->predicted_us = hop_fbox_predict(form, kind, fbytes,
						      comm->nranks,
						      comm->usable_cores) * 1e6;
	}
	return 0;
}

int hop_coll_plan(hop_comm_t *comm, hop_coll_kind_t kind, size_t count,
		  hop_dtype_t dtype, hop_coll_plan_t *plan)
{
	HOP_ENTERED(comm, "hop_coll_plan",
		    plan_run(comm, (int)kind, count, dtype, plan));
}
