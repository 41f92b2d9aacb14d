/*
 * prov_cases.c - the data-path cases every provider must pass (prov_cases.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "prov_cases.h"

#define MIB (1u << 20)
#define GUARD 4096
#define GUARD_BYTE 0x5a

void *prov_big_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int prov_share(struct ph *ph, void *buf, size_t len, unsigned acc,
	       struct hop_prov_mr **mr, struct rkey *all)
{
	struct rkey mine;

	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, buf, len, acc, mr) == 0,
		 "mr_reg %zu: %s", len, ph->comm->last_error);
	PH_CHECK(ph, (*mr)->addr == buf && (*mr)->len == len, "mr fields");
	mine.addr = (uint64_t)(uintptr_t)buf;
	mine.key = (*mr)->key;
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "allgather");
	return 0;
}

/* ------------------------------------------------------------------ */
/* writes; the last size is the configuration's write_max */

static const size_t write_sizes[] = {
	0, 1, 3, 7, 8, 63, 64, 255, 256, 257, 1000, 4095, 4096, 4097, 65535,
	65537, 262143, 1 * MIB + 13, 4 * MIB - 1, 0,
};
#define NSIZES (sizeof(write_sizes) / sizeof(write_sizes[0]))

int prov_case_writes(struct ph *ph, void *arg)
{
	const struct prov_cases_cfg *cfg = arg;
	size_t cap = cfg->write_max, dlen = cap + 2 * GUARD;
	int right = (ph->rank + 1) % ph->n, left = (ph->rank + ph->n - 1) % ph->n;
	uint8_t *dst = prov_big_alloc(dlen), *src = prov_big_alloc(cap);
	struct hop_prov_mr *dmr = NULL, *smr = NULL;
	struct rkey *all = calloc((size_t)ph->n, sizeof(*all));
	size_t inl;

	PH_CHECK(ph, cfg->write_max >= 4 * MIB, "write_max %zu: at least 4 MiB",
		 cfg->write_max);
	PH_CHECK(ph, dst && src && all, "out of memory");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	inl = ph->ops->max_inline(ph->prov);
	PH_CHECK(ph, inl >= cfg->min_inline, "max_inline %zu, expected >= %zu", inl,
		 cfg->min_inline);
	memset(dst, GUARD_BYTE, dlen);
	PH_CHECK(ph, prov_share(ph, dst, dlen, HOP_PROV_REMOTE_WRITE, &dmr, all) == 0, "share");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, src, cap, 0, &smr) == 0, "mr_reg src");
	for (size_t i = 0; i < NSIZES; i++) {
		size_t len = i + 1 < NSIZES ? write_sizes[i] : cap;
		uint32_t seed = (uint32_t)(ph->rank * 1000 + i);
		uint32_t lseed = (uint32_t)(left * 1000 + i);
		uint8_t tmp[4096];
		int unreg = len <= inl && len <= sizeof(tmp) && (i & 1);
		uint8_t *buf = unreg ? tmp : src;
		struct hop_cqe ev;
		long bad;

		ph_fill(buf, len, seed);
		PH_CHECK(ph, ph_write(ph, right, unreg ? NULL : smr, buf, len,
				      all[right].addr + GUARD, all[right].key,
				      0x1000u + (uint32_t)i,
				      HOP_WR_IMM | HOP_WR_SIGNALED, i) == 0,
			 "write %zu: %s", len, ph->comm->fail_msg);
		if (unreg)      /* small, unregistered: reused at once */
			memset(tmp, 0, sizeof(tmp));
		PH_CHECK(ph, ph_next_event(ph, left, HOP_CQE_RECV_IMM, &ev) == 0,
			 "imm of write %zu from rank %d: %s", len, left,
			 ph->comm->fail_msg);
		PH_CHECK(ph, ev.imm == 0x1000u + i && ev.len == (uint32_t)len,
			 "imm 0x%x len %u, expected 0x%zx len %zu", ev.imm, ev.len,
			 0x1000u + i, len);
		bad = ph_verify(dst + GUARD, len, lseed);
		PH_CHECK(ph, bad < 0, "write of %zu bytes: byte %ld wrong", len, bad);
		for (size_t g = 0; g < GUARD; g++)
			PH_CHECK(ph, dst[g] == GUARD_BYTE && dst[GUARD + cap + g] == GUARD_BYTE,
				 "guard byte %zu overwritten", g);
		PH_CHECK(ph, ph_send(ph, left, &i, sizeof(i), 0, 0) == 0, "ack");
		PH_CHECK(ph, ph_wait_local(ph, i) == 0, "local completion %zu: %s", i,
			 ph->comm->fail_msg);
		PH_CHECK(ph, ph_next_event(ph, right, HOP_CQE_RECV, &ev) == 0,
			 "ack from rank %d", right);
		PH_CHECK(ph, ev.len == sizeof(i) && !memcmp(ev.data, &i, sizeof(i)),
			 "ack content");
		/* the next size overwrites the same place */
		memset(dst + GUARD, GUARD_BYTE, len);
		PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
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
/* sends */

#define NSENDS 300

int prov_case_sends(struct ph *ph, void *arg)
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
				 "send %u to %d: %s", k, d, ph->comm->fail_msg);
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
				 "message %u from %d: %s", j, s, ph->comm->fail_msg);
			PH_CHECK(ph, e.op == HOP_CQE_RECV && e.len == len &&
					     ph_verify(e.data, len,
						       j * 131u + (uint32_t)s * 7u +
							       (uint32_t)ph->rank) < 0,
				 "message %u from %d: op %d len %u (want %zu)", j, s,
				 e.op, e.len, len);
			next[s]++;
		}
	}
	while (ph->nlocal < sig)
		PH_CHECK(ph, ph_pump(ph) >= 0, "poll: %s", ph->comm->fail_msg);
	PH_CHECK(ph, ph->nlocal == sig, "local completions %llu of %llu",
		 (unsigned long long)ph->nlocal, (unsigned long long)sig);
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph_close(ph);
	free(next);
	return 0;
}

/* ------------------------------------------------------------------ */
/* order */

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

int prov_case_order(struct ph *ph, void *arg)
{
	size_t dlen = ORD_J * ORD_STRIDE + OVL_LEN;
	size_t slen = ORD_J * ORD_STRIDE + OVL_K * (size_t)OVL_LEN;
	int right = (ph->rank + 1) % ph->n, left = (ph->rank + ph->n - 1) % ph->n;
	uint8_t *dst = prov_big_alloc(dlen), *src = prov_big_alloc(slen);
	struct hop_prov_mr *dmr, *smr;
	struct rkey *all = calloc((size_t)ph->n, sizeof(*all));
	uint8_t *ovl = dst + ORD_J * ORD_STRIDE;
	uint32_t done = 0xffffffffu;

	(void)arg;
	PH_CHECK(ph, dst && src && all, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, prov_share(ph, dst, dlen, HOP_PROV_REMOTE_WRITE, &dmr,
			       all) == 0, "share");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, src, slen, 0, &smr) == 0, "reg");

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

		PH_CHECK(ph, ph_next_event(ph, left, 0, &e) == 0, "event %u: %s", j,
			 ph->comm->fail_msg);
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

