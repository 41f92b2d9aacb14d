/*
 * coll_fbox.c - the fast boxes (src/coll/fbox.c) through the public API,
 * on as many ranks as hop-run starts (the script: 2, 3 and 4 on shm).
 *
 *   coll_fbox [--expect 0|1]  plan (hop_coll_plan names "fbox" exactly
 *             when expected), every dtype, op, root and size 0..1 KiB
 *             against a reference reduced in rank order in the element
 *             type (random floats: the order shows in the bits), in
 *             place too; slot reuse with one rank late in turn (a slow
 *             Reduce root, a slow Broadcast reader, mixed kinds and an
 *             i-collective in flight); every rank's results identical.
 *             AllGather, AllToAll and ReduceScatter (gathers()): every
 *             dtype (and op), counts 0 to a full slot and one past it,
 *             in place too, each rank late in turn, against every rank's
 *             inputs generated here.
 *   coll_fbox mismatch|mismatch-across|root-mismatch|late|kill|kill-cause
 *             failures: coll_fbox_fail.c.
 *   coll_fbox large 0|1  above 1 KiB: the CMA form where the model
 *             picks it (1: at some size of every kind) or never (0,
 *             HOP_SHM_CMA=0 or CMA refused on some rank), as the plan
 *             says; every dtype, op and root at odd counts just above
 *             the smallest size that takes it and 3x that, in place
 *             and not, vectors of many chunks cut off line bounds, each
 *             rank late in turn; bit for bit (off the CMA form, floats
 *             from 3 ranks on are left out: the scheduled path
 *             associates differently); AllGather and AllToAll there
 *             too (coll_fbox_cma.c).
 *   coll_fbox wide  Broadcast and Reduce above 1 KiB in the wide area
 *             (a 4 KiB Reduce takes it), as the plan says, bit for bit;
 *             AllGather, AllToAll and ReduceScatter there too (a 4 KiB
 *             payload takes it), and AllReduce (a 4 KiB one takes it):
 *             coll_fbox_wide.c; the script runs it with
 *             HOP_UNEXPECTED_MAX=4M.
 *   coll_fbox one-cpu  every rank pinned to one CPU after init: blocking
 *             AllReduces do not spin against the peer they wait on
 *             (coll_fbox_cpu.c).
 *   coll_fbox nocma  as large 0 with CMA refused: the last rank is not
 *             dumpable and no rank may ptrace (CAP_SYS_PTRACE dropped).
 */
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <hop/hop.h>

#include "../unit/coll_ref.h"

#define TEST_NAME "coll_fbox"
static hop_comm_t *comm;
static int rank, nranks;
#include "rank_check.h"
#include "coll_fbox.h"

#define MAXB 1024
#define SLOTS 256 /* per rank (HOP_FBOX_DEPTH) */
/* the large calls' vectors: segments of several CMA chunks (128 KiB) */
#define BIGB (600u << 10)
/* a call's buffers: up to 3x the smallest CMA size, which the wide form
 * (to 256 KiB) puts at 512 KiB */
#define BUFB (2u << 20)
unsigned long calls;

/* Element @i of rank @r's input for call @salt, stored at @at. */
static void gen(void *buf, size_t at, size_t i, hop_dtype_t dt, hop_op_t op,
		int r, uint64_t salt)
{
	uint64_t h = ref_hash((uint64_t)r * 7919u + i, salt,
			      (uint64_t)dt * 8u + (uint64_t)op);

	if (!ref_is_float(dt))
		ref_put_i(buf, at, dt, h);
	else if (op == HOP_PROD)
		ref_put_f(buf, at, dt, 0.5 + (double)(h % 1024) / 683.0);
	else
		ref_put_f(buf, at, dt, ((double)(h % 200001) - 100000) / 1013.0);
}

static double fop(hop_op_t op, double a, double b)
{
	switch (op) {
	case HOP_PROD: return a * b;
	case HOP_MIN: return b < a ? b : a;
	case HOP_MAX: return b > a ? b : a;
	default: return a + b;
	}
}

/* acc[0] = acc[0] op x[0] in the element type (f16/bf16 through f32,
 * rounded back after each step, as hop documents). */
static void ref_step(void *acc, const void *x, hop_dtype_t dt, hop_op_t op)
{
	if (!ref_is_float(dt)) {
		ref_put_i(acc, 0, dt, ref_wrap(dt, ref_iop(dt, op,
			  ref_get_i(acc, 0, dt), ref_get_i(x, 0, dt))));
	} else if (dt == HOP_FLOAT64) {
		ref_put_f(acc, 0, dt, fop(op, ref_get_f(acc, 0, dt),
					  ref_get_f(x, 0, dt)));
	} else {
		float a = (float)ref_get_f(acc, 0, dt);
		float b = (float)ref_get_f(x, 0, dt);
		volatile float r = (float)fop(op, a, b);
		ref_put_f(acc, 0, dt, r);
	}
}

static void ref_avg(void *acc, hop_dtype_t dt)
{
	if (!ref_is_float(dt)) {
		uint64_t v = ref_get_i(acc, 0, dt);
		ref_put_i(acc, 0, dt, ref_is_signed(dt)
			  ? (uint64_t)((int64_t)v / nranks) : v / (uint64_t)nranks);
	} else if (dt == HOP_FLOAT64) {
		ref_put_f(acc, 0, dt, ref_get_f(acc, 0, dt) / nranks);
	} else {
		volatile float f = (float)ref_get_f(acc, 0, dt);
		ref_put_f(acc, 0, dt, (float)(f / (float)nranks));
	}
}

/* The reduction of elements @first.. of every rank's input of call
 * @salt, in rank order. */
static void expect_at(char *out, size_t first, size_t count, hop_dtype_t dt,
		      hop_op_t op, uint64_t salt)
{
	size_t es = hop_dtype_size(dt);
	char acc[8], x[8];

	for (size_t i = 0; i < count; i++) {
		gen(acc, 0, first + i, dt, op, 0, salt);
		for (int r = 1; r < nranks; r++) {
			gen(x, 0, first + i, dt, op, r, salt);
			ref_step(acc, x, dt, op);
		}
		if (op == HOP_AVG)
			ref_avg(acc, dt);
		memcpy(out + i * es, acc, es);
	}
}

static void expect(char *out, size_t count, hop_dtype_t dt, hop_op_t op,
		   uint64_t salt)
{
	expect_at(out, 0, count, dt, op, salt);
}

static void inputs(char *buf, size_t count, hop_dtype_t dt, hop_op_t op,
		   int r, uint64_t salt)
{
	for (size_t i = 0; i < count; i++)
		gen(buf, i, i, dt, op, r, salt);
}

static void same(const char *got, const char *want, size_t bytes,
		 const char *what, hop_dtype_t dt, hop_op_t op, size_t count,
		 int root)
{
	calls++;
	if (!memcmp(got, want, bytes))
		return;
	for (size_t b = 0; b < bytes; b++)
		if (got[b] != want[b])
			FAIL("%s(count %zu, %s, %s, root %d): byte %zu is 0x%02x, "
			     "expected 0x%02x", what, count, hop_dtype_name(dt),
			     hop_op_name(op), root, b, (unsigned char)got[b],
			     (unsigned char)want[b]);
}

/* One AllReduce, Reduce (root @root) or Broadcast (from @root), checked;
 * @late: this rank sleeps that many microseconds first. */
void one(int kind, size_t count, hop_dtype_t dt, hop_op_t op, int root,
	 int inplace, uint64_t salt, long late)
{
	static char in[BUFB], out[BUFB], want[BUFB];
	size_t bytes = count * hop_dtype_size(dt);

	inputs(in, count, dt, op, rank, salt);
	memset(out, 0xa5, bytes);
	if (late)
		nap_us(late);
	if (kind == HOP_KIND_BROADCAST) {
		if (rank == root)
			memcpy(out, in, bytes);
		OK(hop_broadcast(comm, out, count, dt, root));
		inputs(want, count, dt, op, root, salt);
		same(out, want, bytes, "broadcast", dt, op, count, root);
		return;
	}
	if (inplace)
		memcpy(out, in, bytes);
	if (kind == HOP_KIND_ALLREDUCE)
		OK(hop_allreduce(comm, inplace ? out : in, out, count, dt, op));
	else
		OK(hop_reduce(comm, inplace ? out : in, out, count, dt, op,
			      root));
	if (kind == HOP_KIND_REDUCE && rank != root)
		return;
	expect(want, count, dt, op, salt);
	same(out, want, bytes, kind == HOP_KIND_ALLREDUCE ? "allreduce"
			       : "reduce", dt, op, count, root);
}

/* Does a rank of @kind write N blocks of its count (AllToAll,
 * ReduceScatter)? */
int n_blocks(int kind)
{
	return kind == HOP_KIND_ALLTOALL || kind == HOP_KIND_REDUCESCATTER;
}

/* The largest count of @kind whose slot payload fits in MAXB bytes of
 * @dt. */
static size_t slot_count(int kind, hop_dtype_t dt)
{
	return MAXB / hop_dtype_size(dt) /
	       (n_blocks(kind) ? (size_t)nranks : 1);
}

static void plan(int expect_fbox)
{
	hop_coll_plan_t p;
	const int kinds[] = { HOP_KIND_ALLREDUCE, HOP_KIND_BROADCAST,
			      HOP_KIND_REDUCE, HOP_KIND_ALLGATHER,
			      HOP_KIND_ALLTOALL, HOP_KIND_REDUCESCATTER };

	for (int k = 0; k < 6; k++) {
		size_t max = slot_count(kinds[k], HOP_FLOAT32);

		OK(hop_coll_plan(comm, kinds[k], max, HOP_FLOAT32, &p));
		if (!!strcmp(p.algo, "fbox") == expect_fbox)
			FAIL("plan of kind %d, count %zu: algorithm %s, fast "
			     "boxes expected %s", kinds[k], max, p.algo,
			     expect_fbox ? "on" : "off");
		OK(hop_coll_plan(comm, kinds[k], max + 1, HOP_FLOAT32, &p));
		if (!strcmp(p.algo, "fbox"))
			FAIL("plan of kind %d, count %zu: fbox above 1 KiB",
			     kinds[k], max + 1);
	}
}

/* The gathering kinds the fast boxes take, by the bytes they write */
const int gather_kinds[3] = { HOP_KIND_ALLGATHER, HOP_KIND_ALLTOALL,
			      HOP_KIND_REDUCESCATTER };

/* One AllGather, AllToAll or ReduceScatter (@op) of @count elements per
 * block, checked against every rank's inputs generated here; @late as
 * for one(). */
void one_gather(int kind, size_t count, hop_dtype_t dt, hop_op_t op,
		int inplace, uint64_t salt, long late)
{
	static char send[GATHER_BUFB], out[GATHER_BUFB], want[GATHER_BUFB];
	const size_t n = (size_t)nranks, blk = count * hop_dtype_size(dt);
	const size_t me = (size_t)rank, sendn = n_blocks(kind) ? n * count
							       : count;
	size_t outb = kind == HOP_KIND_REDUCESCATTER ? blk : n * blk;
	char *at = out;
	hop_coll_plan_t p;

	/* the schedule's ReduceScatter associates floats otherwise from 3
	 * ranks on: those are checked where the fast boxes take them only */
	OK(hop_coll_plan(comm, kind, count, dt, &p));
	if (kind == HOP_KIND_REDUCESCATTER && ref_is_float(dt) &&
	    nranks > 2 && strncmp(p.algo, "fbox", 4))
		return;
	/* rank r's element i of its send buffer: gen(r, i) */
	for (size_t i = 0; i < sendn; i++)
		gen(send, i, i, dt, op, rank, salt);
	if (kind == HOP_KIND_REDUCESCATTER)
		expect_at(want, me * count, count, dt, op, salt);
	for (size_t q = 0; kind != HOP_KIND_REDUCESCATTER && q < n; q++)
		for (size_t i = 0; i < count; i++)
			gen(want, q * count + i, (n_blocks(kind) ? me * count
								 : 0) + i,
			    dt, op, (int)q, salt);
	memset(out, 0xa5, n * blk);
	if (late)
		nap_us(late);
	if (kind == HOP_KIND_ALLTOALL) {
		if (inplace)
			memcpy(out, send, n * blk);
		OK(hop_alltoall(comm, inplace ? out : send, out, count, dt));
	} else if (kind == HOP_KIND_ALLGATHER) {
		if (inplace)
			memcpy(out + me * blk, send, blk);
		OK(hop_allgather(comm, inplace ? out + me * blk : send, out,
				 count, dt));
	} else {
		/* in place, the result lands on the own block of sendbuf */
		if (inplace) {
			memcpy(out, send, n * blk);
			at = out + me * blk;
		}
		OK(hop_reducescatter(comm, inplace ? out : send, at, count, dt,
				     op));
	}
	same(at, want, outb, kind == HOP_KIND_ALLTOALL ? "alltoall"
			     : kind == HOP_KIND_ALLGATHER ? "allgather"
			     : "reducescatter", dt, op, count, -1);
}

/* AllGather, AllToAll and ReduceScatter (every op): no data, every dtype
 * at counts up to a full slot and one past it (the schedule), in place
 * or not; then each rank late in turn over more calls than there are
 * slots, the kinds interleaved with an AllReduce. */
static void gathers(void)
{
	uint64_t salt = 1u << 20;

	OK(hop_allgather(comm, NULL, NULL, 0, HOP_FLOAT32));
	OK(hop_alltoall(comm, NULL, NULL, 0, HOP_INT8));
	OK(hop_reducescatter(comm, NULL, NULL, 0, HOP_INT32, HOP_MAX));
	for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++)
		for (int k = 0; k < 3; k++) {
			size_t max = slot_count(gather_kinds[k], dt);
			const size_t counts[] = { 0, 1, 3, max - 1, max,
						  max + 1 };
			int ops = k == 2 ? HOP_OP_COUNT : 1;

			for (size_t c = 0; c < 6; c++)
				for (int op = 0; op < ops; op++)
					one_gather(gather_kinds[k], counts[c],
						   dt, op, (c + op) & 1,
						   salt++, 0);
		}
	for (int slow = 0; slow < nranks; slow++)
		for (int i = 0; i < SLOTS + 8; i++) {
			long late = rank == slow && i % 8 == 0 ? 300 : 0;

			if (i % 4 == 3)
				one(HOP_KIND_ALLREDUCE, 5, HOP_INT32, HOP_SUM,
				    0, 0, salt++, late);
			else
				one_gather(gather_kinds[i % 4], 7, HOP_FLOAT32,
					   HOP_SUM, i % 5 == 0, salt++, late);
		}
}

static void matrix(void)
{
	uint64_t salt = 1;

	/* no data: NULL buffers are valid */
	OK(hop_allreduce(comm, NULL, NULL, 0, HOP_FLOAT32, HOP_SUM));
	OK(hop_reduce(comm, NULL, NULL, 0, HOP_INT8, HOP_MAX, nranks - 1));
	OK(hop_broadcast(comm, NULL, 0, HOP_FLOAT64, nranks - 1));

	for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++) {
		size_t es = hop_dtype_size(dt), max = MAXB / es;
		const size_t counts[] = { 0, 1, 2, 3, 5, 9, 17, max - 1, max };

		for (size_t c = 0; c < sizeof(counts) / sizeof(*counts); c++) {
			for (int op = 0; op < HOP_OP_COUNT; op++) {
				one(HOP_KIND_ALLREDUCE, counts[c], dt, op, 0,
				    c & 1, salt++, 0);
				for (int root = 0; root < nranks; root++)
					one(HOP_KIND_REDUCE, counts[c], dt, op,
					    root, (c >> 1) & 1, salt++, 0);
			}
			for (int root = 0; root < nranks; root++)
				one(HOP_KIND_BROADCAST, counts[c], dt, HOP_SUM,
				    root, 0, salt++, 0);
		}
	}
}

/* Slots reused while one rank lags: each rank in turn is late. */
static void reuse(void)
{
	uint64_t salt = 1u << 30;
	hop_request_t *req;
	char big[4096], bo[4096];

	for (int slow = 0; slow < nranks; slow++) {
		long late = rank == slow ? 300 : 0;

		/* a slow Reduce root: writers more calls ahead than they
		 * have slots must wait */
		for (int i = 0; i < SLOTS + 8; i++)
			one(HOP_KIND_REDUCE, 64, HOP_FLOAT32, HOP_SUM, slow, 0,
			    salt++, late);
		/* a slow Broadcast reader; the root changes every call */
		for (int i = 0; i < SLOTS + 8; i++)
			one(HOP_KIND_BROADCAST, 100, HOP_UINT8, HOP_SUM,
			    (slow + 1 + i / 20) % nranks, 0, salt++, late);
		/* mixed kinds back to back */
		for (int i = 0; i < 9; i++)
			one(i % 3 == 0 ? HOP_KIND_ALLREDUCE : i % 3 == 1
				       ? HOP_KIND_REDUCE : HOP_KIND_BROADCAST,
			    3, HOP_FLOAT64, HOP_SUM, i % nranks, 0, salt++,
			    i % 2 ? late : 0);
		/* an i-collective in flight (scheduled) before fast ones */
		inputs(big, sizeof(big), HOP_UINT8, HOP_SUM, rank, salt);
		OK(hop_iallreduce(comm, big, bo, sizeof(big), HOP_UINT8,
				  HOP_SUM, &req));
		one(HOP_KIND_ALLREDUCE, 8, HOP_INT32, HOP_SUM, 0, 0, salt + 1,
		    late);
		OK(hop_wait(&req, NULL));
		expect(big, sizeof(big), HOP_UINT8, HOP_SUM, salt);
		same(bo, big, sizeof(big), "iallreduce", HOP_UINT8, HOP_SUM,
		     sizeof(big), 0);
		salt += 2;
	}
}

/* Does the plan of this call name @form? */
int takes(int kind, size_t count, hop_dtype_t dt, const char *form)
{
	hop_coll_plan_t p;

	OK(hop_coll_plan(comm, kind, count, dt, &p));
	return !strcmp(p.algo, form);
}
#define takes_cma(kind, count, dt) takes(kind, count, dt, "fbox-cma")

static const int large_kinds[] = { HOP_KIND_ALLREDUCE, HOP_KIND_REDUCE,
				   HOP_KIND_BROADCAST };
static unsigned long cma_calls[3];

/* The smallest power of two bytes (from 2 KiB) at which the model picks
 * the CMA form for @kind (-1: for some kind); 0 when it never does up to
 * 64 MiB. */
static size_t cma_from(int kind)
{
	for (size_t b = 2048; b <= (64u << 20); b *= 2)
		for (int k = 0; k < 3; k++)
			if ((kind < 0 || kind == large_kinds[k]) &&
			    takes_cma(large_kinds[k], b / 4, HOP_FLOAT32))
				return b;
	return 0;
}

/*
 * Every kind of @count elements, in place or not, each root with sums
 * and one root (turning with the call) with the other ops: the root does
 * not change how an op reduces. Off the fast boxes, from 3 ranks on, the
 * scheduled path's float results associate by its schedule, not in rank
 * order: those are not compared.
 */
static void kind_at(int k, size_t count, hop_dtype_t dt, hop_op_t op,
		    uint64_t *salt, long late)
{
	int kind = large_kinds[k], cma = takes_cma(kind, count, dt);
	int one_root = (int)(*salt % (uint64_t)nranks);

	cma_calls[k] += (unsigned long)cma;
	if (kind != HOP_KIND_BROADCAST && !cma && nranks > 2 &&
	    !takes(kind, count, dt, "fbox-wide") && ref_is_float(dt))
		return;
	if (kind == HOP_KIND_ALLREDUCE) {
		one(kind, count, dt, op, 0, count & 1, (*salt)++, late);
		return;
	}
	for (int root = 0; root < nranks; root++)
		if (op == HOP_SUM || root == one_root)
			one(kind, count, dt, op, root, (count + root) & 1,
			    (*salt)++, late);
}

void kinds_at(size_t count, hop_dtype_t dt, hop_op_t op, uint64_t *salt,
	      long late)
{
	for (int k = 0; k < 3; k++)
		kind_at(k, count, dt, op, salt, late);
}

static void matrix_large(int cma)
{
	static const struct {
		hop_dtype_t dt;
		hop_op_t op;
	} big[] = { { HOP_FLOAT32, HOP_SUM }, { HOP_FLOAT16, HOP_PROD },
		    { HOP_INT8, HOP_MAX }, { HOP_FLOAT64, HOP_AVG } };
	size_t from = cma_from(-1);
	uint64_t salt = 1ull << 40;

	if (!!from != cma)
		FAIL("the CMA form is %s at every size, expected %s",
		     from ? "on" : "off", cma ? "on" : "off");
	from = from ? from : 64u << 10;
	if (3 * from > BUFB)
		FAIL("the CMA form starts at %zu B, beyond the buffers", from);
	for (int dt = 0; dt < HOP_DTYPE_COUNT; dt++) {
		size_t es = hop_dtype_size(dt);
		const size_t counts[] = { from / es + 1, 3 * from / es - 3 };

		/* every op at the first count, sums at the second */
		for (size_t c = 0; c < sizeof(counts) / sizeof(*counts); c++)
			for (int op = 0; op < (c ? 1 : HOP_OP_COUNT); op++)
				kinds_at(counts[c], dt, op, &salt, 0);
	}
	for (size_t i = 0; i < sizeof(big) / sizeof(*big); i++)
		kinds_at(BIGB / hop_dtype_size(big[i].dt) - 3, big[i].dt,
			 big[i].op, &salt, 0);
	for (int slow = 0; slow < nranks; slow++)
		kinds_at(from / 4 + 1, HOP_INT32, HOP_SUM, &salt,
			 rank == slow ? 2000 : 0);
	/* a kind whose CMA sizes the ones above missed (an AllReduce takes
	 * the wide form further): every dtype at its own first */
	for (int k = 0; k < 3 && cma; k++) {
		size_t b = cma_calls[k] ? 0 : cma_from(large_kinds[k]);

		for (int dt = 0; b && dt < HOP_DTYPE_COUNT; dt++)
			kind_at(k, b / hop_dtype_size(dt), dt, HOP_SUM, &salt,
				0);
		if (!cma_calls[k])
			FAIL("no call of kind %d took the CMA form",
			     large_kinds[k]);
	}
	coll_fbox_cma_gathers(comm, cma, &salt);
}

/* CMA refused: the last rank is not dumpable, and no rank has the
 * CAP_SYS_PTRACE that would override it (root's). */
static void refuse_cma(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	const char *r = getenv("HOP_RANK"), *n = getenv("HOP_SIZE");

	if (!syscall(SYS_capget, &h, d)) {
		d[CAP_SYS_PTRACE / 32].effective &= ~(1u << (CAP_SYS_PTRACE % 32));
		if (syscall(SYS_capset, &h, d))
			FAIL("dropping CAP_SYS_PTRACE failed");
	}
	if (r && n && atoi(r) == atoi(n) - 1 && prctl(PR_SET_DUMPABLE, 0))
		FAIL("PR_SET_DUMPABLE failed");
}

static int large(int cma)
{
	matrix_large(cma);
	OK(hop_comm_destroy(comm));
	printf("coll_fbox: rank %d passed %lu large calls\n", rank, calls);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "--expect";
	int on = argc > 2 ? atoi(argv[2]) : 1, rc;

	if (!strcmp(mode, "nocma"))
		refuse_cma();
	OK(hop_comm_init_env(&comm));
	rank = hop_comm_rank(comm);
	nranks = hop_comm_size(comm);
	if ((rc = coll_fbox_failure(comm, mode, argc > 2 ? argv[2] : "")) >= 0)
		return rc;
	if (!strcmp(mode, "wide"))
		return coll_fbox_wide(comm);
	if (!strcmp(mode, "one-cpu"))
		return coll_fbox_one_cpu(comm);
	if (!strcmp(mode, "large") || !strcmp(mode, "nocma"))
		return large(strcmp(mode, "nocma") ? on : 0);
	plan(on);
	matrix();
	gathers();
	reuse();
	plan(on);
	OK(hop_comm_destroy(comm));
	printf("coll_fbox: rank %d passed %lu calls\n", rank, calls);
	return 0;
}
