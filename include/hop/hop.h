/*
 * hop/hop.h - the whole public API of hop, a collective communication
 * library over RDMA verbs, TCP and shared memory.
 *
 * One header per concern:
 *   hop/common.h  result codes, hop_strerror(), dtypes, ops
 *   hop/comm.h    communicators (unique id, init, destroy, abort, errors)
 *   hop/mem.h     memory registration and remote keys
 *   hop/p2p.h     send/recv, put + immediate, requests
 *   hop/coll.h    collectives
 *   hop/log.h     where log lines go (stderr or a handler)
 *   hop/model.h   the cost model's estimate of a link
 */
#ifndef HOP_HOP_H
#define HOP_HOP_H

#include <hop/common.h>
#include <hop/comm.h>
#include <hop/mem.h>
#include <hop/p2p.h>
#include <hop/coll.h>
#include <hop/log.h>
#include <hop/model.h>

#endif /* HOP_HOP_H */
