/*
 * test_sim_match.c - the simulators' matching of posted steps
 * (src/sim/sim_match.h, used by sim.c and hop-model's simnet.c) and
 * the network simulator's deadlock report:
 *  - a post meets the first waiting step of the other kind with the same
 *    (source, destination, tag), in posting order, while the table grows
 *    through several doublings; checked against per-key queues kept here;
 *  - steps of one kind never meet each other; keys that differ in one
 *    field only do not meet;
 *  - a simulation whose schedules cannot finish names the rank, the step
 *    and the peer it waits for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim.h"
#include "sim/sim_match.h"
#include "sim/simnet.h"

#define NKEYS 613
#define PER_KEY 40

/* key k: a ring-like and a scattered part, so both hash paths are used */
static void key_of(int k, int *src, int *dst, uint32_t *tag)
{
	*dst = k % 97;
	*src = k % 2 ? (*dst + 1) % 97 : (k * 31) % 1009;
	*tag = (uint32_t)(k / 97) * 1000003u;
}

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* NKEYS x PER_KEY receives posted with the keys interleaved, then the
 * sends in a shuffled key order: each send meets its key's oldest
 * receive. Then the same with sends waiting and receives meeting them. */
static void check_fifo(int recv_first)
{
	struct hop_sim_match m;
	int total = NKEYS * PER_KEY;
	int *order = malloc((size_t)total * sizeof(int));
	int met[NKEYS] = { 0 };
	uint64_t seed = 12345;

	assert_non_null(order);
	memset(&m, 0, sizeof(m));
	hop_sim_match_free(&m);
	for (int i = 0; i < total; i++) {
		int src, dst, pr = -1, ps = -1;
		uint32_t tag;

		key_of(i % NKEYS, &src, &dst, &tag);
		/* rank = key, step = its sequence number within the key */
		assert_int_equal(hop_sim_match_post(&m, src, dst, tag,
						       !recv_first, i % NKEYS,
						       i / NKEYS, &pr, &ps), 0);
		order[i] = i % NKEYS;
	}
	assert_true(m.nbucket >= total);  /* it grew with the waiting steps */
	for (int i = total - 1; i > 0; i--) { /* Fisher-Yates */
		int j = (int)(lcg(&seed) % (uint64_t)(i + 1)), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (int i = 0; i < total; i++) {
		int k = order[i], src, dst, pr = -1, ps = -1;
		uint32_t tag;

		key_of(k, &src, &dst, &tag);
		assert_int_equal(hop_sim_match_post(&m, src, dst, tag,
						       recv_first, 7, i, &pr,
						       &ps), 1);
		assert_int_equal(pr, k);
		assert_int_equal(ps, met[k]);
		met[k]++;
	}
	assert_null(hop_sim_match_waiting(&m, 0));
	hop_sim_match_free(&m);
	free(order);
}

static void test_fifo_recv_first(void **state)
{
	(void)state;
	check_fifo(1);
}

static void test_fifo_send_first(void **state)
{
	(void)state;
	check_fifo(0);
}

static void test_no_false_match(void **state)
{
	struct hop_sim_match m;
	int pr, ps;
	const struct hop_sim_wait *w;
	(void)state;

	memset(&m, 0, sizeof(m));
	hop_sim_match_free(&m);
	assert_int_equal(hop_sim_match_post(&m, 1, 2, 5, 1, 1, 0, &pr, &ps), 0);
	/* another send, another source, destination or tag: all wait */
	assert_int_equal(hop_sim_match_post(&m, 1, 2, 5, 1, 1, 1, &pr, &ps), 0);
	assert_int_equal(hop_sim_match_post(&m, 3, 2, 5, 0, 2, 0, &pr, &ps), 0);
	assert_int_equal(hop_sim_match_post(&m, 1, 4, 5, 0, 4, 0, &pr, &ps), 0);
	assert_int_equal(hop_sim_match_post(&m, 1, 2, 6, 0, 2, 1, &pr, &ps), 0);
	w = hop_sim_match_waiting(&m, 4);
	assert_non_null(w);
	assert_int_equal(w->src, 1);
	assert_int_equal(w->step, 0);
	assert_false(w->is_send);
	/* the receive that fits meets the older of the two sends */
	assert_int_equal(hop_sim_match_post(&m, 1, 2, 5, 0, 2, 2, &pr, &ps), 1);
	assert_int_equal(pr, 1);
	assert_int_equal(ps, 0);
	hop_sim_match_free(&m);
}

/* rank 0 runs a barrier, rank 1 an empty AllReduce: rank 0 waits for
 * ever, and the report says who waits for what */
static void test_deadlock_report(void **state)
{
	struct hop_sched s[2];
	void *base[HOP_BUF_COUNT] = { NULL };
	struct hop_coll_args a = { HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION, 0, 2,
				   0, 0, HOP_UINT8, HOP_SUM, 0, 64, 1, 0, NULL,
				   NULL, 0, { 0, 0 }, NULL, 0, 0, 0 };
	struct hop_simnet net;
	(void)state;

	hop_sched_init(&s[0]);
	hop_sched_init(&s[1]);
	assert_int_equal(hop_sched_build(&s[0], &a), 0);
	a.kind = HOP_COLL_ALLREDUCE;
	a.algo = HOP_ALGO_RING;
	a.rank = 1;
	assert_int_equal(hop_sched_build(&s[1], &a), 0);
	for (int r = 0; r < 2; r++)
		hop_sched_start(&s[r], base);
	memset(&net, 0, sizeof(net));
	net.nranks = 2;
	net.s = s;
	net.alpha = 1e-6;
	net.beta = 1e9;
	assert_int_equal(hop_simnet_run(&net), HOP_ERR_INTERNAL);
	assert_non_null(strstr(net.err, "deadlock: rank 0 finished"));
	assert_non_null(strstr(net.err, "peer 1"));
	assert_non_null(strstr(net.err, "unmatched"));
	hop_simnet_free(&net);
	hop_sched_free(&s[0]);
	hop_sched_free(&s[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_recv_first),
		cmocka_unit_test(test_fifo_send_first),
		cmocka_unit_test(test_no_false_match),
		cmocka_unit_test(test_deadlock_report),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
