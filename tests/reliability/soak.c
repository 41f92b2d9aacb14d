/*
 * soak.c - many random collectives over one communicator, each checked
 * against a reference computed here, with resident memory watched.
 *
 * Every rank draws the same sequence from the seed: the collective
 * (allreduce, broadcast, reduce, allgather, reducescatter, barrier), the
 * dtype, the op, the size (0, or log-uniform up to --max-bytes per rank
 * buffer, 4 MiB by default), the root, in place or not, blocking or i-form
 * + hop_wait, and the algorithm, chunk size and pipeline depth, forced
 * through the collectives' tuning hook (comm->coll->tune, what HOP_ALGO
 * sets). Inputs are small integers (or powers of two for prod), so every
 * dtype including f16/bf16 reduces exactly and the reference is exact;
 * results are compared bit for bit, and bytes past the result (and a
 * non-root's reduce buffer) must stay untouched.
 *
 * Private resident memory (/proc/self/statm resident - shared: the shm
 * segments of the peers are shared and their pages count once touched)
 * is taken after a warm-up (every
 * algorithm at the largest size in every dtype, then the first 20% of
 * the random ones) and at the end. Two caches of hop keep their
 * high-water mark and may still grow after that, boundedly: the
 * collectives' scratch buffer (the largest any schedule needed) and the
 * pool of unexpected eager messages (the most ever queued at once, at
 * most the chunks of one collective). Growth beyond theirs larger than
 * --rss-bound KiB (default 8192: pages of buffers hop already holds are
 * touched for the first time, malloc keeps freed pages) on any rank fails,
 * and so does growth of the live heap (glibc's mallinfo2: what is
 * allocated and not freed, the signature of a leak) beyond the caches by
 * more than --heap-bound KiB (default 1024). Rank 0 prints the totals:
 *   soak: 4 ranks (shm), 10000 collectives (allreduce 1657, ...), wrong
 *   results 0, errors 0
 *   soak: private RSS after warm-up -> end (KiB): rank 0 20480 -> 20484;
 *   growth per rank (of which hop's bounded caches): rank 0 +4 (+0), ...
 *
 * Run it through a launcher: hop-run -n 4 -- soak [--count N] [--seed S]
 * [--max-bytes B] [--rss-bound KIB] [--heap-bound KIB] (it joins with
 * hop_comm_init_env()).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hop/hop.h>

#include "coll/coll_int.h"
#include "core/core.h"
#include "p2p/p2p_priv.h"
#include "soak.h"

#define GUARD 64
#define GUARD_BYTE 0xa5

enum { C_ALLREDUCE, C_BROADCAST, C_REDUCE, C_ALLGATHER, C_REDSCAT,
       C_BARRIER, C_COUNT };
static const char *const cname[C_COUNT] = { "allreduce", "broadcast",
	"reduce", "allgather", "reducescatter", "barrier" };
static const int ckind[C_COUNT] = { HOP_COLL_ALLREDUCE, HOP_COLL_BROADCAST,
	HOP_COLL_REDUCE, HOP_COLL_ALLGATHER, HOP_COLL_REDUCESCATTER,
	HOP_COLL_BARRIER };

/* the algorithms of each collective (src/coll/select.c) */
static const int algos[C_COUNT][6] = {
	[C_ALLREDUCE] = { HOP_ALGO_AUTO, HOP_ALGO_RING, HOP_ALGO_TREE,
			  HOP_ALGO_DBTREE, HOP_ALGO_RD, HOP_ALGO_RABENSEIFNER },
	[C_BROADCAST] = { HOP_ALGO_AUTO, HOP_ALGO_FLAT, HOP_ALGO_TREE,
			  HOP_ALGO_CHAIN, -1 },
	[C_REDUCE] = { HOP_ALGO_AUTO, HOP_ALGO_FLAT, HOP_ALGO_TREE,
		       HOP_ALGO_CHAIN, -1 },
	[C_ALLGATHER] = { HOP_ALGO_AUTO, HOP_ALGO_RING, HOP_ALGO_BRUCK, -1 },
	[C_REDSCAT] = { HOP_ALGO_AUTO, HOP_ALGO_RING, HOP_ALGO_HALVING, -1 },
	[C_BARRIER] = { HOP_ALGO_AUTO, HOP_ALGO_DISSEMINATION, -1 },
};

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t x = (r->s += 0x9e3779b97f4a7c15ull);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

/* ------------------------------------------------------------------ */

struct soak {
	hop_comm_t *comm;
	int rank, n;
	size_t max_bytes;
	uint8_t *in, *out;      /* max_bytes + GUARD each */
	uint8_t *tab_in[64];    /* per rank: P encoded inputs */
	uint8_t *tab_red;       /* P encoded reductions */
	long wrong, errors, done;
	uint64_t ns_hop, ns_check;      /* time in hop calls / in checking */
	long per_kind[C_COUNT];
	char first_bad[512];
};

struct pick {
	int c, algo, inplace, nonblocking, root;
	hop_dtype_t t;
	hop_op_t op;
	size_t count;           /* elements (per rank for allgather/rs) */
	size_t chunk;
	int depth;
	uint64_t salt;
};

static void draw(struct soak *s, struct rng *r, struct pick *p, int c,
		 int biggest)
{
	size_t es, cap, bytes;
	int na = 0;

	memset(p, 0, sizeof(*p));
	p->c = c;
	p->t = (hop_dtype_t)below(r, HOP_DTYPE_COUNT);
	p->op = (hop_op_t)below(r, HOP_OP_COUNT);
	p->root = (int)below(r, (uint64_t)s->n);
	p->inplace = below(r, 3) == 0;
	p->nonblocking = below(r, 4) == 0;
	while (na < 6 && algos[c][na] >= 0 && (na == 0 || algos[c][na]))
		na++;
	p->algo = algos[c][below(r, (uint64_t)na)];
	p->chunk = (size_t[]){ 0, 0, 4096, 65536, 1 << 20 }[below(r, 5)];
	p->depth = (int[]){ 0, 0, 1, 2, 4 }[below(r, 5)];
	p->salt = rnd(r);
	es = hop_dtype_size(p->t);
	cap = s->max_bytes;
	if (c == C_ALLGATHER || c == C_REDSCAT)
		cap /= (size_t)s->n;
	if (biggest) {
		bytes = cap;
	} else if (below(r, 10) == 0) {
		bytes = 0;
	} else { /* log-uniform from one element to cap */
		int bits = 0;

		while ((2ull << bits) <= cap)
			bits++;
		bytes = (size_t)1 << below(r, (uint64_t)bits + 1);
		bytes += below(r, bytes);
		if (bytes > cap)
			bytes = cap;
	}
	p->count = bytes / es;
	if (c == C_BARRIER)
		p->count = 0;
}

static void note_bad(struct soak *s, const struct pick *p, const char *what,
		     size_t at)
{
	if (s->first_bad[0])
		return;
	snprintf(s->first_bad, sizeof(s->first_bad), "rank %d, collective %ld: "
		 "%s(%s, count %zu, %s, %s, root %d, %s%s, chunk %zu, depth "
		 "%d): %s at element %zu", s->rank, s->done, cname[p->c],
		 p->algo ? hop_coll_algo_name(p->algo) : "auto", p->count,
		 hop_dtype_name(p->t), hop_op_name(p->op), p->root,
		 p->inplace ? "in place" : "out of place",
		 p->nonblocking ? ", i-form" : "", p->chunk, p->depth, what, at);
}

static int guard_ok(const uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != GUARD_BYTE)
			return 0;
	return 1;
}

/*
 * Inputs and results repeat with period P (prime) along the buffer, the
 * phase shifting by 31 at every period so that a block landing a whole
 * period away from its place is still caught: element i holds entry
 * idx(i) of a table of P encoded values computed once per collective.
 */
#define P 4093

static size_t idx(size_t i)
{
	return (i + (i / P) * 31) % P;
}

/* Encode the tables of @p: every rank's inputs and the reduction, for the
 * first @need entries. */
static void prepare(struct soak *s, const struct pick *p, size_t need)
{
	if (need > P)
		need = P;
	for (int r = 0; r < s->n; r++)
		for (size_t k = 0; k < need; k++)
			soak_encode(s->tab_in[r], k, p->t,
				    soak_value(p->salt, r, k, p->t, p->op));
	for (size_t k = 0; k < need; k++)
		soak_encode(s->tab_red, k, p->t,
			    soak_reduced(p->salt, s->n, k, p->t, p->op));
}

/* Copy (@cmp = 0) table @tab into elements [from, from + cnt) of the
 * buffer starting at element @from, or compare them (1 when equal). */
static int runs(uint8_t *buf, size_t from, size_t cnt, const uint8_t *tab,
		size_t es, int cmp)
{
	size_t i = from, end = from + cnt;

	while (i < end) {
		size_t k = idx(i), run = P - k, blk_end = (i / P + 1) * P;

		if (run > blk_end - i)
			run = blk_end - i;
		if (run > end - i)
			run = end - i;
		if (cmp) {
			if (memcmp(buf + (i - from) * es, tab + k * es, run * es))
				return 0;
		} else {
			memcpy(buf + (i - from) * es, tab + k * es, run * es);
		}
		i += run;
	}
	return 1;
}

static int run_one(struct soak *s, const struct pick *p)
{
	struct hop_coll_tune *tune = &s->comm->coll->tune;
	size_t es = hop_dtype_size(p->t), n = (size_t)s->n, me = (size_t)s->rank;
	size_t cnt = p->count, end = 0;        /* bytes of out that may change */
	uint8_t *send = s->in, *out = s->out, *recv = s->out;
	hop_request_t *req = NULL;
	int ret = 0, ok = 1, root = s->rank == p->root;

	memset(out, GUARD_BYTE, s->max_bytes + GUARD);
	prepare(s, p, p->c == C_REDSCAT ? n * cnt : cnt);
	uint8_t *mine = s->tab_in[s->rank];

	switch (p->c) {
	case C_ALLREDUCE:
	case C_REDUCE:
		if (p->inplace)
			send = out;
		runs(send, 0, cnt, mine, es, 0);
		end = cnt * es;
		break;
	case C_BROADCAST:
		send = recv = out;
		if (root)
			runs(out, 0, cnt, mine, es, 0);
		end = cnt * es;
		break;
	case C_ALLGATHER:
		if (p->inplace)
			send = out + me * cnt * es;
		runs(send, 0, cnt, mine, es, 0);
		end = n * cnt * es;
		break;
	case C_REDSCAT:
		if (p->inplace) {
			send = out;
			recv = out + me * cnt * es;
		}
		runs(send, 0, n * cnt, mine, es, 0);
		end = p->inplace ? n * cnt * es : cnt * es;
		break;
	default:
		break;
	}

	tune->forced[ckind[p->c]] = p->algo;
	tune->chunk_size = p->chunk;
	tune->depth = p->depth;
	uint64_t t0 = hop_now_ns();

	switch (p->c) {
	case C_ALLREDUCE:
		ret = p->nonblocking
			? hop_iallreduce(s->comm, send, recv, cnt, p->t, p->op, &req)
			: hop_allreduce(s->comm, send, recv, cnt, p->t, p->op);
		break;
	case C_BROADCAST:
		ret = p->nonblocking
			? hop_ibroadcast(s->comm, out, cnt, p->t, p->root, &req)
			: hop_broadcast(s->comm, out, cnt, p->t, p->root);
		break;
	case C_REDUCE:
		ret = p->nonblocking
			? hop_ireduce(s->comm, send, recv, cnt, p->t, p->op,
				      p->root, &req)
			: hop_reduce(s->comm, send, recv, cnt, p->t, p->op, p->root);
		break;
	case C_ALLGATHER:
		ret = p->nonblocking
			? hop_iallgather(s->comm, send, out, cnt, p->t, &req)
			: hop_allgather(s->comm, send, out, cnt, p->t);
		break;
	case C_REDSCAT:
		ret = p->nonblocking
			? hop_ireducescatter(s->comm, send, recv, cnt, p->t,
					     p->op, &req)
			: hop_reducescatter(s->comm, send, recv, cnt, p->t, p->op);
		break;
	case C_BARRIER:
		ret = p->nonblocking ? hop_ibarrier(s->comm, &req)
				     : hop_barrier(s->comm);
		break;
	}
	if (!ret && req)
		ret = hop_wait(&req, NULL);
	uint64_t t1 = hop_now_ns();

	s->ns_hop += t1 - t0;
	tune->forced[ckind[p->c]] = HOP_ALGO_AUTO;
	tune->chunk_size = 0;
	tune->depth = 0;
	s->per_kind[p->c]++;
	if (ret) {
		s->errors++;
		note_bad(s, p, hop_comm_last_error(s->comm), 0);
		return ret;
	}

	switch (p->c) {
	case C_ALLREDUCE:
		ok = runs(recv, 0, cnt, s->tab_red, es, 1);
		break;
	case C_REDUCE:
		if (root)
			ok = runs(recv, 0, cnt, s->tab_red, es, 1);
		else if (!p->inplace) /* recvbuf is not the root's: untouched */
			ok = guard_ok(out, cnt * es);
		/* in place off the root: the buffer is unspecified */
		break;
	case C_BROADCAST:
		ok = runs(out, 0, cnt, s->tab_in[p->root], es, 1);
		break;
	case C_ALLGATHER:
		for (size_t r = 0; r < n && ok; r++)
			ok = runs(out + r * cnt * es, 0, cnt, s->tab_in[r], es, 1);
		break;
	case C_REDSCAT:
		ok = runs(recv, me * cnt, cnt, s->tab_red, es, 1);
		break;
	default:
		break;
	}
	s->ns_check += hop_now_ns() - t1;
	if (!ok) {
		s->wrong++;
		note_bad(s, p, "wrong result", 0);
	} else if (!guard_ok(out + end, GUARD)) {
		s->wrong++;
		note_bad(s, p, "bytes written past the result", 0);
	}
	return 0;
}

/* What hop keeps between collectives (its high-water marks), for the
 * RSS lines: cached ops, their steps and scratch, registration cache. */
static void diag(const struct soak *s, char *buf, size_t len)
{
	const struct hop_coll *c = s->comm->coll;
	const struct hop_regcache *rc = &s->comm->p2p->rc;
	size_t ops = 0, steps = 0, scratch = 0;

	for (const struct hop_coll_op *op = c->free; op; op = op->next) {
		ops++;
		steps += (size_t)op->reqs_cap;
		scratch += op->scratch_cap;
	}
	snprintf(buf, len, "%zu cached op(s), %zu step slots, %zu KiB scratch; "
		 "regcache %zu entries (%llu misses, %llu evictions); %zu "
		 "unexpected-message slots", ops, steps, scratch >> 10,
		 rc->count, (unsigned long long)rc->misses,
		 (unsigned long long)rc->evictions,
		 s->comm->p2p->uxpool.allocated);
}

/* KiB held by hop's bounded high-water caches: the collectives' scratch
 * (the largest any schedule needed so far) and the pool of unexpected
 * eager messages (the most that were ever queued at once). */
static long cache_kib(const struct soak *s)
{
	const struct hop_p2p *p2p = s->comm->p2p;
	size_t b = 0;

	for (const struct hop_coll_op *op = s->comm->coll->free; op; op = op->next)
		b += op->scratch_cap;
	b += p2p->uxpool.allocated *
	     (sizeof(struct hop_ux) + p2p->uxpool.data_size);
	return (long)(b >> 10);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "count", 1, NULL, 'c' },     { "seed", 1, NULL, 's' },
		{ "max-bytes", 1, NULL, 'm' }, { "rss-bound", 1, NULL, 'b' },
		{ "quiet", 0, NULL, 'q' },     { "heap-bound", 1, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct soak s = { .max_bytes = 4u << 20 };
	long count = 10000, bound = 8192, heap_bound = 1024, warm, rss_warm = 0;
	long cache_warm = 0;
	long warmups = 0, heap_warm = 0;
	uint64_t seed = 20240601;
	int quiet = 0, c, ret;
	struct rng r;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'c': count = atol(optarg); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'm': s.max_bytes = strtoull(optarg, NULL, 0); break;
		case 'b': bound = atol(optarg); break;
		case 'q': quiet = 1; break;
		case 'h': heap_bound = atol(optarg); break;
		default:
			fprintf(stderr, "usage: soak [--count N] [--seed S] "
				"[--max-bytes B] [--rss-bound KIB] [--heap-bound KIB] "
				"[--quiet]\n");
			return 2;
		}
	}
	if (count < 1 || s.max_bytes < 64) {
		fprintf(stderr, "soak: --count >= 1, --max-bytes >= 64\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((ret = hop_comm_init_env(&s.comm))) {
		fprintf(stderr, "soak: init: %s\n", hop_last_init_error());
		return 1;
	}
	s.rank = hop_comm_rank(s.comm);
	s.n = hop_comm_size(s.comm);
	s.in = malloc(s.max_bytes + GUARD);
	s.out = malloc(s.max_bytes + GUARD);
	if (!s.in || !s.out || s.n > 64)
		return 1;
	for (int q = 0; q < s.n; q++)
		if (!(s.tab_in[q] = malloc(P * 8)))
			return 1;
	if (!(s.tab_red = malloc(P * 8)))
		return 1;
	memset(s.in, GUARD_BYTE, s.max_bytes + GUARD); /* touch every page */
	memset(s.out, GUARD_BYTE, s.max_bytes + GUARD);

	/* warm-up: every algorithm of every collective at the largest size,
	 * in and out of place, in three dtypes (uint8 also with the smallest
	 * chunk and deepest pipeline, and from every root), so that step
	 * arrays, registrations, pools and most of the scratch reach their
	 * high-water mark and their pages are touched */
	r.s = seed ^ 0x5eed;
	for (int k = 0; k < C_COUNT; k++) {
		for (int a = 1; a < 6 && algos[k][a] > 0; a++) {
			/* dtypes of 1 byte, 2 bytes widened to f32, 8 bytes; the
			 * rooted ones with every root for the first */
			static const hop_dtype_t wt[3] = { HOP_UINT8, HOP_FLOAT16,
							   HOP_FLOAT64 };
			int roots = k == C_BROADCAST || k == C_REDUCE ? s.n : 1;

			for (int t = 0; t < 2 * (roots + 2); t++) {
				struct pick p;
				int ti = t / 2 < roots ? 0 : t / 2 - roots + 1;

				if (k == C_BARRIER && t)
					break;
				draw(&s, &r, &p, k, 1);
				if (t / 2 < roots)
					p.root = t / 2;
				p.t = wt[ti];
				p.op = HOP_MAX;
				p.algo = algos[k][a];
				p.chunk = t < 2 ? 4096 : 0;
				p.depth = t < 2 ? 4 : 0;
				p.inplace = t % 2;
				p.nonblocking = 0;
				p.count = (k == C_BARRIER ? 0 :
					   k == C_ALLGATHER || k == C_REDSCAT
						   ? s.max_bytes / (size_t)s.n
						   : s.max_bytes) / hop_dtype_size(p.t);
				if (run_one(&s, &p))
					goto out;
				warmups++;
			}
		}
	}
	memset(s.per_kind, 0, sizeof(s.per_kind));
	if (!quiet && s.rank == 0) {
		char d[256];

		diag(&s, d, sizeof(d));
		printf("soak: warm-up done (%ld collectives), RSS %ld KiB "
		       "(private %ld); %s\n", warmups, soak_rss_kib(0), soak_rss_kib(1), d);
	}
	/* caches that keep their high-water mark (scratch per algorithm and
	 * chunking, registrations, pools) fill during the first ~1500 random
	 * collectives: measure from 20% of the run (at least 200) */
	warm = count / 5 > 200 ? count / 5 : (count > 200 ? 200 : count / 2);

	r.s = seed;
	for (s.done = 0; s.done < count; s.done++) {
		struct pick p;

		if (s.done == warm) {
			rss_warm = soak_rss_kib(1);
			heap_warm = soak_heap_kib();
			cache_warm = cache_kib(&s);
		}
		draw(&s, &r, &p, (int)below(&r, C_COUNT), 0);
		size_t sc0 = s.comm->coll->free ? s.comm->coll->free->scratch_cap : 0;

		if (run_one(&s, &p))
			break;
		size_t sc1 = s.comm->coll->free ? s.comm->coll->free->scratch_cap : 0;

		if (!quiet && s.rank == 0 && s.done >= warm && sc1 > sc0)
			printf("soak: collective %ld grew the scratch buffer "
			       "%zu -> %zu KiB: %s(%s, count %zu, %s, %s, %s, "
			       "chunk %zu, depth %d)\n", s.done, sc0 >> 10,
			       sc1 >> 10, cname[p.c], hop_coll_algo_name(p.algo),
			       p.count, hop_dtype_name(p.t), hop_op_name(p.op),
			       p.inplace ? "in place" : "out of place", p.chunk,
			       p.depth);
		if (!quiet && s.rank == 0 &&
		    (s.done + 1) % (count >= 5000 ? 1000 : 250) == 0) {
			char d[256];

			diag(&s, d, sizeof(d));
			printf("soak: %ld/%ld collectives, wrong %ld, RSS %ld "
			       "KiB (private %ld), heap %ld KiB; %s\n", s.done + 1,
			       count, s.wrong, soak_rss_kib(0), soak_rss_kib(1),
			       soak_heap_kib(), d);
		}
	}
	if (!rss_warm) {
		rss_warm = soak_rss_kib(1);
		heap_warm = soak_heap_kib();
		cache_warm = cache_kib(&s);
	}
out:;
	long rss_end = soak_rss_kib(1);
	int64_t mine[6] = { s.done, s.wrong, s.errors, 0, 0, 0 }, *all;
	int failed = 0;

	mine[3] = rss_end - rss_warm;
	mine[4] = cache_kib(&s) - cache_warm;
	mine[5] = soak_heap_kib() - heap_warm;
	all = calloc((size_t)s.n, sizeof(mine));
	if (s.errors) {
		/* the comm failed: report locally, peers see their own error */
		printf("soak: rank %d: %ld collectives done, error: %s\n", s.rank,
		       s.done, s.first_bad);
		failed = 1;
	} else if ((ret = hop_allgather(s.comm, mine, all, 6, HOP_INT64))) {
		printf("soak: rank %d: gathering the counts: %s\n", s.rank,
		       hop_comm_last_error(s.comm));
		failed = 1;
	} else {
		long total_wrong = 0, max_growth = 0, max_heap = 0;
		char line[1024];
		size_t o = 0;

		/* growth not explained by hop's bounded caches */
		for (int q = 0; q < s.n; q++) {
			long g = (long)(all[6 * q + 3] - all[6 * q + 4]);
			long h = (long)(all[6 * q + 5] - all[6 * q + 4]);

			total_wrong += (long)all[6 * q + 1];
			if (g > max_growth)
				max_growth = g;
			if (h > max_heap)
				max_heap = h;
		}
		/* resident pages (first touches, malloc's free lists count
		 * too): a loose bound; the live heap (a leak): a tight one */
		failed = total_wrong != 0 || max_growth > bound ||
			 max_heap > heap_bound;
		if (s.wrong)
			printf("soak: rank %d: first wrong result: %s\n", s.rank,
			       s.first_bad);
		if (s.rank == 0) {
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      "soak: %d ranks (%s), %ld "
					      "collectives (", s.n,
					      hop_comm_transport(s.comm), s.done);
			for (int k = 0; k < C_COUNT; k++)
				o += (size_t)snprintf(line + o, sizeof(line) - o,
						      "%s%s %ld", k ? ", " : "",
						      cname[k], s.per_kind[k]);
			printf("%s), wrong results %ld, errors 0\n", line,
			       total_wrong);
			printf("soak: private RSS after warm-up -> end (KiB): "
			       "rank 0 %ld -> %ld; growth per rank (of which "
			       "hop's bounded caches):", rss_warm, rss_end);
			for (int q = 0; q < s.n; q++)
				printf("%s rank %d %+ld (%+ld)", q ? "," : "", q,
				       (long)all[6 * q + 3], (long)all[6 * q + 4]);
			printf("; beyond the caches max %+ld KiB, bound +%ld KiB: "
			       "%s\n", max_growth, bound,
			       max_growth > bound ? "EXCEEDED" : "ok");
			printf("soak: live heap growth after warm-up (KiB):");
			for (int q = 0; q < s.n; q++)
				printf("%s rank %d %+ld", q ? "," : "", q,
				       (long)all[6 * q + 5]);
			printf("; beyond the caches max %+ld KiB, bound +%ld KiB: "
			       "%s\n", max_heap, heap_bound,
			       max_heap > heap_bound ? "EXCEEDED" : "ok");
			char d[256];

			diag(&s, d, sizeof(d));
			printf("soak: rank 0 spent %.1f s in hop calls, %.1f s "
			       "checking; keeps %s\n", s.ns_hop / 1e9,
			       s.ns_check / 1e9, d);
		}
	}
	free(all);
	for (int q = 0; q < s.n; q++)
		free(s.tab_in[q]);
	free(s.tab_red);
	free(s.in);
	free(s.out);
	hop_comm_destroy(s.comm);
	return failed ? 1 : 0;
}
