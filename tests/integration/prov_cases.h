/*
 * prov_cases.h - the data-path cases every provider must pass, shared by
 * prov_test (tcp, shm: forked ranks) and tests/vm/verbs_prov_test (verbs:
 * one process per rank in the SoftRoCE VMs). Each takes the harness of one
 * rank and returns 0 or -1 (the failure printed by PH_CHECK).
 */
#ifndef HOP_TESTS_PROV_CASES_H
#define HOP_TESTS_PROV_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "prov_harness.h"

/* A region as a peer sees it. */
struct rkey {
	uint64_t addr, key;
};

/* What differs between providers (and machines): @write_max, the largest
 * write of prov_case_writes (a VM has 512 MiB); @min_inline, what
 * max_inline() must be at least. */
struct prov_cases_cfg {
	size_t write_max;
	size_t min_inline;
};

/* Anonymous memory that the provider may register (NULL when out of it). */
void *prov_big_alloc(size_t len);

/* Register @len bytes at @buf with @acc and allgather every rank's
 * {addr, key} into @all (ph->n entries). */
int prov_share(struct ph *ph, void *buf, size_t len, unsigned acc,
	       struct hop_prov_mr **mr, struct rkey *all);

/* writes: every rank writes to its right neighbour, 0 B to cfg->write_max,
 * each with an immediate (odd small sizes from unregistered memory reused
 * at once); the receiver checks every byte and the guards around, then
 * acknowledges with a send. @cfg: a const struct prov_cases_cfg *. */
int prov_case_writes(struct ph *ph, void *cfg);

/* sends: 300 messages of 0..HOP_PROV_SEND_MAX bytes from every rank to
 * every rank (itself included), checked in order per sender. */
int prov_case_sends(struct ph *ph, void *unused);

/* order: unsignalled writes of mixed sizes, each followed by a send naming
 * it: the send must not overtake it. Then overlapping writes to one
 * place: the last one must win. */
int prov_case_order(struct ph *ph, void *unused);

#endif /* HOP_TESTS_PROV_CASES_H */
