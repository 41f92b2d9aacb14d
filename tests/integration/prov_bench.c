/*
 * prov_bench.c - ping-pong latency and streaming bandwidth of a provider
 * between two processes, below every other hop layer.
 *
 *   prov_bench tcp|shm [max_bytes]
 *
 * Latency: rank 0 writes 8 bytes with an immediate, rank 1 answers the
 * same way; half the round trip is reported. Bandwidth: rank 0 streams
 * writes (a window of 8 in flight, signaled) into one region of rank 1,
 * the last with an immediate; rank 1 acknowledges with a send.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "prov_harness.h"

struct rkey {
	uint64_t addr, key;
};

static size_t max_bytes = 64u << 20;
static uint64_t next_wr;        /* wr_ids are unique for the whole run */

/* Ping-pong for about 0.5 s (at most @iters round trips): rank 0 decides
 * when to stop and says so in the immediate (PP_STOP). */
#define PP_STOP 0xffffffffu
static int pingpong(struct ph *ph, struct hop_prov_mr *smr, uint8_t *src,
		    const struct rkey *peer, size_t len, int iters,
		    double *us)
{
	int other = 1 - ph->rank, n = 0;
	struct hop_cqe e;
	uint64_t t0 = 0, t_end = 0;

	for (int i = -100;; i++) {
		uint32_t imm = (uint32_t)(i + 1000); /* never PP_STOP */

		if (i == 0) {
			t0 = hop_now_ns();
			t_end = t0 + 500000000ull;
		}
		if (ph->rank == 1) {
			PH_CHECK(ph, ph_next_event(ph, other, HOP_CQE_RECV_IMM,
						   &e) == 0, "ping");
			imm = e.imm;
		} else if (i >= 0 && (i >= iters || hop_now_ns() >= t_end)) {
			imm = PP_STOP;
		}
		PH_CHECK(ph, ph_write(ph, other, len <= 64 ? NULL : smr, src, len,
				      peer->addr, peer->key, imm, HOP_WR_IMM,
				      0) == 0, "write");
		if (ph->rank == 0)
			PH_CHECK(ph, ph_next_event(ph, other, HOP_CQE_RECV_IMM,
						   &e) == 0, "pong");
		if (imm == PP_STOP)
			break;
		if (i >= 0)
			n++;
	}
	*us = n ? (double)(hop_now_ns() - t0) / 1e3 / n / 2 : 0;
	return 0;
}

static int stream(struct ph *ph, struct hop_prov_mr *smr, uint8_t *src,
		  const struct rkey *peer, size_t len, int count, double *gbs)
{
	struct hop_cqe e;
	uint64_t t0, first = next_wr, wr = next_wr;
	const int window = 8;

	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	t0 = hop_now_ns();
	if (ph->rank == 0) {
		for (int i = 0; i < count; i++) {
			unsigned fl = HOP_WR_SIGNALED |
				      (i == count - 1 ? HOP_WR_IMM : 0);

			if (wr >= first + (uint64_t)window)
				PH_CHECK(ph, ph_wait_local(ph, wr - window) == 0,
					 "window");
			PH_CHECK(ph, ph_write(ph, 1, smr, src, len, peer->addr,
					      peer->key, 1, fl, wr) == 0,
				 "write");
			wr++;
		}
		PH_CHECK(ph, ph_next_event(ph, 1, HOP_CQE_RECV, &e) == 0, "ack");
		PH_CHECK(ph, ph_wait_local(ph, wr - 1) == 0, "last");
		next_wr = wr;
	} else {
		PH_CHECK(ph, ph_next_event(ph, 0, HOP_CQE_RECV_IMM, &e) == 0,
			 "imm");
		PH_CHECK(ph, ph_send(ph, 0, "k", 1, 0, 0) == 0, "ack");
	}
	*gbs = (double)len * count / (double)(hop_now_ns() - t0);
	return 0;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU cost of one write+imm through this rank's own queue (post, then
 * poll until it lands): the provider's software path, which machine load
 * does not distort the way it distorts a ping-pong. */
static int self_cost(struct ph *ph, const struct rkey *me, uint8_t *src,
		     size_t len, double *ns)
{
	struct hop_cqe e;
	const int iters = 200000;
	uint64_t t0 = 0;

	for (int i = -1000; i < iters; i++) {
		if (i == 0)
			t0 = cpu_ns();
		PH_CHECK(ph, ph_write(ph, ph->rank, NULL, src, len, me->addr,
				      me->key, (uint32_t)i, HOP_WR_IMM, 0) == 0,
			 "self write");
		PH_CHECK(ph, ph_next_event(ph, ph->rank, HOP_CQE_RECV_IMM,
					   &e) == 0, "self imm");
	}
	*ns = (double)(cpu_ns() - t0) / iters;
	return 0;
}

static int bench(struct ph *ph, void *arg)
{
	size_t cap = max_bytes;
	uint8_t *src = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *dst = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct hop_prov_mr *smr, *dmr;
	struct rkey mine, all[2];
	double v;

	(void)arg;
	PH_CHECK(ph, src != MAP_FAILED && dst != MAP_FAILED, "oom");
	memset(src, 1, cap);
	memset(dst, 2, cap);
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, src, cap, 0, &smr) == 0, "reg");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, dst, cap, HOP_PROV_REMOTE_WRITE,
				     &dmr) == 0, "reg");
	mine.addr = (uint64_t)(uintptr_t)dst;
	mine.key = dmr->key;
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");
	if (ph->rank == 0 && strcmp(ph->prov_name, "tcp")) {
		/* tcp writes to itself are a local copy: not its real path */
		PH_CHECK(ph, self_cost(ph, &all[0], src, 8, &v) == 0, "self");
		printf("# %s: CPU per 8-byte write+imm, post + poll: %.0f ns\n",
		       ph->prov_name, v);
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	if (ph->rank == 0)
		printf("# %s: write+imm ping-pong (half round trip)\n"
		       "%10s %10s\n", ph->prov_name, "bytes", "usec");
	for (size_t len = 0; len <= 65536; len = len ? len * 4 : 8) {
		int iters = 200000;

		PH_CHECK(ph, pingpong(ph, smr, src, &all[1 - ph->rank], len,
				      iters, &v) == 0, "pingpong");
		if (ph->rank == 0)
			printf("%10zu %10.2f\n", len, v);
	}
	if (ph->rank == 0)
		printf("# %s: streaming writes, window 8\n%10s %10s\n",
		       ph->prov_name, "bytes", "GB/s");
	for (size_t len = 4096; len <= cap; len *= 4) {
		int count = (int)((1ull << 31) / len);

		if (count < 8)
			count = 8;
		if (count > 20000)
			count = 20000;
		PH_CHECK(ph, stream(ph, smr, src, &all[1 - ph->rank], len, count,
				    &v) == 0, "stream");
		if (ph->rank == 0)
			printf("%10zu %10.2f\n", len, v);
		fflush(stdout);
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph->ops->mr_dereg(ph->prov, smr);
	ph->ops->mr_dereg(ph->prov, dmr);
	ph_close(ph);
	munmap(src, cap);
	munmap(dst, cap);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s tcp|shm [max_bytes]\n", argv[0]);
		return 2;
	}
	if (argc > 2)
		max_bytes = strtoull(argv[2], NULL, 0);
	return ph_run(argv[1], 2, bench, NULL, -1, 600) ? 1 : 0;
}
