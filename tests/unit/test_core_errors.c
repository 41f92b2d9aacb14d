/*
 * test_core_errors - result codes, the communicator error state (first
 * cause kept, abort from another thread, check after failure) and the
 * environment hop_comm_init_env() reads (rank sources, rendezvous, secret).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "core/core.h"
#include "core/core_int.h"
#include "hop_autoconf.h"

extern char **environ;

static void test_codes(void **state)
{
	(void)state;
	assert_string_equal(hop_strerror(0), "success");
	assert_string_equal(hop_err_name(0), "HOP_SUCCESS");
	assert_string_equal(hop_err_name(HOP_ERR_TIMEOUT), "HOP_ERR_TIMEOUT");
	assert_string_equal(hop_strerror(HOP_ERR_AUTH),
			    "peer presented a wrong secret");
	for (int c = 1; c <= 20; c++) {
		assert_string_not_equal(hop_err_name(-c), "HOP_ERR_UNKNOWN");
		assert_string_not_equal(hop_strerror(-c), "unknown error");
	}
	assert_string_equal(hop_err_name(-21), "HOP_ERR_UNKNOWN");
	assert_string_equal(hop_strerror(5), "unknown error");
	assert_int_equal(hop_dtype_size(HOP_BFLOAT16), 2);
	assert_int_equal(hop_dtype_size(HOP_DTYPE_COUNT), 0);
	assert_string_equal(hop_op_name(HOP_MAX), "max");
	assert_string_equal(hop_version(), PACKAGE_VERSION);
}

static struct hop_comm *new_comm(void)
{
	struct hop_comm *c = calloc(1, sizeof(*c));

	c->magic = HOP_COMM_MAGIC;
	c->rank = 2;
	c->nranks = 4;
	return c;
}

static void test_set_error(void **state)
{
	struct hop_comm *c = new_comm();

	(void)state;
	assert_string_equal(hop_comm_last_error(c), "");
	assert_int_equal(hop_set_error(c, HOP_ERR_INVALID_ARG,
				       "hop_send: peer %d out of range", 9),
			 HOP_ERR_INVALID_ARG);
	assert_string_equal(hop_comm_last_error(c), "hop_send: peer 9 out of range");
	/* argument errors leave the comm usable */
	assert_int_equal(hop_comm_check(c), 0);
	assert_int_equal(hop_set_error(NULL, HOP_ERR_NO_MEMORY, "x"),
			 HOP_ERR_NO_MEMORY);
	assert_non_null(strstr(hop_comm_last_error(NULL), "NULL"));
	free(c);
}

static void test_fail_first_cause_kept(void **state)
{
	struct hop_comm *c = new_comm();

	(void)state;
	assert_int_equal(hop_comm_fail(c, HOP_ERR_PEER_FAILED,
				       "tcp: rank 3 closed the connection"),
			 HOP_ERR_PEER_FAILED);
	assert_int_equal(hop_comm_fail(c, HOP_ERR_TIMEOUT, "later cause"),
			 HOP_ERR_TIMEOUT);
	assert_string_equal(c->fail_msg, "tcp: rank 3 closed the connection");
	assert_int_equal(atomic_load(&c->failed), HOP_ERR_PEER_FAILED);
	/* every later call: COMM_FAILED carrying the first cause */
	assert_int_equal(hop_comm_check(c), HOP_ERR_COMM_FAILED);
	assert_non_null(strstr(hop_comm_last_error(c),
			       "tcp: rank 3 closed the connection"));
	assert_int_equal(hop_comm_check(c), HOP_ERR_COMM_FAILED);
	/* a non-error code still fails the comm */
	struct hop_comm *d = new_comm();

	assert_int_equal(hop_comm_fail(d, 0, "bug"), HOP_ERR_INTERNAL);
	assert_int_equal(hop_comm_check(d), HOP_ERR_COMM_FAILED);
	free(d);
	free(c);
}

static void test_check_handles(void **state)
{
	struct hop_comm *c = new_comm();

	(void)state;
	assert_int_equal(hop_comm_check(NULL), HOP_ERR_INVALID_HANDLE);
	c->magic = 0;
	assert_int_equal(hop_comm_check(c), HOP_ERR_INVALID_HANDLE);
	assert_non_null(strstr(hop_comm_last_error(c), "not a live"));
	free(c);
}

/* hop_comm_abort() lives in comm.c (which needs the other layers); this
 * is what it does, on the error state this file owns. */
static void abort_like(struct hop_comm *c)
{
	int none = 0;

	if (atomic_compare_exchange_strong(&c->aborted, &none, 1))
		hop_comm_fail_async(c, HOP_ERR_ABORTED, "rank %d: aborted by "
				    "hop_comm_abort()", c->rank);
}

static void *aborter(void *arg)
{
	abort_like(arg);
	return NULL;
}

static void test_abort_from_thread(void **state)
{
	(void)state;
	for (int round = 0; round < 200; round++) {
		struct hop_comm *c = new_comm();
		pthread_t t;

		assert_int_equal(pthread_create(&t, NULL, aborter, c), 0);
		/* races with the abort: exactly one first cause wins */
		hop_comm_fail(c, HOP_ERR_PEER_FAILED, "peer died");
		pthread_join(t, NULL);
		int code = atomic_load(&c->failed);

		assert_true(code == HOP_ERR_PEER_FAILED || code == HOP_ERR_ABORTED);
		assert_string_equal(c->fail_msg, code == HOP_ERR_ABORTED ?
				    "rank 2: aborted by hop_comm_abort()" :
				    "peer died");
		/* calls after the abort: COMM_FAILED with the first cause
		 * (the waiting call got comm->failed from its wait loop) */
		assert_int_equal(hop_comm_check(c), HOP_ERR_COMM_FAILED);
		assert_non_null(strstr(hop_comm_last_error(c), c->fail_msg));
		assert_int_equal(hop_comm_check(c), HOP_ERR_COMM_FAILED);
		free(c);
	}
}

static int clear_env(void **state)
{
	static const char *const vars[] = {
		"HOP_RANK", "HOP_SIZE", "OMPI_COMM_WORLD_RANK",
		"OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE", "SLURM_PROCID",
		"SLURM_NTASKS", "HOP_UNIQUE_ID", "HOP_ADDR", "HOP_SECRET",
		"SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	return 0;
}

static void expect_env_error(const char *want)
{
	struct hop_env_job job;
	char err[512] = "";

	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), HOP_ERR_CONFIG);
	if (!strstr(err, want))
		fail_msg("expected '%s' in '%s'", want, err);
}

static void test_env_rank_sources(void **state)
{
	struct hop_env_job job;
	char err[512];

	(void)state;
	expect_env_error("no rank in the environment");
	setenv("HOP_ADDR", "127.0.0.1:5000", 1);
	setenv("HOP_SECRET", "000102030405060708090a0b0c0d0e0f", 1);

	setenv("SLURM_PROCID", "3", 1);
	setenv("SLURM_NTASKS", "8", 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);
	assert_int_equal(job.rank, 3);
	assert_int_equal(job.nranks, 8);
	assert_string_equal(job.rank_var, "SLURM_PROCID");

	setenv("PMI_RANK", "1", 1);
	setenv("PMI_SIZE", "2", 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);
	assert_string_equal(job.rank_var, "PMI_RANK");
	assert_int_equal(job.nranks, 2);

	setenv("OMPI_COMM_WORLD_RANK", "0", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "5", 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);
	assert_string_equal(job.rank_var, "OMPI_COMM_WORLD_RANK");
	assert_int_equal(job.nranks, 5);

	setenv("HOP_RANK", "4", 1); /* HOP_* wins, and must be complete */
	expect_env_error("HOP_RANK is set but HOP_SIZE is not");
	setenv("HOP_SIZE", "4", 1);
	expect_env_error("HOP_RANK='4': out of range (allowed: 0..3)");
	setenv("HOP_SIZE", "0", 1);
	expect_env_error("HOP_SIZE='0'");
	setenv("HOP_SIZE", "65537", 1);
	expect_env_error("HOP_SIZE='65537'");
	setenv("HOP_SIZE", "6x", 1);
	expect_env_error("HOP_SIZE='6x'");
	setenv("HOP_SIZE", "6", 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);
	assert_int_equal(job.rank, 4);
	assert_int_equal(job.nranks, 6);
	assert_string_equal(job.rank_var, "HOP_RANK");
}

static void test_env_rendezvous(void **state)
{
	struct hop_env_job job, again;
	struct hop_id_info info;
	hop_unique_id_t id;
	char err[512], s[257];

	(void)state;
	setenv("HOP_RANK", "0", 1);
	setenv("HOP_SIZE", "2", 1);
	expect_env_error("no rendezvous in the environment");

	/* HOP_ADDR + HOP_SECRET */
	setenv("HOP_ADDR", "127.0.0.1:4567", 1);
	expect_env_error("neither HOP_SECRET (32 hex digits) nor a job id");
	setenv("HOP_SECRET", "00112233445566778899aabbccddeeff", 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);
	assert_int_equal(hop_id_decode(&job.id, &info), 0);
	assert_int_equal(info.addr.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(ntohs(info.addr.sin_port), 4567);
	assert_memory_equal(info.secret, "\x00\x11\x22\x33\x44\x55\x66\x77"
			    "\x88\x99\xaa\xbb\xcc\xdd\xee\xff", 16);
	setenv("HOP_SECRET", "0011", 1);
	expect_env_error("HOP_SECRET must be 32 hex digits (it has 4 characters)");
	setenv("HOP_SECRET", "00112233445566778899aabbccddeefg", 1);
	expect_env_error("not all hex");
	unsetenv("HOP_SECRET");

	/* a secret derived from the job id: the same on every rank */
	setenv("SLURM_JOB_ID", "123456", 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);
	setenv("HOP_RANK", "1", 1);
	assert_int_equal(hop_env_job_parse(&again, err, sizeof(err)), 0);
	assert_memory_equal(&job.id, &again.id, sizeof(job.id));
	setenv("SLURM_JOB_ID", "123457", 1);
	assert_int_equal(hop_env_job_parse(&again, err, sizeof(err)), 0);
	assert_memory_not_equal(&job.id, &again.id, sizeof(job.id));

	/* malformed addresses */
	setenv("HOP_ADDR", "127.0.0.1", 1);
	expect_env_error("expected host:port");
	setenv("HOP_ADDR", "127.0.0.1:0", 1);
	expect_env_error("HOP_ADDR port='0'");
	setenv("HOP_ADDR", "127.0.0.1:70000", 1);
	expect_env_error("HOP_ADDR port='70000'");
	setenv("HOP_ADDR", "0.0.0.0:5000", 1);
	expect_env_error("not a wildcard");
	setenv("HOP_ADDR", "no-such-host.invalid:5000", 1);
	expect_env_error("cannot resolve 'no-such-host.invalid'");
	setenv("HOP_ADDR", "localhost:5001", 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);

	/* HOP_UNIQUE_ID wins over HOP_ADDR */
	memset(&info, 0, sizeof(info));
	info.addr.sin_family = AF_INET;
	info.addr.sin_addr.s_addr = htonl(0x7f000002);
	info.addr.sin_port = htons(999);
	hop_id_encode(&info, &id);
	hop_unique_id_to_string(&id, s, sizeof(s));
	setenv("HOP_UNIQUE_ID", s, 1);
	assert_int_equal(hop_env_job_parse(&job, err, sizeof(err)), 0);
	assert_memory_equal(&job.id, &id, sizeof(id));
	char keep = s[3];

	s[3] = 'x';
	setenv("HOP_UNIQUE_ID", s, 1);
	expect_env_error("HOP_UNIQUE_ID is not hexadecimal");
	s[3] = keep;
	s[100] = s[100] == 'a' ? 'b' : 'a';
	setenv("HOP_UNIQUE_ID", s, 1);
	expect_env_error("HOP_UNIQUE_ID: unique id is corrupted (bad checksum)");
	setenv("HOP_UNIQUE_ID", "abc", 1);
	expect_env_error("HOP_UNIQUE_ID has 3 characters");
}

static void test_init_error_tls(void **state)
{
	(void)state;
	hop_clear_init_error();
	assert_string_equal(hop_last_init_error(), "");
	setenv("HOP_DEBUG", "none", 1);
	hop_log_init();
	hop_set_init_error("rank %d: %s", 3, "boom");
	assert_string_equal(hop_last_init_error(), "rank 3: boom");
	unsetenv("HOP_DEBUG");
	hop_log_init();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_set_error),
		cmocka_unit_test(test_fail_first_cause_kept),
		cmocka_unit_test(test_check_handles),
		cmocka_unit_test(test_abort_from_thread),
		cmocka_unit_test_setup(test_env_rank_sources, clear_env),
		cmocka_unit_test_setup(test_env_rendezvous, clear_env),
		cmocka_unit_test(test_init_error_tls),
	};

	setenv("HOP_DEBUG", "none", 1);
	hop_log_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
