/*
 * model_int.h - what the files of src/model share and nobody else needs.
 */
#ifndef HOP_MODEL_MODEL_INT_H
#define HOP_MODEL_MODEL_INT_H

#include "model/model.h"

/*
 * hop_model_form() - The closed form of (@kind, @algo) at @chunks chunks
 * (model_coll.c), in place or not, or NAN when the pair is not modelled.
 * Arguments are already checked: nranks >= 2, chunks >= 1, a valid link.
 */
double hop_model_form(int kind, int algo, size_t bytes, int nranks,
		      const struct hop_model_link *l, long chunks,
		      int inplace);

#endif /* HOP_MODEL_MODEL_INT_H */
