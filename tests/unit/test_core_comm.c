/*
 * test_core_comm - the communicator life cycle over the real stack
 * (bootstrap, provider, p2p, collectives): argument and configuration
 * errors with their messages, init on tcp and shm with forked ranks, the
 * timeout naming the missing rank, abort from another thread, init from
 * the environment, and clean unwinding when a layer fails.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "core/core_int.h"
#include "core_fork.h"

static hop_unique_id_t g_id;
static const char *g_transport;
static int g_nranks;

static int setup(void **state)
{
	(void)state;
	cf_setup();
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_DEBUG", "none", 1);
	setenv("HOP_TIMEOUT", "30", 1);
	unsetenv("HOP_TRANSPORT");
	unsetenv("HOP_BOOTSTRAP_FD");
	return 0;
}

static void drop_listener(void)
{
	struct hop_id_info info;
	int fd;

	hop_id_decode(&g_id, &info);
	if ((fd = hop_id_take_listener(info.secret)) >= 0)
		close(fd);
}

static void test_bad_args(void **state)
{
	hop_comm_t *c = (void *)1;
	hop_unique_id_t bad;

	(void)state;
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	assert_int_equal(hop_comm_init_rank(NULL, 2, g_id, 0), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(hop_last_init_error(), "comm (the output pointer) is NULL"));
	assert_int_equal(hop_comm_init_rank(&c, 0, g_id, 0), HOP_ERR_INVALID_ARG);
	assert_null(c);
	assert_non_null(strstr(hop_last_init_error(), "nranks 0 is out of range 1..65536"));
	assert_int_equal(hop_comm_init_rank(&c, 65537, g_id, 0), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_comm_init_rank(&c, 3, g_id, 3), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(hop_last_init_error(), "rank 3 is out of range 0..2"));
	assert_int_equal(hop_comm_init_rank(&c, 3, g_id, -1), HOP_ERR_INVALID_ARG);
	bad = g_id;
	bad.internal[33] ^= 8;
	assert_int_equal(hop_comm_init_rank(&c, 1, bad, 0), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(hop_last_init_error(), "id: unique id is corrupted (bad checksum)"));

	/* the NULL-tolerant entry points */
	assert_int_equal(hop_comm_destroy(NULL), 0);
	assert_int_equal(hop_comm_rank(NULL), -1);
	assert_int_equal(hop_comm_size(NULL), -1);
	assert_string_equal(hop_comm_transport(NULL), "none");
	assert_int_equal(hop_comm_abort(NULL), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(hop_comm_last_error(NULL), "NULL"));
	drop_listener();
}

static void test_config_errors(void **state)
{
	hop_comm_t *c = (void *)1;

	(void)state;
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	setenv("HOP_TRANSPORT", "bogus", 1);
	assert_int_equal(hop_comm_init_rank(&c, 1, g_id, 0), HOP_ERR_CONFIG);
	assert_null(c);
	/* not built in, so a plugin: none is installed by that name */
	if (!strstr(hop_last_init_error(), "transport selection: HOP_TRANSPORT="
		    "bogus on rank 0: not built in (auto, verbs, tcp, shm) and "
		    "no libhop-provider-bogus.so"))
		fail_msg("%s", hop_last_init_error());
	unsetenv("HOP_TRANSPORT");
	setenv("HOP_DEBUG", "loud", 1);
	assert_int_equal(hop_comm_init_rank(&c, 1, g_id, 0), HOP_ERR_CONFIG);
	assert_non_null(strstr(hop_last_init_error(), "HOP_DEBUG='loud'"));
	setenv("HOP_DEBUG", "none", 1);
	drop_listener();
}

/* One rank: everything but the network. */
static void test_single_rank(void **state)
{
	static const char *const ts[] = { "tcp", "shm" };

	(void)state;
	for (int i = 0; i < 2; i++) {
		hop_comm_t *c = NULL;
		int ret;

		setenv("HOP_TRANSPORT", ts[i], 1);
		assert_int_equal(hop_get_unique_id(&g_id), 0);
		ret = hop_comm_init_rank(&c, 1, g_id, 0);
		if (ret)
			fail_msg("%s: %s", ts[i], hop_last_init_error());
		assert_int_equal(hop_comm_rank(c), 0);
		assert_int_equal(hop_comm_size(c), 1);
		assert_string_equal(hop_comm_transport(c), ts[i]);
		assert_string_equal(hop_last_init_error(), "");
		assert_int_equal(hop_barrier(c), 0);
		assert_int_equal(hop_comm_destroy(c), 0);
	}
}

static int rank_main(int slot, void *arg)
{
	hop_comm_t *c;
	int ret, rank = slot;

	(void)arg;
	setenv("HOP_TRANSPORT", g_transport, 1);
	ret = hop_comm_init_rank(&c, g_nranks, g_id, rank);
	if (ret) {
		cf_res[slot].ret = ret;
		snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "%s",
			 hop_last_init_error());
		return 0;
	}
	if (hop_comm_rank(c) != rank || hop_comm_size(c) != g_nranks ||
	    (strcmp(g_transport, "auto") ?
	     strcmp(hop_comm_transport(c), g_transport) != 0 :
	     strcmp(hop_comm_transport(c), "none") == 0)) {
		cf_res[slot].ret = -999;
		snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "rank %d "
			 "size %d transport %s", hop_comm_rank(c),
			 hop_comm_size(c), hop_comm_transport(c));
	} else if ((ret = hop_barrier(c))) {
		cf_res[slot].ret = ret;
		snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "barrier: %s",
			 hop_comm_last_error(c));
	}
	hop_comm_destroy(c);
	return 0;
}

static void run_job(const char *transport, int n, int present, int code,
		    const char *want)
{
	pid_t pids[CF_MAX];

	cf_setup();
	g_transport = transport;
	g_nranks = n;
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	for (int r = 0; r < present; r++)
		pids[r] = cf_fork(rank_main, r, NULL, NULL);
	drop_listener();
	assert_int_equal(cf_wait(pids, present, 90000), 0);
	for (int r = 0; r < present; r++)
		if (cf_res[r].ret != code || (want && !strstr(cf_res[r].msg, want)))
			fail_msg("%s, %d ranks: rank %d: %s %s", transport, n, r,
				 hop_err_name(cf_res[r].ret), cf_res[r].msg);
}

static void test_multi_rank(void **state)
{
	(void)state;
	run_job("tcp", 3, 3, 0, NULL);
	run_job("shm", 4, 4, 0, NULL);
	run_job("auto", 2, 2, 0, NULL);
}

static void test_timeout_names_rank(void **state)
{
	(void)state;
	setenv("HOP_TIMEOUT", "0.5", 1);
	run_job("tcp", 3, 2, HOP_ERR_TIMEOUT, "rank 2 never arrived within 0.5 s");
	run_job("tcp", 3, 2, HOP_ERR_TIMEOUT, "bootstrap: ");
	setenv("HOP_TIMEOUT", "30", 1);
}

/* A provider that cannot run here: the failure unwinds everything. */
static void test_unusable_transport(void **state)
{
	hop_comm_t *c = (void *)1;
	int ret;

	(void)state;
	setenv("HOP_TRANSPORT", "verbs", 1);
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	ret = hop_comm_init_rank(&c, 1, g_id, 0);
	if (ret == 0) { /* a verbs device is present (SoftRoCE VM) */
		assert_string_equal(hop_comm_transport(c), "verbs");
		hop_comm_destroy(c);
		return;
	}
	assert_null(c);
	if (!strstr(hop_last_init_error(), "hop_comm_init_rank(rank 0 of 1): ") ||
	    strlen(hop_last_init_error()) < 50)
		fail_msg("%s: %s", hop_err_name(ret), hop_last_init_error());
}

static void *abort_later(void *arg)
{
	usleep(200000);
	hop_comm_abort(arg);
	return NULL;
}

static int abort_rank(int slot, void *arg)
{
	hop_comm_t *c;
	pthread_t t;
	char buf[8];
	int ret;
	uint64_t t0;

	(void)arg;
	if ((ret = hop_comm_init_rank(&c, 2, g_id, slot))) {
		cf_res[slot].ret = -1000;
		snprintf(cf_res[slot].msg, 512, "%s", hop_last_init_error());
		return 0;
	}
	if (slot == 0) { /* stays until its peer is done */
		hop_recv(c, buf, 1, 1, 9, NULL);
		hop_comm_destroy(c);
		return 0;
	}
	t0 = cf_now_ms();
	pthread_create(&t, NULL, abort_later, c);
	ret = hop_recv(c, buf, sizeof(buf), 0, 5, NULL); /* never sent */
	pthread_join(t, NULL);
	cf_res[slot].ret = ret;
	snprintf(cf_res[slot].msg, 512, "%d ms|%s|", (int)(cf_now_ms() - t0),
		 hop_comm_last_error(c));
	ret = hop_send(c, "x", 1, 0, 9);
	snprintf(cf_res[slot].msg + strlen(cf_res[slot].msg), 200, "%s|%s",
		 hop_err_name(ret), hop_comm_last_error(c));
	assert_int_equal(hop_comm_abort(c), 0); /* again: harmless */
	hop_comm_destroy(c);
	return 0;
}

static void test_abort(void **state)
{
	pid_t pids[2];

	(void)state;
	cf_setup();
	setenv("HOP_TRANSPORT", "tcp", 1);
	setenv("HOP_TIMEOUT", "10", 1);
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	for (int r = 0; r < 2; r++)
		pids[r] = cf_fork(abort_rank, r, NULL, NULL);
	drop_listener();
	assert_int_equal(cf_wait(pids, 2, 60000), 0);
	/* the waiting call returns ABORTED promptly, later ones COMM_FAILED */
	if (cf_res[1].ret != HOP_ERR_ABORTED || atoi(cf_res[1].msg) > 5000 ||
	    !strstr(cf_res[1].msg, "HOP_ERR_COMM_FAILED") ||
	    !strstr(cf_res[1].msg, "aborted by hop_comm_abort()"))
		fail_msg("%s: %s", hop_err_name(cf_res[1].ret), cf_res[1].msg);
}

static void test_init_env(void **state)
{
	char s[2 * HOP_UNIQUE_ID_BYTES + 1];
	hop_comm_t *c = (void *)1;

	(void)state;
	unsetenv("HOP_RANK");
	unsetenv("HOP_SIZE");
	unsetenv("HOP_UNIQUE_ID");
	unsetenv("HOP_ADDR");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("PMI_RANK");
	unsetenv("SLURM_PROCID");
	assert_int_equal(hop_comm_init_env(&c), HOP_ERR_CONFIG);
	assert_null(c);
	assert_non_null(strstr(hop_last_init_error(), "hop_comm_init_env: no rank"));
	assert_int_equal(hop_comm_init_env(NULL), HOP_ERR_INVALID_ARG);

	setenv("HOP_TRANSPORT", "tcp", 1);
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	hop_unique_id_to_string(&g_id, s, sizeof(s));
	setenv("HOP_UNIQUE_ID", s, 1);
	setenv("HOP_RANK", "0", 1);
	setenv("HOP_SIZE", "1", 1);
	if (hop_comm_init_env(&c))
		fail_msg("%s", hop_last_init_error());
	assert_int_equal(hop_comm_size(c), 1);
	hop_comm_destroy(c);
	unsetenv("HOP_UNIQUE_ID");
	unsetenv("HOP_RANK");
	unsetenv("HOP_SIZE");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_bad_args, setup),
		cmocka_unit_test_setup(test_config_errors, setup),
		cmocka_unit_test_setup(test_single_rank, setup),
		cmocka_unit_test_setup(test_multi_rank, setup),
		cmocka_unit_test_setup(test_timeout_names_rank, setup),
		cmocka_unit_test_setup(test_unusable_transport, setup),
		cmocka_unit_test_setup(test_abort, setup),
		cmocka_unit_test_setup(test_init_env, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
