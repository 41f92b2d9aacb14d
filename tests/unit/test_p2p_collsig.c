/*
 * test_p2p_collsig.c - the collective-level signature check (collsig.c):
 * a message of collective #s that no receive takes is compared with this
 * rank's own #s (begun or finished) or with the first such message of
 * another rank; a probe names the waiting rank; other traffic, equal
 * signatures and reused slots never fail the comm.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"
#include "p2p/p2p_priv.h"

/* every peer "closed": the check sends no NAK, so no channel is needed */
static int all_closed(struct hop_prov *prov, int peer)
{
	(void)prov;
	(void)peer;
	return 1;
}

static const struct hop_prov_ops closed_ops = {
	.size = sizeof(struct hop_prov_ops),
	.name = "test",
	.peer_closed = all_closed,
};

struct fx {
	struct hop_comm comm;
	struct hop_p2p p2p;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->comm.rank = f->p2p.rank = 0;
	f->comm.nranks = f->p2p.nranks = 4;
	f->comm.p2p = &f->p2p;
	f->p2p.comm = &f->comm;
	f->p2p.ops = &closed_ops;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static uint64_t ctag(uint32_t seq, uint32_t step)
{
	return HOP_TAG(HOP_CTX_COLL, seq, step);
}

static int failed(struct fx *f)
{
	return atomic_load(&f->comm.failed);
}

static void test_equal_signatures_pass(void **state)
{
	struct fx *f = *state;

	/* before and after this rank begins, from several peers */
	p2p_collsig_unexpected(&f->p2p, 1, ctag(5, 2), 64, 0xaaaa);
	p2p_collsig_unexpected(&f->p2p, 2, ctag(5, 7), 64, 0xaaaa);
	assert_int_equal(hop_p2p_coll_begin(&f->comm, 5, 0xaaaa), 0);
	p2p_collsig_unexpected(&f->p2p, 3, ctag(5, 1), 64, 0xaaaa);
	/* user and internal traffic is not a collective's */
	p2p_collsig_unexpected(&f->p2p, 1, HOP_TAG(HOP_CTX_USER, 5, 2), 8, 1);
	p2p_collsig_unexpected(&f->p2p, 1, HOP_TAG(HOP_CTX_INTERNAL, 5, 2), 8,
			       2);
	assert_int_equal(failed(f), 0);
}

static void test_other_collective_after_begin(void **state)
{
	struct fx *f = *state;

	assert_int_equal(hop_p2p_coll_begin(&f->comm, 9, 0x1111), 0);
	p2p_collsig_unexpected(&f->p2p, 2, ctag(9, 3), 400, 0x2222);
	assert_int_equal(failed(f), HOP_ERR_MISMATCH);
	assert_non_null(strstr(f->comm.fail_msg, "rank 0 ran collective #9 "
				"with signature 0x00001111, rank 2"));
	assert_non_null(strstr(f->comm.fail_msg, "0x00002222"));
}

static void test_two_peers_disagree_before_begin(void **state)
{
	struct fx *f = *state;

	p2p_collsig_unexpected(&f->p2p, 1, ctag(12, 0), 8, 0x1111);
	assert_int_equal(failed(f), 0);
	p2p_collsig_unexpected(&f->p2p, 3, ctag(12, 0), 8, 0x3333);
	assert_int_equal(failed(f), HOP_ERR_MISMATCH);
	assert_non_null(strstr(f->comm.fail_msg, "rank 1 sent rank 0"));
	assert_non_null(strstr(f->comm.fail_msg, "rank 3"));
}

/* A derived communicator (split, dup) has its own sequence numbers: #4
 * of comm id 3 is not #4 of the root, and is still checked. */
static void test_derived_comm_apart(void **state)
{
	struct fx *f = *state;
	struct hop_comm kid = { .rank = 0, .nranks = 2, .p2p = &f->p2p,
				.root = &f->comm, .comm_id = 3 };
	uint64_t ktag = HOP_TAG_WITH_COMM(ctag(4, 1), 3);

	assert_int_equal(hop_p2p_coll_begin(&f->comm, 4, 0x1111), 0);
	p2p_collsig_unexpected(&f->p2p, 1, ktag, 8, 0x2222);
	assert_int_equal(hop_p2p_coll_begin(&kid, 4, 0x2222), 0);
	p2p_collsig_unexpected(&f->p2p, 2, ctag(4, 1), 8, 0x1111);
	assert_int_equal(failed(f), 0);
	assert_int_equal(atomic_load(&kid.failed), 0);
	p2p_collsig_unexpected(&f->p2p, 1, ktag, 8, 0x3333);
	assert_int_equal(failed(f), HOP_ERR_MISMATCH);
	assert_non_null(strstr(f->comm.fail_msg, "collective #4 with "
				"signature 0x00002222"));
	assert_non_null(strstr(f->comm.fail_msg, "of comm 3"));
}

static void test_begin_after_other_message(void **state)
{
	struct fx *f = *state;

	p2p_collsig_unexpected(&f->p2p, 2, ctag(3, 1), 8, 0x2222);
	assert_int_equal(hop_p2p_coll_begin(&f->comm, 3, 0x1111),
			 HOP_ERR_MISMATCH);
	assert_non_null(strstr(f->comm.fail_msg, "rank 0 began collective #3 "
				"with signature 0x00001111, rank 2"));
}

static void test_probe_names_the_waiter(void **state)
{
	struct fx *f = *state;

	assert_int_equal(hop_p2p_coll_begin(&f->comm, 4, 0x1111), 0);
	p2p_collsig_unexpected(&f->p2p, 1, ctag(4, 0xffffffffu), 0, 0x5555);
	assert_int_equal(failed(f), HOP_ERR_MISMATCH);
	assert_non_null(strstr(f->comm.fail_msg, "rank 1, still waiting in "
				"collective #4 with signature 0x00005555"));
}

static void test_reused_slot_never_misreports(void **state)
{
	struct fx *f = *state;
	uint32_t far = 7 + P2P_COLLSIG_SLOTS;

	/* #7 begun; a message of #7+SLOTS maps to its slot but is another
	 * collective: no verdict either way */
	assert_int_equal(hop_p2p_coll_begin(&f->comm, 7, 0x1111), 0);
	p2p_collsig_unexpected(&f->p2p, 1, ctag(far, 0), 8, 0x2222);
	assert_int_equal(failed(f), 0);
	/* a newer begin takes the slot over */
	assert_int_equal(hop_p2p_coll_begin(&f->comm, far, 0x2222), 0);
	p2p_collsig_unexpected(&f->p2p, 1, ctag(far, 1), 8, 0x2222);
	assert_int_equal(failed(f), 0);
	/* a stale message of #7 no longer has a slot to compare with */
	p2p_collsig_unexpected(&f->p2p, 2, ctag(7, 0), 8, 0x9999);
	assert_int_equal(failed(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_equal_signatures_pass,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_other_collective_after_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_two_peers_disagree_before_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_derived_comm_apart, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_begin_after_other_message,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_probe_names_the_waiter,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_reused_slot_never_misreports, setup, teardown),
	};

	setenv("HOP_DEBUG", "none", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
