/*
 * verbs_prov_test.c - the verbs provider on real verbs (SoftRoCE VMs), one
 * process per rank as started by scripts/softroce-cluster (HOP_RANK,
 * HOP_SIZE, HOP_ADDR, HOP_SECRET), opened directly through the bootstrap
 * (no p2p layer above it).
 *
 *   verbs_prov_test [writes|sends|order|signal|oob|kill|lat|latmem]...
 *   (default: the first five; kill must come last: the last rank exits
 *   without closing; lat and latmem are measurements, not checks)
 *
 * writes: ring, write + immediate of 0 B .. 16 MiB, byte for byte, guards.
 * sends:  300 messages of 0..64 B to every rank (itself too), in order.
 * order:  a send never overtakes the writes posted before it; overlapping
 *         writes: the last one wins.
 * signal: bursts of unsignalled and signalled writes past the send queue
 *         depth: every wanted completion exactly once, none extra.
 * oob:    a write outside the target region fails the writer with
 *         HOP_ERR_OUT_OF_BOUNDS naming rank and QP; the target is intact.
 * kill:   the last rank vanishes; the others see HOP_ERR_PEER_FAILED
 *         naming it within 5 s (rdma_cm DISCONNECTED without a BYE).
 * lat:    8-byte write + immediate ping-pong between ranks 0 and 1 on the
 *         provider alone (median and minimum of the half round trips).
 * latmem: the same with plain writes, each rank spinning on the last byte
 *         of its buffer (ib_write_lat's method): the immediate's share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/core_int.h"
#include "../integration/prov_cases.h"

/* writes up to 16 MiB: a VM has 512 MiB; rxe inlines at least 32 bytes */
static const struct prov_cases_cfg cases_cfg = {
	.write_max = 16u << 20,
	.min_inline = 32,
};

/* ------------------------------------------------------------------ */
/* signal: 3 bursts of 700 writes of 1 KiB (more than a send queue holds)
 * to the right neighbour, signalled in patterns (every 5th, none but the
 * last, all); each burst ends with a write + immediate the target checks. */

#define SIG_N 700
#define SIG_LEN 1024

static int t_signal(struct ph *ph)
{
	size_t len = (size_t)SIG_N * SIG_LEN;
	int right = (ph->rank + 1) % ph->n, left = (ph->rank + ph->n - 1) % ph->n;
	uint8_t *dst = prov_big_alloc(len), *src = prov_big_alloc(len);
	struct hop_prov_mr *dmr, *smr;
	struct rkey *all = calloc((size_t)ph->n, sizeof(*all));
	uint64_t wr = 0, want = 0;

	PH_CHECK(ph, dst && src && all, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, prov_share(ph, dst, len, HOP_PROV_REMOTE_WRITE, &dmr, all) == 0, "share");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, src, len, 0, &smr) == 0, "reg");
	for (int burst = 0; burst < 3; burst++) {
		struct hop_cqe ev;

		ph_fill(src, len, (uint32_t)(ph->rank * 10 + burst));
		for (int i = 0; i < SIG_N; i++) {
			int last = i == SIG_N - 1;
			unsigned fl = burst == 0 ? (i % 5 == 0 ? HOP_WR_SIGNALED : 0) :
				      burst == 1 ? (last ? HOP_WR_SIGNALED : 0) :
						   HOP_WR_SIGNALED;

			if (last)
				fl |= HOP_WR_IMM;
			PH_CHECK(ph, ph_write(ph, right, smr, src + (size_t)i * SIG_LEN,
					      SIG_LEN, all[right].addr + (size_t)i * SIG_LEN,
					      all[right].key, (uint32_t)burst, fl, wr) == 0,
				 "burst %d write %d: %s", burst, i, ph->comm->fail_msg);
			if (fl & HOP_WR_SIGNALED)
				want++;
			wr++;
		}
		PH_CHECK(ph, ph_next_event(ph, left, HOP_CQE_RECV_IMM, &ev) == 0,
			 "burst %d imm: %s", burst, ph->comm->fail_msg);
		PH_CHECK(ph, ev.imm == (uint32_t)burst, "imm %u", ev.imm);
		PH_CHECK(ph, ph_verify(dst, len, (uint32_t)(left * 10 + burst)) < 0,
			 "burst %d data", burst);
		while (ph->nlocal < want)
			PH_CHECK(ph, ph_pump(ph) >= 0, "poll: %s", ph->comm->fail_msg);
		PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
		/* no completion beyond those asked for, even after a while */
		for (int k = 0; k < 2000; k++)
			PH_CHECK(ph, ph_pump(ph) >= 0, "poll");
		PH_CHECK(ph, ph->nlocal == want, "%llu local completions, wanted %llu",
			 (unsigned long long)ph->nlocal, (unsigned long long)want);
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph_close(ph);
	munmap(dst, len);
	munmap(src, len);
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */

static int t_oob(struct ph *ph)
{
	static uint8_t a[8192], s[256];
	struct hop_prov_mr *ma = NULL, *ms = NULL;
	struct rkey *all = calloc((size_t)ph->n, sizeof(*all));
	int code;

	PH_CHECK(ph, all, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	memset(a, 0x11, sizeof(a));
	memset(s, 0x99, sizeof(s));
	PH_CHECK(ph, prov_share(ph, a, sizeof(a), HOP_PROV_REMOTE_WRITE, &ma, all) == 0, "share");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, s, sizeof(s), 0, &ms) == 0, "reg");
	if (ph->rank == 0) {
		PH_CHECK(ph, ph->ops->post_write(ph->prov, 1, ms, s, sizeof(s),
						 all[1].addr + sizeof(a) - 100,
						 all[1].key, 7, HOP_WR_IMM | HOP_WR_SIGNALED,
						 0) == 0, "post");
		code = ph_wait_failure(ph, 10000);
		PH_CHECK(ph, code == HOP_ERR_OUT_OF_BOUNDS, "writer saw %s: %s",
			 hop_err_name(code), ph->comm->fail_msg);
		PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 1") &&
				     strstr(ph->comm->fail_msg, "QP 0x") &&
				     strstr(ph->comm->fail_msg, "remote access error"),
			 "message: %s", ph->comm->fail_msg);
		fprintf(stderr, "[rank 0] writer: %s\n", ph->comm->fail_msg);
	} else if (ph->rank == 1) {
		code = ph_wait_failure(ph, 3000);
		fprintf(stderr, "[rank 1] target: %s%s%s\n", code ? hop_err_name(code) :
			"no failure", code ? ": " : "", code ? ph->comm->fail_msg : "");
		PH_CHECK(ph, ph->evn == 0, "target got an event");
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	for (size_t i = 0; i < sizeof(a); i++)
		PH_CHECK(ph, a[i] == 0x11, "byte %zu of the target changed", i);
	ph_close(ph);
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */

static int t_kill(struct ph *ph)
{
	int victim = ph->n - 1, code;
	char want[32];
	uint64_t t0;

	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	if (ph->rank == victim) {
		fprintf(stderr, "[rank %d] exiting without closing\n", ph->rank);
		fflush(NULL);
		_exit(0);
	}
	t0 = hop_now_ns();
	code = ph_wait_failure(ph, 10000);
	PH_CHECK(ph, code == HOP_ERR_PEER_FAILED, "got %s", hop_err_name(code));
	snprintf(want, sizeof(want), "rank %d", victim);
	PH_CHECK(ph, strstr(ph->comm->fail_msg, want), "message: %s", ph->comm->fail_msg);
	fprintf(stderr, "[rank %d] noticed in %.1f ms: %s\n", ph->rank,
		(double)(hop_now_ns() - t0) / 1e6, ph->comm->fail_msg);
	PH_CHECK(ph, hop_now_ns() - t0 < 5000000000ull, "took too long");
	ph_close(ph);
	return 0;
}

/* ------------------------------------------------------------------ */
/* lat: ping-pong of 8-byte inline writes with immediate between ranks 0
 * and 1, busy polling the provider (no p2p layer): the provider's share of
 * hop's latency, beside ib_write_lat. Prints median and minimum of the
 * half round trips. */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* What lat and latmem share: the buffer the peer writes into, every rank's
 * key for it, and the samples. */
enum { PP_N = 2000, PP_WARM = 100 };
struct pingpong {
	uint8_t ring[4096];
	struct hop_prov_mr *mr;
	struct rkey *all;
	uint64_t *t;
	int peer;
};

static int pp_open(struct ph *ph, struct pingpong *pp)
{
	memset(pp, 0, sizeof(*pp));
	pp->all = calloc((size_t)ph->n, sizeof(*pp->all));
	pp->t = calloc(PP_N, sizeof(*pp->t));
	pp->peer = 1 - ph->rank;
	PH_CHECK(ph, pp->all && pp->t, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, prov_share(ph, pp->ring, sizeof(pp->ring), HOP_PROV_REMOTE_WRITE,
			   &pp->mr, pp->all) == 0, "share");
	return 0;
}

/* Rank 0 prints the median and minimum half round trip as @what, and with
 * @perf the line tests/vm/run.sh puts beside perftest and hop. */
static int pp_close(struct ph *ph, struct pingpong *pp, const char *what,
		    int perf)
{
	uint64_t *t = pp->t;

	if (ph->rank == 0) {
		qsort(t, PP_N, sizeof(*t), cmp_u64);
		printf("LAT provider 8 B %s: median %.2f us, min %.2f us (%d "
		       "samples)\n", what, t[PP_N / 2] / 1e3, t[0] / 1e3, PP_N);
		if (perf)
			printf("PERF provider lat 8 %.2f %.2f\n",
			       t[PP_N / 2] / 1e3, t[0] / 1e3);
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph_close(ph);
	free(pp->all);
	free(pp->t);
	return 0;
}

static int t_lat(struct ph *ph)
{
	struct pingpong pp;
	uint8_t msg[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	if (pp_open(ph, &pp))
		return -1;
	for (int i = -PP_WARM; i < PP_N && ph->rank < 2; i++) {
		uint64_t t0 = hop_now_ns(), dl = hop_deadline_after(ph->wait_ms);
		struct hop_cqe c;
		int got = 0;

		if (ph->rank == 0)
			PH_CHECK(ph, ph_write(ph, pp.peer, NULL, msg, sizeof(msg),
					      pp.all[pp.peer].addr, pp.all[pp.peer].key,
					      (uint32_t)i, HOP_WR_IMM, 0) == 0, "write");
		while (!got) {
			int n = ph->ops->poll(ph->prov, &c, 1);

			PH_CHECK(ph, n >= 0, "poll: %s", ph->comm->fail_msg);
			got = n == 1 && c.op == HOP_CQE_RECV_IMM;
			PH_CHECK(ph, !hop_deadline_passed(dl), "no reply to %d", i);
		}
		PH_CHECK(ph, c.imm == (uint32_t)i && c.len == sizeof(msg), "imm %u", c.imm);
		if (ph->rank == 1)
			PH_CHECK(ph, ph_write(ph, pp.peer, NULL, msg, sizeof(msg),
					      pp.all[pp.peer].addr, pp.all[pp.peer].key,
					      (uint32_t)i, HOP_WR_IMM, 0) == 0, "write");
		if (i >= 0)
			pp.t[i] = (hop_now_ns() - t0) / 2;
	}
	return pp_close(ph, &pp, "write+imm half round trip", 1);
}

/* latmem: the same ping-pong with plain 8-byte RDMA writes, the receiver
 * spinning on the buffer's last byte (ib_write_lat's method): beside lat,
 * the cost of the immediate (receive WQE, CQE, CQ poll, repost). */
static int t_latmem(struct ph *ph)
{
	struct pingpong pp;
	uint8_t msg[8] = { 1, 2, 3, 4, 5, 6, 7, 0 };
	volatile uint8_t *last = &pp.ring[7];

	if (pp_open(ph, &pp))
		return -1;
	for (int i = -PP_WARM; i < PP_N && ph->rank < 2; i++) {
		uint64_t t0 = hop_now_ns(), dl = hop_deadline_after(ph->wait_ms);
		uint8_t want = (uint8_t)((i + PP_WARM) % 255 + 1);  /* never 0 */
		unsigned spins = 0;
		struct hop_cqe c[8];

		msg[7] = want;
		if (ph->rank == 0)
			PH_CHECK(ph, ph_write(ph, pp.peer, NULL, msg, sizeof(msg),
					      pp.all[pp.peer].addr, pp.all[pp.peer].key,
					      0, 0, 0) == 0, "write");
		while (*last != want)
			if ((++spins & 4095) == 0)
				PH_CHECK(ph, !hop_deadline_passed(dl), "no reply to %d", i);
		if (ph->rank == 1)
			PH_CHECK(ph, ph_write(ph, pp.peer, NULL, msg, sizeof(msg),
					      pp.all[pp.peer].addr, pp.all[pp.peer].key,
					      0, 0, 0) == 0, "write");
		/* reap the send completions (every 16th is signalled) */
		PH_CHECK(ph, ph->ops->poll(ph->prov, c, 8) >= 0, "poll: %s",
			 ph->comm->fail_msg);
		if (i >= 0)
			pp.t[i] = (hop_now_ns() - t0) / 2;
	}
	return pp_close(ph, &pp, "plain write, memory polled", 0);
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	static const char *const defaults[] = { "writes", "sends", "order",
						"signal", "oob" };
	const char *const *tests = argc > 1 ? (const char *const *)argv + 1 : defaults;
	int ntests = argc > 1 ? argc - 1 : (int)(sizeof(defaults) / sizeof(*defaults));
	struct ph ph = { .prov_name = "verbs" };
	struct hop_env_job job;
	char err[HOP_MSG_LEN];
	int ret, fails = 0;

	hop_log_init();
	if (hop_env_job_parse(&job, err, sizeof(err))) {
		fprintf(stderr, "verbs_prov_test: %s\n", err);
		return 2;
	}
	ph.rank = job.rank;
	ph.n = job.nranks;
	hop_log_set_rank(ph.rank);
	if (!(ph.comm = calloc(1, sizeof(*ph.comm))))
		return 2;
	ph.comm->magic = HOP_COMM_MAGIC;
	ph.comm->rank = ph.rank;
	ph.comm->nranks = ph.n;
	if (hop_config_load(&ph.comm->cfg, err, sizeof(err))) {
		fprintf(stderr, "[rank %d] config: %s\n", ph.rank, err);
		return 2;
	}
	ph.wait_ms = ph.comm->cfg.timeout_ms;
	if (!(ph.ops = hop_prov_find("verbs"))) {
		fprintf(stderr, "[rank %d] the verbs provider is not built\n", ph.rank);
		return 2;
	}
	ret = hop_bootstrap_open(&job.id, ph.rank, ph.n, &ph.comm->cfg,
				 hop_comm_deadline(ph.comm), &ph.bs, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "[rank %d] bootstrap: %s: %s\n", ph.rank,
			hop_err_name(ret), err);
		return 2;
	}
	ph.comm->bs = ph.bs;
	for (int i = 0; i < ntests; i++) {
		const char *t = tests[i];
		uint64_t t0 = hop_now_ns();

		if (!strcmp(t, "writes"))
			ret = prov_case_writes(&ph, (void *)&cases_cfg);
		else if (!strcmp(t, "sends"))
			ret = prov_case_sends(&ph, NULL);
		else if (!strcmp(t, "order"))
			ret = prov_case_order(&ph, NULL);
		else if (!strcmp(t, "signal"))
			ret = t_signal(&ph);
		else if ((!strcmp(t, "oob") || !strcmp(t, "kill") || !strcmp(t, "lat") ||
			  !strcmp(t, "latmem")) &&
			 ph.n < 2) {
			printf("SKIP verbs %s: needs 2 ranks\n", t);
			continue;
		} else if (!strcmp(t, "oob"))
			ret = t_oob(&ph);
		else if (!strcmp(t, "kill"))
			ret = t_kill(&ph);
		else if (!strcmp(t, "lat"))
			ret = t_lat(&ph);
		else if (!strcmp(t, "latmem"))
			ret = t_latmem(&ph);
		else {
			fprintf(stderr, "unknown test %s\n", t);
			return 2;
		}
		ph_close(&ph);
		printf("%s verbs %s (%d ranks, HOP_IB_CM=%s) %.2f s\n", ret ? "FAIL" : "PASS",
		       t, ph.n, ph.comm->cfg.ib_cm, (double)(hop_now_ns() - t0) / 1e9);
		fflush(stdout);
		if (ret) {
			fails++;
			break;  /* the others would wait for us */
		}
	}
	hop_bootstrap_close(ph.bs);
	free(ph.ev);
	free(ph.done);
	free(ph.comm);
	return fails ? 1 : 0;
}
