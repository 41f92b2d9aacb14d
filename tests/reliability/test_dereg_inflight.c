/*
 * test_dereg_inflight.c - hop_mem_deregister() while a peer's put is still
 * landing in the region (hop/mem.h: writes never land in memory that is no
 * longer registered).
 *
 * Rank 1 registers 64 MiB and sends rank 0 its key; rank 0 puts 64 MiB
 * of 0xa5 as one write (HOP_RNDV_CHUNK=64M). Rank 1 drives progress with
 * hop_test() and deregisters as soon as the first bytes are there and the
 * last are not. Then:
 *  - kept: rank 1 zeroes the old memory and keeps progressing for a while;
 *    not one byte may change;
 *  - freed: rank 1 frees the old memory at once (an ASan build reports
 *    any later write as a heap-use-after-free) and allocates again, so
 *    the same pages may come back for other data.
 * Neither side may report success: the writer's hop_put() fails naming
 * rank 1, the target's later calls fail.
 * aux: rank 0: [0] hop_put's code; rank 1: [0] the deregistration
 * happened mid-write, [1] bytes changed after it, [2] the first code a
 * call returned after it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rel.h"

#define LEN (64u << 20)
#define PATTERN 0xa5

struct fence_arg {
	int free_it;
};

/* Count bytes of @b that are not zero. */
static size_t nonzero(const uint8_t *b, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		n += b[i] != 0;
	return n;
}

static int target(hop_comm_t *c, struct rel_report *rep, int free_it)
{
	uint8_t *b = calloc(1, LEN), *again = NULL;
	hop_request_t *req = NULL;
	hop_mr_t *mr = NULL;
	hop_rkey_t k;
	int ret, done = 0, tok;
	uint64_t end;

	if (!b)
		return 1;
	if ((ret = hop_mem_register(c, b, LEN, HOP_ACCESS_REMOTE_WRITE, &mr)) ||
	    (ret = hop_mr_rkey(mr, &k)) ||
	    (ret = hop_send(c, &k, sizeof(k), 0, 1)) ||
	    (ret = hop_irecv(c, &tok, sizeof(tok), 0, 2, &req)))
		goto out;
	/* progress until the write is partly in place */
	for (end = rel_now_ms() + 10000; rel_now_ms() < end;) {
		if ((ret = hop_test(&req, &done, NULL)) || done)
			break;
		if (b[0] == PATTERN)
			break;
	}
	rep->aux[0] = b[0] == PATTERN && b[LEN - 1] == 0;
	ret = hop_mem_deregister(c, mr);
	mr = NULL;
	if (free_it) {
		free(b);
		b = NULL;
		again = calloc(1, LEN);
	} else {
		memset(b, 0, LEN);
	}
	/* keep progressing: nothing more may land; the failure must show */
	for (end = rel_now_ms() + 3000; !ret && req && rel_now_ms() < end;)
		ret = hop_test(&req, &done, NULL);
	rep->aux[2] = ret;
	if (b)
		rep->aux[1] = (int)nonzero(b, LEN);
	if (again)
		rep->aux[1] += (int)nonzero(again, LEN);
out:
	rep->ret = ret;
	snprintf(rep->msg, sizeof(rep->msg), "%s", hop_comm_last_error(c));
	if (mr)
		hop_mem_deregister(c, mr);
	free(b);
	free(again);
	rep->state = REL_REPORTED;
	return 0;
}

static int writer(hop_comm_t *c, struct rel_report *rep)
{
	uint8_t *src = malloc(LEN);
	hop_rkey_t k;
	int ret, tok = 1;

	if (!src)
		return 1;
	memset(src, PATTERN, LEN);
	if (!(ret = hop_recv(c, &k, sizeof(k), 1, 1, NULL))) {
		rep->aux[0] = hop_put(c, NULL, src, LEN, &k, 0, 7);
		snprintf(rep->msg, sizeof(rep->msg), "%s",
			 hop_comm_last_error(c));
		if (rep->aux[0] == 0)
			hop_send(c, &tok, sizeof(tok), 1, 2);
	}
	rep->ret = ret;
	free(src);
	rep->state = REL_REPORTED;
	return 0;
}

static int fence_rank(hop_comm_t *c, int rank, int n, struct rel_report *rep,
		      void *arg)
{
	struct fence_arg *fa = arg;

	(void)n;
	return rank ? target(c, rep, fa->free_it) : writer(c, rep);
}

static void dereg_inflight(const char *tr, int free_it)
{
	struct rel_report *rep = rel_shared(sizeof(*rep) * 2);
	struct fence_arg fa = { free_it };
	pid_t pids[2];
	int st[2], hung;

	setenv("HOP_TRANSPORT", tr, 1);
	setenv("HOP_RNDV_CHUNK", "64M", 1);
	setenv("HOP_TIMEOUT", "5", 1);
	assert_int_equal(rel_fork_ranks(2, fence_rank, &fa, rep, pids, NULL), 0);
	hung = rel_wait(pids, 2, rel_now_ms() + 30000, st);
	unsetenv("HOP_RNDV_CHUNK");
	unsetenv("HOP_TRANSPORT");
	setenv("HOP_TIMEOUT", "20", 1);
	print_message("  %s, old memory %s: deregistered %s; %d byte(s) "
		      "landed after it; target then %s: %s; writer's put %s: "
		      "%s\n", tr, free_it ? "freed" : "kept",
		      rep[1].aux[0] ? "mid-write" : "NOT mid-write",
		      rep[1].aux[1], hop_err_name(rep[1].aux[2]), rep[1].msg,
		      hop_err_name(rep[0].aux[0]), rep[0].msg);
	assert_int_equal(hung, 0);
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], 0);
	assert_int_equal(rep[0].ret, 0);
	assert_int_equal(rep[1].aux[0], 1);
	assert_int_equal(rep[1].aux[1], 0);
	if (rep[0].aux[0] == 0)
		fail_msg("the writer's put reported success");
	if (!rel_names_rank(rep[0].msg, 1))
		fail_msg("the writer's error does not name rank 1: %s",
			 rep[0].msg);
	if (rep[1].aux[2] == 0)
		fail_msg("the target saw no error after the cut-off write");
	if (!rel_names_rank(rep[1].msg, 0))
		fail_msg("the target's error does not name rank 0: %s",
			 rep[1].msg);
	munmap(rep, sizeof(*rep) * 2);
}

static void t_kept_tcp(void **s) { (void)s; dereg_inflight("tcp", 0); }
static void t_freed_tcp(void **s) { (void)s; dereg_inflight("tcp", 1); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_kept_tcp),
		cmocka_unit_test(t_freed_tcp),
	};

	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
