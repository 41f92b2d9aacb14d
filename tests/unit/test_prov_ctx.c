/*
 * test_prov_ctx.c - what hop hands a provider (struct hop_prov_ctx): the
 * job fields, the error/failure callbacks and where their messages land,
 * the per-provider settings, the single-rank allgather, the refusal once
 * the bootstrap has closed; and the plugin
 * loader's refusals that need no compiler (bad names, missing files, a file
 * that is not a shared object), each with the message naming why.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "core/core.h"
#include "transport/provider.h"

static int setup(void **state)
{
	struct hop_comm *comm = calloc(1, sizeof(*comm));

	assert_non_null(comm);
	comm->magic = HOP_COMM_MAGIC;
	comm->rank = 0;
	comm->nranks = 1;
	hop_config_defaults(&comm->cfg);
	comm->cfg.timeout_ms = 1234;
	hop_prov_ctx_init(comm, "my-prov");
	*state = comm;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void fields(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;

	assert_int_equal(ctx->size, sizeof(struct hop_prov_ctx));
	assert_int_equal(ctx->rank, 0);
	assert_int_equal(ctx->nranks, 1);
	assert_int_equal(ctx->timeout_ms, 1234);
	assert_string_equal(ctx->name, "my-prov");
	/* one rank without a bootstrap: itself on loopback, a zero secret */
	assert_int_equal(ctx->local_addr, htonl(INADDR_LOOPBACK));
	assert_non_null(ctx->secret);
	for (int i = 0; i < HOP_PROV_SECRET_LEN; i++)
		assert_int_equal(ctx->secret[i], 0);
	assert_true(ctx->host_id != 0);
	assert_int_equal(ctx->barrier(ctx), 0);
}

/* hop's own variables, as validated, by name: numbers and strings */
static void settings(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;
	long long v = -5;
	char buf[16] = "x";

	assert_int_equal(ctx->setting(ctx, "HOP_TIMEOUT", &v, NULL, 0), 0);
	assert_int_equal(v, 1234);
	comm->cfg.eager_size = 12345;
	assert_int_equal(ctx->setting(ctx, "HOP_EAGER_SIZE", &v, NULL, 0), 0);
	assert_int_equal(v, 12345);
	assert_int_equal(ctx->setting(ctx, "HOP_IB_CM", NULL, buf,
				      sizeof(buf)), 0);
	assert_string_equal(buf, "rdmacm");
	/* cut to the buffer, NUL-terminated */
	assert_int_equal(ctx->setting(ctx, "HOP_IB_CM", NULL, buf, 3), 0);
	assert_string_equal(buf, "rd");
	assert_int_equal(ctx->setting(ctx, "HOP_NO_SUCH", &v, buf,
				      sizeof(buf)), HOP_ERR_CONFIG);
	assert_int_equal(ctx->setting(ctx, NULL, &v, buf, sizeof(buf)),
			 HOP_ERR_CONFIG);
	assert_int_equal(hop_prov_setting_int(ctx, "HOP_IB_PORT", 9), 1);
	assert_int_equal(hop_prov_setting_int(ctx, "HOP_NO_SUCH", 9), 9);
}

/* hop_comm_abort() ends a provider's waits too */
static void failed_sees_abort(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;

	assert_int_equal(ctx->failed(ctx), 0);
	atomic_store(&comm->aborted, 1);
	assert_int_equal(ctx->failed(ctx), HOP_ERR_ABORTED);
	atomic_store(&comm->aborted, 0);
}

/* tcp opened by a hop whose context ends before the bootstrap address
 * and secret (a plugin in an older hop): refused, saying why */
static void tcp_needs_secret(void **state)
{
	struct hop_comm *comm = *state;
	struct hop_prov_ctx *ctx = &comm->prov_ctx;
	struct hop_prov *prov = NULL;

	ctx->size = offsetof(struct hop_prov_ctx, local_addr);
	assert_int_equal(hop_prov_tcp.open(ctx, &prov), HOP_ERR_NOT_SUPPORTED);
	assert_null(prov);
	assert_non_null(strstr(comm->last_error, "has no bootstrap address"));
	assert_int_equal(ctx->failed(ctx), 0);
	/* settings read through an old context fall back to the defaults */
	ctx->size = offsetof(struct hop_prov_ctx, setting);
	assert_int_equal(hop_prov_setting_int(ctx, "HOP_TIMEOUT", 7), 7);
	ctx->size = sizeof(*ctx);
	assert_int_equal(hop_prov_setting_int(ctx, "HOP_TIMEOUT", 7), 1234);
}

/* the built-in providers' caps: emulated, no whole-word writes, 8 KiB;
 * a table without caps (older builder) or NULL has none */
static void builtin_caps(void **state)
{
	struct hop_prov_ops old = hop_prov_tcp;

	(void)state;
	assert_false(hop_prov_has(&hop_prov_tcp, HOP_PROV_CAP_RDMA));
	assert_false(hop_prov_has(&hop_prov_shm, HOP_PROV_CAP_ATOMIC8));
	assert_true(hop_prov_has(&hop_prov_shm, HOP_PROV_CAP_HOST_MEMORY));
	assert_false(hop_prov_has(&hop_prov_tcp, HOP_PROV_CAP_HOST_MEMORY));
	assert_int_equal(hop_prov_caps_of(&hop_prov_tcp)->eager_size, 32768);
	assert_int_equal(hop_prov_caps_of(&hop_prov_shm)->eager_size, 8192);
	assert_true(hop_prov_caps_of(&hop_prov_shm)->alpha <
		    hop_prov_caps_of(&hop_prov_tcp)->alpha);
	old.size = offsetof(struct hop_prov_ops, caps);
	assert_null(hop_prov_caps_of(&old));
	assert_false(hop_prov_has(&old, 0));
	assert_null(hop_prov_caps_of(NULL));
}

static void error_keeps_comm(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;

	assert_int_equal(ctx->error(ctx, HOP_ERR_INVALID_ARG, "bad %d", 42),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(comm->last_error, "bad 42"));
	assert_int_equal(ctx->failed(ctx), 0);
	/* a non-negative code would pass for success: made a transport error */
	assert_int_equal(ctx->error(ctx, 3, "odd"), HOP_ERR_TRANSPORT);
}

/* ctx->fail_comm (not "fail": cmocka defines a macro fail()) */
static void fail_records_first(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;

	assert_int_equal(ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, "rank %d gone", 7),
			 HOP_ERR_PEER_FAILED);
	assert_int_equal(ctx->failed(ctx), HOP_ERR_PEER_FAILED);
	assert_non_null(strstr(comm->fail_msg, "rank 7 gone"));
	ctx->fail_comm(ctx, HOP_ERR_PROTOCOL, "later cause");
	assert_int_equal(ctx->failed(ctx), HOP_ERR_PEER_FAILED);
	assert_null(strstr(comm->fail_msg, "later cause"));
}

static void fail_positive_code(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;

	assert_int_equal(ctx->fail_comm(ctx, 0, "zero"), HOP_ERR_TRANSPORT);
	assert_int_equal(ctx->failed(ctx), HOP_ERR_TRANSPORT);
}

static void config_names(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;

	unsetenv("HOP_PROV_MY_PROV_DEPTH");
	assert_null(ctx->config(ctx, "depth"));
	setenv("HOP_PROV_MY_PROV_DEPTH", "17", 1);
	assert_string_equal(ctx->config(ctx, "depth"), "17");
	assert_string_equal(ctx->config(ctx, "DEPTH"), "17");
	assert_null(ctx->config(ctx, ""));
	assert_null(ctx->config(ctx, NULL));
	unsetenv("HOP_PROV_MY_PROV_DEPTH");
}

static void allgather_one_rank(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;
	char mine[5] = "abcd", all[5] = "";

	assert_int_equal(ctx->allgather(ctx, mine, all, sizeof(mine)), 0);
	assert_memory_equal(all, mine, sizeof(mine));
	assert_int_equal(ctx->allgather(ctx, mine, NULL, 4), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(comm->last_error, "allgather of 4 bytes"));
	assert_int_equal(ctx->allgather(ctx, mine, all, 0), HOP_ERR_INVALID_ARG);
}

/* The bootstrap closes once the comm is made: a provider exchanging
 * anything later is told why, whatever the job's size. */
static void allgather_after_init(void **state)
{
	struct hop_comm *comm = *state;
	const struct hop_prov_ctx *ctx = &comm->prov_ctx;
	char mine[5] = "abcd", all[10] = "";

	comm->nranks = 2;
	assert_null(comm->bs);
	assert_int_equal(ctx->allgather(ctx, mine, all, sizeof(mine)),
			 HOP_ERR_BOOTSTRAP);
	assert_non_null(strstr(comm->last_error, "my-prov: rank 0: "
			       "ctx->allgather() after open()"));
	assert_int_equal(all[0], 0);
	assert_int_equal(ctx->barrier(ctx), HOP_ERR_BOOTSTRAP);
	assert_non_null(strstr(comm->last_error, "ctx->barrier() after open()"));
}

static void load_refusals(void **state)
{
	const struct hop_prov_ops *ops = (void *)1;
	char err[512], dir[] = "/tmp/hop-test-plugin-XXXXXX", file[600];
	void *dl = (void *)1;
	FILE *f;

	(void)state;
	assert_int_equal(hop_plugin_load("../etc", "", &dl, &ops, err,
					 sizeof(err)), HOP_ERR_CONFIG);
	assert_null(dl);
	assert_null(ops);
	assert_non_null(strstr(err, "nor a plugin name"));
	assert_int_equal(hop_plugin_load("", "", &dl, &ops, err, sizeof(err)),
			 HOP_ERR_CONFIG);
	assert_int_equal(hop_plugin_load("UPPER", "", &dl, &ops, err,
					 sizeof(err)), HOP_ERR_CONFIG);

	assert_non_null(mkdtemp(dir));
	assert_int_equal(hop_plugin_load("absent", dir, &dl, &ops, err,
					 sizeof(err)), HOP_ERR_CONFIG);
	assert_non_null(strstr(err, "no libhop-provider-absent.so"));
	assert_non_null(strstr(err, dir));
	assert_non_null(strstr(err, HOP_PLUGIN_DIR));

	snprintf(file, sizeof(file), "%s/libhop-provider-text.so", dir);
	assert_non_null(f = fopen(file, "w"));
	fputs("not an ELF file\n", f);
	fclose(f);
	assert_int_equal(hop_plugin_load("text", dir, &dl, &ops, err,
					 sizeof(err)), HOP_ERR_SYSTEM);
	assert_null(dl);
	assert_non_null(strstr(err, file));
	assert_non_null(strstr(err, "dlopen failed"));
	unlink(file);
	rmdir(dir);
	hop_plugin_unload(NULL); /* allowed */
}

static void builtin_names(void **state)
{
	(void)state;
	assert_true(hop_prov_builtin_name("auto"));
	assert_true(hop_prov_builtin_name("tcp"));
	assert_true(hop_prov_builtin_name("shm"));
	assert_true(hop_prov_builtin_name("verbs"));
	assert_false(hop_prov_builtin_name("example"));
	assert_false(hop_prov_builtin_name(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(fields, setup, teardown),
		cmocka_unit_test_setup_teardown(settings, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_sees_abort, setup,
						teardown),
		cmocka_unit_test(builtin_caps),
		cmocka_unit_test_setup_teardown(tcp_needs_secret, setup, teardown),
		cmocka_unit_test_setup_teardown(error_keeps_comm, setup, teardown),
		cmocka_unit_test_setup_teardown(fail_records_first, setup, teardown),
		cmocka_unit_test_setup_teardown(fail_positive_code, setup, teardown),
		cmocka_unit_test_setup_teardown(config_names, setup, teardown),
		cmocka_unit_test_setup_teardown(allgather_one_rank, setup, teardown),
		cmocka_unit_test_setup_teardown(allgather_after_init, setup,
						teardown),
		cmocka_unit_test(load_refusals),
		cmocka_unit_test(builtin_names),
	};

	setenv("HOP_DEBUG", "none", 1);
	hop_log_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
