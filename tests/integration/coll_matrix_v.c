/*
 * coll_matrix_v.c - the correctness matrix of Gather, Scatter, AllGatherv
 * and ReduceScatterv (part of coll_matrix; inputs, references and the
 * verdict exchange are coll_matrix.c's).
 *
 * Each rank computes the expected bytes of its own output from the
 * inputs' generator alone (block b of a gather is rank b's input, element
 * i of a reduce-scatter block the rank-order fold of element i of every
 * rank), and checks them bit for bit; bytes outside the blocks (the gaps
 * of an AllGatherv layout) must keep their fill.
 *
 *   counts   0, 1, 7, N+1, 100003 (the large one at fewer roots/dtypes)
 *   roots    every root at counts 1 and 7, the last at the others
 *   v-counts uniform, uneven, every other block empty, only the last
 *            block non-empty (the pattern travels in kase.root)
 *   layout   AllGatherv blocks in reverse rank order with gaps
 *   dtypes   a rotation; ReduceScatterv: every dtype x op at count 7
 *            with uneven blocks
 * Every case blocking or nonblocking, in place or not, misaligned by
 * count % 3 bytes; then several of them in flight at once beside
 * Allreduce and Broadcast, completed in reverse order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/hop.h>

#include "../unit/coll_ref.h"
#include "coll_matrix.h"

#define GAP 3           /* elements between AllGatherv blocks */
#define FILL 0x5a

static const struct {
	int kind, algo;
} valgos[] = {
	{ HOP_COLL_GATHER, HOP_ALGO_FLAT }, { HOP_COLL_GATHER, HOP_ALGO_TREE },
	{ HOP_COLL_SCATTER, HOP_ALGO_FLAT }, { HOP_COLL_SCATTER, HOP_ALGO_TREE },
	{ HOP_COLL_ALLGATHERV, HOP_ALGO_RING },
	{ HOP_COLL_REDUCESCATTERV, HOP_ALGO_RING },
};
#define NVALGOS (int)(sizeof(valgos) / sizeof(*valgos))

/* One case's layout: per-block counts and element offsets. */
struct vlay {
	size_t *cnt, *at;       /* N blocks */
	size_t in, out;         /* elements of the input and output buffer */
	size_t mine;            /* this rank's offset (in the N-block buffer) */
};

static size_t vcount(int pattern, size_t c, int b)
{
	switch (pattern) {
	case 1: return c + (size_t)(b * 7 % 5);
	case 2: return b % 2 ? 0 : c + (size_t)b;
	case 3: return b == nranks - 1 ? c : 0;
	default: return c;
	}
}

static void layout(const struct kase *k, struct vlay *v)
{
	size_t N = (size_t)nranks, sum = 0, end = 0;

	v->cnt = xmalloc(N * sizeof(size_t));
	v->at = xmalloc(N * sizeof(size_t));
	for (int b = 0; b < nranks; b++) {
		v->cnt[b] = k->kind == HOP_COLL_ALLGATHERV ||
			    k->kind == HOP_COLL_REDUCESCATTERV
			? vcount(k->root, k->count, b) : k->count;
		sum += v->cnt[b];
	}
	/* AllGatherv: blocks in reverse order, GAP elements apart */
	for (int b = nranks - 1; b >= 0; b--) {
		if (k->kind == HOP_COLL_ALLGATHERV) {
			v->at[b] = end + 1;
			end += v->cnt[b] + GAP;
		}
	}
	for (int b = 0, pre = 0; b < nranks; b++) {
		if (k->kind != HOP_COLL_ALLGATHERV)
			v->at[b] = (size_t)pre;
		pre += (int)v->cnt[b];
	}
	v->mine = v->at[rank];
	switch (k->kind) {
	case HOP_COLL_GATHER:
		v->in = k->count;
		v->out = rank == k->root ? sum : 0;
		break;
	case HOP_COLL_SCATTER:
		v->in = rank == k->root ? sum : 0;
		v->out = k->count;
		break;
	case HOP_COLL_ALLGATHERV:
		v->in = v->cnt[rank];
		v->out = end + 1;
		break;
	default:
		v->in = sum;
		v->out = v->cnt[rank];
	}
}

/* The expected element @i of this rank's output; 0 for a gap. */
static int expect(const struct kase *k, const struct vlay *v, size_t i,
		  void *want)
{
	switch (k->kind) {
	case HOP_COLL_GATHER:
		gen(want, 0, i % k->count, k, (int)(i / k->count));
		return 1;
	case HOP_COLL_SCATTER:
		gen(want, 0, v->mine + i, k, k->root);
		return 1;
	case HOP_COLL_ALLGATHERV:
		for (int b = 0; b < nranks; b++)
			if (i >= v->at[b] && i < v->at[b] + v->cnt[b]) {
				gen(want, 0, i - v->at[b], k, b);
				return 1;
			}
		return 0;
	default:
		expect_reduced(want, v->mine + i, k);
		return 1;
	}
}

/* Start case @k on buffers already filled: @send/@recv the arguments. */
static int start(const struct kase *k, const struct vlay *v, const void *send,
		 void *recv, hop_request_t **req)
{
	hop_request_t **q = k->nb ? req : NULL;

	switch (k->kind) {
	case HOP_COLL_GATHER:
		return q ? hop_igather(comm, send, recv, k->count, k->dt, k->root, q)
			 : hop_gather(comm, send, recv, k->count, k->dt, k->root);
	case HOP_COLL_SCATTER:
		return q ? hop_iscatter(comm, send, recv, k->count, k->dt, k->root, q)
			 : hop_scatter(comm, send, recv, k->count, k->dt, k->root);
	case HOP_COLL_ALLGATHERV:
		return q ? hop_iallgatherv(comm, send, v->cnt[rank], recv, v->cnt,
					   v->at, k->dt, q)
			 : hop_allgatherv(comm, send, v->cnt[rank], recv, v->cnt,
					  v->at, k->dt);
	default:
		return q ? hop_ireducescatterv(comm, send, recv, v->cnt, k->dt, k->op, q)
			 : hop_reducescatterv(comm, send, recv, v->cnt, k->dt, k->op);
	}
}

struct vrun {
	struct kase k;
	struct vlay v;
	char *sraw, *rraw, *send, *recv;
	hop_request_t *req;
};

/* Buffers of @x: inputs generated, outputs filled, in place if asked. */
static void prepare(struct vrun *x)
{
	const struct kase *k = &x->k;
	size_t es = hop_dtype_size(k->dt), mis = k->count % 3;
	int root = rank == k->root;

	layout(k, &x->v);
	x->sraw = xmalloc(x->v.in * es + mis);
	x->rraw = xmalloc(x->v.out * es + mis + 1);
	x->send = x->sraw + mis;
	x->recv = x->rraw + mis + 1; /* send and receive misaligned apart */
	for (size_t i = 0; i < x->v.in; i++)
		gen(x->send, i, i, k, k->kind == HOP_COLL_SCATTER ? k->root : rank);
	memset(x->recv, FILL, x->v.out * es);
	x->req = NULL;
	if (!k->inplace)
		return;
	switch (k->kind) {
	case HOP_COLL_GATHER:
		if (root) {
			memcpy(x->recv + x->v.mine * es, x->send, x->v.in * es);
			x->send = x->recv + x->v.mine * es;
		}
		break;
	case HOP_COLL_SCATTER:
		if (root)
			x->recv = x->send + x->v.mine * es;
		break;
	case HOP_COLL_ALLGATHERV:
		memcpy(x->recv + x->v.mine * es, x->send, x->v.in * es);
		x->send = x->recv + x->v.mine * es;
		break;
	default:
		x->recv = x->send + x->v.mine * es;
	}
}

/* Check @x's output; returns the hash of a replicated one (allgatherv). */
static uint64_t check(struct vrun *x, int *ok)
{
	const struct kase *k = &x->k;
	size_t es = hop_dtype_size(k->dt);
	char want[8];

	for (size_t i = 0; i < x->v.out && *ok; i++) {
		if (!expect(k, &x->v, i, want))
			memset(want, FILL, es);
		if (memcmp(x->recv + i * es, want, es)) {
			fail(k, "element %zu of %zu differs from the reference",
			     i, x->v.out);
			*ok = 0;
		}
	}
	if (!k->inplace)
		for (size_t i = 0; i < x->v.in && *ok; i++) {
			gen(want, 0, i, k, k->kind == HOP_COLL_SCATTER ? k->root : rank);
			if (memcmp(x->send + i * es, want, es)) {
				fail(k, "send buffer element %zu was modified", i);
				*ok = 0;
			}
		}
	return k->kind == HOP_COLL_ALLGATHERV && *ok
		       ? hash_bytes(x->recv, x->v.out * es) | 1 : 0;
}

static void release(struct vrun *x)
{
	free(x->sraw);
	free(x->rraw);
	free(x->v.cnt);
	free(x->v.at);
}

static int finish(struct vrun *x)
{
	int rc = 0, done = 0;

	if (!x->k.nb)
		return 0;
	for (int i = 0; i < 3 && !rc && !done; i++)
		rc = hop_test(&x->req, &done, NULL);
	if (!rc && !done)
		rc = hop_wait(&x->req, NULL);
	if (!rc && x->req)
		fail(&x->k, "request not freed by hop_wait");
	return rc;
}

static void run_v(const struct kase *k)
{
	struct vrun x = { .k = *k };
	int ok = 1, rc;
	uint64_t h = 0;

	comm->coll->tune.forced[k->kind] = k->algo;
	prepare(&x);
	rc = start(k, &x.v, x.send, x.recv, &x.req);
	if (!rc)
		rc = finish(&x);
	if (rc) {
		fail(k, "returned %s", hop_err_name(rc));
		ok = 0;
	} else {
		h = check(&x, &ok);
	}
	release(&x);
	gather_verdict(k, ok, h);
	if (failures > 20) {
		fprintf(stderr, "coll_matrix rank %d: too many failures\n", rank);
		exit(1);
	}
}

/* Several in flight with Allreduce and Broadcast, waited in reverse. */
static void interleaved(void)
{
	enum { NV = 4 };
	struct vrun x[NV];
	int ip[NV] = { 0, 1, 0, 1 }, ok = 1, rc = 0;
	int32_t ar[64], ar_out[64], bc[33];
	hop_request_t *rar = NULL, *rbc = NULL;
	struct kase kk = { HOP_COLL_ALLREDUCE, 0, HOP_INT32, HOP_SUM, 64, 0, 0, 1 };

	for (int i = 0; i < 64; i++)
		ar[i] = rank + i;
	for (int i = 0; i < 33; i++)
		bc[i] = rank == nranks - 1 ? i * 3 : -1;
	for (int i = 0; i < NV; i++) {
		x[i] = (struct vrun){ .k = { valgos[i * 2 - (i > 2)].kind,
					     HOP_ALGO_AUTO, HOP_FLOAT32,
					     HOP_SUM, 5 + (size_t)i * 1000,
					     ip[i], i == 3 ? 1 : nranks - 1,
					     1 } };
		comm->coll->tune.forced[x[i].k.kind] = HOP_ALGO_AUTO;
		prepare(&x[i]);
	}
	rc = hop_iallreduce(comm, ar, ar_out, 64, HOP_INT32, HOP_SUM, &rar);
	for (int i = 0; i < NV && !rc; i++) {
		rc = start(&x[i].k, &x[i].v, x[i].send, x[i].recv, &x[i].req);
		if (!rc && i == 1)
			rc = hop_ibroadcast(comm, bc, 33, HOP_INT32, nranks - 1, &rbc);
	}
	for (int i = NV - 1; i >= 0 && !rc; i--) {
		rc = hop_wait(&x[i].req, NULL);
		if (!rc)
			check(&x[i], &ok);
	}
	if (!rc)
		rc = hop_wait(&rbc, NULL);
	if (!rc)
		rc = hop_wait(&rar, NULL);
	if (rc) {
		fail(&kk, "interleaved: %s", hop_err_name(rc));
		ok = 0;
	}
	for (int i = 0; i < 64 && !rc; i++)
		if (ar_out[i] != nranks * (nranks - 1) / 2 + nranks * i) {
			fail(&kk, "interleaved allreduce element %d", i);
			ok = 0;
			break;
		}
	for (int i = 0; i < 33 && !rc; i++)
		if (bc[i] != i * 3) {
			fail(&kk, "interleaved broadcast element %d", i);
			ok = 0;
			break;
		}
	for (int i = 0; i < NV; i++)
		release(&x[i]);
	gather_verdict(&kk, ok, 0);
}

/* Each bad argument of the four gets its code and a message naming it;
 * nothing is sent, the comm stays usable. */
static void argument_errors_v(void)
{
	float buf[64] = { 0 };
	size_t cnt[64], at[64], big = ((size_t)1 << 56) / 4 / (size_t)nranks + 1;
	hop_request_t *req;

	for (int b = 0; b < nranks; b++) {
		cnt[b] = 1;
		at[b] = (size_t)b;
	}
	EXPECT_ERR(hop_gather(comm, buf, buf + 8, 1, HOP_FLOAT32, nranks),
		   HOP_ERR_INVALID_ARG, "root");
	EXPECT_ERR(hop_scatter(comm, buf, buf + 8, 1, HOP_FLOAT32, -1),
		   HOP_ERR_INVALID_ARG, "root -1");
	EXPECT_ERR(hop_gather(comm, NULL, buf, 3, HOP_FLOAT32, 0),
		   HOP_ERR_INVALID_ARG, "sendbuf is NULL");
	EXPECT_ERR(hop_scatter(comm, buf, NULL, 3, HOP_FLOAT32, 0),
		   HOP_ERR_INVALID_ARG, "recvbuf is NULL");
	EXPECT_ERR(hop_gather(comm, buf, buf, SIZE_MAX / 2, HOP_FLOAT32, 0),
		   HOP_ERR_INVALID_ARG, "overflows");
	EXPECT_ERR(hop_gather(comm, buf, buf, big, HOP_FLOAT32, 0),
		   HOP_ERR_INVALID_ARG, "2^56");
	EXPECT_ERR(hop_scatter(comm, buf, buf, 2, (hop_dtype_t)99, 0),
		   HOP_ERR_INVALID_ARG, "dtype");
	if (nranks > 1) /* the root's own block, not at recvbuf + root * 2 */
		EXPECT_ERR(hop_gather(comm, buf + 1, buf, 2, HOP_FLOAT32, rank),
			   HOP_ERR_INVALID_ARG, "overlaps");
	EXPECT_ERR(hop_allgatherv(comm, buf, 2, buf + 8, cnt, at, HOP_FLOAT32),
		   HOP_ERR_INVALID_ARG, "sendcount 2");
	EXPECT_ERR(hop_allgatherv(comm, buf, 1, buf + 8, cnt, NULL, HOP_FLOAT32),
		   HOP_ERR_INVALID_ARG, "displs is NULL");
	if (nranks > 1) {
		at[nranks - 1] = 0; /* on block 0 */
		EXPECT_ERR(hop_allgatherv(comm, buf, 1, buf + 8, cnt, at,
					  HOP_FLOAT32),
			   HOP_ERR_INVALID_ARG, "overlap");
		at[nranks - 1] = (size_t)nranks - 1;
	}
	EXPECT_ERR(hop_reducescatterv(comm, buf, buf + 8, cnt, HOP_FLOAT32,
				      (hop_op_t)42), HOP_ERR_INVALID_ARG, "op 42");
	EXPECT_ERR(hop_reducescatterv(comm, buf, buf, NULL, HOP_FLOAT32, HOP_SUM),
		   HOP_ERR_INVALID_ARG, "recvcounts is NULL");
	cnt[0] = big * (size_t)nranks;
	EXPECT_ERR(hop_reducescatterv(comm, buf, buf + 8, cnt, HOP_FLOAT32,
				      HOP_SUM), HOP_ERR_INVALID_ARG, "2^56");
	cnt[0] = 1;
	EXPECT_ERR(hop_iallgatherv(comm, buf, 1, buf + 8, cnt, at, HOP_FLOAT32,
				   NULL), HOP_ERR_INVALID_ARG, "req");
	EXPECT_ERR(hop_igather(NULL, buf, buf, 1, HOP_FLOAT32, 0, &req),
		   HOP_ERR_INVALID_HANDLE, NULL);
	gather_verdict(NULL, !failures, 0);
}

/* Counts above @max_count are left out (--max-count). */
void matrix_v(int only_kind, size_t max_count)
{
	size_t counts[] = { 0, 1, 7, (size_t)nranks + 1, 100003 };
	int idx = 0;

	if (only_kind < 0)
		argument_errors_v();
	for (int ai = 0; ai < NVALGOS; ai++) {
		int kind = valgos[ai].kind;
		int rooted = kind == HOP_COLL_GATHER || kind == HOP_COLL_SCATTER;
		int red = kind == HOP_COLL_REDUCESCATTERV;

		if (only_kind >= 0 && kind != only_kind)
			continue;
		for (size_t ci = 0; ci < sizeof(counts) / sizeof(*counts); ci++) {
			int big = counts[ci] > 1000;

			if (counts[ci] > max_count)
				continue;
			/* every root at counts 1 and 7, else root N-1; the
			 * v-count patterns */
			int every = counts[ci] == 1 || counts[ci] == 7;
			int nsub = rooted ? (every ? nranks : 1) : (big ? 2 : 4);
			for (int sub = 0; sub < nsub; sub++) {
				/* every dtype x op of reducescatterv at count 7,
				 * uneven blocks */
				int npairs = red && counts[ci] == 7 && sub == 1
					     ? HOP_DTYPE_COUNT * HOP_OP_COUNT : 1;

				for (int pi = 0; pi < npairs; pi++) {
					int p = npairs > 1 ? pi : idx * 7;
					struct kase k = {
						kind, valgos[ai].algo,
						(hop_dtype_t)(p % HOP_DTYPE_COUNT),
						red ? (hop_op_t)(p / HOP_DTYPE_COUNT %
								 HOP_OP_COUNT)
						    : HOP_SUM,
						counts[ci], idx % 2,
						rooted && !every ? nranks - 1
						    : big ? sub + 1 : sub,
						idx % 3 == 1 };

					idx++;
					run_v(&k);
				}
			}
		}
		comm->coll->tune.forced[kind] = HOP_ALGO_AUTO;
	}
	if (only_kind < 0)
		interleaved();
}

/*
 * Ranks that disagree: @which 0, allgatherv with rank 0's recvcounts[1]
 * one larger; 1, reducescatterv likewise; 2, gather with rank 0 naming
 * another root; 3, scatter with rank 0 passing another count. Every rank
 * must get an error, some HOP_ERR_MISMATCH: a rank that only sends (a
 * scatter root, gather's non-roots) may finish its part first, and then
 * its next call (a barrier here) fails. Nobody hangs or writes past its
 * buffer (ASan runs check that).
 */
int mismatch_v_case(int which)
{
	size_t N = (size_t)nranks, cnt[64], displs[64];
	float *a = xmalloc(64 * 1000 * 4), *b = xmalloc(64 * 1000 * 4);
	int rc;

	for (size_t i = 0; i < 64 * 1000; i++)
		a[i] = 1;
	for (size_t q = 0; q < N && q < 64; q++) {
		cnt[q] = 100 + q;
		displs[q] = q * 1000;
	}
	if (rank == 0)
		cnt[1 % N] += 1;
	switch (which) {
	case 0:
		rc = hop_allgatherv(comm, a, cnt[rank], b, cnt, displs,
				    HOP_FLOAT32);
		break;
	case 1:
		rc = hop_reducescatterv(comm, a, b, cnt, HOP_FLOAT32, HOP_SUM);
		break;
	case 2:
		rc = hop_gather(comm, a, b, 100, HOP_FLOAT32,
				rank == 0 ? 1 : 0);
		break;
	default:
		rc = hop_scatter(comm, a, b, rank == 0 ? 101 : 100,
				 HOP_FLOAT32, 0);
	}
	/* a rank that only sends cannot know yet: the next call must */
	if (!rc)
		rc = hop_barrier(comm);
	printf("coll_matrix mismatch: rank %d got %s: %s\n", rank,
	       hop_err_name(rc), hop_comm_last_error(comm));
	free(a);
	free(b);
	return rc ? 0 : 1;
}
