/* bench_data.h - inputs and the independent reference of --check. */
#ifndef HOP_BENCH_DATA_H
#define HOP_BENCH_DATA_H

#include "bench.h"

size_t bench_type_size(enum bench_type t);
double bench_get(enum bench_type t, const void *buf, size_t i);
void bench_set(enum bench_type t, void *buf, size_t i, double v);
/* rank @rank's input at element @i for op @o */
double bench_input(enum bench_op o, int nranks, int rank, size_t i);
/* the reduction of every rank's input at element @i */
double bench_expected(enum bench_type t, enum bench_op o, int nranks,
		      size_t i);
int bench_matches(enum bench_type t, enum bench_op o, double got,
		  double want);

#endif /* HOP_BENCH_DATA_H */
