/*
 * test_sim_classes.c - the simulator on two link classes: a message
 * between two ranks of one host takes the intra link, between hosts the
 * inter link (src/sim/simnet.h host_of). A ring AllReduce over 4 hosts x 2
 * ranks (block placement) on a fast intra and a 1 Gbit/s inter link runs
 * exactly and as slowly as on the inter link alone (every step crosses
 * hosts), as the model prices flat algorithms on hosts; recursive
 * doubling pays one intra and two inter steps; all ranks
 * on one host equal the uniform intra run; the model's closed form is the
 * inter link's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <hop/common.h>

#include "sim/simrun.h"

static const struct hop_model_link intra = { 1e-6, 10e9, 0, 1, 4096, 0, 0 };
static const struct hop_model_link inter = { 50e-6, 125e6, 0, 1, 4096, 0, 0 };

static struct hop_simrun ring(const struct hop_model_link *l,
			      const int *host_of, size_t bytes)
{
	struct hop_simrun r;

	memset(&r, 0, sizeof(r));
	r.kind = HOP_COLL_ALLREDUCE;
	r.algo = HOP_ALGO_RING;
	r.nranks = 8;
	r.bytes = bytes;
	r.chunks = 1;
	r.verify = 1;
	r.link = *l;
	r.host_of = host_of;
	r.links[0] = intra;
	r.links[1] = inter;
	return r;
}

static void run(struct hop_simrun *r)
{
	int ret = hop_simrun(r);

	if (ret)
		fail_msg("%s", r->err);
	assert_int_equal(r->wrong, 0);
}

static void test_two_classes(void **state)
{
	static const int block[8] = { 0, 0, 1, 1, 2, 2, 3, 3 };
	struct hop_simrun a = ring(&intra, NULL, 1 << 20);
	struct hop_simrun e = ring(&inter, NULL, 1 << 20);
	struct hop_simrun c = ring(&intra, block, 1 << 20);

	(void)state;
	run(&a);
	run(&e);
	run(&c);
	print_message("ring 1 MiB, 8 ranks: intra %.1f us, inter %.1f us, "
		      "4 hosts x 2 %.1f us\n", a.sim_time * 1e6,
		      e.sim_time * 1e6, c.sim_time * 1e6);
	/* every step of the ring has an edge between hosts: it paces it */
	assert_true(fabs(c.sim_time - e.sim_time) <= 1e-9 * e.sim_time);
	assert_int_equal(c.messages, e.messages);
	/* the closed form of a flat algorithm on hosts: the inter link's */
	assert_true(c.predicted == e.predicted);

	/* recursive doubling: its distance-1 step stays inside a host, the
	 * distance-2 and -4 steps cross: one intra and two inter steps */
	a.algo = e.algo = c.algo = HOP_ALGO_RD;
	run(&a);
	run(&e);
	run(&c);
	print_message("rd 1 MiB: intra %.1f us, inter %.1f us, 4 hosts x 2 "
		      "%.1f us\n", a.sim_time * 1e6, e.sim_time * 1e6,
		      c.sim_time * 1e6);
	assert_true(fabs(c.sim_time - (a.sim_time + 2 * e.sim_time) / 3) <=
		    1e-6 * c.sim_time);
}

static void test_one_host(void **state)
{
	static const int one[8] = { 0 };
	struct hop_simrun a = ring(&intra, NULL, 65536);
	struct hop_simrun c = ring(&inter, one, 65536);

	(void)state;
	run(&a);
	run(&c);
	assert_true(c.sim_time == a.sim_time);
	assert_true(c.predicted == a.predicted);
}

static void test_invalid(void **state)
{
	static const int block[8] = { 0, 0, 1, 1, 2, 2, 3, 3 };
	static const int bad[8] = { 0, 0, 1, 1, 2, 2, 3, 9 };
	struct hop_simrun r = ring(&intra, block, 4096);

	(void)state;
	r.verify = 0;
	r.rotate = 1;
	assert_int_equal(hop_simrun(&r), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(r.err, "link classes"));
	r = ring(&intra, block, 4096);
	r.links[1].beta = 0;
	assert_int_equal(hop_simrun(&r), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(r.err, "beta"));
	r = ring(&intra, bad, 4096);
	assert_int_equal(hop_simrun(&r), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(r.err, "placement"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_classes),
		cmocka_unit_test(test_one_host),
		cmocka_unit_test(test_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
