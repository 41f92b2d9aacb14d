/*
 * test_core_bsload - rank 0 under a crowd: this test links its own copy of
 * bootstrap_root.c built with only 8 slots for connections that have not
 * said HELLO yet. Silent connections fill the slots before rank 0 starts,
 * then 64 ranks connect at once. Rank 0 must leave the crowd in the kernel
 * backlog instead of dropping ranks, drop the silent connections after
 * HOP_BS_SILENT_MS, and admit every rank; the allgather is checked byte for
 * byte.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/bs_int.h"
#include "core/core_int.h"
#include "core_fork.h"

#define NRANKS 64
#define NSILENT (HOP_BS_MAX_PENDING + 2)

static hop_unique_id_t g_id;

static int rank_main(int rank, void *arg)
{
	struct hop_bootstrap *bs;
	struct hop_config cfg;
	uint8_t mine[64], all[64 * NRANKS];
	char err[HOP_MSG_LEN];
	int ret;

	(void)arg;
	hop_config_defaults(&cfg);
	cfg.timeout_ms = 30000;
	ret = hop_bootstrap_open(&g_id, rank, NRANKS, &cfg,
				 hop_deadline_after(cfg.timeout_ms), &bs, err,
				 sizeof(err));
	if (ret) {
		cf_res[rank].ret = ret;
		snprintf(cf_res[rank].msg, sizeof(cf_res[rank].msg), "%s", err);
		return 0;
	}
	for (int i = 0; i < 64; i++)
		mine[i] = (uint8_t)(rank * 5 + i);
	ret = hop_bootstrap_allgather(bs, mine, all, sizeof(mine),
				      hop_deadline_after(cfg.timeout_ms));
	for (int r = 0; !ret && r < NRANKS; r++)
		for (int i = 0; i < 64; i++)
			if (all[r * 64 + i] != (uint8_t)(r * 5 + i))
				ret = -999;
	cf_res[rank].ret = ret;
	if (ret)
		snprintf(cf_res[rank].msg, sizeof(cf_res[rank].msg), "%s",
			 hop_bootstrap_error(bs));
	hop_bootstrap_close(bs);
	return 0;
}

static void test_crowd(void **state)
{
	struct hop_id_info info;
	pid_t pids[NRANKS];
	int silent[NSILENT];
	uint64_t t0;

	(void)state;
	cf_setup();
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_DEBUG", "none", 1);
	hop_log_init();
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	hop_id_decode(&g_id, &info);
	/* silent connections queue first on the listener */
	for (int i = 0; i < NSILENT; i++) {
		silent[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(connect(silent[i], (struct sockaddr *)&info.addr,
					 sizeof(info.addr)), 0);
	}
	t0 = cf_now_ms();
	for (int r = 1; r < NRANKS; r++)
		pids[r] = cf_fork(rank_main, r, NULL, NULL);
	usleep(200000); /* the crowd is queued before rank 0 accepts */
	pids[0] = cf_fork(rank_main, 0, NULL, NULL);
	close(hop_id_take_listener(info.secret));
	assert_int_equal(cf_wait(pids, NRANKS, 60000), 0);
	for (int r = 0; r < NRANKS; r++)
		if (cf_res[r].ret)
			fail_msg("rank %d: %s %s", r, hop_err_name(cf_res[r].ret),
				 cf_res[r].msg);
	/* the silent ones were given their HOP_BS_SILENT_MS */
	assert_true(cf_now_ms() - t0 >= HOP_BS_SILENT_MS);
	for (int i = 0; i < NSILENT; i++)
		close(silent[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crowd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
