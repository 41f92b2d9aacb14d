/*
 * prov_test.c - the tcp and shm providers across real processes.
 *
 *   prov_test PROVIDER NRANKS [TEST...]
 *
 * Tests (all by default, in this order): select, writes, sends, order, oob,
 * stale, access, impostor (tcp), kill. Each runs in fresh processes joined by the real bootstrap
 * and opens the provider directly (no p2p layer above it).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prov_harness.h"
#include "transport/tcp/tcp.h"

#define MIB (1u << 20)
#define GUARD 4096
#define GUARD_BYTE 0x5a

struct rkey {
	uint64_t addr, key;
};

static void *big_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int is_tcp(struct ph *ph)
{
	return !strcmp(ph->prov_name, "tcp");
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
/* oob / stale / access: rank 0 writes to rank 1 through a bad key or
 * range. shm rejects it on the writer (post returns HOP_ERR_OUT_OF_BOUNDS);
 * tcp on the target, which fails naming rank 0, tells the writer and drops
 * the connection, so the writer's poll fails with HOP_ERR_OUT_OF_BOUNDS
 * naming rank 1. Nothing lands in rank 1's memory. */

enum bad_kind { BAD_BOUNDS, BAD_STALE, BAD_ACCESS };

static int t_bad(struct ph *ph, void *arg)
{
	enum bad_kind kind = *(enum bad_kind *)arg;
	static uint8_t a[8192], b[8192], s[256];
	struct hop_prov_mr *ma = NULL, *mb = NULL;
	struct rkey mine = { 0, 0 }, *all = calloc((size_t)ph->n, sizeof(*all));
	int ret = 0, code;

	PH_CHECK(ph, all, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	memset(a, 0x11, sizeof(a));
	memset(b, 0x22, sizeof(b));
	memset(s, 0x99, sizeof(s));
	if (ph->rank == 1) {
		unsigned acc = kind == BAD_ACCESS ? HOP_PROV_REMOTE_READ
						  : HOP_PROV_REMOTE_WRITE;

		PH_CHECK(ph, ph->ops->mr_reg(ph->prov, a, sizeof(a), acc, &ma) == 0,
			 "reg");
		mine.addr = (uint64_t)(uintptr_t)a;
		mine.key = ma->key;
		if (kind == BAD_STALE) {
			/* retire the key; the slot is reused for b */
			PH_CHECK(ph, ph->ops->mr_dereg(ph->prov, ma) == 0, "dereg");
			ma = NULL;
			PH_CHECK(ph, ph->ops->mr_reg(ph->prov, b, sizeof(b),
						     HOP_PROV_REMOTE_WRITE,
						     &mb) == 0, "reg b");
			PH_CHECK(ph, (uint32_t)mb->key == (uint32_t)mine.key &&
					     mb->key != mine.key,
				 "slot reused with a new generation");
			mine.addr = (uint64_t)(uintptr_t)b;
		}
	}
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");
	if (ph->rank == 0) {
		uint64_t raddr = all[1].addr + (kind == BAD_BOUNDS ? 8192 - 100 : 0);

		ret = ph->ops->post_write(ph->prov, 1, NULL, s, 200, raddr,
					  all[1].key, 7, HOP_WR_IMM, 0);
		if (is_tcp(ph)) {
			PH_CHECK(ph, ret == 0, "tcp post: %d", ret);
			code = ph_wait_failure(ph, 10000);
			PH_CHECK(ph, code == HOP_ERR_OUT_OF_BOUNDS,
				 "writer saw %s", hop_err_name(code));
			PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 1"),
				 "message: %s", ph->comm->fail_msg);
		} else {
			PH_CHECK(ph, ret == HOP_ERR_OUT_OF_BOUNDS,
				 "shm post returned %s", hop_err_name(ret));
			PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 1") &&
					     strstr(ph->comm->fail_msg,
						    kind == BAD_STALE ? "stale"
						    : kind == BAD_ACCESS
							    ? "access"
							    : "outside"),
				 "message: %s", ph->comm->fail_msg);
		}
		fprintf(stderr, "[rank 0] writer: %s\n", ph->comm->fail_msg);
	}
	if (ph->rank == 1 && is_tcp(ph)) {
		code = ph_wait_failure(ph, 10000);
		PH_CHECK(ph, code == HOP_ERR_OUT_OF_BOUNDS, "target saw %s",
			 hop_err_name(code));
		PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 0") &&
				     strstr(ph->comm->fail_msg,
					    kind == BAD_STALE ? "stale"
					    : kind == BAD_ACCESS ? "access"
								 : "outside"),
			 "message: %s", ph->comm->fail_msg);
		fprintf(stderr, "[rank 1] target: %s\n", ph->comm->fail_msg);
	}
	if (ph->rank == 1 && !is_tcp(ph)) {
		/* give a (buggy) delivery the chance to show up */
		for (int i = 0; i < 1000; i++)
			PH_CHECK(ph, ph_pump(ph) >= 0, "target poll");
		PH_CHECK(ph, ph->evn == 0, "target got an event");
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	for (size_t i = 0; i < sizeof(a); i++)
		PH_CHECK(ph, a[i] == 0x11 && b[i] == 0x22,
			 "byte %zu of the target changed", i);
	if (ma)
		ph->ops->mr_dereg(ph->prov, ma);
	if (mb)
		ph->ops->mr_dereg(ph->prov, mb);
	ph_close(ph);
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */
/* kill: the last rank dies by SIGKILL; every survivor's poll fails with
 * HOP_ERR_PEER_FAILED naming it, well within the deadline. */

static int t_kill(struct ph *ph, void *arg)
{
	int victim = ph->n - 1, code;
	char want[32];
	uint64_t t0;

	(void)arg;
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	if (ph->rank == victim) {
		raise(SIGKILL);
		pause();
	}
	t0 = hop_now_ns();
	code = ph_wait_failure(ph, 10000);
	PH_CHECK(ph, code == HOP_ERR_PEER_FAILED, "got %s",
		 hop_err_name(code));
	snprintf(want, sizeof(want), "rank %d", victim);
	PH_CHECK(ph, strstr(ph->comm->fail_msg, want), "message: %s",
		 ph->comm->fail_msg);
	fprintf(stderr, "[rank %d] noticed in %.1f ms: %s\n", ph->rank,
		(double)(hop_now_ns() - t0) / 1e6, ph->comm->fail_msg);
	PH_CHECK(ph, hop_now_ns() - t0 < 5000000000ull, "took too long");
	/* later posts fail at once with the same code */
	PH_CHECK(ph, ph->ops->post_send(ph->prov, 0, "x", 1, 0, 0) ==
			     HOP_ERR_PEER_FAILED, "post after failure");
	ph_close(ph);
	return 0;
}

/* ------------------------------------------------------------------ */
/* select: hop_prov_select() agrees on every rank; explicit choices are
 * honoured; disagreement and unusable choices fail every rank. */

static int sel(struct ph *ph, const char *want, const char **got)
{
	const struct hop_prov_ops *ops = NULL;
	int ret;

	snprintf(ph->comm->cfg.transport, sizeof(ph->comm->cfg.transport),
		 "%s", want);
	ph->comm->last_error[0] = '\0';
	ret = hop_prov_select(ph->comm, ph->bs, &ops);
	*got = ret ? NULL : ops->name;
	return ret;
}

static int t_select(struct ph *ph, void *arg)
{
	const struct hop_prov_ops *v = hop_prov_find("verbs");
	char why[128] = "";
	const char *got, *expect;
	char mine[16] = "", *all;
	int ret;

	(void)arg;
	PH_CHECK(ph, hop_prov_find("tcp") == &hop_prov_tcp &&
			     hop_prov_find("shm") == &hop_prov_shm &&
			     !hop_prov_find("nope") && !hop_prov_find(NULL),
		 "hop_prov_find");
	/* one host here: auto is verbs only if a device works, else shm */
	expect = v && v->usable(ph->comm, why, sizeof(why)) == 1 ? NULL : "shm";
	PH_CHECK(ph, sel(ph, "auto", &got) == 0, "auto: %s",
		 ph->comm->last_error);
	PH_CHECK(ph, !expect || !strcmp(got, expect), "auto chose %s", got);
	all = calloc((size_t)ph->n, sizeof(mine));
	PH_CHECK(ph, all, "oom");
	snprintf(mine, sizeof(mine), "%s", got);
	PH_CHECK(ph, ph_allgather(ph, mine, all, sizeof(mine)) == 0, "ag");
	for (int r = 0; r < ph->n; r++)
		PH_CHECK(ph, !strcmp(all + r * sizeof(mine), got),
			 "rank %d chose %s, I chose %s", r,
			 all + r * sizeof(mine), got);
	free(all);
	PH_CHECK(ph, sel(ph, "tcp", &got) == 0 && !strcmp(got, "tcp"), "tcp");
	PH_CHECK(ph, sel(ph, "shm", &got) == 0 && !strcmp(got, "shm"), "shm");
	if (!v) {
		ret = sel(ph, "verbs", &got);
		PH_CHECK(ph, ret == HOP_ERR_NO_DEVICE &&
				     strstr(ph->comm->last_error, "not built"),
			 "verbs unbuilt: %s: %s", hop_err_name(ret),
			 ph->comm->last_error);
	}
	if (ph->n > 1) {
		ret = sel(ph, ph->rank == ph->n - 1 ? "tcp" : "shm", &got);
		PH_CHECK(ph, ret == HOP_ERR_MISMATCH &&
				     strstr(ph->comm->last_error, "rank") &&
				     strstr(ph->comm->last_error, "tcp"),
			 "mismatch: %s: %s", hop_err_name(ret),
			 ph->comm->last_error);
	}
	ret = sel(ph, "carrier-pigeon", &got);
	PH_CHECK(ph, ret == HOP_ERR_CONFIG, "unknown: %s", hop_err_name(ret));
	return 0;
}

/* ------------------------------------------------------------------ */
/* impostor (tcp): while the ranks connect, a thread of rank 0 finds the
 * listening sockets of its sibling ranks (through /proc, so no other
 * process is touched) and sends them a hello with a wrong secret, garbage,
 * and a connection that closes at once. Each must be dropped while the
 * acceptor keeps waiting for the real ranks. */

struct imp {
	pid_t ppid, self;
	unsigned skip_port;     /* the bootstrap's (host order) */
	volatile int stop;
	int attacked;
};

/* Socket inodes held by process @pid. */
static size_t pid_sockets(pid_t pid, unsigned long *ino, size_t n, size_t max)
{
	char path[64];
	struct dirent *de;
	DIR *fds;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(fds = opendir(path)))
		return n;
	while ((de = readdir(fds)) && n < max) {
		char lnk[600], tgt[64];
		ssize_t l;

		snprintf(lnk, sizeof(lnk), "%s/%s", path, de->d_name);
		l = readlink(lnk, tgt, sizeof(tgt) - 1);
		if (l > 0) {
			tgt[l] = '\0';
			if (sscanf(tgt, "socket:[%lu]", &ino[n]) == 1)
				n++;
		}
	}
	closedir(fds);
	return n;
}

/* Socket inodes of the siblings of @im->self (children of @im->ppid)
 * that @im->self does not hold too (the inherited bootstrap listener). */
static size_t sibling_sockets(struct imp *im, unsigned long *ino, size_t max)
{
	unsigned long mine[256];
	size_t nmine = pid_sockets(im->self, mine, 0, 256), n = 0, k = 0;
	DIR *proc = opendir("/proc");
	struct dirent *de;

	while (proc && (de = readdir(proc))) {
		char path[300], buf[512], *rp;
		pid_t pid = (pid_t)atoi(de->d_name);
		FILE *f;
		size_t got;

		if (pid <= 0 || pid == im->self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if (!(f = fopen(path, "r")))
			continue;
		got = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[got] = '\0';
		rp = strrchr(buf, ')');
		if (!rp || atoi(rp + 4) != im->ppid) /* ") S ppid" */
			continue;
		n = pid_sockets(pid, ino, n, max);
	}
	if (proc)
		closedir(proc);
	for (size_t i = 0; i < n; i++) {
		int shared = 0;

		for (size_t j = 0; j < nmine; j++)
			shared |= ino[i] == mine[j];
		if (!shared)
			ino[k++] = ino[i];
	}
	return k;
}

static void attack(uint32_t ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = port };
	uint8_t hello[TCP_HELLO_LEN], junk[TCP_HELLO_LEN];
	struct tcp_hello h = { .version = TCP_HELLO_VERSION, .rank = 0,
			       .nranks = 0 };

	sa.sin_addr.s_addr = ip;
	memset(h.secret, 0x42, sizeof(h.secret));
	for (int kind = 0; kind < 3; kind++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			if (kind == 0) {
				h.nranks = 1000;
				tcp_hello_pack(&h, hello);
				(void)!write(fd, hello, sizeof(hello));
			} else if (kind == 1) {
				memset(junk, 0xa7, sizeof(junk));
				(void)!write(fd, junk, sizeof(junk));
			}
			usleep(20000);
		}
		close(fd);
	}
}

static void *impostor(void *arg)
{
	struct imp *im = arg;
	uint32_t done_ports[64];
	int ndone = 0;

	while (!im->stop) {
		unsigned long ino[256];
		size_t n = sibling_sockets(im, ino, 256);
		FILE *f = fopen("/proc/net/tcp", "r");
		char line[512];

		while (f && fgets(line, sizeof(line), f)) {
			unsigned ip, port, st;
			unsigned long inode;
			int seen = 0;

			if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*s %*s %*s %*d "
				   "%*d %lu", &ip, &port, &st, &inode) != 4 ||
			    st != 0x0a)
				continue;
			for (size_t i = 0; i < n; i++)
				seen |= ino[i] == inode;
			for (int i = 0; i < ndone; i++)
				seen &= done_ports[i] != port;
			seen &= port != im->skip_port;
			if (!seen || ndone == 64)
				continue;
			done_ports[ndone++] = port;
			attack(ip, htons((uint16_t)port));
			im->attacked++;
		}
		if (f)
			fclose(f);
		usleep(5000);
	}
	return NULL;
}

static int t_impostor(struct ph *ph, void *arg)
{
	struct imp im = { .ppid = getppid(), .self = getpid() };
	struct hop_id_info info;
	pthread_t th;
	int right = (ph->rank + 1) % ph->n, left = (ph->rank + ph->n - 1) % ph->n;
	struct hop_cqe e;
	int r = ph->rank;

	(void)arg;
	PH_CHECK(ph, hop_id_decode(&ph->id, &info) == 0, "id");
	im.skip_port = ntohs(info.addr.sin_port);
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	if (ph->rank == 0) {
		PH_CHECK(ph, pthread_create(&th, NULL, impostor, &im) == 0,
			 "thread");
		/* the others' listeners wait for us meanwhile */
		for (int i = 0; i < 150 && im.attacked < ph->n - 1; i++)
			usleep(10000);
	}
	if (ph_open(ph)) {
		if (ph->rank == 0) {
			im.stop = 1;
			pthread_join(th, NULL);
		}
		return -1;
	}
	if (ph->rank == 0) {
		im.stop = 1;
		pthread_join(th, NULL);
		fprintf(stderr, "[rank 0] impostor attacked %d listener(s)\n",
			im.attacked);
		PH_CHECK(ph, im.attacked >= ph->n - 1,
			 "only %d listeners found", im.attacked);
	}
	/* the real links work */
	PH_CHECK(ph, ph_send(ph, right, &r, sizeof(r), 0, 0) == 0, "send");
	PH_CHECK(ph, ph_next_event(ph, left, HOP_CQE_RECV, &e) == 0, "recv");
	PH_CHECK(ph, !memcmp(e.data, &left, sizeof(left)), "content");
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph_close(ph);
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
