/*
 * agree_test.c - ranks whose processes differ (CPU affinity, memlock
 * limit) still use one cost model and one eager size, so they choose the
 * same algorithms and chunks and no collective fails with a mismatch.
 *
 * Before hop_comm_init_env(), rank 0 (HOP_RANK) restricts itself to its
 * first CPU, lowers its RLIMIT_MEMLOCK to 4 MiB and gives up
 * CAP_IPC_LOCK, while the other ranks move to its last CPU and keep their
 * limits: from 3 ranks on, the others see N-1 ranks on one core where
 * rank 0 sees itself alone (src/core/cpus.h), and on verbs rank 0's
 * HOP_EAGER_SIZE=auto would be smaller than the others'. Every rank then
 *  - allgathers the eager size and the cost model's link (alpha, beta,
 *    gamma, eager; bit for bit) and checks that all ranks hold rank 0's;
 *  - runs AllReduce, Broadcast, AllGather and ReduceScatter of 8 B to
 *    4 MiB (powers of 4, and 3 times them) and checks every element.
 *
 * Usage (under hop-run): agree_test
 * Prints "agree_test: rank R passed N cases" on success.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hop/hop.h>

#include "coll/coll_int.h"
#include "core/core.h"

#define TEST_NAME "agree_test"
static hop_comm_t *comm;
static int rank, nranks, cases;
#include "rank_check.h"

#define MEMLOCK_RANK0 (4u << 20)
#define MAX_COUNT ((size_t)1 << 19) /* u64 elements: 4 MiB */

/* Drop CAP_IPC_LOCK from the effective set (allowed without privilege),
 * so the memlock limit binds this process as it binds a user's. */
static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return;
	data[CAP_IPC_LOCK / 32].effective &= ~(1u << (CAP_IPC_LOCK % 32));
	if (syscall(SYS_capset, &hdr, data))
		perror("agree_test: capset");
}

/* Rank 0 on the first CPU it may use, the others on the last. */
static void pin_apart(void)
{
	cpu_set_t set;
	int first = -1, last = -1;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			first = first < 0 ? c : first;
			last = c;
		}
	if (first == last)
		fprintf(stderr, "agree_test: only one usable CPU: the "
			"affinity case is not exercised\n");
	CPU_ZERO(&set);
	CPU_SET(rank ? last : first, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("agree_test: sched_setaffinity");
}

/* Rank 0 only: a small memlock limit, no CAP_IPC_LOCK. */
static void make_rank0_different(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_MEMLOCK, &rl)) {
		rl.rlim_cur = MEMLOCK_RANK0;
		if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < rl.rlim_cur)
			rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			perror("agree_test: setrlimit");
	}
	drop_ipc_lock();
}

/* Every rank holds rank 0's eager size and cost-model link, bit for bit. */
static void check_agreed(void)
{
	const struct hop_model_link *l = &comm->coll->tune.link;
	enum { NV = 5 };
	uint64_t mine[NV], *all;
	static const char *const what[NV] = {
		"eager size", "model alpha", "model beta", "model gamma",
		"model eager" };

	mine[0] = comm->cfg.eager_size;
	memcpy(&mine[1], &l->alpha, 8);
	memcpy(&mine[2], &l->beta, 8);
	memcpy(&mine[3], &l->gamma, 8);
	memcpy(&mine[4], &l->eager, 8);
	if (!(all = calloc((size_t)nranks * NV, sizeof(*all))))
		FAIL("out of memory");
	OK(hop_allgather(comm, mine, all, NV, HOP_UINT64));
	for (int r = 1; r < nranks; r++)
		for (int v = 0; v < NV; v++)
			if (all[r * NV + v] != all[v])
				FAIL("rank %d's %s (0x%llx) differs from rank "
				     "0's (0x%llx)", r, what[v],
				     (unsigned long long)all[r * NV + v],
				     (unsigned long long)all[v]);
	free(all);
	cases++;
}

static uint64_t input(int r, size_t i)
{
	return ((uint64_t)(r + 1) << 40) + i * 2654435761u + 1u;
}

static uint64_t sum_at(size_t i)
{
	uint64_t s = 0;

	for (int r = 0; r < nranks; r++)
		s += input(r, i);
	return s;
}

/* AllReduce, Broadcast, AllGather and ReduceScatter of @n elements. */
static void run_size(size_t n, uint64_t *send, uint64_t *recv)
{
	size_t total = n * (size_t)nranks;

	for (size_t i = 0; i < total; i++)
		send[i] = input(rank, i);
	OK(hop_allreduce(comm, send, recv, n, HOP_UINT64, HOP_SUM));
	for (size_t i = 0; i < n; i++)
		if (recv[i] != sum_at(i))
			FAIL("allreduce of %zu: element %zu wrong", n, i);
	OK(hop_broadcast(comm, send, n, HOP_UINT64, 0));
	for (size_t i = 0; i < n; i++)
		if (send[i] != input(0, i))
			FAIL("broadcast of %zu: element %zu wrong", n, i);
	for (size_t i = 0; i < n; i++)
		send[i] = input(rank, i);
	OK(hop_allgather(comm, send, recv, n, HOP_UINT64));
	for (size_t i = 0; i < total; i++)
		if (recv[i] != input((int)(i / n), i % n))
			FAIL("allgather of %zu: element %zu wrong", n, i);
	for (size_t i = 0; i < total; i++)
		send[i] = input(rank, i);
	OK(hop_reducescatter(comm, send, recv, n, HOP_UINT64, HOP_SUM));
	for (size_t i = 0; i < n; i++)
		if (recv[i] != sum_at((size_t)rank * n + i))
			FAIL("reducescatter of %zu: element %zu wrong", n, i);
	cases += 4;
}

int main(void)
{
	const char *r = getenv("HOP_RANK");
	uint64_t *send, *recv;

	rank = r ? atoi(r) : 0;
	pin_apart();
	if (rank == 0)
		make_rank0_different();
	if (hop_comm_init_env(&comm) != HOP_SUCCESS) {
		fprintf(stderr, "agree_test rank %d: FAIL init: %s\n", rank,
			hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	nranks = hop_comm_size(comm);
	check_agreed();
	send = malloc(MAX_COUNT * 3 * (size_t)nranks * sizeof(*send));
	recv = malloc(MAX_COUNT * 3 * (size_t)nranks * sizeof(*recv));
	if (!send || !recv)
		FAIL("out of memory");
	for (size_t n = 1; n <= MAX_COUNT; n *= 4) {
		run_size(n, send, recv);
		run_size(3 * n, send, recv);
	}
	free(send);
	free(recv);
	OK(hop_comm_destroy(comm));
	printf("agree_test: rank %d passed %d cases\n", rank, cases);
	return 0;
}
