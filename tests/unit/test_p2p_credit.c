/*
 * test_p2p_credit.c - eager credit accounting: a sender never has more
 * messages in the peer's ring than it has slots, credits come back in
 * batches of slots/2 (or ride on reverse traffic), over-returning is
 * detected, and a simulated pair of ranks streaming in one direction
 * never deadlocks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "p2p/credit.h"

static void test_take_grant(void **state)
{
	struct hop_credit c;
	(void)state;

	hop_credit_init(&c, 16);
	assert_int_equal(c.avail, 16);
	assert_int_equal(c.batch, 8);
	for (int i = 0; i < 16; i++)
		assert_int_equal(hop_credit_take(&c), 1);
	assert_int_equal(c.avail, 0);
	assert_int_equal(hop_credit_take(&c), 0);
	assert_int_equal(c.avail, 0);
	assert_int_equal(hop_credit_grant(&c, 8), 0);
	assert_int_equal(c.avail, 8);
	/* only 8 are out: returning 9 is a protocol error, state unchanged */
	assert_int_equal(hop_credit_grant(&c, 9), -1);
	assert_int_equal(c.avail, 8);
	assert_int_equal(hop_credit_grant(&c, 8), 0);
	assert_int_equal(c.avail, 16);
	assert_int_equal(hop_credit_grant(&c, 1), -1);
	assert_int_equal(hop_credit_grant(&c, 0), 0);
}

static void test_owed_batches(void **state)
{
	struct hop_credit c;
	(void)state;

	hop_credit_init(&c, 16);
	for (int i = 0; i < 7; i++) {
		hop_credit_freed(&c);
		assert_false(hop_credit_due(&c));
	}
	hop_credit_freed(&c);
	assert_true(hop_credit_due(&c));
	assert_int_equal(c.owed, 8);
	hop_credit_returned(&c, 5);     /* piggybacked on a message */
	assert_int_equal(c.owed, 3);
	assert_false(hop_credit_due(&c));
	/* one slot: every freed slot is due at once */
	hop_credit_init(&c, 1);
	assert_int_equal(c.batch, 1);
	hop_credit_freed(&c);
	assert_true(hop_credit_due(&c));
	/* odd slot counts round the batch down */
	hop_credit_init(&c, 5);
	assert_int_equal(c.batch, 2);
}

/* Sender streams N messages; receiver frees each slot on arrival and
 * returns credits only when due. The sender must never stall for good
 * and never exceed the ring. */
static void simulate(uint32_t slots, int n)
{
	struct hop_credit snd, rcv;
	uint32_t in_ring = 0, in_flight_credits = 0;
	int sent = 0, received = 0, stalls = 0;

	hop_credit_init(&snd, slots);
	hop_credit_init(&rcv, slots);
	while (received < n) {
		int progressed = 0;

		while (sent < n && hop_credit_take(&snd)) {
			sent++;
			in_ring++;
			progressed = 1;
			assert_true(in_ring + in_flight_credits <= slots);
		}
		if (in_ring) {          /* receiver drains one slot */
			in_ring--;
			received++;
			hop_credit_freed(&rcv);
			if (hop_credit_due(&rcv)) {
				in_flight_credits += rcv.owed;
				hop_credit_returned(&rcv, rcv.owed);
			}
			progressed = 1;
		}
		if (in_flight_credits) {        /* credit message lands */
			assert_int_equal(hop_credit_grant(&snd,
							  in_flight_credits),
					 0);
			in_flight_credits = 0;
		}
		if (!progressed)
			stalls++;
		assert_int_equal(stalls, 0);
	}
	assert_int_equal(sent, n);
	/* withheld credits never exceed batch - 1 */
	assert_true(rcv.owed < rcv.batch);
	assert_int_equal(snd.avail + rcv.owed, slots);
}

static void test_stream_no_deadlock(void **state)
{
	(void)state;
	simulate(16, 10000);
	simulate(1, 1000);
	simulate(2, 1000);
	simulate(3, 1001);
	simulate(1024, 100000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_take_grant),
		cmocka_unit_test(test_owed_batches),
		cmocka_unit_test(test_stream_no_deadlock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
