/*
 * bad_input_rig.c - the 2-rank communicator test_bad_input.c runs its cases
 * on: rank 0 is the test process, rank 1 a forked follower that takes
 * commands through an allreduce (continue, send me N bytes, give me a
 * remote key) and reports how the previous one ended; every command is
 * followed by an allreduce whose data is checked.
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

#include "bad_input_rig.h"
#include "rel.h"

/* ------------------------------------------------------------------ */
/* the follower (rank 1) and its commands                              */

uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/* CMD_SEND: send @n pattern bytes to rank 0 */
static int follow_send(hop_comm_t *c, size_t n)
{
	uint8_t *b = malloc(n ? n : 1);
	int ret;

	for (size_t i = 0; i < n; i++)
		b[i] = pattern(i);
	ret = hop_send(c, b, n, 0, TAG_DATA);
	free(b);
	return ret;
}

/* CMD_RKEY: register @len bytes for remote writes, send the key, wait for
 * rank 0's put of the whole region, check it, deregister. */
static int follow_rkey(hop_comm_t *c, size_t len)
{
	uint8_t *b = calloc(1, len);
	hop_mr_t *mr = NULL;
	hop_rkey_t key;
	uint32_t imm = 0;
	size_t bytes = 0;
	int src = -1, ret;

	if ((ret = hop_mem_register(c, b, len, HOP_ACCESS_REMOTE_WRITE, &mr)) ||
	    (ret = hop_mr_rkey(mr, &key)) ||
	    (ret = hop_send(c, &key, sizeof(key), 0, TAG_RKEY)) ||
	    (ret = hop_wait_imm(c, 0, &imm, &src, &bytes)))
		goto out;
	if (imm != IMM_PUT || src != 0 || bytes != len)
		ret = -1000;
	for (size_t i = 0; i < len && !ret; i++)
		if (b[i] != pattern(i))
			ret = -1001;
out:
	hop_mem_deregister(c, mr);
	free(b);
	return ret;
}

/* Every command is followed by this allreduce with a data check. */
static int data_allreduce(hop_comm_t *c)
{
	double in[64], out[64];
	int ret;

	for (int i = 0; i < 64; i++)
		in[i] = hop_comm_rank(c) ? i * 0.5 : i * 0.25;
	if ((ret = hop_allreduce(c, in, out, 64, HOP_FLOAT64, HOP_MAX)))
		return ret;
	for (int i = 0; i < 64; i++)
		if (out[i] != i * 0.5)
			return -2000;
	return 0;
}

static int follower(hop_comm_t *c, int rank, int nranks,
		    struct rel_report *rep, void *arg)
{
	int32_t last = 0;

	(void)rank;
	(void)nranks;
	(void)arg;
	for (;;) {
		int32_t in[4] = { 0, 0, last, CHECK_R1 }, out[4];
		int ret = hop_allreduce(c, in, out, 4, HOP_INT32, HOP_SUM);

		if (ret || out[3] != CHECK_R0 + CHECK_R1) {
			rep->ret = ret;
			snprintf(rep->msg, sizeof(rep->msg), "follower: %s (%d)",
				 hop_comm_last_error(c), out[3]);
			return 1;
		}
		rep->iter++;
		if (out[0] != CMD_STOP && data_allreduce(c)) {
			snprintf(rep->msg, sizeof(rep->msg), "follower: data "
				 "allreduce: %s", hop_comm_last_error(c));
			return 1;
		}
		switch (out[0]) {
		case CMD_STOP:
			return 0;
		case CMD_SEND:
			last = follow_send(c, (size_t)out[1]);
			break;
		case CMD_RKEY:
			last = follow_rkey(c, (size_t)out[1]);
			break;
		default:
			last = 0;
		}
	}
}

hop_comm_t *g_comm;
static pid_t g_pid;
static struct rel_report *g_rep;

/* One command allreduce; returns the follower's result of the previous
 * command through *@prev. */
int command(int cmd, int arg, int *prev)
{
	int32_t in[4] = { cmd, arg, 0, CHECK_R0 }, out[4] = { 0 };
	int ret = hop_allreduce(g_comm, in, out, 4, HOP_INT32, HOP_SUM);

	if (!ret && out[3] != CHECK_R0 + CHECK_R1)
		fail_msg("command allreduce gave %d, expected %d", out[3],
			 CHECK_R0 + CHECK_R1);
	if (!ret && cmd != CMD_STOP)
		ret = data_allreduce(g_comm);
	if (prev)
		*prev = out[2];
	return ret;
}

/* A correct collective right after a bad call: the comm still works, and
 * the follower's last command ended with @follower_ret. */
void still_works_follower(int follower_ret)
{
	int prev = -1, ret = command(CMD_CONT, 0, &prev);

	if (ret)
		fail_msg("the communicator no longer works: %s (%s)",
			 hop_comm_last_error(g_comm), hop_err_name(ret));
	assert_int_equal(prev, follower_ret);
}

static int comm_setup(const char *transport)
{
	hop_unique_id_t id;
	int ret;

	setenv("HOP_TRANSPORT", transport, 1);
	setenv("HOP_TIMEOUT", "20", 1);
	g_rep = rel_shared(sizeof(*g_rep));
	if ((ret = hop_get_unique_id(&id)))
		return -1;
	fflush(NULL);
	if ((g_pid = fork()) == 0) {
		hop_comm_t *c = NULL;

		rel_drop_listener(&id);
		if (hop_comm_init_rank(&c, 2, id, 1))
			_exit(3);
		ret = follower(c, 1, 2, g_rep, NULL);
		hop_comm_destroy(c);
		_exit(ret);
	}
	ret = hop_comm_init_rank(&g_comm, 2, id, 0);
	if (ret) {
		print_error("rank 0 init on %s: %s\n", transport,
			    hop_last_init_error());
		kill(g_pid, SIGKILL);
		waitpid(g_pid, NULL, 0);
		return -1;
	}
	return 0;
}

int setup_tcp(void **state)
{
	(void)state;
	return comm_setup("tcp");
}

int setup_shm(void **state)
{
	(void)state;
	return comm_setup("shm");
}

int comm_teardown(void **state)
{
	int st = -1;

	(void)state;
	if (command(CMD_STOP, 0, NULL))
		print_error("stop: %s\n", hop_comm_last_error(g_comm));
	hop_comm_destroy(g_comm);
	g_comm = NULL;
	rel_wait(&g_pid, 1, rel_now_ms() + 10000, &st);
	if (st != 0)
		print_error("follower exited with %d: %s\n", st, g_rep->msg);
	munmap(g_rep, sizeof(*g_rep));
	unsetenv("HOP_TRANSPORT");
	return st == 0 ? 0 : -1;
}
