/*
 * test_comm_misuse.c - a communicator used wrongly: every call on a
 * destroyed one (and a second destroy) returns HOP_ERR_INVALID_HANDLE
 * with a message, never touching freed memory (the sanitizer build runs
 * this test too); a call made while another thread is inside a call on the
 * same communicator is refused with HOP_ERR_INVALID_ARG naming both calls,
 * and the call already running completes with correct data.
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

#include "rel.h"

static hop_comm_t *one_rank_comm(void)
{
	hop_unique_id_t id;
	hop_comm_t *c = NULL;
	int ret;

	assert_int_equal(hop_get_unique_id(&id), 0);
	ret = hop_comm_init_rank(&c, 1, id, 0);
	if (ret)
		fail_msg("init: %s", hop_last_init_error());
	return c;
}

/* The call returned HOP_ERR_INVALID_HANDLE and left a message saying the
 * communicator was destroyed. */
#define expect_dead(c, call)                                                  \
	do {                                                                  \
		int r_ = (call);                                              \
		const char *m_ = hop_comm_last_error(c);                      \
		if (r_ != HOP_ERR_INVALID_HANDLE)                             \
			fail_msg("%s after destroy: %s, expected "           \
				 "HOP_ERR_INVALID_HANDLE (%s)", #call,       \
				 hop_err_name(r_), m_);                       \
		if (!strstr(m_, "destroyed"))                                 \
			fail_msg("%s after destroy: message '%s' lacks "     \
				 "'destroyed'", #call, m_);                   \
	} while (0)

/* Every entry point on a really destroyed communicator. */
static void call_everything(hop_comm_t *c)
{
	int32_t a[4] = { 1, 2, 3, 4 }, b[4];
	hop_request_t *req = NULL;
	hop_mr_t *mr = NULL;
	hop_rkey_t key;
	hop_relay_plan_t plan;
	uint32_t imm;
	int path[2] = { 0, 1 };

	memset(&key, 0, sizeof(key));
	expect_dead(c, hop_allreduce(c, a, b, 4, HOP_INT32, HOP_SUM));
	expect_dead(c, hop_iallreduce(c, a, b, 4, HOP_INT32, HOP_SUM, &req));
	assert_null(req);
	expect_dead(c, hop_ibarrier(c, NULL));
	expect_dead(c, hop_broadcast(c, a, 4, HOP_INT32, 0));
	expect_dead(c, hop_allgather(c, a, b, 1, HOP_INT32));
	expect_dead(c, hop_barrier(c));
	expect_dead(c, hop_send(c, a, 4, 1, 0));
	expect_dead(c, hop_recv(c, a, 4, 1, 0, NULL));
	expect_dead(c, hop_isend(c, a, 4, 1, 0, &req));
	expect_dead(c, hop_irecv(c, a, 4, 1, 0, &req));
	expect_dead(c, hop_put(c, NULL, a, 4, &key, 0, 0));
	expect_dead(c, hop_wait_imm(c, -1, &imm, NULL, NULL));
	expect_dead(c, hop_relay(c, a, 4, 0, 1, path, 2, NULL));
	expect_dead(c, hop_relay_plan(c, 4, 0, 1, path, 2, NULL, &plan));
	expect_dead(c, hop_mem_register(c, a, 16, 0, &mr));
	expect_dead(c, hop_comm_destroy(c));
	assert_int_equal(hop_comm_abort(c), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_comm_rank(c), -1);
	assert_int_equal(hop_comm_size(c), -1);
	assert_string_equal(hop_comm_transport(c), "none");
}

static void t_use_after_destroy(void **s)
{
	hop_comm_t *c = one_rank_comm();

	(void)s;
	assert_int_equal(hop_barrier(c), 0);
	assert_int_equal(hop_comm_destroy(c), 0);
	call_everything(c);
}

/*
 * A stale handle must not turn into a new communicator made right after
 * (the allocator hands the freed memory straight back): calls on it stay
 * refused while the new one works.
 */
static void t_stale_handle_after_new_init(void **s)
{
	hop_comm_t *old = one_rank_comm(), *fresh;
	int32_t a[2] = { 5, 6 }, b[2] = { 0, 0 };

	(void)s;
	assert_int_equal(hop_comm_destroy(old), 0);
	for (int i = 0; i < 3; i++) {
		fresh = one_rank_comm();
		expect_dead(old, hop_allreduce(old, a, b, 2, HOP_INT32, HOP_SUM));
		assert_int_equal(hop_allreduce(fresh, a, b, 2, HOP_INT32,
					       HOP_SUM), 0);
		assert_int_equal(b[0], 5);
		assert_int_equal(b[1], 6);
		assert_int_equal(hop_comm_destroy(fresh), 0);
		expect_dead(fresh, hop_comm_destroy(fresh));
	}
}

/* ------------------------------------------------------------------ */
/* one communicator, two threads                                       */

enum { MSG = 64, TAG_HELD = 5 };

struct holder {
	hop_comm_t *c;
	volatile int inside;
	int ret;
	uint8_t buf[MSG];
};

/* The first thread: a receive that blocks until rank 1 is told to send. */
static void *hold_recv(void *arg)
{
	struct holder *h = arg;

	h->inside = 1;
	h->ret = hop_recv(h->c, h->buf, MSG, 1, TAG_HELD, NULL);
	return NULL;
}

/* Report @code and @msg of a refused call in aux/msg; 1 when it was the
 * expected refusal. */
static int refused(struct rel_report *rep, int slot, int code, const char *msg)
{
	rep->aux[slot] = code;
	if (code != HOP_ERR_INVALID_ARG || !strstr(msg, "another thread") ||
	    !strstr(msg, "hop_recv")) {
		snprintf(rep->msg, sizeof(rep->msg), "call %d: %s: %s", slot,
			 hop_err_name(code), msg);
		return 0;
	}
	return 1;
}

/* Rank 0: refused calls while hold_recv() is inside; aux[7] the data
 * check of the held receive; msg the first unexpected answer. */
static int busy_rank0(hop_comm_t *c, struct rel_report *rep, volatile int *go)
{
	struct holder h = { .c = c };
	int32_t a[4] = { 1, 2, 3, 4 }, b[4];
	hop_request_t *req = NULL;
	hop_relay_plan_t plan;
	hop_mr_t *mr = NULL;
	pthread_t t;
	int ok = 1;

	if (pthread_create(&t, NULL, hold_recv, &h))
		return 1;
	while (!h.inside)
		usleep(1000);
	usleep(100 * 1000);     /* well inside its wait by now */
#define REFUSE(slot, call)                                                    \
	do {                                                                  \
		int r_ = (call);                                              \
		ok &= refused(rep, slot, r_, hop_comm_last_error(c));         \
	} while (0)
	REFUSE(0, hop_allreduce(c, a, b, 4, HOP_INT32, HOP_SUM));
	REFUSE(1, hop_send(c, a, 16, 1, 9));
	REFUSE(2, hop_ibarrier(c, &req));
	REFUSE(3, hop_relay_plan(c, 16, 0, 1, NULL, 0, NULL, &plan));
	/* slot 4 is shared: aux[5] (ok) records each refusal */
	REFUSE(4, hop_mem_register(c, a, sizeof(a), 0, &mr));
	REFUSE(4, hop_mem_deregister(c, NULL));
	REFUSE(4, hop_comm_destroy(c));
#undef REFUSE
	rep->aux[5] = ok;
	*go = 1;
	pthread_join(t, NULL);
	rep->ret = h.ret;
	rep->aux[7] = 1;
	for (int i = 0; i < MSG; i++)
		if (h.buf[i] != (uint8_t)(i * 3 + 1))
			rep->aux[7] = 0;
	if (!ok)
		return 0;
	if (h.ret)
		snprintf(rep->msg, sizeof(rep->msg), "held recv: %s",
			 hop_comm_last_error(c));
	return 0;
}

static int busy_rank(hop_comm_t *c, int rank, int n, struct rel_report *rep,
		     void *arg)
{
	volatile int *go = arg;
	int32_t in[2] = { rank + 1, 10 }, out[2] = { 0, 0 };
	uint8_t msg[MSG];
	int ret = 0;

	(void)n;
	if (rank == 0) {
		busy_rank0(c, rep, go);
	} else {
		for (uint64_t end = rel_now_ms() + 10000;
		     !*go && rel_now_ms() < end;)
			usleep(1000);
		for (int i = 0; i < MSG; i++)
			msg[i] = (uint8_t)(i * 3 + 1);
		rep->ret = hop_send(c, msg, MSG, 0, TAG_HELD);
	}
	/* afterwards the communicator works on both ranks */
	if (!rep->ret && (ret = hop_allreduce(c, in, out, 2, HOP_INT32, HOP_SUM)))
		snprintf(rep->msg, sizeof(rep->msg), "allreduce after: %s",
			 hop_comm_last_error(c));
	rep->aux[6] = !ret && out[0] == 3 && out[1] == 20;
	rep->state = REL_REPORTED;
	return 0;
}

static void t_two_threads(void **s)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * 2);
	volatile int *go = rel_shared(sizeof(int));
	pid_t pids[2];
	int st[2], hung;

	(void)s;
	setenv("HOP_TIMEOUT", "5", 1);
	assert_int_equal(rel_fork_ranks(2, busy_rank, (void *)go, rep, pids,
					NULL), 0);
	hung = rel_wait(pids, 2, rel_now_ms() + 30000, st);
	setenv("HOP_TIMEOUT", "20", 1);
	for (int r = 0; r < 2; r++)
		print_message("  rank %d: exit %d, %s, %s\n", r, st[r],
			      hop_err_name(rep[r].ret), rep[r].msg);
	assert_int_equal(hung, 0);
	for (int slot = 0; slot < 5; slot++)
		if (rep[0].aux[slot] != HOP_ERR_INVALID_ARG)
			fail_msg("rank 0 call %d during another thread's call: "
				 "%s (%s)", slot, hop_err_name(rep[0].aux[slot]),
				 rep[0].msg);
	if (!rep[0].aux[5])
		fail_msg("a refusal does not name both calls: %s", rep[0].msg);
	assert_int_equal(rep[0].ret, 0);
	assert_int_equal(rep[1].ret, 0);
	assert_int_equal(rep[0].aux[7], 1);     /* held receive's data */
	assert_int_equal(rep[0].aux[6], 1);     /* allreduce afterwards */
	assert_int_equal(rep[1].aux[6], 1);
	munmap(rep, sizeof(*rep) * 2);
	munmap((void *)go, sizeof(int));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_use_after_destroy),
		cmocka_unit_test(t_stale_handle_after_new_init),
		cmocka_unit_test(t_two_threads),
	};

	rel_test_env();
	return cmocka_run_group_tests_name("communicator misuse", tests, NULL,
					   NULL) ? 1 : 0;
}
