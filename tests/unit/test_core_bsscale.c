/*
 * test_core_bsscale - the bootstrap's cost as the job grows, and the ring
 * breaking mid-allgather, with forked ranks:
 * - rank 0 sends O(n) bytes: three allgathers of a 592-byte record (the
 *   size of the transport-selection record) and a barrier at 4 and at 16
 *   ranks, data checked byte for byte; rank 0's bytes may grow about 4x,
 *   not 16x as when it sent every rank every block;
 * - a rank that dies while the ring runs: every other rank fails with
 *   HOP_ERR_BOOTSTRAP naming it, well within the timeout;
 * - strangers at a ring listener (wrong secret, wrong rank, silence) are
 *   dropped and the job still completes: the last rank, about to open its
 *   link to rank 0, first connects them there (hop_bs_ring_link is wrapped
 *   at link time).
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/bs_int.h"
#include "core/core_int.h"
#include "core/wire.h"
#include "core_fork.h"

#define REC 592
#define TIMEOUT_MS 20000

struct job {
	hop_unique_id_t id;
	int nranks;
	int dying;              /* rank that leaves mid-ring, or -1 */
};

static int g_strangers;         /* the last rank sends strangers first */

int __real_hop_bs_ring_link(struct hop_bootstrap *bs, uint64_t deadline);
int __wrap_hop_bs_ring_link(struct hop_bootstrap *bs, uint64_t deadline);

/* A connection to the successor's ring listener sending a LINK from
 * @rank with @secret (no LINK at all when @secret is NULL). */
static int stranger(struct hop_bootstrap *bs, uint32_t rank,
		    const uint8_t *secret)
{
	uint8_t link[HOP_BS_LINK_LEN];
	int fd = -1;

	if (hop_bs_connect(bs, &bs->right_addr, "a stranger's target",
			   hop_deadline_after(5000), &fd))
		return -1;
	hop_put_be32(link, HOP_BS_VERSION);
	hop_put_be32(link + 4, (uint32_t)bs->nranks);
	if (secret) {
		memcpy(link + 8, secret, HOP_SECRET_BYTES);
		hop_bs_send(fd, HOP_BS_LINK, 0, rank, link, sizeof(link),
			    hop_deadline_after(5000), 0, NULL);
	}
	return fd;
}

int __wrap_hop_bs_ring_link(struct hop_bootstrap *bs, uint64_t deadline)
{
	uint8_t wrong[HOP_SECRET_BYTES] = { 0 };
	int fds[3] = { -1, -1, -1 }, ret;

	if (g_strangers && bs->rank == bs->nranks - 1) {
		fds[0] = stranger(bs, (uint32_t)bs->rank, wrong);
		fds[1] = stranger(bs, 1, bs->secret); /* not rank 0's left */
		fds[2] = stranger(bs, 0, NULL);       /* silent */
	}
	ret = __real_hop_bs_ring_link(bs, deadline);
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return ret;
}

static uint8_t pat(int rank, int round, size_t i)
{
	return (uint8_t)(rank * 29 + round * 7 + i * 5);
}

static int gather_rounds(struct hop_bootstrap *bs, int rank, int n, char *msg,
			 size_t mlen)
{
	uint8_t mine[REC], *all = malloc((size_t)n * REC);
	int ret = all ? 0 : HOP_ERR_NO_MEMORY;

	for (int round = 0; round < 3 && !ret; round++) {
		for (size_t i = 0; i < REC; i++)
			mine[i] = pat(rank, round, i);
		ret = hop_bootstrap_allgather(bs, mine, all, REC,
					      hop_deadline_after(TIMEOUT_MS));
		for (int r = 0; !ret && r < n; r++)
			for (size_t i = 0; i < REC && !ret; i++)
				if (all[(size_t)r * REC + i] != pat(r, round, i)) {
					snprintf(msg, mlen, "round %d: byte %zu of "
						 "rank %d wrong", round, i, r);
					ret = -999;
				}
	}
	free(all);
	if (!ret)
		ret = hop_bootstrap_barrier(bs, hop_deadline_after(TIMEOUT_MS));
	return ret;
}

/* Enter the allgather by hand (with the right block: the ranks the table
 * reaches before this one may finish the round and fail in the next),
 * then leave once the ring has started. */
static int die_in_ring(struct hop_bootstrap *bs)
{
	uint8_t block[REC];

	for (size_t i = 0; i < REC; i++)
		block[i] = pat(bs->rank, 0, i);

	hop_bs_send(bs->fd, HOP_BS_GATHER, bs->seq, (uint32_t)bs->rank, block,
		    sizeof(block), hop_deadline_after(TIMEOUT_MS), 0, NULL);
	hop_bs_peer_recv(bs, HOP_BS_START, NULL, 0,
			 hop_deadline_after(TIMEOUT_MS), "test");
	return 0;
}

static int run_rank(int slot, void *arg)
{
	struct job *j = arg;
	struct hop_bootstrap *bs;
	struct hop_config cfg;
	char err[HOP_MSG_LEN] = "";
	int ret;

	hop_config_defaults(&cfg);
	cfg.timeout_ms = TIMEOUT_MS;
	ret = hop_bootstrap_open(&j->id, slot, j->nranks, &cfg,
				 hop_deadline_after(TIMEOUT_MS), &bs, err,
				 sizeof(err));
	if (!ret && slot == j->dying)
		ret = die_in_ring(bs);
	else if (!ret)
		ret = gather_rounds(bs, slot, j->nranks, err, sizeof(err));
	if (ret && !err[0])
		snprintf(err, sizeof(err), "%s", hop_bootstrap_error(bs));
	cf_res[slot].ret = ret;
	if (ret)
		snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "%s", err);
	else
		snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "%llu",
			 (unsigned long long)hop_bootstrap_bytes_sent(bs));
	hop_bootstrap_close(bs);
	return 0;
}

static int setup(void **state)
{
	(void)state;
	cf_setup();
	cf_local_env();
	hop_log_init();
	return 0;
}

/* Fork @j's ranks and wait; returns the wall time in ms. */
static uint64_t run_job(struct job *j)
{
	struct hop_id_info info;
	pid_t pids[CF_MAX];
	uint64_t t0 = cf_now_ms();
	int fd;

	assert_int_equal(hop_get_unique_id(&j->id), 0);
	for (int r = 0; r < j->nranks; r++)
		pids[r] = cf_fork(run_rank, r, j, NULL);
	hop_id_decode(&j->id, &info);
	if ((fd = hop_id_take_listener(info.secret)) >= 0)
		close(fd);
	assert_int_equal(cf_wait(pids, j->nranks, 60000), 0);
	return cf_now_ms() - t0;
}

static unsigned long long root_bytes(int n)
{
	struct job j = { .nranks = n, .dying = -1 };

	run_job(&j);
	for (int r = 0; r < n; r++)
		if (cf_res[r].ret || !cf_res[r].done)
			fail_msg("%d ranks: rank %d: %d %s", n, r, cf_res[r].ret,
				 cf_res[r].msg);
	return strtoull(cf_res[0].msg, NULL, 10);
}

static void test_root_bytes_linear(void **state)
{
	unsigned long long b4, b16;

	(void)state;
	b4 = root_bytes(4);
	b16 = root_bytes(16);
	print_message("rank 0 sent %llu bytes at 4 ranks, %llu at 16\n", b4, b16);
	/* 3 x 592-byte allgathers: the ring makes rank 0 send the table of
	 * 16 blocks once each at 16 ranks; a star through rank 0 sent it to
	 * each of 15 ranks */
	assert_true(b16 > b4);
	assert_true(b16 * 10 < b4 * 16 * 4);
	assert_true(b16 < 4ull * 3 * 16 * (REC + HOP_BS_HDR_LEN));
}

static void test_rank_dies_in_ring(void **state)
{
	struct job j = { .nranks = 6, .dying = 3 };
	uint64_t ms;

	(void)state;
	ms = run_job(&j);
	assert_true(ms < TIMEOUT_MS);
	for (int r = 0; r < j.nranks; r++) {
		if (r == j.dying)
			continue;
		if (cf_res[r].ret != HOP_ERR_BOOTSTRAP ||
		    !strstr(cf_res[r].msg, "rank 3 closed its ring link"))
			fail_msg("rank %d: %s '%s'", r,
				 hop_err_name(cf_res[r].ret), cf_res[r].msg);
	}
}

static void test_ring_strangers(void **state)
{
	struct job j = { .nranks = 4, .dying = -1 };

	(void)state;
	g_strangers = 1;
	run_job(&j);
	g_strangers = 0;
	for (int r = 0; r < j.nranks; r++)
		if (cf_res[r].ret || !cf_res[r].done)
			fail_msg("rank %d: %s '%s'", r, hop_err_name(cf_res[r].ret),
				 cf_res[r].msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_ring_strangers, setup),
		cmocka_unit_test_setup(test_root_bytes_linear, setup),
		cmocka_unit_test_setup(test_rank_dies_in_ring, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
