/*
 * test_bad_input.c - the bad-input table, communicator calls: every wrong
 * argument a user can pass to a collective, a point-to-point call, a
 * registration or a put gets its specific code and a message naming the
 * culprit, and the communicator keeps working afterwards where the code
 * says it should (docs/errors.md, last column). test_bad_handles.c has the
 * cases without a working communicator.
 *
 * The cases run twice, over tcp and over shm, on a 2-rank communicator
 * whose rank 0 is this process and rank 1 a forked follower
 * (bad_input_rig.c). After each bad call rank 0 runs two correct
 * allreduces with the follower (still_works()): the first carries a
 * command to the follower (continue, send me N bytes, give me a remote
 * key: for the cases that need a partner) and the follower's result of the
 * previous command, the second checks data.
 */
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
#include "bad_input_rig.h"

/* ------------------------------------------------------------------ */
/* collectives                                                         */

static void t_allreduce_null_sendbuf(void **s)
{
	int32_t out[8];

	(void)s;
	expect_err(hop_allreduce(g_comm, NULL, out, 8, HOP_INT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "sendbuf is NULL with count 8");
	expect_err(hop_allreduce(g_comm, NULL, out, 8, HOP_INT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "hop_allreduce(rank 0, count 8");
	still_works();
}

static void t_allreduce_null_recvbuf(void **s)
{
	int32_t in[8] = { 0 };

	(void)s;
	expect_err(hop_allreduce(g_comm, in, NULL, 8, HOP_INT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "recvbuf is NULL with count 8");
	still_works();
}

static void t_broadcast_null_buf(void **s)
{
	(void)s;
	expect_err(hop_broadcast(g_comm, NULL, 4, HOP_FLOAT32, 0),
		   HOP_ERR_INVALID_ARG, "buf is NULL with count 4");
	still_works();
}

static void t_allgather_null_recvbuf(void **s)
{
	int64_t in[2] = { 0 };

	(void)s;
	expect_err(hop_allgather(g_comm, in, NULL, 2, HOP_INT64),
		   HOP_ERR_INVALID_ARG, "recvbuf is NULL with count 2");
	still_works();
}

static void t_reducescatter_null_sendbuf(void **s)
{
	float out[3];

	(void)s;
	expect_err(hop_reducescatter(g_comm, NULL, out, 3, HOP_FLOAT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "sendbuf is NULL with count 3");
	still_works();
}

static void t_count_overflow(void **s)
{
	double a[1] = { 0 };

	(void)s;
	expect_err(hop_allreduce(g_comm, a, a, SIZE_MAX / 4, HOP_FLOAT64,
				 HOP_SUM), HOP_ERR_INVALID_ARG, "overflows size_t");
	/* per rank it fits, times 2 ranks it does not */
	expect_err(hop_allgather(g_comm, a, a + 0, SIZE_MAX / 8 / 2 + 1,
				 HOP_INT64), HOP_ERR_INVALID_ARG,
		   "times 2 ranks overflows size_t");
	still_works();
}

/* No overflow, but more bytes than any buffer can hold: refused as too
 * large by every collective, never "cannot build the schedule". */
static void t_count_too_large(void **s)
{
	int32_t a[2] = { 0 }, b[2];
	const size_t big = SIZE_MAX / 16;       /* x 4 B x 2 ranks fits */
	const char *sub = "more than the largest collective (2^56 B)";
	hop_request_t *req = NULL;

	(void)s;
	expect_err(hop_allgather(g_comm, a, b, big, HOP_INT32),
		   HOP_ERR_INVALID_ARG, sub);
	expect_err(hop_allreduce(g_comm, a, b, big, HOP_INT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, sub);
	expect_err(hop_broadcast(g_comm, a, big, HOP_INT32, 1),
		   HOP_ERR_INVALID_ARG, sub);
	expect_err(hop_reduce(g_comm, a, b, big, HOP_INT32, HOP_SUM, 0),
		   HOP_ERR_INVALID_ARG, sub);
	expect_err(hop_reducescatter(g_comm, a, b, big, HOP_INT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, sub);
	expect_err(hop_iallgather(g_comm, a, b, big, HOP_INT32, &req),
		   HOP_ERR_INVALID_ARG, sub);
	assert_null(req);
	/* the message names the bytes: 2^56 + 8 B in all */
	expect_err(hop_allreduce(g_comm, a, b, ((size_t)1 << 52) + 1,
				 HOP_INT64, HOP_SUM), HOP_ERR_INVALID_ARG,
		   "times 2 ranks is 72057594037927952 B");
	still_works();
}

static void t_bad_dtype(void **s)
{
	int32_t a[4] = { 0 }, b[4];

	(void)s;
	expect_err(hop_allreduce(g_comm, a, b, 4, HOP_DTYPE_COUNT, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "invalid dtype 10");
	expect_err(hop_broadcast(g_comm, a, 4, (hop_dtype_t)-1, 0),
		   HOP_ERR_INVALID_ARG, "invalid dtype -1");
	still_works();
}

static void t_bad_op(void **s)
{
	int32_t a[4] = { 0 }, b[4];

	(void)s;
	expect_err(hop_allreduce(g_comm, a, b, 4, HOP_INT32, HOP_OP_COUNT),
		   HOP_ERR_INVALID_ARG, "invalid op 5");
	expect_err(hop_reducescatter(g_comm, a, b, 2, HOP_INT32, (hop_op_t)-3),
		   HOP_ERR_INVALID_ARG, "invalid op -3");
	still_works();
}

static void t_bad_root(void **s)
{
	int32_t a[4] = { 0 }, b[4];

	(void)s;
	expect_err(hop_broadcast(g_comm, a, 4, HOP_INT32, 2),
		   HOP_ERR_INVALID_ARG, "root 2 out of range (comm has 2 ranks)");
	expect_err(hop_reduce(g_comm, a, b, 4, HOP_INT32, HOP_SUM, -1),
		   HOP_ERR_INVALID_ARG, "root -1 out of range");
	still_works();
}

static void t_overlap(void **s)
{
	int32_t buf[64] = { 0 };

	(void)s;
	expect_err(hop_allreduce(g_comm, buf, buf + 1, 16, HOP_INT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "overlap partially");
	/* allgather: in place is sendbuf == recvbuf + rank * count */
	expect_err(hop_allgather(g_comm, buf + 1, buf, 8, HOP_INT32),
		   HOP_ERR_INVALID_ARG, "is not recvbuf + rank * count * size");
	expect_err(hop_reducescatter(g_comm, buf, buf + 3, 8, HOP_INT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "is not sendbuf + rank * count * size");
	still_works();
}

static void t_null_request(void **s)
{
	int32_t a[4] = { 0 }, b[4];
	hop_request_t *fake;
	int done = 7;

	(void)s;
	expect_err(hop_iallreduce(g_comm, a, b, 4, HOP_INT32, HOP_SUM, NULL),
		   HOP_ERR_INVALID_ARG, "hop_iallreduce: req is NULL");
	expect_err(hop_isend(g_comm, a, 4, 1, 0, NULL), HOP_ERR_INVALID_ARG,
		   "hop_isend: req is NULL");
	assert_int_equal(hop_test(NULL, &done, NULL), HOP_ERR_INVALID_ARG);
	assert_int_equal(done, 0);
	fake = NULL;
	assert_int_equal(hop_wait(&fake, NULL), HOP_ERR_INVALID_ARG);
	/* a request hop never made: magic check */
	fake = calloc(1, 4096);
	assert_int_equal(hop_wait(&fake, NULL), HOP_ERR_INVALID_HANDLE);
	assert_int_equal(hop_test(&fake, &done, NULL), HOP_ERR_INVALID_HANDLE);
	free(fake);
	still_works();
}

/* ------------------------------------------------------------------ */
/* point to point                                                      */

static void t_p2p_null_buf(void **s)
{
	(void)s;
	expect_err(hop_send(g_comm, NULL, 10, 1, 0), HOP_ERR_INVALID_ARG,
		   "hop_send: buf is NULL with len 10");
	expect_err(hop_recv(g_comm, NULL, 3, 1, 0, NULL), HOP_ERR_INVALID_ARG,
		   "hop_recv: buf is NULL with len 3");
	still_works();
}

static void t_p2p_bad_peer(void **s)
{
	char b[4] = { 0 };

	(void)s;
	expect_err(hop_send(g_comm, b, 4, 2, 0), HOP_ERR_INVALID_ARG,
		   "hop_send: peer 2 out of range (comm has 2 ranks)");
	/* -1 is HOP_ANY_SOURCE for receives only */
	expect_err(hop_send(g_comm, b, 4, -1, 0), HOP_ERR_INVALID_ARG,
		   "hop_send: peer -1 out of range");
	expect_err(hop_recv(g_comm, b, 4, -2, 0, NULL), HOP_ERR_INVALID_ARG,
		   "hop_recv: peer -2 out of range");
	/* to self: a blocking receive nothing was sent for */
	expect_err(hop_recv(g_comm, b, 4, 0, 0, NULL), HOP_ERR_INVALID_ARG,
		   "peer 0 is this rank");
	still_works();
}

static void t_p2p_bad_tag(void **s)
{
	char b[4] = { 0 };
	hop_request_t *r = (void *)1;

	(void)s;
	expect_err(hop_send(g_comm, b, 4, 1, -1), HOP_ERR_INVALID_ARG,
		   "tag -1 is negative");
	expect_err(hop_irecv(g_comm, b, 4, 1, -7, &r), HOP_ERR_INVALID_ARG,
		   "hop_irecv: tag -7 is negative");
	assert_null(r);
	still_works();
}

/* A message larger than the receive buffer: TRUNCATED, nothing written
 * past the buffer, the comm still usable. Eager and rendezvous sizes. */
static void truncated(size_t sent, size_t cap)
{
	uint8_t *b = malloc(cap + 64);
	hop_status_t st = { -5, -5, 12345, -5 };
	char sub[96];
	int prev = -1;

	memset(b, 0xee, cap + 64);
	assert_int_equal(command(CMD_SEND, (int)sent, &prev), 0);
	snprintf(sub, sizeof(sub), "does not fit the %zu B receive buffer", cap);
	expect_err(hop_recv(g_comm, b, cap, 1, TAG_DATA, &st),
		   HOP_ERR_TRUNCATED, sub);
	for (size_t i = cap; i < cap + 64; i++)
		assert_int_equal(b[i], 0xee);
	assert_int_equal(st.bytes, 0);
	free(b);
}

static void t_recv_truncated_eager(void **s)
{
	(void)s;
	truncated(100, 10);
	/* an eager send is complete when it leaves: the sender saw success */
	still_works_follower(0);
}

static void t_recv_truncated_rndv(void **s)
{
	(void)s;
	truncated(1 << 20, 1000);
	/* the rendezvous sender learns it from the receiver's refusal */
	still_works_follower(HOP_ERR_TRUNCATED);
}

/* ------------------------------------------------------------------ */
/* memory registration and put                                         */

static void t_mem_register_args(void **s)
{
	char b[64];
	hop_mr_t *mr = (void *)1;

	(void)s;
	expect_err(hop_mem_register(g_comm, NULL, 64, HOP_ACCESS_REMOTE_WRITE,
				    &mr), HOP_ERR_INVALID_ARG,
		   "buf is NULL with len 64");
	assert_null(mr);
	expect_err(hop_mem_register(g_comm, b, 64, 0x10, &mr),
		   HOP_ERR_INVALID_ARG, "unknown access bits 0x10");
	expect_err(hop_mem_register(g_comm, b, 64, 0, NULL),
		   HOP_ERR_INVALID_ARG, "hop_mem_register: mr is NULL");
	assert_int_equal(hop_mr_rkey(NULL, NULL), HOP_ERR_INVALID_ARG);
	still_works();
}

static void t_deregister_twice(void **s)
{
	char b[64];
	hop_mr_t *mr = NULL, *fake = calloc(1, 256);

	(void)s;
	assert_int_equal(hop_mem_register(g_comm, b, sizeof(b),
					  HOP_ACCESS_REMOTE_WRITE, &mr), 0);
	assert_int_equal(hop_mem_deregister(g_comm, mr), 0);
	expect_err(hop_mem_deregister(g_comm, mr), HOP_ERR_INVALID_HANDLE,
		   "is not a live region of this communicator");
	/* a pointer hop never handed out */
	expect_err(hop_mem_deregister(g_comm, fake), HOP_ERR_INVALID_HANDLE,
		   "is not a live region");
	free(fake);
	assert_int_equal(hop_mem_deregister(g_comm, NULL), 0);
	still_works();
}

static void t_put_args(void **s)
{
	char b[64] = { 0 };
	hop_rkey_t k = { (uint64_t)(uintptr_t)b, sizeof(b), 1, 0,
			 HOP_ACCESS_REMOTE_WRITE };
	uint32_t imm;

	(void)s;
	expect_err(hop_put(g_comm, NULL, b, 8, NULL, 0, 0), HOP_ERR_INVALID_ARG,
		   "hop_put: rkey is NULL");
	expect_err(hop_put(g_comm, NULL, NULL, 8, &k, 0, 0), HOP_ERR_INVALID_ARG,
		   "hop_put: src is NULL with len 8");
	k.owner = 7;
	expect_err(hop_put(g_comm, NULL, b, 8, &k, 0, 0), HOP_ERR_INVALID_ARG,
		   "rkey owner rank 7 out of range");
	expect_err(hop_wait_imm(g_comm, 0, NULL, NULL, NULL),
		   HOP_ERR_INVALID_ARG, "hop_wait_imm: imm is NULL");
	expect_err(hop_wait_imm(g_comm, -2, &imm, NULL, NULL),
		   HOP_ERR_INVALID_ARG, "hop_wait_imm: peer -2 out of range");
	still_works();
}

/* Into a region this rank never registered (a forged key): refused. */
static void t_put_unregistered_self(void **s)
{
	char b[64] = { 0 }, src[16] = "not for you";
	hop_rkey_t k = { (uint64_t)(uintptr_t)b, sizeof(b), 0xdead, 0,
			 HOP_ACCESS_REMOTE_WRITE };

	(void)s;
	expect_err(hop_put(g_comm, NULL, src, sizeof(src), &k, 0, 1),
		   HOP_ERR_OUT_OF_BOUNDS, "no live region with key 0xdead");
	assert_int_equal(b[0], 0);
	still_works();
}

/* A region registered without remote write access. */
static void t_put_no_remote_write(void **s)
{
	char b[64] = { 0 }, src[8] = "xxxxxxx";
	hop_mr_t *mr = NULL;
	hop_rkey_t k;

	(void)s;
	assert_int_equal(hop_mem_register(g_comm, b, sizeof(b),
					  HOP_ACCESS_LOCAL, &mr), 0);
	assert_int_equal(hop_mr_rkey(mr, &k), 0);
	expect_err(hop_put(g_comm, NULL, src, sizeof(src), &k, 0, 1),
		   HOP_ERR_OUT_OF_BOUNDS, "not registered with "
		   "HOP_ACCESS_REMOTE_WRITE");
	assert_int_equal(b[0], 0);
	assert_int_equal(hop_mem_deregister(g_comm, mr), 0);
	still_works();
}

/* The source must lie inside the local region passed with it. */
static void t_put_src_outside_local_mr(void **s)
{
	char b[64] = { 0 }, other[64] = { 0 };
	hop_mr_t *mr = NULL, *tgt = NULL;
	hop_rkey_t k;

	(void)s;
	assert_int_equal(hop_mem_register(g_comm, b, sizeof(b),
					  HOP_ACCESS_LOCAL, &mr), 0);
	assert_int_equal(hop_mem_register(g_comm, other, sizeof(other),
					  HOP_ACCESS_REMOTE_WRITE, &tgt), 0);
	assert_int_equal(hop_mr_rkey(tgt, &k), 0);
	expect_err(hop_put(g_comm, mr, other, 16, &k, 0, 1),
		   HOP_ERR_INVALID_ARG, "is not inside local_mr");
	expect_err(hop_put(g_comm, mr, b + 60, 16, &k, 0, 1),
		   HOP_ERR_INVALID_ARG, "is not inside local_mr");
	assert_int_equal(hop_mem_deregister(g_comm, mr), 0);
	assert_int_equal(hop_mem_deregister(g_comm, tgt), 0);
	still_works();
}

/* Beyond the end of a peer's real region: refused at the writer; then a
 * correct put of the whole region lands and the peer checks it. */
static void t_put_beyond_end(void **s)
{
	enum { LEN = 4096 };
	uint8_t *src = malloc(LEN);
	hop_rkey_t k;
	hop_status_t st;

	(void)s;
	for (size_t i = 0; i < LEN; i++)
		src[i] = pattern(i);
	assert_int_equal(command(CMD_RKEY, LEN, NULL), 0);
	assert_int_equal(hop_recv(g_comm, &k, sizeof(k), 1, TAG_RKEY, &st), 0);
	assert_int_equal(st.bytes, sizeof(k));
	assert_int_equal(k.owner, 1);
	assert_int_equal(k.len, LEN);
	expect_err(hop_put(g_comm, NULL, src, 200, &k, 4000, 1),
		   HOP_ERR_OUT_OF_BOUNDS,
		   "offset 4000 + len 200 exceeds the 4096 B region of rank 1");
	expect_err(hop_put(g_comm, NULL, src, 1, &k, UINT64_MAX, 1),
		   HOP_ERR_OUT_OF_BOUNDS, "exceeds the 4096 B region of rank 1");
	expect_err(hop_put(g_comm, NULL, src, LEN + 1, &k, 0, 1),
		   HOP_ERR_OUT_OF_BOUNDS, "exceeds the 4096 B region");
	assert_int_equal(hop_put(g_comm, NULL, src, LEN, &k, 0, IMM_PUT), 0);
	free(src);
	still_works_follower(0); /* the follower verified every byte */
}

/* ------------------------------------------------------------------ */

#define COMM_TESTS                                                            \
	cmocka_unit_test(t_allreduce_null_sendbuf),                           \
	cmocka_unit_test(t_allreduce_null_recvbuf),                           \
	cmocka_unit_test(t_broadcast_null_buf),                               \
	cmocka_unit_test(t_allgather_null_recvbuf),                           \
	cmocka_unit_test(t_reducescatter_null_sendbuf),                       \
	cmocka_unit_test(t_count_overflow),                                   \
	cmocka_unit_test(t_count_too_large),                                  \
	cmocka_unit_test(t_bad_dtype),                                        \
	cmocka_unit_test(t_bad_op),                                           \
	cmocka_unit_test(t_bad_root),                                         \
	cmocka_unit_test(t_overlap),                                          \
	cmocka_unit_test(t_null_request),                                     \
	cmocka_unit_test(t_p2p_null_buf),                                     \
	cmocka_unit_test(t_p2p_bad_peer),                                     \
	cmocka_unit_test(t_p2p_bad_tag),                                      \
	cmocka_unit_test(t_recv_truncated_eager),                             \
	cmocka_unit_test(t_recv_truncated_rndv),                              \
	cmocka_unit_test(t_mem_register_args),                                \
	cmocka_unit_test(t_deregister_twice),                                 \
	cmocka_unit_test(t_put_args),                                         \
	cmocka_unit_test(t_put_unregistered_self),                            \
	cmocka_unit_test(t_put_no_remote_write),                              \
	cmocka_unit_test(t_put_src_outside_local_mr),                         \
	cmocka_unit_test(t_put_beyond_end)

int main(void)
{
	const struct CMUnitTest tcp_tests[] = { COMM_TESTS };
	const struct CMUnitTest shm_tests[] = { COMM_TESTS };
	int fails = 0;

	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_DEBUG", "none", 1);
	setenv("HOP_TIMEOUT", "20", 1);
	unsetenv("HOP_BOOTSTRAP_FD");
	fails += cmocka_run_group_tests_name("bad input: tcp", tcp_tests,
					     setup_tcp, comm_teardown);
	fails += cmocka_run_group_tests_name("bad input: shm", shm_tests,
					     setup_shm, comm_teardown);
	return fails ? 1 : 0;
}
