/*
 * coll_matrix.h - shared by coll_matrix.c (the matrix) and
 * coll_matrix_cases.c (argument errors, collectives in flight, steady
 * state, mismatch, destroy in flight).
 */
#ifndef HOP_TEST_COLL_MATRIX_H
#define HOP_TEST_COLL_MATRIX_H

#include <stddef.h>
#include <stdint.h>

#include <hop/hop.h>

#include "coll/coll_int.h" /* to force each algorithm in turn */

struct kase {
	int kind, algo;
	hop_dtype_t dt;
	hop_op_t op;
	size_t count;
	int inplace, root, nb;
};

extern hop_comm_t *comm;
extern int rank, nranks, failures, cases;
extern long nallocs;

__attribute__((format(printf, 2, 3)))
void fail(const struct kase *k, const char *fmt, ...);
void gather_verdict(const struct kase *k, int ok, uint64_t h);
void *xmalloc(size_t n);

void gen(void *buf, size_t at, size_t i, const struct kase *k, int r);
void expect_reduced(void *out, size_t i, const struct kase *k);
uint64_t hash_bytes(const void *p, size_t n);
const char *kase_str(const struct kase *k);

/* @rc must be @code, the comm's last error must contain @needle */
void expect_err(int rc, const char *call, int code, const char *needle);
#define EXPECT_ERR(call, code, needle) expect_err((call), #call, code, needle)

void argument_errors(void);
void in_flight(void);
void steady_state(void);
int destroy_in_flight(void);
int mismatch_case(void);

/* coll_matrix_v.c: Gather, Scatter, AllGatherv, ReduceScatterv */
void matrix_v(int only_kind, size_t max_count);
int mismatch_v_case(int which);

#endif /* HOP_TEST_COLL_MATRIX_H */
