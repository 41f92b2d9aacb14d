/*
 * model_comm.h - the cost model's links of a communicator: what this rank
 * alone makes of HOP_PROFILE and its providers (before the agreement of
 * src/core/comm_agree.c), and the agreed links as the model's.
 */
#ifndef HOP_MODEL_MODEL_COMM_H
#define HOP_MODEL_MODEL_COMM_H

#include <stddef.h>

#include "model/model.h"

struct hop_comm;

/*
 * hop_model_comm_links() - Set @comm->model_link to this rank's link of
 * each class (hop_model_links_load() of cfg.profile and the providers of
 * comm->class_ops, or prov_ops when a class has none yet), for
 * hop_comm_agree() to fold with every other rank's.
 * Return: 0, or the loader's error with @err "HOP_PROFILE: <path>: ...".
 */
int hop_model_comm_links(struct hop_comm *comm, char *err, size_t errlen);

/*
 * hop_model_comm_agreed() - The agreed links of @comm (its root's, for a
 * derived communicator) as the model's, with the eager size of the comm
 * and the agreed oversubscription applied. Return: 1, or 0 when the comm
 * has no agreed links (@out untouched).
 */
int hop_model_comm_agreed(const struct hop_comm *comm,
			  struct hop_model_link out[HOP_MODEL_CLASSES]);

#endif /* HOP_MODEL_MODEL_COMM_H */
