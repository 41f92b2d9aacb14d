/*
 * model.c - the algorithm table, links from provider caps, profile loading, and the
 * choice of the fastest algorithm and chunk count. The closed forms are in
 * model_coll.c, the multi-hop formulas in model_path.c.
 */
#include "model/model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <hop/common.h>
#include <hop/provider.h>

#include "model/model_int.h"
#include "model/profile.h"

/* ---- the algorithm table ---- */

/* What one chunk count divides: nothing, the vector, half, a block m/N. */
enum region { R_NONE = 0, R_WHOLE, R_HALF, R_BLOCK };

struct algo_ent {
	int kind;
	int algo;
	enum region region;     /* R_NONE: not pipelined */
};

/* Table order is the tie-break order of hop_model_choose(). */
static const struct algo_ent algo_tab[] = {
	{ HOP_COLL_BROADCAST, HOP_ALGO_TREE, R_NONE },
	{ HOP_COLL_BROADCAST, HOP_ALGO_CHAIN, R_WHOLE },
	{ HOP_COLL_BROADCAST, HOP_ALGO_FLAT, R_NONE },
	{ HOP_COLL_REDUCE, HOP_ALGO_TREE, R_NONE },
	{ HOP_COLL_REDUCE, HOP_ALGO_CHAIN, R_WHOLE },
	{ HOP_COLL_REDUCE, HOP_ALGO_FLAT, R_NONE },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_RING, R_BLOCK },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_RABENSEIFNER, R_NONE },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_RD, R_NONE },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_TREE, R_WHOLE },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_DBTREE, R_HALF },
	{ HOP_COLL_ALLGATHER, HOP_ALGO_RING, R_NONE },
	{ HOP_COLL_ALLGATHER, HOP_ALGO_BRUCK, R_NONE },
	{ HOP_COLL_REDUCESCATTER, HOP_ALGO_RING, R_BLOCK },
	{ HOP_COLL_REDUCESCATTER, HOP_ALGO_HALVING, R_NONE },
	{ HOP_COLL_BARRIER, HOP_ALGO_DISSEMINATION, R_NONE },
	{ HOP_COLL_ALLTOALL, HOP_ALGO_PAIRWISE, R_BLOCK },
	{ HOP_COLL_ALLTOALL, HOP_ALGO_BRUCK, R_NONE },
	{ HOP_COLL_ALLTOALLV, HOP_ALGO_PAIRWISE, R_NONE },
	{ HOP_COLL_GATHER, HOP_ALGO_TREE, R_NONE },
	{ HOP_COLL_GATHER, HOP_ALGO_FLAT, R_NONE },
	{ HOP_COLL_SCATTER, HOP_ALGO_TREE, R_NONE },
	{ HOP_COLL_SCATTER, HOP_ALGO_FLAT, R_NONE },
	{ HOP_COLL_ALLGATHERV, HOP_ALGO_RING, R_NONE },
	{ HOP_COLL_REDUCESCATTERV, HOP_ALGO_RING, R_BLOCK },
	{ HOP_COLL_BROADCAST, HOP_ALGO_HIER, R_NONE },
	{ HOP_COLL_REDUCE, HOP_ALGO_HIER, R_NONE },
	{ HOP_COLL_ALLREDUCE, HOP_ALGO_HIER, R_NONE },
	{ HOP_COLL_ALLGATHER, HOP_ALGO_HIER, R_NONE },
	{ HOP_COLL_REDUCESCATTER, HOP_ALGO_HIER, R_NONE },
	{ HOP_COLL_BARRIER, HOP_ALGO_HIER, R_NONE },
};
#define NALGO_TAB (sizeof(algo_tab) / sizeof(algo_tab[0]))

static const char *const kind_names[HOP_COLL_KIND_COUNT] = {
	[HOP_COLL_BROADCAST] = "broadcast",
	[HOP_COLL_REDUCE] = "reduce",
	[HOP_COLL_ALLREDUCE] = "allreduce",
	[HOP_COLL_ALLGATHER] = "allgather",
	[HOP_COLL_REDUCESCATTER] = "reducescatter",
	[HOP_COLL_BARRIER] = "barrier",
	[HOP_COLL_ALLTOALL] = "alltoall",
	[HOP_COLL_ALLTOALLV] = "alltoallv",
	[HOP_COLL_GATHER] = "gather",
	[HOP_COLL_SCATTER] = "scatter",
	[HOP_COLL_ALLGATHERV] = "allgatherv",
	[HOP_COLL_REDUCESCATTERV] = "reducescatterv",
};

/* HOP_ALGO names: the enum's suffixes in lower case. */
static const char *const algo_names[HOP_ALGO_COUNT] = {
	[HOP_ALGO_AUTO] = "auto",
	[HOP_ALGO_FLAT] = "flat",
	[HOP_ALGO_TREE] = "tree",
	[HOP_ALGO_CHAIN] = "chain",
	[HOP_ALGO_RING] = "ring",
	[HOP_ALGO_DBTREE] = "dbtree",
	[HOP_ALGO_RD] = "rd",
	[HOP_ALGO_RABENSEIFNER] = "rabenseifner",
	[HOP_ALGO_BRUCK] = "bruck",
	[HOP_ALGO_HALVING] = "halving",
	[HOP_ALGO_DISSEMINATION] = "dissemination",
	[HOP_ALGO_PAIRWISE] = "pairwise",
	[HOP_ALGO_HIER] = "hier",
};

static const struct {
	const char *name;
	int algo;
} aliases[] = {
	{ "binomial", HOP_ALGO_TREE },
	{ "pipeline", HOP_ALGO_CHAIN },
	{ "double_binary_tree", HOP_ALGO_DBTREE },
	{ "recursive_doubling", HOP_ALGO_RD },
	{ "recursive_doubling", HOP_ALGO_BRUCK },
	{ "recursive_halving", HOP_ALGO_HALVING },
};

static const struct algo_ent *algo_find(int kind, int algo)
{
	for (size_t i = 0; i < NALGO_TAB; i++)
		if (algo_tab[i].kind == kind && algo_tab[i].algo == algo)
			return &algo_tab[i];
	return NULL;
}

const char *hop_model_kind_name(int kind)
{
	return kind >= 0 && kind < HOP_COLL_KIND_COUNT ? kind_names[kind] : NULL;
}

int hop_model_kind_lookup(const char *name)
{
	for (int k = 0; name && k < HOP_COLL_KIND_COUNT; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

const char *hop_model_algo_name(int algo)
{
	return algo >= 0 && algo < HOP_ALGO_COUNT ? algo_names[algo] : NULL;
}

int hop_model_algo_lookup(int kind, const char *name)
{
	if (!name)
		return -1;
	for (int a = 0; a < HOP_ALGO_COUNT; a++)
		if (algo_names[a] && !strcmp(name, algo_names[a]) &&
		    algo_find(kind, a))
			return a;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(name, aliases[i].name) &&
		    algo_find(kind, aliases[i].algo))
			return aliases[i].algo;
	return -1;
}

int hop_model_algos(int kind, int *algos, int max)
{
	int n = 0;

	for (size_t i = 0; i < NALGO_TAB; i++) {
		if (algo_tab[i].kind != kind)
			continue;
		if (algos && n < max)
			algos[n] = algo_tab[i].algo;
		n++;
	}
	return n;
}

int hop_model_algo_valid(int kind, int algo)
{
	return algo_find(kind, algo) != NULL;
}

int hop_model_pipelined(int kind, int algo)
{
	const struct algo_ent *e = algo_find(kind, algo);

	return e && e->region != R_NONE;
}

/* ---- links ---- */

/*
 * The link of a provider that declares none in its caps: loopback tcp's
 * numbers (docs/model.md, "Built-in defaults") but for the eager size, which
 * is the one hop gives such a provider (8 KiB); the most pessimistic
 * latency of the built-in providers. gamma: a vectorised f32 sum of 16 MiB
 * runs at 15 GB/s (0.066 ns/B); 0.1 ns/B leaves room for f16/bf16
 * conversion and other ops. max_chunk: 1 MiB; shm, N = 2, ring AllReduce
 * of 32 MiB (hop-bench, 20 calls, two rounds): 12.4-12.9 ms in the 5.6 MB
 * chunks the forms chose, 9.8-10.2 ms in 1 MiB chunks (docs/model.md).
 */
static const struct hop_model_link link_generic = {
	17.0e-6, 1.5e9, 1.0e-10, 1.6, 16384, HOP_MODEL_EAGER,
	HOP_MODEL_MAX_CHUNK
};

void hop_model_link_generic(struct hop_model_link *out)
{
	if (out)
		*out = link_generic;
}

int hop_model_link_default(const struct hop_prov_caps *caps,
			   struct hop_model_link *out)
{
	if (!caps || !out || !(caps->alpha > 0) || !(caps->beta > 0))
		return HOP_ERR_INVALID_ARG;
	*out = link_generic;
	out->alpha = caps->alpha;
	out->beta = caps->beta;
	if (caps->duplex > 0)
		out->duplex = caps->duplex;
	if (caps->min_chunk > 0)
		out->min_chunk = caps->min_chunk;
	if (caps->eager_size)
		out->eager = (double)caps->eager_size;
	return 0;
}

int hop_model_link_check(const struct hop_model_link *l, char *err,
			 size_t errlen)
{
	const char *field = NULL, *want = NULL;
	double v = 0;

	if (!l) {
		if (err && errlen)
			snprintf(err, errlen, "link: NULL");
		return HOP_ERR_INVALID_ARG;
	}
	if (!(isfinite(l->alpha) && l->alpha >= 0))
		field = "alpha", v = l->alpha, want = "finite, >= 0 s";
	else if (!(isfinite(l->beta) && l->beta > 0))
		field = "beta", v = l->beta, want = "finite, > 0 B/s";
	else if (!(isfinite(l->gamma) && l->gamma >= 0))
		field = "gamma", v = l->gamma, want = "finite, >= 0 s/B";
	else if (!(l->duplex >= 1 && l->duplex <= 4))
		field = "duplex", v = l->duplex, want = "in [1, 4]";
	else if (!(isfinite(l->min_chunk) && l->min_chunk >= 1))
		field = "min_chunk", v = l->min_chunk, want = "finite, >= 1 B";
	else if (!(isfinite(l->eager) && l->eager >= 0))
		field = "eager", v = l->eager, want = "finite, >= 0 B";
	else if (!(isfinite(l->max_chunk) && l->max_chunk >= 0))
		field = "max_chunk", v = l->max_chunk, want = "finite, >= 0 B";
	if (!field)
		return 0;
	if (err && errlen)
		snprintf(err, errlen, "link: %s = %g: must be %s", field, v, want);
	return HOP_ERR_INVALID_ARG;
}

int hop_model_summarise(const struct hop_profile *p,
			int (*use)(const struct hop_profile_pair *q,
				   const void *ctx),
			const void *ctx, const struct hop_model_link *base,
			struct hop_model_link *out)
{
	double alpha = -1, beta = INFINITY, duplex = 0, mem = INFINITY;
	int used = 0;

	for (int i = 0; i < p->npairs; i++) {
		const struct hop_profile_pair *q = &p->pairs[i];

		if (!(isfinite(q->alpha_us) && q->alpha_us >= 0 &&
		      isfinite(q->beta_gbps) && q->beta_gbps > 0) ||
		    (use && !use(q, ctx)))
			continue;
		used++;
		alpha = fmax(alpha, q->alpha_us * 1e-6);
		beta = fmin(beta, q->beta_gbps * 1e9);
		if (isfinite(q->duplex_factor))
			duplex = fmax(duplex, q->duplex_factor);
		if (isfinite(q->beta_mem_gbps) && q->beta_mem_gbps > 0)
			mem = fmin(mem, q->beta_mem_gbps * 1e9);
	}
	*out = *base;
	if (!used)
		return 0;
	out->alpha = alpha;
	out->beta = beta;
	if (duplex > 0)
		out->duplex = fmin(fmax(duplex, 1), 2);
	if (isfinite(mem))
		out->gamma = 1.5 / mem;
	return used;
}

int hop_model_link_from_profile(const struct hop_profile *p,
				const struct hop_model_link *base,
				struct hop_model_link *out, char *err,
				size_t errlen)
{
	struct hop_model_link l;

	if (!p || !base || !out) {
		snprintf(err, errlen, "profile: NULL argument");
		return HOP_ERR_INVALID_ARG;
	}
	if (!hop_model_summarise(p, NULL, NULL, base, &l)) {
		snprintf(err, errlen,
			 "profile: no pair has a finite alpha_us >= 0 and "
			 "beta_GBps > 0 (%d pairs)", p->npairs);
		return HOP_ERR_PARSE;
	}
	*out = l;
	return 0;
}

void hop_model_link_oversubscribed(struct hop_model_link *l, int ranks,
				   int cores)
{
	if (!l || cores < 1 || ranks <= cores)
		return;
	double r = (double)ranks / cores;

	l->alpha *= 1 + r;
	l->beta /= r;
}

int hop_model_link_load(const char *profile_path, const char *provider,
			const struct hop_prov_caps *caps,
			struct hop_model_link *out, char *src, size_t srclen,
			char *err, size_t errlen)
{
	struct hop_model_link base;
	struct hop_profile prof;
	int generic;
	char msg[256];
	int ret;

	if (!out) {
		snprintf(err, errlen, "model: NULL link");
		return HOP_ERR_INVALID_ARG;
	}
	if (!provider || !*provider)
		provider = "auto";
	/* a provider without link defaults (a plugin, the simulator) */
	generic = hop_model_link_default(caps, &base) != 0;
	if (generic)
		hop_model_link_generic(&base);
	if (!profile_path || !*profile_path) {
		*out = base;
		if (src && srclen)
			snprintf(src, srclen, generic ? "built-in generic link "
				 "(no defaults for '%s')" : "built-in %s",
				 provider);
		return 0;
	}
	ret = hop_profile_link_load(profile_path, &prof, err, errlen);
	if (ret)
		return ret;
	ret = hop_model_link_from_profile(&prof, &base, out, msg, sizeof(msg));
	if (ret)
		snprintf(err, errlen, "%s: %s", profile_path, msg);
	else if (src && srclen)
		snprintf(src, srclen, "profile %s (%s, %d pairs)", profile_path,
			 prof.provider, prof.npairs);
	hop_profile_free(&prof);
	return ret;
}

/* ---- prediction and choice ---- */

static int link_ok(const struct hop_model_link *l)
{
	return l && hop_model_link_check(l, NULL, 0) == 0;
}

double hop_model_predict_inplace(int kind, int algo, size_t bytes,
				 int nranks, const struct hop_model_link *l,
				 long chunks, int inplace)
{
	const struct algo_ent *e = algo_find(kind, algo);

	if (!e || nranks < 1 || !link_ok(l) || chunks < 1)
		return NAN;
	if (nranks == 1)
		return 0;
	if (e->region == R_NONE)
		chunks = 1;
	return hop_model_form(kind, algo, bytes, nranks, l, chunks, inplace);
}

double hop_model_predict(int kind, int algo, size_t bytes, int nranks,
			 const struct hop_model_link *l, long chunks)
{
	return hop_model_predict_inplace(kind, algo, bytes, nranks, l, chunks,
					 1);
}

int hop_model_per_rank(int kind)
{
	return kind == HOP_COLL_ALLGATHER || kind == HOP_COLL_REDUCESCATTER ||
	       kind == HOP_COLL_GATHER || kind == HOP_COLL_SCATTER ||
	       kind == HOP_COLL_ALLGATHERV || kind == HOP_COLL_REDUCESCATTERV;
}

/* Bytes one chunk count divides (see enum region); for the per-rank
 * kinds @bytes is already one block. */
static double region_bytes(const struct algo_ent *e, size_t bytes,
			   int nranks)
{
	/* alltoall's @bytes is the per-peer block */
	int per_rank = hop_model_per_rank(e->kind) ||
		       e->kind == HOP_COLL_ALLTOALL;
	double n = nranks > 0 ? nranks : 1;

	switch (e->region) {
	case R_WHOLE: return per_rank ? (double)bytes * n : (double)bytes;
	case R_HALF: return (per_rank ? (double)bytes * n : (double)bytes) / 2;
	case R_BLOCK: return per_rank ? (double)bytes : (double)bytes / n;
	default: return 0;
	}
}

/* AllToAll pairwise cuts a block only into eager pieces, and only a
 * block of at most HOP_A2A_PIECES eager sizes and
 * HOP_A2A_PIECES_MAX_BYTES: its pieces skip the
 * rendezvous's request and clear to send, while more of them would wait
 * for the receiver's eager slots. Like any chunk, a piece is no smaller
 * than the link's min_chunk: on tcp (16 KiB) 8 KiB pieces measured
 * slower than one rendezvous (2 ranks, 32 KiB blocks: 42 against 37 us).
 * Whole blocks otherwise. */
static long a2a_pieces(size_t bytes, const struct hop_model_link *l)
{
	double k = l->eager > 0 ? ceil((double)bytes / l->eager) : 1;

	return k > 1 && k <= HOP_A2A_PIECES &&
			       bytes <= HOP_A2A_PIECES_MAX_BYTES &&
			       bytes / k >= l->min_chunk
		       ? (long)k : 1;
}

long hop_model_max_chunks(int kind, int algo, size_t bytes, int nranks,
			  const struct hop_model_link *l)
{
	const struct algo_ent *e = algo_find(kind, algo);

	if (!e || e->region == R_NONE || !link_ok(l) || nranks < 2)
		return 1;
	if (kind == HOP_COLL_ALLTOALL)
		return a2a_pieces(bytes, l);
	return hop_model_kmax(region_bytes(e, bytes, nranks), l->min_chunk);
}

size_t hop_model_chunk_bytes(int kind, int algo, size_t bytes, int nranks,
			     long chunks)
{
	const struct algo_ent *e = algo_find(kind, algo);
	double r, c;

	if (!e)
		return bytes > 0 ? bytes : 1;
	if (e->region == R_NONE) {  /* one chunk: the whole vector */
		r = hop_model_per_rank(e->kind)
			    ? (double)bytes * (nranks > 0 ? nranks : 1)
			    : (double)bytes;
		chunks = 1;
	} else {
		r = region_bytes(e, bytes, nranks);
	}
	c = ceil(r / (double)(chunks > 0 ? chunks : 1));
	return c >= 1 ? (size_t)c : 1;
}

size_t hop_model_sched_chunk(int kind, int algo, size_t bytes, int nranks,
			     long chunks)
{
	return (hop_model_chunk_bytes(kind, algo, bytes, nranks, chunks) + 7) &
	       ~(size_t)7;
}

struct pred_ctx {
	int kind, algo, nranks;
	size_t bytes;
	const struct hop_model_link *l, *intra;
	int per_host;
};

static double pred_eval(long k, const void *ctx)
{
	const struct pred_ctx *c = ctx;

	if (c->intra)
		return hop_model_form_hosts(c->kind, c->algo, c->bytes,
					    c->nranks, c->intra, c->l,
					    c->per_host, k, 1);
	return hop_model_form(c->kind, c->algo, c->bytes, c->nranks, c->l, k,
			      1);
}

long hop_model_best_chunks(int kind, int algo, size_t bytes, int nranks,
			   const struct hop_model_link *l)
{
	return hop_model_best_chunks_hosts(kind, algo, bytes, nranks, NULL, l,
					   0);
}

long hop_model_best_chunks_hosts(int kind, int algo, size_t bytes,
				 int nranks,
				 const struct hop_model_link *intra,
				 const struct hop_model_link *l, int per_host)
{
	struct pred_ctx c = { kind, algo, nranks, bytes, l, intra, per_host };
	long kmax = hop_model_max_chunks(kind, algo, bytes, nranks, l), keager;
	long kmin = 1;
	double t_rndv, t_eager, region;

	if (kmax <= 1)
		return 1;
	region = region_bytes(algo_find(kind, algo), bytes, nranks);
	if (l->max_chunk > 0 && region > l->max_chunk)
		kmin = (long)fmin(ceil(region / l->max_chunk), (double)kmax);
	/* the time jumps where chunks become eager: search each side */
	keager = l->eager > 0 ? (long)ceil(region / l->eager) : 1;
	if (keager <= kmin || keager > kmax)
		return hop_model_argmin(pred_eval, &c, kmin, kmax, NULL);
	long k1 = hop_model_argmin(pred_eval, &c, kmin, keager - 1, &t_rndv);
	long k2 = hop_model_argmin(pred_eval, &c, keager, kmax, &t_eager);
	return t_eager < t_rndv ? k2 : k1;
}

int hop_model_choose(int kind, size_t bytes, int nranks,
		     const struct hop_model_link *l, int *algo, long *chunks,
		     double *predicted)
{
	int best = -1;
	long bk = 1;
	double bt = INFINITY;

	if (!hop_model_kind_name(kind) || nranks < 1 || !link_ok(l))
		return HOP_ERR_INVALID_ARG;
	for (size_t i = 0; i < NALGO_TAB; i++) {
		const struct algo_ent *e = &algo_tab[i];
		long k;
		double t;

		/* the hierarchical form needs a placement: model_hier.c */
		if (e->kind != kind || e->algo == HOP_ALGO_HIER)
			continue;
		k = hop_model_best_chunks(kind, e->algo, bytes, nranks, l);
		t = hop_model_predict(kind, e->algo, bytes, nranks, l, k);
		if (best < 0 || t < bt) {
			best = e->algo;
			bk = k;
			bt = t;
		}
	}
	if (algo)
		*algo = best;
	if (chunks)
		*chunks = bk;
	if (predicted)
		*predicted = bt;
	return 0;
}
