/*
 * model_eq.h - the model tests' comparison of two computed times: equal
 * to 1e-9 relative, printing both on a mismatch. Include after cmocka.h.
 */
#ifndef HOP_TEST_MODEL_EQ_H
#define HOP_TEST_MODEL_EQ_H

#include <math.h>

static inline int close_to(double x, double y)
{
	if (fabs(x - y) <= 1e-9 * (1 + fabs(y)))
		return 1;
	print_error("%.17g != %.17g\n", x, y);
	return 0;
}

#define EQ(x, y) assert_true(close_to((x), (y)))

#endif
