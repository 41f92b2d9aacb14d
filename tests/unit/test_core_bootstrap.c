/*
 * test_core_bootstrap - the bootstrap with real processes: every test forks
 * its ranks. Allgather of rank-specific bytes checked byte for byte (1, 2,
 * 5 ranks; 0 B to 1 MiB), barrier; rejection of a wrong secret, duplicate
 * rank, nranks mismatch, out-of-range rank and garbage while the legitimate
 * ranks still succeed; timeouts naming the missing ranks; a rank dying or
 * disagreeing in a collective; peers started before rank 0.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
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

struct scen;
typedef int (*body_fn)(struct scen *s, int slot, int rank,
		       struct hop_bootstrap *bs);

struct scen {
	hop_unique_id_t id;
	int nranks;
	int timeout_ms;
	int rank[CF_MAX];       /* rank each slot claims */
	int nranks_of[CF_MAX];  /* nranks a slot claims, 0 = s->nranks */
	body_fn body;
	int delay_ms[CF_MAX];   /* before opening */
};

static void record(int slot, int ret, const char *msg)
{
	cf_res[slot].ret = ret;
	snprintf(cf_res[slot].msg, sizeof(cf_res[slot].msg), "%s", msg);
}

static int run_rank(int slot, void *arg)
{
	struct scen *s = arg;
	struct hop_bootstrap *bs;
	struct hop_config cfg;
	char err[HOP_MSG_LEN] = "";
	int ret, n = s->nranks_of[slot] ? s->nranks_of[slot] : s->nranks;

	if (s->delay_ms[slot])
		poll(NULL, 0, s->delay_ms[slot]);
	hop_config_defaults(&cfg);
	cfg.timeout_ms = s->timeout_ms;
	ret = hop_bootstrap_open(&s->id, s->rank[slot], n, &cfg,
				 hop_deadline_after(cfg.timeout_ms), &bs, err,
				 sizeof(err));
	record(slot, ret, err);
	if (ret) {
		if (bs) /* no cmocka asserts in children */
			record(slot, -999, "open failed but returned a bootstrap");
		return 0;
	}
	if (s->body)
		ret = s->body(s, slot, s->rank[slot], bs);
	if (ret && !cf_res[slot].msg[0])
		record(slot, ret, hop_bootstrap_error(bs));
	else
		cf_res[slot].ret = ret;
	hop_bootstrap_close(bs);
	return 0;
}

static uint8_t pat(int rank, int round, size_t i)
{
	return (uint8_t)(rank * 37 + round * 11 + i * 3 + (i >> 9));
}

/* Rounds of allgather of every size, each checked byte for byte. */
static int body_rounds(struct scen *s, int slot, int rank,
		       struct hop_bootstrap *bs)
{
	static const size_t sizes[] = { 0, 1, 13, 4096, 65537, 1 << 20 };
	struct hop_id_info info;
	int ret = 0;

	hop_id_decode(&s->id, &info);
	if (memcmp(hop_bootstrap_secret(bs), info.secret, HOP_SECRET_BYTES)) {
		record(slot, -999, "secret differs from the id's");
		return -999;
	}
	if (hop_bootstrap_local_addr(bs).s_addr != info.addr.sin_addr.s_addr) {
		record(slot, -999, "local address is not the rendezvous one");
		return -999;
	}
	for (int round = 0; round < 6 && !ret; round++) {
		size_t len = sizes[round];
		uint8_t *mine = malloc(len + 1), *all = malloc(len * s->nranks + 1);

		for (size_t i = 0; i < len; i++)
			mine[i] = pat(rank, round, i);
		memset(all, 0xee, len * s->nranks + 1);
		ret = hop_bootstrap_allgather(bs, mine, all, len,
					      hop_deadline_after(s->timeout_ms));
		for (int r = 0; !ret && r < s->nranks; r++)
			for (size_t i = 0; i < len; i++)
				if (all[r * len + i] != pat(r, round, i)) {
					char m[128];

					snprintf(m, sizeof(m), "round %d: byte %zu "
						 "of rank %d wrong", round, i, r);
					record(slot, -999, m);
					ret = -999;
					break;
				}
		if (!ret && all[len * s->nranks] != 0xee) {
			record(slot, -999, "wrote past the end of all");
			ret = -999;
		}
		free(mine);
		free(all);
		if (!ret)
			ret = hop_bootstrap_barrier(bs, hop_deadline_after(s->timeout_ms));
	}
	return ret;
}

static int clear_env(void **state)
{
	(void)state;
	cf_setup();
	cf_local_env();
	hop_log_init();
	return 0;
}

/* A fresh id whose listener is in this process's table (rank 0 children
 * inherit it); the parent closes its copy once the children are forked. */
static void new_id(struct scen *s)
{
	assert_int_equal(hop_get_unique_id(&s->id), 0);
}

static void drop_parent_listener(struct scen *s)
{
	struct hop_id_info info;
	int fd;

	hop_id_decode(&s->id, &info);
	if ((fd = hop_id_take_listener(info.secret)) >= 0)
		close(fd);
}

static void run_allgather(int n)
{
	struct scen s = { .nranks = n, .timeout_ms = 20000, .body = body_rounds };
	pid_t pids[CF_MAX];

	new_id(&s);
	for (int r = 0; r < n; r++) {
		s.rank[r] = r;
		pids[r] = cf_fork(run_rank, r, &s, NULL);
	}
	drop_parent_listener(&s);
	assert_int_equal(cf_wait(pids, n, 60000), 0);
	for (int r = 0; r < n; r++) {
		if (cf_res[r].ret != 0 || !cf_res[r].done)
			fail_msg("%d ranks: rank %d: %d %s", n, r, cf_res[r].ret,
				 cf_res[r].msg);
	}
}

static void test_allgather_1(void **state) { (void)state; run_allgather(1); }
static void test_allgather_2(void **state) { (void)state; run_allgather(2); }
static void test_allgather_5(void **state) { (void)state; run_allgather(5); }

/* The default interface (no HOP_SOCKET_IFNAME) works the same way. */
static void test_allgather_default_if(void **state)
{
	(void)state;
	unsetenv("HOP_SOCKET_IFNAME");
	run_allgather(3);
}

/* An impostor with a wrong secret is told so and named in rank 0's log;
 * the real ranks join afterwards and succeed. */
static void test_wrong_secret(void **state)
{
	struct scen s = { .nranks = 3, .timeout_ms = 20000, .body = body_rounds };
	struct scen bad;
	struct hop_id_info info;
	char log[] = "/tmp/hop-test-bs-XXXXXX";
	pid_t pids[4];
	int fd = mkstemp(log);

	(void)state;
	close(fd);
	new_id(&s);
	for (int r = 0; r < 3; r++)
		s.rank[r] = r;
	pids[0] = cf_fork(run_rank, 0, &s, log);

	bad = s;
	hop_id_decode(&s.id, &info);
	info.secret[7] ^= 0x40;
	hop_id_encode(&info, &bad.id);
	bad.rank[3] = 1;
	pids[3] = cf_fork(run_rank, 3, &bad, NULL);
	pid_t imp = pids[3];

	assert_int_equal(cf_wait(&imp, 1, 20000), 0);
	pids[3] = 0;
	pids[1] = cf_fork(run_rank, 1, &s, NULL);
	pids[2] = cf_fork(run_rank, 2, &s, NULL);
	drop_parent_listener(&s);
	assert_int_equal(cf_wait(pids, 3, 60000), 0);

	assert_int_equal(cf_res[3].ret, HOP_ERR_AUTH);
	if (!strstr(cf_res[3].msg, "rank 0 (127.0.0.1:") ||
	    !strstr(cf_res[3].msg, "rejected us: wrong secret"))
		fail_msg("impostor: %s", cf_res[3].msg);
	for (int r = 0; r < 3; r++)
		if (cf_res[r].ret != 0)
			fail_msg("rank %d: %d %s", r, cf_res[r].ret, cf_res[r].msg);
	const char *l = cf_slurp(log);

	if (!strstr(l, "[hop pid") || !strstr(l, "rejected a connection from "
					       "127.0.0.1:") ||
	    !strstr(l, "claiming rank 1: wrong secret"))
		fail_msg("rank 0 log: %s", l);
	unlink(log);
}

/* Speak the wire protocol by hand: a HELLO claiming @rank/@nranks. */
static int raw_hello(const struct hop_id_info *info, uint32_t rank,
		     uint32_t nranks, const uint8_t *secret, char *reason,
		     size_t rlen)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), code;
	uint8_t msg[HOP_BS_HDR_LEN + HOP_BS_HELLO_LEN] = { 0 }, in[512];
	struct hop_bs_hdr h;
	uint32_t v[2] = { htonl(HOP_BS_VERSION), htonl(nranks) };

	for (int tries = 0; connect(fd, (const struct sockaddr *)&info->addr,
				    sizeof(info->addr)) < 0; tries++) {
		if (tries > 500)
			return -1;
		usleep(10000);
	}
	hop_bs_hdr_pack(msg, HOP_BS_HELLO, 0, rank, HOP_BS_HELLO_LEN);
	memcpy(msg + 16, v, 8);
	memcpy(msg + 32, secret, 16);
	if (write(fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		return -1;
	if (hop_bs_recv(fd, in, 16, hop_deadline_after(10000)) ||
	    hop_bs_hdr_parse(in, 16, 500, &h, NULL, 0) || h.type != HOP_BS_REJECT ||
	    hop_bs_recv(fd, in + 16, h.len, hop_deadline_after(10000)))
		code = -1;
	else
		code = hop_bs_reason_unpack(in + 16, h.len, reason, rlen);
	close(fd);
	return code;
}

static void test_rejections(void **state)
{
	struct scen s = { .nranks = 3, .timeout_ms = 20000, .body = body_rounds };
	struct hop_id_info info;
	char why[256];
	pid_t pids[5];
	int garbage, silent;

	(void)state;
	new_id(&s);
	hop_id_decode(&s.id, &info);
	for (int r = 0; r < 3; r++)
		s.rank[r] = r;
	char log[] = "/tmp/hop-test-bs-XXXXXX";

	close(mkstemp(log));
	hop_log_level_g = HOP_LOG_TRACE; /* rank 0 says who joined */
	pids[0] = cf_fork(run_rank, 0, &s, log);
	hop_log_level_g = HOP_LOG_WARN;
	drop_parent_listener(&s);
	pids[1] = cf_fork(run_rank, 1, &s, NULL);

	/* out of range (the library itself never sends it) */
	assert_int_equal(raw_hello(&info, 7, 3, info.secret, why, sizeof(why)),
			 HOP_ERR_BOOTSTRAP);
	assert_string_equal(why, "rank 7 is out of range 1..2");
	assert_int_equal(raw_hello(&info, 0, 3, info.secret, why, sizeof(why)),
			 HOP_ERR_BOOTSTRAP);
	assert_string_equal(why, "rank 0 is out of range 1..2");
	/* garbage and a silent connection do not disturb the rendezvous */
	garbage = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(garbage, (struct sockaddr *)&info.addr,
				 sizeof(info.addr)), 0);
	assert_int_equal(write(garbage, "GET / HTTP/1.0\r\n\r\n", 18), 18);
	silent = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(silent, (struct sockaddr *)&info.addr,
				 sizeof(info.addr)), 0);
	/* once rank 1 is in, a second rank 1 is a duplicate */
	for (uint64_t end = cf_now_ms() + 20000;
	     !strstr(cf_slurp(log), "rank 1 joined from"); usleep(5000))
		if (cf_now_ms() > end)
			fail_msg("rank 1 never joined: %s", cf_slurp(log));
	s.rank[3] = 1;
	pids[3] = cf_fork(run_rank, 3, &s, "/dev/null");
	assert_int_equal(cf_wait(&pids[3], 1, 20000), 0);
	assert_int_equal(cf_res[3].ret, HOP_ERR_BOOTSTRAP);
	if (!strstr(cf_res[3].msg, "rejected us: duplicate rank: rank 1 already "
			       "joined from 127.0.0.1:"))
		fail_msg("duplicate: %s", cf_res[3].msg);
	/* a rank that was told another size */
	s.rank[4] = 2;
	s.nranks_of[4] = 4;
	pids[4] = cf_fork(run_rank, 4, &s, NULL);
	assert_int_equal(cf_wait(&pids[4], 1, 20000), 0);
	assert_int_equal(cf_res[4].ret, HOP_ERR_BOOTSTRAP);
	if (!strstr(cf_res[4].msg, "nranks differs: this rank was given 4 ranks "
			       "but rank 0 has 3"))
		fail_msg("nranks: %s", cf_res[4].msg);

	pids[2] = cf_fork(run_rank, 2, &s, NULL);
	assert_int_equal(cf_wait(pids, 3, 60000), 0);
	for (int r = 0; r < 3; r++)
		if (cf_res[r].ret != 0)
			fail_msg("rank %d: %d %s", r, cf_res[r].ret, cf_res[r].msg);
	close(garbage);
	close(silent);
	const char *l = cf_slurp(log);

	if (!strstr(l, "dropped a connection from 127.0.0.1:") ||
	    !strstr(l, "claiming rank 7: rank 7 is out of range"))
		fail_msg("rank 0 log: %s", l);
	unlink(log);
}

static void run_missing(int n, const int *present, int npresent,
			const char *want)
{
	struct scen s = { .nranks = n, .timeout_ms = 1000 };
	pid_t pids[CF_MAX];
	uint64_t t0 = cf_now_ms();

	new_id(&s);
	for (int i = 0; i < npresent; i++) {
		s.rank[i] = present[i];
		pids[i] = cf_fork(run_rank, i, &s, "/dev/null");
	}
	drop_parent_listener(&s);
	assert_int_equal(cf_wait(pids, npresent, 20000), 0);
	/* rank 0 gives up at its deadline; the others hear why at once */
	assert_true(cf_now_ms() - t0 < 1000 + HOP_BS_GRACE_MS + 5000);
	for (int i = 0; i < npresent; i++) {
		if (cf_res[i].ret != HOP_ERR_TIMEOUT || !strstr(cf_res[i].msg, want))
			fail_msg("rank %d: %d '%s' (want '%s')", present[i],
				 cf_res[i].ret, cf_res[i].msg, want);
		if (present[i] && !strstr(cf_res[i].msg, "aborted by rank 0"))
			fail_msg("rank %d: %s", present[i], cf_res[i].msg);
	}
}

static void test_missing_rank(void **state)
{
	static const int p1[] = { 0, 1, 3 }, p2[] = { 0, 1, 3, 4 };

	(void)state;
	run_missing(4, p1, 3, "rank 2 never arrived within 1 s");
	run_missing(6, p2, 4, "ranks 2,5 never arrived within 1 s");
}

static void test_no_rank0(void **state)
{
	struct scen s = { .nranks = 2, .timeout_ms = 300, .rank = { 1 } };
	struct hop_id_info info;
	pid_t pid;
	char want[64], where[32];

	(void)state;
	new_id(&s);
	drop_parent_listener(&s); /* nobody listens */
	hop_id_decode(&s.id, &info);
	pid = cf_fork(run_rank, 0, &s, NULL);
	assert_int_equal(cf_wait(&pid, 1, 10000), 0);
	hop_sockaddr_str(&info.addr, where, sizeof(where));
	snprintf(want, sizeof(want), "at %s within 0.3 s", where);
	assert_int_equal(cf_res[0].ret, HOP_ERR_TIMEOUT);
	if (!strstr(cf_res[0].msg, want) ||
	    !strstr(cf_res[0].msg, "Connection refused"))
		fail_msg("%s", cf_res[0].msg);
}

/* HOP_ADDR mode: rank 0 binds the id's address itself, and peers that
 * start first retry while the connection is refused. */
static void test_peers_first(void **state)
{
	struct scen s = { .nranks = 3, .timeout_ms = 20000, .body = body_rounds,
			  .rank = { 0, 1, 2 }, .delay_ms = { 400, 0, 0 } };
	struct hop_id_info info = { .version = HOP_ID_VERSION };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sa);
	pid_t pids[3];
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	(void)state;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &slen), 0);
	close(fd); /* a free port, most likely still free in a moment */
	info.addr = sa;
	hop_random_bytes(info.secret, sizeof(info.secret));
	hop_id_encode(&info, &s.id);
	for (int r = 2; r >= 0; r--)
		pids[r] = cf_fork(run_rank, r, &s, NULL);
	assert_int_equal(cf_wait(pids, 3, 60000), 0);
	for (int r = 0; r < 3; r++)
		if (cf_res[r].ret != 0)
			fail_msg("rank %d: %d %s", r, cf_res[r].ret, cf_res[r].msg);
}

static int body_len_mismatch(struct scen *s, int slot, int rank,
			     struct hop_bootstrap *bs)
{
	uint8_t mine[16] = { 0 }, all[64];

	(void)slot;
	return hop_bootstrap_allgather(bs, mine, all, rank == 2 ? 8 : 16,
				       hop_deadline_after(s->timeout_ms));
}

static int body_op_mismatch(struct scen *s, int slot, int rank,
			    struct hop_bootstrap *bs)
{
	uint8_t mine[4] = { 0 }, all[16];
	uint64_t d = hop_deadline_after(s->timeout_ms);

	(void)slot;
	return rank == 1 ? hop_bootstrap_barrier(bs, d)
			 : hop_bootstrap_allgather(bs, mine, all, 4, d);
}

static int body_die(struct scen *s, int slot, int rank,
		    struct hop_bootstrap *bs)
{
	uint8_t mine[4] = { 0 }, all[16];

	(void)slot;
	if (rank == 3)
		return 0; /* leaves: run_rank closes the bootstrap */
	return hop_bootstrap_allgather(bs, mine, all, 4,
				       hop_deadline_after(s->timeout_ms));
}

static int body_late(struct scen *s, int slot, int rank,
		     struct hop_bootstrap *bs)
{
	uint8_t mine[4] = { 0 }, all[16];

	(void)slot;
	if (rank == 2)
		poll(NULL, 0, s->timeout_ms + 500);
	return hop_bootstrap_allgather(bs, mine, all, 4,
				       hop_deadline_after(s->timeout_ms));
}

static void run_failing(int n, body_fn body, int timeout_ms, int code,
			const char *want, int skip)
{
	struct scen s = { .nranks = n, .timeout_ms = timeout_ms, .body = body };
	pid_t pids[CF_MAX];

	new_id(&s);
	for (int r = 0; r < n; r++) {
		s.rank[r] = r;
		pids[r] = cf_fork(run_rank, r, &s, "/dev/null");
	}
	drop_parent_listener(&s);
	assert_int_equal(cf_wait(pids, n, 30000), 0);
	for (int r = 0; r < n; r++) {
		if (r == skip)
			continue;
		if (cf_res[r].ret != code || !strstr(cf_res[r].msg, want))
			fail_msg("rank %d: %s '%s' (want %s '%s')", r,
				 hop_err_name(cf_res[r].ret), cf_res[r].msg,
				 hop_err_name(code), want);
	}
}

static void test_collective_failures(void **state)
{
	(void)state;
	run_failing(3, body_len_mismatch, 20000, HOP_ERR_MISMATCH,
		    "bootstrap allgather: rank 2 contributed 8 bytes, rank 0 16",
		    -1);
	run_failing(3, body_op_mismatch, 20000, HOP_ERR_MISMATCH,
		    "rank 1 entered bootstrap barrier while rank 0 is in "
		    "bootstrap allgather", -1);
	run_failing(4, body_die, 20000, HOP_ERR_BOOTSTRAP,
		    "bootstrap allgather: rank 3 (127.0.0.1:", 3);
	run_failing(3, body_late, 1000, HOP_ERR_TIMEOUT,
		    "bootstrap allgather: rank 2 did not take part within 1 s", -1);
}

static void test_invalid_args(void **state)
{
	struct hop_bootstrap *bs = (void *)1;
	struct hop_config cfg;
	hop_unique_id_t id;
	char err[256];

	(void)state;
	hop_config_defaults(&cfg);
	assert_int_equal(hop_get_unique_id(&id), 0);
	assert_int_equal(hop_bootstrap_open(&id, 0, 0, &cfg, 0, &bs, err,
					    sizeof(err)), HOP_ERR_INVALID_ARG);
	assert_null(bs);
	assert_non_null(strstr(err, "rank 0 of 0 ranks"));
	assert_int_equal(hop_bootstrap_open(&id, 3, 3, &cfg, 0, &bs, err,
					    sizeof(err)), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_bootstrap_open(&id, 0, 65537, &cfg, 0, &bs, err,
					    sizeof(err)), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_bootstrap_open(&id, 0, 1, &cfg, 0, NULL, err,
					    sizeof(err)), HOP_ERR_INVALID_ARG);
	id.internal[50] ^= 1;
	assert_int_equal(hop_bootstrap_open(&id, 0, 2, &cfg, 0, &bs, err,
					    sizeof(err)), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "checksum"));
	id.internal[50] ^= 1;
	/* one rank: no peers, collectives are local copies */
	assert_int_equal(hop_bootstrap_open(&id, 0, 1, &cfg,
					    hop_deadline_after(1000), &bs, err,
					    sizeof(err)), 0);
	uint8_t all[8] = { 0 };

	assert_int_equal(hop_bootstrap_allgather(bs, "abcdefgh", all, 8,
						 hop_deadline_after(1000)), 0);
	assert_memory_equal(all, "abcdefgh", 8);
	assert_int_equal(hop_bootstrap_allgather(bs, NULL, all, 8, 0),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(hop_bootstrap_error(bs), "mine is NULL"));
	assert_int_equal(hop_bootstrap_allgather(bs, all, all, HOP_BS_MAX_MSG + 1u,
						 0), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_bootstrap_barrier(bs, hop_deadline_after(1000)), 0);
	assert_int_equal(hop_bootstrap_allgather(NULL, all, all, 1, 0),
			 HOP_ERR_INVALID_ARG);
	hop_bootstrap_close(bs);
	hop_bootstrap_close(NULL);
	assert_string_equal(hop_bootstrap_error(NULL), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_allgather_1, clear_env),
		cmocka_unit_test_setup(test_allgather_2, clear_env),
		cmocka_unit_test_setup(test_allgather_5, clear_env),
		cmocka_unit_test_setup(test_allgather_default_if, clear_env),
		cmocka_unit_test_setup(test_wrong_secret, clear_env),
		cmocka_unit_test_setup(test_rejections, clear_env),
		cmocka_unit_test_setup(test_missing_rank, clear_env),
		cmocka_unit_test_setup(test_no_rank0, clear_env),
		cmocka_unit_test_setup(test_peers_first, clear_env),
		cmocka_unit_test_setup(test_collective_failures, clear_env),
		cmocka_unit_test_setup(test_invalid_args, clear_env),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
