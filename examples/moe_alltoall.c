/*
 * moe_alltoall.c - expert-parallel Mixture-of-Experts routing: the
 * dispatch and combine AllToAllv of an MoE layer.
 *
 * Every rank holds --tokens token activations of --hidden elements of
 * --dtype (bf16, f16 or f32) and --experts experts; each token goes to
 * --topk distinct experts of the N * experts, chosen by a deterministic
 * skewed hash, so the experts' loads are uneven (some get none). Per step:
 *   1. the row counts per expert go to the experts' ranks (hop_alltoall);
 *   2. dispatch: each token's rows go to the ranks of its experts,
 *      grouped by destination rank, then expert (hop_alltoallv);
 *   3. each expert transforms its rows (a stand-in for its MLP: an exact
 *      per-expert bit mask, so results can be checked bit for bit);
 *   4. combine: the rows come back the way they went (hop_alltoallv with
 *      the counts swapped).
 * Each rank recomputes every rank's routing, so it checks the rows it
 * received in dispatch and the rows it got back in combine, byte for
 * byte, against values it derives on its own. It prints the loads, the
 * time and the bandwidth of dispatch + combine (bytes this rank sent and
 * received to other ranks, per second).
 *
 *   hop-run -n 4 -- moe_alltoall [--tokens 2048] [--hidden 1024]
 *       [--dtype bf16|f16|f32] [--experts 2] [--topk 2] [--steps 5]
 */
#include <stdint.h>

#include "example_util.h"

struct moe {
	int rank, n, experts, topk;
	long tokens, hidden, steps;
	size_t es;              /* element size */
	hop_dtype_t dt;
	int *rt;                /* routing of every rank: [r][t][k] -> expert */
};

static uint64_t mix(uint64_t h)
{
	h *= 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static int route(const struct moe *m, int r, long t, int k)
{
	return m->rt[((size_t)r * (size_t)m->tokens + (size_t)t) *
		     (size_t)m->topk + (size_t)k];
}

/* Every rank's routing: the @k-th expert of token @t of rank @r is the
 * smaller of two hashes, which favours low experts (uneven loads), and
 * differs from the token's earlier choices. */
static void route_all(struct moe *m)
{
	int total = m->n * m->experts;

	m->rt = malloc((size_t)m->n * (size_t)m->tokens * (size_t)m->topk *
		       sizeof(int));
	if (!m->rt) {
		fprintf(stderr, "moe_alltoall: out of memory\n");
		exit(1);
	}
	for (int r = 0; r < m->n; r++)
		for (long t = 0; t < m->tokens; t++)
			for (int k = 0; k < m->topk; k++) {
				int *e = &m->rt[((size_t)r * (size_t)m->tokens +
						 (size_t)t) * (size_t)m->topk +
						(size_t)k];
				for (uint64_t salt = 0, dup = 1; dup; salt++) {
					uint64_t a = mix(((uint64_t)r << 40) ^
							 ((uint64_t)t << 8) ^
							 (uint64_t)k ^ (salt << 56));
					uint64_t b = mix(a + 1);
					a %= (uint64_t)total;
					b %= (uint64_t)total;
					*e = (int)(a < b ? a : b);
					dup = 0;
					for (int j = 0; j < k; j++)
						dup |= (uint64_t)(route(m, r, t, j) == *e);
				}
			}
}

/* Byte @i of the activation row of token @t of rank @r. */
static uint8_t act_byte(int r, long t, size_t i)
{
	return (uint8_t)mix(((uint64_t)r << 48) ^ ((uint64_t)t << 20) ^ i);
}

/* The expert's transform: xor of each byte with a per-expert value. */
static uint8_t expert_mask(int e)
{
	return (uint8_t)(0x5a ^ (e * 37));
}

/* Rows rank @r sends to rank @p (in dispatch order), with their token and
 * expert when @tok/@exp are given; returns the count. Order: expert of p
 * ascending, then token. */
static size_t rows_for(const struct moe *m, int r, int p, long *tok, int *exp)
{
	size_t c = 0;

	for (int le = 0; le < m->experts; le++) {
		int e = p * m->experts + le;
		for (long t = 0; t < m->tokens; t++)
			for (int k = 0; k < m->topk; k++)
				if (route(m, r, t, k) == e) {
					if (tok)
						tok[c] = t, exp[c] = e;
					c++;
				}
	}
	return c;
}

static void fail_at(struct moe *m, const char *what, int peer, size_t row)
{
	fprintf(stderr, "moe_alltoall: rank %d: %s: row %zu from/to rank %d "
		"differs\n", m->rank, what, row, peer);
	exit(1);
}

static hop_dtype_t parse_dtype(int argc, char **argv, size_t *es)
{
	const char *s = "bf16";

	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "--dtype"))
			s = argv[i + 1];
	if (!strcmp(s, "f32"))
		return *es = 4, HOP_FLOAT32;
	if (!strcmp(s, "f16"))
		return *es = 2, HOP_FLOAT16;
	if (strcmp(s, "bf16")) {
		fprintf(stderr, "--dtype must be bf16, f16 or f32\n");
		exit(2);
	}
	return *es = 2, HOP_BFLOAT16;
}

/* One rank's side of a layer: the buffers and the per-peer counts and
 * displacements in elements (dispatch: s = to send, r = received). */
struct layer {
	uint8_t *sbuf, *rbuf, *back;
	size_t sc[1024], sd[1024], rc[1024], rd[1024];
	size_t srows, rrows;
	long *tok;              /* token and expert of each row sent */
	int *exp;
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "moe_alltoall: out of memory (%zu B)\n", n);
		exit(1);
	}
	return p;
}

/* Pack this rank's rows by destination and learn the receive layout. */
static void plan(struct moe *m, hop_comm_t *comm, struct layer *l)
{
	size_t row = (size_t)m->hidden, rb = row * m->es, o = 0;
	uint64_t *cs = xmalloc((size_t)m->n * sizeof(uint64_t));
	uint64_t *cr = xmalloc((size_t)m->n * sizeof(uint64_t));

	l->tok = xmalloc((size_t)m->tokens * (size_t)m->topk * sizeof(long));
	l->exp = xmalloc((size_t)m->tokens * (size_t)m->topk * sizeof(int));
	l->srows = 0;
	for (int p = 0; p < m->n; p++) {
		size_t c = rows_for(m, m->rank, p, l->tok + l->srows,
				    l->exp + l->srows);
		l->sc[p] = c * row;
		l->sd[p] = l->srows * row;
		l->srows += c;
		cs[p] = c;
	}
	/* the experts' ranks learn their loads from the senders */
	ex_check(comm, hop_alltoall(comm, cs, cr, 1, HOP_UINT64),
		 "hop_alltoall (row counts)");
	l->rrows = 0;
	for (int p = 0; p < m->n; p++) {
		l->rc[p] = (size_t)cr[p] * row;
		l->rd[p] = l->rrows * row;
		l->rrows += (size_t)cr[p];
	}
	l->sbuf = xmalloc(l->srows * rb);
	l->back = xmalloc(l->srows * rb);
	l->rbuf = xmalloc(l->rrows * rb);
	for (size_t i = 0; i < l->srows; i++, o += rb)
		for (size_t b = 0; b < rb; b++)
			l->sbuf[o + b] = act_byte(m->rank, l->tok[i], b);
	free(cs);
	free(cr);
}

/* Dispatch: every received row is the one its sender's routing says. */
static void check_dispatch(struct moe *m, const struct layer *l)
{
	size_t rb = (size_t)m->hidden * m->es;
	long *tok = xmalloc((size_t)m->tokens * (size_t)m->topk * sizeof(long));
	int *exp = xmalloc((size_t)m->tokens * (size_t)m->topk * sizeof(int));

	for (int p = 0; p < m->n; p++) {
		size_t c = rows_for(m, p, m->rank, tok, exp);
		if (c * (size_t)m->hidden != l->rc[p])
			fail_at(m, "dispatch count", p, c);
		for (size_t i = 0; i < c; i++) {
			const uint8_t *got = l->rbuf + l->rd[p] * m->es + i * rb;
			for (size_t b = 0; b < rb; b++)
				if (got[b] != act_byte(p, tok[i], b))
					fail_at(m, "dispatch", p, i);
		}
	}
	free(tok);
	free(exp);
}

/* The experts: row i of sender p's block goes through its expert. */
static void experts(struct moe *m, struct layer *l)
{
	size_t rb = (size_t)m->hidden * m->es;
	long *tok = xmalloc((size_t)m->tokens * (size_t)m->topk * sizeof(long));
	int *exp = xmalloc((size_t)m->tokens * (size_t)m->topk * sizeof(int));

	for (int p = 0; p < m->n; p++) {
		size_t c = l->rc[p] / (size_t)m->hidden;
		/* the rows' experts: the sender's order (expert, token) */
		rows_for(m, p, m->rank, tok, exp);
		for (size_t i = 0; i < c; i++) {
			uint8_t *row = l->rbuf + l->rd[p] * m->es + i * rb;
			for (size_t b = 0; b < rb; b++)
				row[b] ^= expert_mask(exp[i]);
		}
	}
	free(tok);
	free(exp);
}

static void check_combine(struct moe *m, const struct layer *l)
{
	size_t rb = (size_t)m->hidden * m->es;

	for (size_t i = 0; i < l->srows; i++)
		for (size_t b = 0; b < rb; b++)
			if (l->back[i * rb + b] !=
			    (uint8_t)(act_byte(m->rank, l->tok[i], b) ^
				      expert_mask(l->exp[i])))
				fail_at(m, "combine", m->rank, i);
}

int main(int argc, char **argv)
{
	struct moe m = { 0 };
	static struct layer l;
	hop_comm_t *comm = ex_join();
	double t = 0;

	m.rank = hop_comm_rank(comm);
	m.n = hop_comm_size(comm);
	m.tokens = ex_arg(argc, argv, "--tokens", 2048);
	m.hidden = ex_arg(argc, argv, "--hidden", 1024);
	m.experts = (int)ex_arg(argc, argv, "--experts", 2);
	m.topk = (int)ex_arg(argc, argv, "--topk", 2);
	m.steps = ex_arg(argc, argv, "--steps", 5);
	m.dt = parse_dtype(argc, argv, &m.es);
	if (m.n > 1024 || m.topk > m.n * m.experts) {
		fprintf(stderr, "moe_alltoall: at most 1024 ranks and --topk "
			"at most ranks x --experts\n");
		return 2;
	}
	route_all(&m);
	plan(&m, comm, &l);
	for (long s = 0; s < m.steps; s++) {
		ex_check(comm, hop_barrier(comm), "hop_barrier");
		double t0 = ex_now();
		ex_check(comm, hop_alltoallv(comm, l.sbuf, l.sc, l.sd, l.rbuf,
					     l.rc, l.rd, m.dt),
			 "hop_alltoallv (dispatch)");
		double t1 = ex_now();
		if (s == 0)
			check_dispatch(&m, &l);
		experts(&m, &l);
		double t2 = ex_now();
		ex_check(comm, hop_alltoallv(comm, l.rbuf, l.rc, l.rd, l.back,
					     l.sc, l.sd, m.dt),
			 "hop_alltoallv (combine)");
		t += (t1 - t0) + (ex_now() - t2);
		check_combine(&m, &l);
	}
	/* bytes this rank moved to and from other ranks, both phases */
	size_t own = l.sc[m.rank] * m.es, moved = 2 * ((l.srows + l.rrows) *
		(size_t)m.hidden * m.es - 2 * own);
	double bw = moved * (double)m.steps / t / 1e9;
	uint64_t load = l.rrows, lo = load, hi = load;
	ex_check(comm, hop_allreduce(comm, &load, &lo, 1, HOP_UINT64, HOP_MIN),
		 "hop_allreduce");
	ex_check(comm, hop_allreduce(comm, &load, &hi, 1, HOP_UINT64, HOP_MAX),
		 "hop_allreduce");
	if (m.rank == 0)
		printf("moe_alltoall: %d ranks, %ld tokens x %ld hidden x %zu B "
		       "per rank, top-%d of %d experts: rows per rank %llu.."
		       "%llu; dispatch+combine %.3f ms per step, %.3f GB/s per "
		       "rank; verified\n", m.n, m.tokens, m.hidden, m.es,
		       m.topk, m.n * m.experts, (unsigned long long)lo,
		       (unsigned long long)hi, t / (double)m.steps * 1e3, bw);
	free(l.sbuf);
	free(l.rbuf);
	free(l.back);
	free(l.tok);
	free(l.exp);
	free(m.rt);
	ex_check(comm, hop_comm_destroy(comm), "hop_comm_destroy");
	return 0;
}
