/*
 * model_comm.c - a communicator's cost-model links: this rank's own, from
 * HOP_PROFILE and the provider of each link class, before comm_agree.c
 * folds them with every rank's; and the agreed ones as the model prices
 * with. Every choice of a collective reads only the agreed ones, so a rank
 * whose profile differs still chooses what the others choose.
 */
#include "model/model_comm.h"

#include <stdio.h>

#include <hop/common.h>
#include <hop/provider.h>

#include "core/core.h"

_Static_assert(HOP_MODEL_INTRA == (int)HOP_LINK_INTRA &&
		       HOP_MODEL_INTER == (int)HOP_LINK_INTER,
	       "the model numbers link classes as core does");

int hop_model_comm_links(struct hop_comm *comm, char *err, size_t errlen)
{
	struct hop_model_link l[HOP_MODEL_CLASSES];
	const struct hop_prov_caps *caps[HOP_MODEL_CLASSES];
	const char *prov[HOP_MODEL_CLASSES];
	char src[384], msg[HOP_MSG_LEN - 16];
	int ret;

	for (int c = 0; c < HOP_MODEL_CLASSES; c++) {
		const struct hop_prov_ops *ops = hop_comm_class_ops(comm, c);

		prov[c] = ops ? ops->name : NULL;
		caps[c] = hop_prov_caps_of(ops);
	}
	ret = hop_model_links_load(comm->cfg.profile, prov, caps, l, src,
				   sizeof(src), msg, sizeof(msg));
	if (ret) {
		snprintf(err, errlen, "HOP_PROFILE: %s", msg);
		return ret;
	}
	for (int c = 0; c < HOP_MODEL_CLASSES; c++) {
		struct hop_agreed_link *a = &comm->model_link[c];

		a->alpha = l[c].alpha;
		a->beta = l[c].beta;
		a->gamma = l[c].gamma;
		a->duplex = l[c].duplex;
		a->min_chunk = l[c].min_chunk;
		a->max_chunk = l[c].max_chunk;
	}
	comm->model_links = 1;
	HOP_INFO("cost model: this rank's links: %s", src);
	return 0;
}

int hop_model_comm_agreed(const struct hop_comm *comm,
			  struct hop_model_link out[HOP_MODEL_CLASSES])
{
	const struct hop_comm *root = comm->root ? comm->root : comm;

	if (!root->model_links)
		return 0;
	for (int c = 0; c < HOP_MODEL_CLASSES; c++) {
		const struct hop_agreed_link *a = &root->model_link[c];

		hop_model_link_generic(&out[c]);
		out[c].alpha = a->alpha;
		out[c].beta = a->beta;
		out[c].gamma = a->gamma;
		out[c].duplex = a->duplex;
		out[c].min_chunk = a->min_chunk;
		out[c].max_chunk = a->max_chunk;
		/* larger messages go by rendezvous, which the model charges */
		out[c].eager = (double)comm->cfg.eager_size;
		/* the ranks' agreed oversubscription, not this process's */
		hop_model_link_oversubscribed(&out[c], root->model_ranks,
					      root->model_cores);
	}
	return 1;
}
