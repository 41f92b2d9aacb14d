/*
 * coll_fbox_cpu.c - coll_fbox's one-cpu mode: ranks that the comm counted
 * on two or more cores (so they spin before they yield) all run on one
 * CPU after init, as ranks started together do until the scheduler moves
 * one. A waiter must yield to the peer it waits on instead of spinning
 * its spin time (1 ms) each call: 100 blocking AllReduces of 8 B (slots)
 * and of 4 KiB (wide area), and 100 nonblocking ones of each (schedules,
 * waited for in p2p's loop), take well under that in the median call,
 * and their results are checked. Prints "skipped" when this process may run on
 * fewer CPUs than there are ranks (the comm then counts itself
 * oversubscribed and never spins).
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <hop/hop.h>

#define TEST_NAME "coll_fbox"
static hop_comm_t *comm;
static int rank, nranks;
#include "rank_check.h"
#include "coll_fbox.h"

/* The 1 ms spin made the median call take 1.4-2 ms; yields take 4-200
 * us (nonblocking under ASan, beside another test on the CPU in make
 * check -j2: 660). A bound below the spin, above those, on the median
 * call: a test beside takes whole time slices from a few calls, which a
 * mean counts (820 us). */
#define MAX_US_PER_CALL 900.0
#define CALLS 100

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Pin this process to the lowest CPU it may run on; 0 when the comm
 * never spins: fewer CPUs than ranks (it counts itself oversubscribed). */
static int pin_first_cpu(void)
{
	cpu_set_t set, one;

	if (sched_getaffinity(0, sizeof(set), &set) ||
	    CPU_COUNT(&set) < (nranks > 2 ? nranks : 2))
		return 0;
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			CPU_SET(c, &one);
			break;
		}
	if (sched_setaffinity(0, sizeof(one), &one))
		FAIL("sched_setaffinity to one CPU failed");
	return 1;
}

/* CALLS AllReduces of @count floats, blocking (the fast boxes) or with
 * @nb nonblocking (a schedule, waited for in p2p's loop): the median
 * call's time, results checked. */
static double timed_allreduces(size_t count, int nb)
{
	static float in[1024], out[1024];
	double us[CALLS];
	hop_request_t *req;

	for (size_t i = 0; i < count; i++)
		in[i] = (float)(rank + 1) * (float)(i % 7);
	for (int k = 0; k < CALLS; k++) {
		double t0 = now_us();

		if (!nb) {
			OK(hop_allreduce(comm, in, out, count, HOP_FLOAT32,
					 HOP_SUM));
		} else {
			OK(hop_iallreduce(comm, in, out, count, HOP_FLOAT32,
					  HOP_SUM, &req));
			OK(hop_wait(&req, NULL));
		}
		us[k] = now_us() - t0;
	}
	qsort(us, CALLS, sizeof(*us), by_value);
	for (size_t i = 0; i < count; i++)
		if (out[i] != (float)(nranks * (nranks + 1) / 2) *
				      (float)(i % 7))
			FAIL("allreduce of %zu floats: element %zu is %g",
			     count, i, out[i]);
	return us[CALLS / 2];
}

int coll_fbox_one_cpu(hop_comm_t *c)
{
	const size_t counts[] = { 2, 1024 };

	comm = c;
	rank = hop_comm_rank(c);
	nranks = hop_comm_size(c);
	if (!pin_first_cpu()) {
		printf("coll_fbox: rank %d skipped: fewer CPUs than ranks\n",
		       rank);
		OK(hop_comm_destroy(comm));
		return 0;
	}
	for (int i = 0; i < 4; i++) {
		double us = timed_allreduces(counts[i % 2], i / 2);

		if (us > MAX_US_PER_CALL)
			FAIL("%s%zu B AllReduces on one CPU took %.1f us the "
			     "median call (at most %.0f): waiters spin "
			     "against the peer they wait on",
			     i / 2 ? "nonblocking " : "",
			     counts[i % 2] * 4, us, MAX_US_PER_CALL);
		printf("coll_fbox: rank %d: %s%zu B on one CPU, %.1f us the "
		       "median call\n", rank, i / 2 ? "nonblocking " : "",
		       counts[i % 2] * 4, us);
	}
	OK(hop_comm_destroy(comm));
	printf("coll_fbox: rank %d passed one-cpu\n", rank);
	return 0;
}
