/*
 * prov_test.c - the tcp and shm providers across real processes.
 *
 *   prov_test PROVIDER NRANKS [TEST...]
 *
 * Tests (all by default, in this order): select, writes, sends, order, oob,
 * stale, access, impostor (tcp), kill. Each runs in fresh processes joined by the real bootstrap
 * and opens the provider directly (no p2p layer above it).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "prov_test.h"

#define MIB (1u << 20)
#define GUARD 4096
#define GUARD_BYTE 0x5a

static void *big_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}


/* ------------------------------------------------------------------ */
/* writes: every rank writes to its right neighbour, sizes from 0 B to
 * 64 MiB, each with an immediate; the receiver checks every byte and the
 * guards around, then acknowledges with a send. */

static const size_t write_sizes[] = {
	0, 1, 3, 7, 8, 63, 64, 255, 256, 257, 1000, 4095, 4096, 4097,
	65535, 65537, 262143, 1 * MIB + 13, 4 * MIB - 1, 64 * MIB,
};
#define NSIZES (sizeof(write_sizes) / sizeof(write_sizes[0]))

static int t_writes(struct ph *ph, void *arg)
{
	size_t cap = 64 * MIB, dlen = cap + 2 * GUARD;
	int right = (ph->rank + 1) % ph->n, left = (ph->rank + ph->n - 1) % ph->n;
	uint8_t *dst = big_alloc(dlen), *src = big_alloc(cap);
	struct hop_prov_mr *dmr = NULL, *smr = NULL;
	struct rkey mine, *all = calloc((size_t)ph->n, sizeof(*all));
	size_t inl;

	(void)arg;
	PH_CHECK(ph, dst && src && all, "out of memory");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	inl = ph->ops->max_inline(ph->prov);
	PH_CHECK(ph, inl >= 64, "max_inline %zu", inl);
	memset(dst, GUARD_BYTE, dlen);
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, dst, dlen, HOP_PROV_REMOTE_WRITE,
				     &dmr) == 0, "mr_reg dst");
	PH_CHECK(ph, dmr->addr == dst && dmr->len == dlen, "mr fields");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, src, cap, 0, &smr) == 0,
		 "mr_reg src");
	mine.addr = (uint64_t)(uintptr_t)dst;
	mine.key = dmr->key;
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0,
		 "allgather");

	for (size_t i = 0; i < NSIZES; i++) {
		size_t len = write_sizes[i];
		uint32_t seed = (uint32_t)(ph->rank * 1000 + i);
		uint32_t lseed = (uint32_t)(left * 1000 + i);
		struct hop_cqe ev;
		int unreg = len <= inl && (i & 1);
		uint8_t tmp[4096];
		long bad;

		/* odd small sizes from unregistered memory, reused at once */
		if (unreg) {
			ph_fill(tmp, len, seed);
			PH_CHECK(ph, ph_write(ph, right, NULL, tmp, len,
					      all[right].addr + GUARD,
					      all[right].key, 0x1000u + (uint32_t)i,
					      HOP_WR_IMM | HOP_WR_SIGNALED,
					      i) == 0, "write %zu", len);
			memset(tmp, 0, sizeof(tmp));
		} else {
			ph_fill(src, len, seed);
			PH_CHECK(ph, ph_write(ph, right, smr, src, len,
					      all[right].addr + GUARD,
					      all[right].key, 0x1000u + (uint32_t)i,
					      HOP_WR_IMM | HOP_WR_SIGNALED,
					      i) == 0, "write %zu", len);
		}
		PH_CHECK(ph, ph_next_event(ph, left, HOP_CQE_RECV_IMM, &ev) == 0,
			 "imm of write %zu from rank %d", len, left);
		PH_CHECK(ph, ev.imm == 0x1000u + i && ev.len == (uint32_t)len,
			 "imm 0x%x len %u, expected 0x%zx len %zu", ev.imm,
			 ev.len, 0x1000u + i, len);
		bad = ph_verify(dst + GUARD, len, lseed);
		PH_CHECK(ph, bad < 0, "write of %zu bytes: byte %ld wrong", len,
			 bad);
		for (size_t g = 0; g < GUARD; g++)
			PH_CHECK(ph, dst[g] == GUARD_BYTE &&
					     dst[GUARD + cap + g] == GUARD_BYTE,
				 "guard byte %zu overwritten", g);
		/* tell the writer it may go on, then wait for our own ack */
		PH_CHECK(ph, ph_send(ph, left, &i, sizeof(i), 0, 0) == 0, "ack");
		PH_CHECK(ph, ph_wait_local(ph, i) == 0, "local completion %zu",
			 i);
		PH_CHECK(ph, ph_next_event(ph, right, HOP_CQE_RECV, &ev) == 0,
			 "ack from rank %d", right);
		PH_CHECK(ph, ev.len == sizeof(i) && !memcmp(ev.data, &i, sizeof(i)),
			 "ack content");
	}
	PH_CHECK(ph, ph->nlocal == NSIZES, "%llu local completions",
		 (unsigned long long)ph->nlocal);
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	PH_CHECK(ph, ph->ops->mr_dereg(ph->prov, dmr) == 0, "dereg");
	PH_CHECK(ph, ph->ops->mr_dereg(ph->prov, smr) == 0, "dereg");
	ph_close(ph);
	munmap(dst, dlen);
	munmap(src, cap);
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */
/* sends: 300 messages of 0..64 bytes from every rank to every rank
 * (itself included), checked in order per sender. */

#define NSENDS 300

static int t_sends(struct ph *ph, void *arg)
{
	uint32_t *next = calloc((size_t)ph->n, sizeof(*next));
	uint64_t wr = 0, sig = 0;

	(void)arg;
	PH_CHECK(ph, next, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	for (uint32_t k = 0; k < NSENDS; k++) {
		for (int d = 0; d < ph->n; d++) {
			uint8_t m[HOP_PROV_SEND_MAX];
			size_t len = (k * 7u + (uint32_t)d) % (HOP_PROV_SEND_MAX + 1);
			unsigned fl = (k % 3 == 0) ? HOP_WR_SIGNALED : 0;

			ph_fill(m, len, k * 131u + (uint32_t)ph->rank * 7u + (uint32_t)d);
			PH_CHECK(ph, ph_send(ph, d, m, len, fl, wr) == 0,
				 "send %u to %d", k, d);
			memset(m, 0xff, sizeof(m)); /* copied at post */
			if (fl)
				sig++;
			wr++;
		}
		/* drain what has arrived so far, in order */
		for (int s = 0; s < ph->n; s++) {
			for (size_t i = 0; i < ph->evn;) {
				struct hop_cqe *e = &ph->ev[i];
				uint32_t j = next[s];
				size_t len;

				if (e->peer != s) {
					i++;
					continue;
				}
				len = (j * 7u + (uint32_t)ph->rank) %
				      (HOP_PROV_SEND_MAX + 1);
				PH_CHECK(ph, e->op == HOP_CQE_RECV &&
						     e->len == len,
					 "message %u from %d: op %d len %u", j,
					 s, e->op, e->len);
				PH_CHECK(ph, ph_verify(e->data, len,
						       j * 131u + (uint32_t)s * 7u +
							       (uint32_t)ph->rank) < 0,
					 "message %u from %d: content", j, s);
				next[s]++;
				memmove(e, e + 1, (ph->evn - i - 1) * sizeof(*e));
				ph->evn--;
			}
		}
	}
	for (int s = 0; s < ph->n; s++) {
		while (next[s] < NSENDS) {
			struct hop_cqe e;
			uint32_t j = next[s];
			size_t len = (j * 7u + (uint32_t)ph->rank) %
				     (HOP_PROV_SEND_MAX + 1);

			PH_CHECK(ph, ph_next_event(ph, s, 0, &e) == 0,
				 "message %u from %d", j, s);
			PH_CHECK(ph, e.op == HOP_CQE_RECV && e.len == len &&
					     ph_verify(e.data, len,
						       j * 131u + (uint32_t)s * 7u +
							       (uint32_t)ph->rank) < 0,
				 "message %u from %d", j, s);
			next[s]++;
		}
	}
	while (ph->nlocal < sig)
		PH_CHECK(ph, ph_pump(ph) >= 0, "poll");
	PH_CHECK(ph, ph->nlocal == sig, "local completions %llu of %llu",
		 (unsigned long long)ph->nlocal, (unsigned long long)sig);
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph_close(ph);
	free(next);
	return 0;
}

/* ------------------------------------------------------------------ */
/* order: unsignaled writes of mixed sizes (inline, CMA/large, chunked),
 * each followed by a send naming it: the send must not overtake it.
 * Then overlapping writes to one place: the last one must win. */

#define ORD_J 48
#define ORD_STRIDE (512u << 10)
#define OVL_K 30
#define OVL_LEN (700u << 10)

static size_t ord_size(int j)
{
	return (j % 4 == 0) ? 300u * 1024 + (size_t)j : (size_t)(j * 97 % 4000 + 1);
}

static size_t ovl_size(int k)
{
	switch (k % 3) {
	case 0:
		return OVL_LEN - (size_t)k * 1000;
	case 1:
		return (size_t)(k * 131 % 4000 + 1);
	default:
		return 5000 + (size_t)k * 1700;
	}
}

static int t_order(struct ph *ph, void *arg)
{
	size_t dlen = ORD_J * ORD_STRIDE + OVL_LEN;
	size_t slen = ORD_J * ORD_STRIDE + OVL_K * (size_t)OVL_LEN;
	int right = (ph->rank + 1) % ph->n, left = (ph->rank + ph->n - 1) % ph->n;
	uint8_t *dst = big_alloc(dlen), *src = big_alloc(slen);
	struct hop_prov_mr *dmr, *smr;
	struct rkey mine, *all = calloc((size_t)ph->n, sizeof(*all));
	uint8_t *ovl = dst + ORD_J * ORD_STRIDE;
	uint32_t done = 0xffffffffu;

	(void)arg;
	PH_CHECK(ph, dst && src && all, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, dst, dlen, HOP_PROV_REMOTE_WRITE,
				     &dmr) == 0, "reg");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, src, slen, 0, &smr) == 0, "reg");
	mine.addr = (uint64_t)(uintptr_t)dst;
	mine.key = dmr->key;
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");

	for (uint32_t j = 0; j < ORD_J; j++) {
		uint8_t *s = src + j * ORD_STRIDE;

		ph_fill(s, ord_size((int)j), (uint32_t)ph->rank * 100 + j);
		PH_CHECK(ph, ph_write(ph, right, smr, s, ord_size((int)j),
				      all[right].addr + j * ORD_STRIDE,
				      all[right].key, 0, 0, 0) == 0, "w%u", j);
		PH_CHECK(ph, ph_send(ph, right, &j, sizeof(j), 0, 0) == 0,
			 "s%u", j);
	}
	for (int k = 0; k < OVL_K; k++) {
		uint8_t *s = src + ORD_J * ORD_STRIDE + (size_t)k * OVL_LEN;

		ph_fill(s, ovl_size(k), 7000u + (uint32_t)k);
		PH_CHECK(ph, ph_write(ph, right, smr, s, ovl_size(k),
				      all[right].addr + ORD_J * ORD_STRIDE,
				      all[right].key, 0, 0, 0) == 0, "o%d", k);
	}
	PH_CHECK(ph, ph_send(ph, right, &done, sizeof(done), HOP_WR_SIGNALED,
			     1) == 0, "done");

	for (uint32_t j = 0; j <= ORD_J; j++) {
		struct hop_cqe e;
		uint32_t v;

		PH_CHECK(ph, ph_next_event(ph, left, 0, &e) == 0, "event %u", j);
		PH_CHECK(ph, e.op == HOP_CQE_RECV && e.len == 4, "op %d", e.op);
		memcpy(&v, e.data, 4);
		if (j == ORD_J) {
			PH_CHECK(ph, v == done, "expected done, got %u", v);
			break;
		}
		PH_CHECK(ph, v == j, "send %u arrived as #%u", v, j);
		/* the write posted before this send is in place */
		PH_CHECK(ph, ph_verify(dst + j * ORD_STRIDE, ord_size((int)j),
				       (uint32_t)left * 100 + j) < 0,
			 "write %u (%zu B) not in place before its send", j,
			 ord_size((int)j));
	}
	/* overlapping writes: byte x holds the last write that covered it */
	for (size_t x = 0; x < OVL_LEN; x++) {
		int last = -1;

		for (int k = 0; k < OVL_K; k++)
			if (ovl_size(k) > x)
				last = k;
		if (last < 0)
			break;
		PH_CHECK(ph, ovl[x] == ph_byte(7000u + (uint32_t)last, x),
			 "overlap byte %zu: not from write %d (%zu B)", x, last,
			 ovl_size(last));
	}
	PH_CHECK(ph, ph_wait_local(ph, 1) == 0, "done completion");
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph_close(ph);
	munmap(dst, dlen);
	munmap(src, slen);
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	static const char *const all_tests[] = { "select", "writes", "sends",
						 "order", "oob", "stale",
						 "access", "impostor", "kill" };
	const char *prov;
	int n, fails = 0, ntests;
	const char *const *tests;

	if (argc < 3) {
		fprintf(stderr, "usage: %s tcp|shm NRANKS [test...]\n", argv[0]);
		return 2;
	}
	prov = argv[1];
	n = atoi(argv[2]);
	if (n < 1 || n > 64)
		return 2;
	tests = argc > 3 ? (const char *const *)argv + 3 : all_tests;
	ntests = argc > 3 ? argc - 3 : (int)(sizeof(all_tests) / sizeof(*all_tests));
	for (int i = 0; i < ntests; i++) {
		const char *t = tests[i];
		enum bad_kind k;
		int ret;

		if (!strcmp(t, "select"))
			ret = ph_run(prov, n, t_select, NULL, -1, 60);
		else if (!strcmp(t, "writes"))
			ret = ph_run(prov, n, t_writes, NULL, -1, 120);
		else if (!strcmp(t, "sends"))
			ret = ph_run(prov, n, t_sends, NULL, -1, 60);
		else if (!strcmp(t, "order"))
			ret = ph_run(prov, n, t_order, NULL, -1, 60);
		else if (!strcmp(t, "oob") || !strcmp(t, "stale") ||
			 !strcmp(t, "access")) {
			if (n < 2) {
				printf("SKIP %s %s: needs 2 ranks\n", prov, t);
				continue;
			}
			k = !strcmp(t, "oob") ? BAD_BOUNDS
			    : !strcmp(t, "stale") ? BAD_STALE : BAD_ACCESS;
			ret = ph_run(prov, n, t_bad, &k, -1, 60);
		} else if (!strcmp(t, "impostor")) {
			if (n < 2 || strcmp(prov, "tcp")) {
				printf("SKIP %s %s: tcp with 2+ ranks only\n",
				       prov, t);
				continue;
			}
			ret = ph_run(prov, n, t_impostor, NULL, -1, 60);
		} else if (!strcmp(t, "kill")) {
			if (n < 2) {
				printf("SKIP %s %s: needs 2 ranks\n", prov, t);
				continue;
			}
			ret = ph_run(prov, n, t_kill, NULL, n - 1, 60);
		} else {
			fprintf(stderr, "unknown test %s\n", t);
			return 2;
		}
		printf("%s %s %s (%d ranks)\n", ret ? "FAIL" : "PASS", prov, t,
		       n);
		fflush(stdout);
		if (ret)
			fails++;
	}
	return fails ? 1 : 0;
}
