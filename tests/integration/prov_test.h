/*
 * prov_test.h - the test cases of prov_test, split by theme:
 * prov_cases.c (the data path, shared with the verbs provider's test),
 * prov_test_fail.c (selection, rejected writes, impostors, dead peers),
 * prov_test.c (main).
 */
#ifndef HOP_TESTS_PROV_TEST_H
#define HOP_TESTS_PROV_TEST_H

#include <string.h>

#include "prov_cases.h"

enum bad_kind { BAD_BOUNDS, BAD_STALE, BAD_ACCESS };

static inline int is_tcp(const struct ph *ph)
{
	return !strcmp(ph->prov_name, "tcp");
}

/* prov_test_fail.c; @arg of t_bad is an enum bad_kind * */
int t_select(struct ph *ph, void *arg);
int t_bad(struct ph *ph, void *arg);
int t_impostor(struct ph *ph, void *arg);
int t_kill(struct ph *ph, void *arg);

#endif /* HOP_TESTS_PROV_TEST_H */
