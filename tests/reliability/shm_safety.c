/*
 * shm_safety.c - the shm provider against misuse and hostile peers
 * (writes after deregistration, a tampered region table, a dead peer,
 * wrapping ranges), two forked ranks driving the provider
 * directly through the provider harness:
 *
 *   shm_safety TEST...
 *
 *   dereg-queued    a CMA write queued behind inline data is refused once
 *                   the target deregistered its region (item 4)
 *   dereg-inflight  deregistration waits for a CMA write already copying
 *                   into the region: nothing lands after it returns (item 4)
 *   table-tamper    a peer storing into the target's published region table
 *                   through its mapping faults, and a put into pages that
 *                   were never registered is refused (item 7)
 *   table-forge     a peer that makes its mapping writable and widens a
 *                   region anyway: the target refuses the write against
 *                   its private table, nothing lands (item 7)
 *   dead-send       a 4 KiB write to a peer that exited without closing
 *                   fails, at the latest on the next post, naming it (item 8)
 *   wrap-register   a region whose range wraps the address space is
 *                   refused (item 10)
 *
 * Rank 1 is the target, rank 0 the writer. Every check is bit for bit.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../integration/prov_harness.h"
#include "transport/shm/shm.h"

#define BIG (64u << 20)

struct shared {
	uint64_t a_addr, a_key;         /* a small registered region */
	uint64_t b_addr, b_key;         /* a large registered region */
	uint64_t s_addr;                /* never registered */
	int32_t pid;
	int32_t rsvd;
};

static void *big_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int all_bytes(const uint8_t *p, size_t len, uint8_t v, size_t *bad)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v) {
			*bad = i;
			return 0;
		}
	return 1;
}

/* Pump the target's provider for a while so any (wrong) delivery shows. */
static int drain(struct ph *ph, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		int r = ph_pump(ph);

		if (r < 0)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* dereg-queued: the writer posts 64 B inline to region A, then 1 MiB to
 * region B; the large write goes by CMA, which waits until the target has
 * applied the inline bytes, so it stays queued. The target deregisters B,
 * then applies A's bytes. When the writer's poll pushes the queued write,
 * B's key is stale: the write must be refused, not copied. */

static int t_dereg_queued(struct ph *ph, void *arg)
{
	const size_t blen = 1u << 20;
	static uint8_t a[4096], small[64];
	struct hop_prov_mr *ma = NULL, *mb = NULL, *ms = NULL;
	struct shared mine = { 0 }, all[2];
	uint8_t *b = big_alloc(blen);
	size_t bad = 0;
	int code;

	(void)arg;
	PH_CHECK(ph, b, "out of memory");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	if (ph->rank == 1) {
		PH_CHECK(ph, ph->ops->mr_reg(ph->prov, a, sizeof(a),
					     HOP_PROV_REMOTE_WRITE, &ma) == 0,
			 "reg a");
		PH_CHECK(ph, ph->ops->mr_reg(ph->prov, b, blen,
					     HOP_PROV_REMOTE_WRITE, &mb) == 0,
			 "reg b");
		mine = (struct shared){ .a_addr = (uintptr_t)a,
					.a_key = ma->key,
					.b_addr = (uintptr_t)b,
					.b_key = mb->key };
	} else {
		memset(b, 0x5a, blen);
		memset(small, 0x33, sizeof(small));
		PH_CHECK(ph, ph->ops->mr_reg(ph->prov, b, blen, 0, &ms) == 0,
			 "reg source");
	}
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");
	if (ph->rank == 0) {
		struct shm_peer *p = &ph->prov->peers[1];

		/* linked now if pairs link on first use, as a post would */
		PH_CHECK(ph, hop_prov_connect(ph->ops, ph->prov, 1) == 0, "link");
		PH_CHECK(ph, p->cma, "CMA is off: nothing to test");
		PH_CHECK(ph, ph->ops->post_write(ph->prov, 1, NULL, small,
						 sizeof(small), all[1].a_addr,
						 all[1].a_key, 0, 0, 0) == 0,
			 "inline post");
		PH_CHECK(ph, ph->ops->post_write(ph->prov, 1, ms, b, blen,
						 all[1].b_addr, all[1].b_key,
						 9, HOP_WR_IMM |
						 HOP_WR_SIGNALED, 1) == 0,
			 "CMA post");
		PH_CHECK(ph, p->sq_count == 1, "the CMA write is not queued "
			 "(%u queued)", p->sq_count);
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier posted");
	if (ph->rank == 1) {
		PH_CHECK(ph, ph->ops->mr_dereg(ph->prov, mb) == 0, "dereg b");
		memset(b, 0xee, blen);
		/* apply A's bytes: the queued write may move now */
		PH_CHECK(ph, drain(ph, 200) == 0, "target poll: %s",
			 ph->comm->fail_msg);
		PH_CHECK(ph, a[0] == 0x33, "inline bytes not applied");
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier deregistered");
	if (ph->rank == 0) {
		code = ph_wait_local(ph, 1);
		PH_CHECK(ph, code == HOP_ERR_OUT_OF_BOUNDS,
			 "queued write after deregistration: %s",
			 code ? hop_err_name(code) : "completed");
		PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 1") &&
				     strstr(ph->comm->fail_msg, "stale"),
			 "message: %s", ph->comm->fail_msg);
		fprintf(stderr, "[rank 0] %s\n", ph->comm->fail_msg);
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier written");
	if (ph->rank == 1) {
		PH_CHECK(ph, drain(ph, 200) == 0, "target poll: %s",
			 ph->comm->fail_msg);
		PH_CHECK(ph, ph->evn == 0, "the target got an immediate");
		PH_CHECK(ph, all_bytes(b, blen, 0xee, &bad),
			 "byte %zu of the deregistered region changed", bad);
		ph->ops->mr_dereg(ph->prov, ma);
	} else {
		ph->ops->mr_dereg(ph->prov, ms);
	}
	ph_close(ph);
	munmap(b, blen);
	return 0;
}

/* ------------------------------------------------------------------ */
/* dereg-inflight: the writer copies 64 MiB by CMA; once the first bytes
 * show, the target deregisters and marks the last page. A deregistration
 * that returned while the copy went on would see that page overwritten.
 * A round in which the target saw the copy only once it was over (it lost
 * its core for the whole copy) proves nothing and is run again. */

static int inflight_round(struct ph *ph, uint8_t *b, uint8_t v, int32_t *late)
{
	struct hop_prov_mr *mb = NULL;
	struct shared mine = { 0 }, all[2];
	volatile uint8_t *vb = b;
	int32_t lates[2], me = 0;
	size_t bad = 0;
	uint64_t dl;

	memset(b, ph->rank == 0 ? v : 0, BIG);
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, b, BIG,
				     ph->rank ? HOP_PROV_REMOTE_WRITE : 0,
				     &mb) == 0, "reg");
	mine.b_addr = (uintptr_t)b;
	mine.b_key = mb->key;
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");
	if (ph->rank == 0) {
		PH_CHECK(ph, ph->ops->post_write(ph->prov, 1, mb, b, BIG,
						 all[1].b_addr, all[1].b_key,
						 0, HOP_WR_SIGNALED, v) == 0,
			 "post");
		PH_CHECK(ph, ph_wait_local(ph, v) == 0, "write: %s",
			 ph->comm->fail_msg);
	} else {
		dl = hop_deadline_after(10000);
		while (vb[0] != v)
			PH_CHECK(ph, !hop_deadline_passed(dl),
				 "the write never started");
		me = vb[BIG - 1] == v;
		PH_CHECK(ph, ph->ops->mr_dereg(ph->prov, mb) == 0, "dereg");
		mb = NULL;
		if (!me)
			memset(b + BIG - 4096, 0xee, 4096);
	}
	/* also the barrier: the writer's copy is over */
	PH_CHECK(ph, ph_allgather(ph, &me, lates, sizeof(me)) == 0, "ag");
	*late = lates[1];
	if (ph->rank == 1 && !*late)
		PH_CHECK(ph, all_bytes(b + BIG - 4096, 4096, 0xee, &bad),
			 "byte %zu of the last page changed after "
			 "deregistration", BIG - 4096 + bad);
	if (mb)
		ph->ops->mr_dereg(ph->prov, mb);
	return 0;
}

static int t_dereg_inflight(struct ph *ph, void *arg)
{
	uint8_t *b = big_alloc(BIG);
	int32_t late = 1;

	(void)arg;
	PH_CHECK(ph, b, "out of memory");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, hop_prov_connect(ph->ops, ph->prov, 1 - ph->rank) == 0,
		 "link");
	PH_CHECK(ph, ph->prov->peers[1 - ph->rank].cma,
		 "CMA is off: nothing to test");
	for (int i = 0; i < 8 && late; i++) {
		if (inflight_round(ph, b, (uint8_t)(0x40 + i), &late))
			return -1;
		if (late && ph->rank == 1)
			fprintf(stderr, "[rank 1] round %d: the copy was over "
				"when seen; again\n", i);
	}
	PH_CHECK(ph, !late, "in 8 rounds the copy was never seen under way");
	ph_close(ph);
	munmap(b, BIG);
	return 0;
}

/* ------------------------------------------------------------------ */
/* table-tamper / table-forge: the writer widens the target's region A in
 * the table the target publishes, to cover the never-registered buffer S,
 * then writes into S through A's key: once inline (the target applies it),
 * once by CMA (the writer copies it). */

static sigjmp_buf tamper_jmp;

static void tamper_fault(int sig)
{
	(void)sig;
	siglongjmp(tamper_jmp, 1);
}

/* Store @addr/@len into slot @key of @tab; 1 when the store faulted. */
static int tamper(const struct hop_mrtab *tab, uint64_t key, uint64_t addr,
		  uint64_t len)
{
	struct hop_mrtab_slot *s =
		(struct hop_mrtab_slot *)&tab->slot[(uint32_t)key];
	struct sigaction sa = { .sa_handler = tamper_fault }, old;
	int faulted = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(tamper_jmp, 1) == 0) {
		atomic_store(&s->addr, addr);
		atomic_store(&s->len, len);
	} else {
		faulted = 1;
	}
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

/* Make the pages of @tab writable in this process, as a hostile peer can. */
static int unprotect(const struct hop_mrtab *tab)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)tab & ~(pg - 1);
	uintptr_t hi = ((uintptr_t)tab + hop_mrtab_size(tab->nslots) + pg - 1) &
		       ~(pg - 1);

	return mprotect((void *)lo, hi - lo, PROT_READ | PROT_WRITE);
}

static int t_table(struct ph *ph, void *arg)
{
	const int forge = arg != NULL;
	const size_t slen = 64u << 10;
	static uint8_t a[4096];
	struct hop_prov_mr *ma = NULL, *ms = NULL;
	struct shared mine = { 0 }, all[2];
	uint8_t *s = big_alloc(slen);
	size_t bad = 0;
	int ret, code;

	PH_CHECK(ph, s, "out of memory");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	if (ph->rank == 1) {
		memset(a, 0x11, sizeof(a));
		memset(s, 0x22, slen);
		PH_CHECK(ph, ph->ops->mr_reg(ph->prov, a, sizeof(a),
					     HOP_PROV_REMOTE_WRITE, &ma) == 0,
			 "reg a");
		mine = (struct shared){ .a_addr = (uintptr_t)a,
					.a_key = ma->key,
					.s_addr = (uintptr_t)s };
	} else {
		memset(s, 0x77, slen);
		PH_CHECK(ph, ph->ops->mr_reg(ph->prov, s, slen, 0, &ms) == 0,
			 "reg source");
	}
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");
	if (ph->rank == 0) {
		const struct hop_mrtab *tab;

		/* linked now if pairs link on first use, as a post would */
		PH_CHECK(ph, hop_prov_connect(ph->ops, ph->prov, 1) == 0, "link");
		tab = ph->prov->peers[1].mrtab;
		PH_CHECK(ph, tab, "rank 1's region table is not mapped");
		if (forge)
			PH_CHECK(ph, unprotect(tab) == 0, "mprotect");
		ret = tamper(tab, all[1].a_key, all[1].s_addr, slen);
		fprintf(stderr, "[rank 0] storing into rank 1's table %s\n",
			ret ? "faulted" : "succeeded");
		PH_CHECK(ph, forge || ret, "a peer could store into rank 1's "
			 "region table");
		/* inline: refused by the writer's check, or by the target */
		ret = ph->ops->post_write(ph->prov, 1, NULL, s, 200,
					  all[1].s_addr, all[1].a_key, 0, 0, 0);
		PH_CHECK(ph, forge ? ret == 0 : ret == HOP_ERR_OUT_OF_BOUNDS,
			 "inline write into unregistered pages: %s",
			 ret ? hop_err_name(ret) : "posted");
		if (!forge) {
			/* by CMA: the writer must refuse it */
			ph->comm->failed = 0;
			ret = ph->ops->post_write(ph->prov, 1, ms, s, slen,
						  all[1].s_addr, all[1].a_key,
						  0, HOP_WR_SIGNALED, 1);
			PH_CHECK(ph, ret == HOP_ERR_OUT_OF_BOUNDS,
				 "CMA write into unregistered pages: %s",
				 ret ? hop_err_name(ret) : "posted");
		}
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	if (ph->rank == 1) {
		code = ph_wait_failure(ph, forge ? 2000 : 200);
		if (forge) {
			PH_CHECK(ph, code == HOP_ERR_OUT_OF_BOUNDS,
				 "target accepted a forged region: %s",
				 code ? hop_err_name(code) : "no failure");
			PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 0"),
				 "message: %s", ph->comm->fail_msg);
			fprintf(stderr, "[rank 1] %s\n", ph->comm->fail_msg);
		} else {
			PH_CHECK(ph, code == 0, "target: %s",
				 ph->comm->fail_msg);
		}
		PH_CHECK(ph, all_bytes(s, slen, 0x22, &bad),
			 "byte %zu of never-registered memory changed", bad);
		PH_CHECK(ph, all_bytes(a, sizeof(a), 0x11, &bad),
			 "byte %zu of region A changed", bad);
		ph->ops->mr_dereg(ph->prov, ma);
	} else {
		ph->ops->mr_dereg(ph->prov, ms);
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier checked");
	ph_close(ph);
	munmap(s, slen);
	return 0;
}

/* ------------------------------------------------------------------ */
/* dead-send: rank 1 exits without closing; rank 0 waits until it is gone,
 * then writes 4 KiB into its region twice. */

static int wait_dead(pid_t pid, int ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int ret;

	if (fd < 0)
		return errno == ESRCH ? 0 : -1; /* gone and reaped already */
	ret = poll(&pf, 1, ms);
	close(fd);
	return ret == 1 ? 0 : -1;
}

static int t_dead_send(struct ph *ph, void *arg)
{
	static uint8_t r[8192], src[4096];
	struct hop_prov_mr *mr = NULL;
	struct shared mine = { 0 }, all[2];
	int ret1, ret2;

	(void)arg;
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, ph->ops->mr_reg(ph->prov, ph->rank ? r : src,
				     ph->rank ? sizeof(r) : sizeof(src),
				     ph->rank ? HOP_PROV_REMOTE_WRITE : 0,
				     &mr) == 0, "reg");
	mine.a_addr = (uintptr_t)r;
	mine.a_key = mr->key;
	mine.pid = (int32_t)getpid();
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");
	if (ph->rank == 1)
		_exit(0); /* no close(): the peer just goes */
	PH_CHECK(ph, wait_dead((pid_t)all[1].pid, 10000) == 0,
		 "rank 1 did not exit");
	/* posts check liveness once per clock tick (docs/providers.md) */
	usleep(20000);
	ret1 = ph->ops->post_write(ph->prov, 1, mr, src, sizeof(src),
				   all[1].a_addr, all[1].a_key, 5,
				   HOP_WR_IMM | HOP_WR_SIGNALED, 1);
	ret2 = ph->ops->post_write(ph->prov, 1, mr, src, sizeof(src),
				   all[1].a_addr, all[1].a_key, 6,
				   HOP_WR_IMM | HOP_WR_SIGNALED, 2);
	fprintf(stderr, "[rank 0] posts to the dead rank: %s, %s: %s\n",
		hop_err_name(ret1), hop_err_name(ret2), ph->comm->fail_msg);
	PH_CHECK(ph, ret1 == HOP_ERR_PEER_FAILED || ret2 == HOP_ERR_PEER_FAILED,
		 "writes to a dead peer succeeded");
	PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 1"), "message: %s",
		 ph->comm->fail_msg);
	ph->ops->mr_dereg(ph->prov, mr);
	ph_close(ph);
	return 0;
}

/* ------------------------------------------------------------------ */
/* wrap-register: [addr, addr + len) must not wrap past the top. */

static int t_wrap(struct ph *ph, void *arg)
{
	static uint8_t buf[64];
	struct hop_prov_mr *mr = NULL;
	int ret;

	(void)arg;
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	ret = ph->ops->mr_reg(ph->prov, buf, SIZE_MAX, HOP_PROV_REMOTE_WRITE,
			      &mr);
	PH_CHECK(ph, ret == HOP_ERR_INVALID_ARG, "len SIZE_MAX: %s",
		 ret ? hop_err_name(ret) : "registered");
	PH_CHECK(ph, strstr(ph->comm->last_error, "do not fit the address "
				 "space"), "message: %s",
		 ph->comm->last_error);
	ret = ph->ops->mr_reg(ph->prov, buf, SIZE_MAX - (uintptr_t)buf + 1,
			      HOP_PROV_REMOTE_WRITE, &mr);
	PH_CHECK(ph, ret == HOP_ERR_INVALID_ARG, "range to 2^64: %s",
		 ret ? hop_err_name(ret) : "registered");
	/* no object is larger than PTRDIFF_MAX, even one that would not wrap */
	ret = ph->ops->mr_reg(ph->prov, buf, (size_t)PTRDIFF_MAX + 1,
			      HOP_PROV_REMOTE_WRITE, &mr);
	PH_CHECK(ph, ret == HOP_ERR_INVALID_ARG, "len PTRDIFF_MAX + 1: %s",
		 ret ? hop_err_name(ret) : "registered");
	/* the buffer itself is a valid range */
	ret = ph->ops->mr_reg(ph->prov, buf, sizeof(buf),
			      HOP_PROV_REMOTE_WRITE, &mr);
	PH_CHECK(ph, ret == 0, "the 64-byte buffer: %s", hop_err_name(ret));
	ph->ops->mr_dereg(ph->prov, mr);
	ph_close(ph);
	return 0;
}

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	static int forge = 1;
	int fails = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s dereg-queued|dereg-inflight|"
			"table-tamper|table-forge|dead-send|wrap-register...\n",
			argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *t = argv[i];
		int ret;

		if (!strcmp(t, "dereg-queued"))
			ret = ph_run("shm", 2, t_dereg_queued, NULL, -1, 60);
		else if (!strcmp(t, "dereg-inflight"))
			ret = ph_run("shm", 2, t_dereg_inflight, NULL, -1, 60);
		else if (!strcmp(t, "table-tamper"))
			ret = ph_run("shm", 2, t_table, NULL, -1, 60);
		else if (!strcmp(t, "table-forge"))
			ret = ph_run("shm", 2, t_table, &forge, -1, 60);
		else if (!strcmp(t, "dead-send"))
			ret = ph_run("shm", 2, t_dead_send, NULL, -1, 60);
		else if (!strcmp(t, "wrap-register"))
			ret = ph_run("shm", 1, t_wrap, NULL, -1, 60);
		else {
			fprintf(stderr, "unknown test %s\n", t);
			return 2;
		}
		printf("%s shm %s\n", ret ? "FAIL" : "PASS", t);
		fails += ret != 0;
	}
	return fails ? 1 : 0;
}
