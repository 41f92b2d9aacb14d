/*
 * test_core_cpus.c - which ranks share a rank's cores (src/core/cpus.c):
 * unbound ranks share every core of their kernel, ranks bound to a core
 * each own it, ranks bound to one core share it, hosts or kernels apart
 * never share, and a mask beyond the record's CPUs meets every other.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/cpus.h"

/* A record of kernel @k allowed the CPUs of @bits (CPUs 0-63). */
static struct hop_cpu_rec rec(uint64_t k, uint64_t bits)
{
	struct hop_cpu_rec r = { .kernel = k };

	r.mask[0] = bits;
	r.ncpus = (uint32_t)__builtin_popcountll(bits);
	return r;
}

/* hop_cpu_share() for rank @me among the ranks of its kernel */
static void share(const struct hop_cpu_rec *all, int n, int me, int ranks,
		  int cores)
{
	int r, c;

	hop_cpu_share(all, NULL, n, me, &r, &c);
	assert_int_equal(r, ranks);
	assert_int_equal(c, cores);
}

static void test_unbound(void **state)
{
	struct hop_cpu_rec all[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		all[i] = rec(7, 0x3);
	for (int i = 0; i < 4; i++)
		share(all, 4, i, 4, 2);         /* oversubscribed 2x */
}

static void test_bound(void **state)
{
	struct hop_cpu_rec all[4];

	(void)state;
	/* a core each (mpirun --bind-to core): nobody shares */
	for (int i = 0; i < 4; i++)
		all[i] = rec(7, 1ull << i);
	for (int i = 0; i < 4; i++)
		share(all, 4, i, 1, 1);
	/* ranks 0 and 1 on CPU 0, rank 2 on CPU 1, rank 3 on both */
	all[0] = rec(7, 0x1);
	all[1] = rec(7, 0x1);
	all[2] = rec(7, 0x2);
	all[3] = rec(7, 0x3);
	share(all, 4, 0, 3, 2);         /* 0, 1 and 3 meet on CPU 0 */
	share(all, 3, 0, 2, 1);         /* without rank 3: 2 on 1 core */
	share(all, 3, 2, 1, 1);
}

/* Other kernels, or with host keys other hosts, are not counted. */
static void test_apart(void **state)
{
	struct hop_cpu_rec all[4] = { rec(1, 0x3), rec(1, 0x3), rec(2, 0x3),
				      rec(2, 0x3) };
	int host[4] = { 10, 11, 10, 11 };
	int r, c;

	(void)state;
	share(all, 4, 0, 2, 2);
	share(all, 4, 3, 2, 2);
	hop_cpu_share(all, host, 4, 0, &r, &c); /* host 10: ranks 0 and 2 */
	assert_int_equal(r, 2);
	assert_int_equal(c, 2);
	host[2] = 12;
	hop_cpu_share(all, host, 4, 0, &r, &c);
	assert_int_equal(r, 1);
}

/* A process allowed only CPUs past the record's meets every rank, and
 * its count of CPUs stands for the cores. */
static void test_beyond(void **state)
{
	struct hop_cpu_rec all[2] = { rec(3, 0x1), rec(3, 0) };

	(void)state;
	all[1].ncpus = 300;
	share(all, 2, 0, 2, 300);
	share(all, 2, 1, 2, 300);
}

static void test_local(void **state)
{
	struct hop_cpu_rec a, b;
	cpu_set_t set;
	int bits = 0;

	(void)state;
	hop_cpu_rec_local(&a);
	hop_cpu_rec_local(&b);
	assert_true(a.kernel == b.kernel);
	assert_true(a.kernel == hop_kernel_id());
	assert_int_equal(sched_getaffinity(0, sizeof(set), &set), 0);
	assert_int_equal(a.ncpus, CPU_COUNT(&set));
	for (int w = 0; w < HOP_CPU_MASK_CPUS / 64; w++)
		bits += __builtin_popcountll(a.mask[w]);
	for (int c = 0; c < HOP_CPU_MASK_CPUS; c++)
		assert_int_equal(!!(a.mask[c / 64] & (1ull << (c % 64))),
				 !!CPU_ISSET(c, &set));
	assert_true(bits >= 1 && bits <= (int)a.ncpus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unbound),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_apart),
		cmocka_unit_test(test_beyond),
		cmocka_unit_test(test_local),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
