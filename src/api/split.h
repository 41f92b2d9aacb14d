/*
 * split.h - derived communicators (split.c) for the rest of src/api.
 */
#ifndef HOP_API_SPLIT_H
#define HOP_API_SPLIT_H

#include "core/core.h"

/* Take a derived @comm (claimed, with its root) apart: its requests that
 * no peer knows of are cancelled, collectives with transfers under way
 * are handed to the root, its id is freed, both claims released. The
 * caller drops the root's family count after. */
void hop_split_destroy(struct hop_comm *comm);

#endif /* HOP_API_SPLIT_H */
