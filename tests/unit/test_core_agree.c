/*
 * test_core_agree - the per-process "auto" inputs agreed at init
 * (comm_agree.c): the fold (largest oversubscription, exactly; smallest
 * auto eager size), and the exchange over a real bootstrap between forked
 * ranks whose memlock limits differ on an RDMA provider (verbs' caps),
 * the one whose auto eager size depends on the limit (no device needed:
 * the agreement runs before the provider opens).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <cmocka.h>

#include "core/comm_agree.h"
#include "core/core.h"
#include "core/core_int.h"
#include "core_fork.h"

/* What the auto eager size reads of verbs: RDMA, 64 KiB at most. */
static const struct hop_prov_caps rdma_caps = {
	.size = sizeof(struct hop_prov_caps),
	.flags = HOP_PROV_CAP_RDMA | HOP_PROV_CAP_ATOMIC8,
	.eager_size = 65536,
};
static const struct hop_prov_ops rdma_ops = {
	.size = sizeof(struct hop_prov_ops),
	.name = "rdma",
	.caps = &rdma_caps,
};

static hop_unique_id_t g_id;

static struct hop_agree_rec rec(uint32_t ranks, uint32_t cores,
				uint64_t eager, int is_auto)
{
	struct hop_agree_rec r;

	memset(&r, 0, sizeof(r));
	r.local_ranks = ranks;
	r.usable_cores = cores;
	r.eager = eager;
	r.eager_auto = (uint8_t)is_auto;
	return r;
}

static void test_fold_largest_oversubscription(void **state)
{
	struct hop_agree_rec all[4], out;

	(void)state;
	/* 4/3 = 1.33 < 3/2 = 1.5 > 5/4; 2/2 is not oversubscribed */
	all[0] = rec(4, 3, 8192, 1);
	all[1] = rec(3, 2, 8192, 1);
	all[2] = rec(2, 2, 8192, 1);
	all[3] = rec(5, 4, 8192, 1);
	hop_agree_fold(all, 4, &out);
	assert_int_equal(out.local_ranks, 3);
	assert_int_equal(out.usable_cores, 2);
	/* the same fold from any order of the records */
	struct hop_agree_rec rev[4] = { all[3], all[2], all[1], all[0] }, o2;
	hop_agree_fold(rev, 4, &o2);
	assert_memory_equal(&out, &o2, sizeof(out));
	/* nobody oversubscribed: 1 on 1 */
	all[0] = rec(2, 8, 8192, 1);
	hop_agree_fold(all, 1, &out);
	assert_true(out.local_ranks <= out.usable_cores);
}

static void test_fold_smallest_auto_eager(void **state)
{
	struct hop_agree_rec all[3], out;

	(void)state;
	all[0] = rec(1, 1, 65536, 1);
	all[1] = rec(1, 1, 16384, 1);
	all[2] = rec(1, 1, 4096, 0);    /* set by hand: not folded */
	hop_agree_fold(all, 3, &out);
	assert_int_equal(out.eager_auto, 1);
	assert_int_equal(out.eager, 16384);
	all[0].eager_auto = all[1].eager_auto = 0;
	hop_agree_fold(all, 3, &out);
	assert_int_equal(out.eager_auto, 0);
}

/* Rank @slot's memlock limit (soft, lowered only: allowed to any user):
 * each rank alone would choose another auto eager size on verbs with
 * 3 ranks x 1 slot, (3 + 2) slots in a quarter of the limit (config.c):
 * 64, 16 and 32 KiB. */
static const rlim_t memlock_of[3] = { 2u << 20, 384u << 10, 1u << 20 };
#define AGREED_EAGER 16384

static void drop_ipc_lock(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct data[2];

	if (!syscall(SYS_capget, &hdr, data)) {
		data[CAP_IPC_LOCK / 32].effective &=
			~(1u << (CAP_IPC_LOCK % 32));
		syscall(SYS_capset, &hdr, data);
	}
}

static struct hop_agreed_link alink(double alpha, double beta, double mc)
{
	struct hop_agreed_link l = { alpha, beta, 1e-10, 1.5, 16384, mc };

	return l;
}

/* Ranks with different links (different HOP_PROFILE files): every rank
 * folds the slowest of each class, whatever the order, and a rank that
 * gave none does not count. */
static void test_fold_links(void **state)
{
	struct hop_agree_rec all[3], rev[3], out, out2;

	(void)state;
	all[0] = rec(2, 4, 0, 0);
	all[1] = rec(2, 4, 0, 0);
	all[2] = rec(2, 4, 0, 0);
	all[0].has_links = all[1].has_links = 1;
	all[0].link[0] = alink(1e-6, 10e9, 0);
	all[0].link[1] = alink(20e-6, 1e9, 1 << 20);
	all[1].link[0] = alink(2e-6, 20e9, 4096);
	all[1].link[1] = alink(10e-6, 0.125e9, 0);
	all[1].link[1].duplex = 2;
	all[2].link[1] = alink(1, 1, 1); /* has_links 0: ignored */
	hop_agree_fold(all, 3, &out);
	assert_int_equal(out.has_links, 1);
	assert_true(out.link[0].alpha == 2e-6 && out.link[0].beta == 10e9);
	assert_true(out.link[0].max_chunk == 4096);
	assert_true(out.link[1].alpha == 20e-6 && out.link[1].beta == 0.125e9);
	assert_true(out.link[1].duplex == 2);
	assert_true(out.link[1].max_chunk == 1 << 20);
	for (int r = 0; r < 3; r++)
		rev[r] = all[2 - r];
	hop_agree_fold(rev, 3, &out2);
	assert_memory_equal(&out.link, &out2.link, sizeof(out.link));
	/* nobody gave links: none agreed */
	all[0].has_links = all[1].has_links = 0;
	hop_agree_fold(all, 3, &out);
	assert_int_equal(out.has_links, 0);
}

static int agree_rank(int slot, void *arg)
{
	struct hop_comm *comm = calloc(1, sizeof(*comm));
	struct hop_agree_rec mine;
	struct rlimit rl;
	char err[256];
	int ret;

	(void)arg;
	if (!comm || getrlimit(RLIMIT_MEMLOCK, &rl))
		return 1;
	rl.rlim_cur = memlock_of[slot];
	if (setrlimit(RLIMIT_MEMLOCK, &rl)) {
		snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "cannot "
			 "lower RLIMIT_MEMLOCK to %llu B (hard limit %llu B)",
			 (unsigned long long)rl.rlim_cur,
			 (unsigned long long)rl.rlim_max);
		cf_res[slot].ret = HOP_ERR_SYSTEM;
		free(comm);
		return 0;
	}
	drop_ipc_lock();
	comm->rank = slot;
	comm->nranks = 3;
	hop_config_defaults(&comm->cfg);
	comm->cfg.eager_size = 0;
	comm->cfg.eager_slots = 1;
	comm->prov_ops = &rdma_ops;
	comm->local_ranks = 3;
	comm->usable_cores = slot == 1 ? 1 : 2;
	/* rank 2 has the slowest inter link, rank 0 the slowest intra */
	comm->model_links = 1;
	comm->model_link[0] = alink(slot == 0 ? 3e-6 : 1e-6, 10e9, 0);
	comm->model_link[1] = alink(10e-6, slot == 2 ? 0.125e9 : 1e9, 0);
	hop_agree_local(comm, &mine);
	ret = hop_bootstrap_open(&g_id, slot, 3, &comm->cfg,
				 hop_deadline_after(30000), &comm->bs, err,
				 sizeof(err));
	if (!ret)
		ret = hop_comm_agree(comm, hop_deadline_after(30000));
	cf_res[slot].ret = ret;
	if (!ret && !(comm->model_link[0].alpha == 3e-6 &&
		      comm->model_link[1].beta == 0.125e9))
		ret = HOP_ERR_MISMATCH;
	snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "%llu %zu %d %d %.400s",
		 (unsigned long long)mine.eager, comm->cfg.eager_size,
		 comm->model_ranks, comm->model_cores,
		 ret ? comm->last_error : "");
	hop_bootstrap_close(comm->bs);
	free(comm);
	return 0;
}

static void test_exchange_agrees(void **state)
{
	static const unsigned long long alone[3] = { 65536, 16384, 32768 };
	struct hop_id_info info;
	pid_t pids[3];
	int fd;

	(void)state;
	cf_setup();
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_DEBUG", "none", 1);
	unsetenv("HOP_BOOTSTRAP_FD");
	assert_int_equal(hop_get_unique_id(&g_id), 0);
	for (int r = 0; r < 3; r++)
		pids[r] = cf_fork(agree_rank, r, NULL, NULL);
	hop_id_decode(&g_id, &info);
	if ((fd = hop_id_take_listener(info.secret)) >= 0)
		close(fd);
	assert_int_equal(cf_wait(pids, 3, 60000), 0);
	for (int r = 0; r < 3; r++) {
		unsigned long long own = 0;
		size_t eager = 0;
		int mr = 0, mc = 0;

		if (cf_res[r].ret ||
		    sscanf(cf_res[r].msg, "%llu %zu %d %d", &own, &eager, &mr,
			   &mc) != 4)
			fail_msg("rank %d: %s: %s", r,
				 hop_err_name(cf_res[r].ret), cf_res[r].msg);
		if (own != alone[r] || eager != AGREED_EAGER || mr != 3 ||
		    mc != 1)
			fail_msg("rank %d: alone %llu B (want %llu), agreed "
				 "%zu B (want %d), model %d ranks on %d cores "
				 "(want 3 on 1)", r, own, alone[r], eager,
				 AGREED_EAGER, mr, mc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fold_largest_oversubscription),
		cmocka_unit_test(test_fold_smallest_auto_eager),
		cmocka_unit_test(test_fold_links),
		cmocka_unit_test(test_exchange_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
