/*
 * model.h - the alpha-beta(-gamma) cost model: closed forms of every
 * collective algorithm of src/coll, the choice of the fastest one and its
 * pipelining chunk count, and the multi-hop (relay) formulas the p2p layer
 * and hop-model use. Formulas, parameters and defaults: docs/model.md.
 *
 * Units everywhere: seconds, bytes, bytes per second. Pure functions (no
 * I/O, no allocation) except hop_model_link_load(), which reads a profile.
 *
 * Collectives and algorithms are named by src/coll's enums (enum
 * hop_coll_kind and enum hop_coll_algo in coll/sched.h), so the choice
 * needs no translation. @bytes counts like the public API and
 * hop_coll_select(): the buffer of broadcast/reduce/allreduce, and the
 * per-rank block of allgather/reducescatter and the per-peer block of
 * alltoall(v) (the forms use the whole vector m = N * bytes there);
 * barrier ignores it. hop_coll_select() prices alltoallv, whose blocks
 * differ per rank, at 0 B, so that every rank chooses alike.
 */
#ifndef HOP_MODEL_MODEL_H
#define HOP_MODEL_MODEL_H

#include <stddef.h>

#include "coll/kinds.h"
#include "core/config.h" /* HOP_EAGER_AUTO* */

struct hop_profile;
struct hop_prov_caps;

/* AllToAll pairwise: exchanges in flight at once (src/coll/alltoall.c). */
#define HOP_A2A_WINDOW 4
/* AllToAll pairwise: the most eager pieces a block is cut into (half the
 * default HOP_EAGER_SLOTS, so one exchange's pieces fit the slots) */
#define HOP_A2A_PIECES 8
/* ... and the longest block cut at all: 8 of the default 8 KiB eager
 * size. On tcp (32 KiB eager) 4-8 pieces of 32 KiB lost to one
 * rendezvous (docs/results/2026-12-07-tcp-eager.md) */
#define HOP_A2A_PIECES_MAX_BYTES 65536

/* Upper bound of a chunk count (matches HOP_SCHED_MAX_CHUNKS). */
#define HOP_MODEL_MAX_CHUNKS (1L << 20)

/*
 * struct hop_model_link - one link class, as the model sees it.
 * @alpha:     seconds per message (latency, every overhead included).
 * @beta:      bytes per second of one direction.
 * @gamma:     seconds per byte to reduce one operand into another.
 * @duplex:    >= 1; a rank that sends and receives at once moves bytes at
 *             beta / duplex each way (1 = full duplex, 2 = serialised).
 * @min_chunk: bytes; pipelining never cuts a chunk smaller than this.
 * @eager:     bytes; a message larger than this goes by rendezvous (the
 *             p2p layer's HOP_EAGER_SIZE): a request to send and a clear
 *             to send cross first, so it costs HOP_MODEL_RNDV_ALPHAS more
 *             alphas. 0: every message costs one alpha.
 * @max_chunk: bytes; pipelining cuts a region into chunks no larger than
 *             this, so that a chunk is still in the caches when the step
 *             after its transfer reads it (a reduction, the next send);
 *             the forms have no cache term, and without the bound they
 *             pick a few chunks of many MiB. 0: no bound.
 */
struct hop_model_link {
	double alpha;
	double beta;
	double gamma;
	double duplex;
	double min_chunk;
	double eager;
	double max_chunk;
};

/* HOP_EAGER_SIZE=auto of a provider whose caps leave it 0 */
#define HOP_MODEL_EAGER ((double)HOP_EAGER_AUTO)
#define HOP_MODEL_MAX_CHUNK 1048576.0 /* built-in links' max_chunk */
/* Extra alphas of a rendezvous message: its RTS and CTS. */
#define HOP_MODEL_RNDV_ALPHAS 2

/* hop_model_rndv_alpha() - What one message of @len bytes costs beyond
 * len / beta on a link of @alpha and @eager size: alpha, or
 * (1 + HOP_MODEL_RNDV_ALPHAS) alpha above the eager size (0: never). */
static inline double hop_model_rndv_alpha(double alpha, double eager,
					  double len)
{
	return eager > 0 && len > eager ? (1 + HOP_MODEL_RNDV_ALPHAS) * alpha
					: alpha;
}

/* hop_model_msg_alpha() - hop_model_rndv_alpha() on link @l. */
static inline double hop_model_msg_alpha(const struct hop_model_link *l,
					 double len)
{
	return hop_model_rndv_alpha(l->alpha, l->eager, len);
}

/* One hop of a multi-hop path (seconds, bytes per second). */
struct hop_model_hop {
	double alpha;
	double beta;
};

/* ---- links ---- */

/*
 * hop_model_link_default() - The built-in link of a provider whose caps
 * (hop/provider.h) are @caps: their alpha, beta, duplex, min_chunk and
 * eager size (docs/providers.md says where each provider's come from), the
 * model's gamma and max_chunk; what the caps leave 0 is the generic link's.
 * Return: 0, or HOP_ERR_INVALID_ARG for NULL arguments or caps without
 * alpha and beta (@out is then left unchanged).
 */
int hop_model_link_default(const struct hop_prov_caps *caps,
			   struct hop_model_link *out);

/* hop_model_link_generic() - The link of a provider that declares none
 * (loopback tcp's numbers; NULL @out is ignored). */
void hop_model_link_generic(struct hop_model_link *out);

/* hop_model_link_check() - 0 when every field of @l is finite and in
 * range, else HOP_ERR_INVALID_ARG with the field named in @err. */
int hop_model_link_check(const struct hop_model_link *l, char *err,
			 size_t errlen);

/*
 * hop_model_link_from_profile() - Summarise a hop-probe profile as one
 * link: the largest alpha and the smallest beta over its pairs (the
 * slowest link paces every collective), the largest duplex factor, gamma
 * from the memory bandwidth (1.5 / beta_mem: a reduction moves three
 * bytes per byte where memcpy moves two). Fields the profile lacks come
 * from @base (normally hop_model_link_default() of the communicator's
 * provider).
 * Return: 0, or HOP_ERR_PARSE when the profile has no usable pair.
 */
int hop_model_link_from_profile(const struct hop_profile *p,
				const struct hop_model_link *base,
				struct hop_model_link *out, char *err,
				size_t errlen);

/*
 * hop_model_link_oversubscribed() - The link as seen by @ranks ranks that
 * share @cores cores of one host (ranks > cores; otherwise @l is left
 * alone). A step's peer then runs only in its turn among the r = ranks /
 * cores ranks of a core, each of which spends about an alpha on its own
 * step first: alpha becomes (1 + r) alpha. A rank moves data only while
 * it has a core: beta becomes beta / r. Algorithms with fewer steps win
 * sooner. (Measured, docs/model.md "More ranks than cores": the AllReduce
 * of 8 B by recursive doubling on 2 cores pays per step about r alphas
 * more than with 2 ranks, on tcp and shm.)
 */
void hop_model_link_oversubscribed(struct hop_model_link *l, int ranks,
				   int cores);

/*
 * hop_model_link_load() - The link a communicator should use: HOP_PROFILE
 * (@profile_path, via the probe's strict reader) when not NULL or empty,
 * its missing fields from the provider's defaults; else the defaults of
 * @provider, whose caps are @caps (NULL or without a link: the generic
 * link, and @src says so).
 * @src: receives where the numbers came from ("profile p.json (shm, 2
 *       pairs)" or "built-in shm"), may be NULL.
 * Return: 0, HOP_ERR_INVALID_ARG (NULL @out), or the reader's error
 * (HOP_ERR_PARSE, HOP_ERR_SYSTEM, HOP_ERR_NO_MEMORY) with a message
 * naming the file.
 */
int hop_model_link_load(const char *profile_path, const char *provider,
			const struct hop_prov_caps *caps,
			struct hop_model_link *out, char *src, size_t srclen,
			char *err, size_t errlen);

/* ---- names ---- */

/* "broadcast", "reduce", ...; NULL for an invalid kind. */
const char *hop_model_kind_name(int kind);
/* The kind of @name, or -1. */
int hop_model_kind_lookup(const char *name);
/* The HOP_ALGO name of @algo ("ring", "tree", ...); NULL if invalid. */
const char *hop_model_algo_name(int algo);
/* The algorithm of @kind named @name (aliases such as "binomial" and
 * "recursive_doubling" accepted), or -1 when @kind has no such algorithm. */
int hop_model_algo_lookup(int kind, const char *name);
/* Algorithms of @kind in table order; returns how many (<= @max stored). */
int hop_model_algos(int kind, int *algos, int max);
/* 1 when @kind's size is per rank (one block; the vector is N blocks):
 * allgather(v), reducescatter(v), gather, scatter. */
int hop_model_per_rank(int kind);
/* 1 when @algo is an algorithm of @kind. */
int hop_model_algo_valid(int kind, int algo);
/* 1 when @algo of @kind takes a chunk count (pipelined). */
int hop_model_pipelined(int kind, int algo);

/* ---- collectives ---- */

/*
 * hop_model_fbox_cma() - Seconds of a blocking AllReduce, Broadcast,
 * Reduce, AllGather or AllToAll (@kind) of @bytes per rank (an
 * AllToAll's N blocks) through the fast boxes' CMA form
 * (src/coll/fbox_cma.c) among @nranks ranks of one host with @cores
 * cores (0: unknown, no sharing). model_fbox.c.
 */
double hop_model_fbox_cma(int kind, double bytes, int nranks, int cores);

/**
 * hop_model_fbox_cma_root_weight() - The share of a Reduce's vector the
 * root reduces in the CMA form, against 1 for each of the other
 * @nranks - 1 ranks: a rank off the root also writes its segment to the
 * root, so the root takes more and all finish together.
 */
double hop_model_fbox_cma_root_weight(int nranks);

/*
 * hop_model_fbox_wide() - Seconds of a blocking Broadcast, Reduce,
 * AllGather, AllToAll or ReduceScatter (@kind) writing @bytes per rank
 * (an AllToAll's or ReduceScatter's N blocks) through the fast boxes'
 * wide form
 * (src/coll/fbox_wide.c: copied into a shared ring, read there) among
 * @nranks ranks of one host with @cores cores (0: unknown, no sharing).
 * model_fbox.c.
 */
double hop_model_fbox_wide(int kind, double bytes, int nranks, int cores);

/*
 * hop_model_predict() - Predicted time of one collective.
 * @chunks: pipelining chunk count (>= 1; ignored by algorithms that are
 *          not pipelined).
 * Return: seconds (0 for nranks == 1), or NAN when @algo is not an
 * algorithm of @kind, @nranks < 1, @chunks < 1 or @l is NULL.
 */
double hop_model_predict(int kind, int algo, size_t bytes, int nranks,
			 const struct hop_model_link *l, long chunks);

/*
 * hop_model_predict_inplace() - hop_model_predict() for a call in place
 * (@inplace != 0, what hop_model_predict() assumes) or out of place: there
 * recursive doubling, Rabenseifner and Bruck first copy the input to the
 * output at gamma per byte before their first send (docs/model.md).
 */
double hop_model_predict_inplace(int kind, int algo, size_t bytes,
				 int nranks, const struct hop_model_link *l,
				 long chunks, int inplace);

/* Largest chunk count of @algo: region bytes / min_chunk, within
 * [1, HOP_MODEL_MAX_CHUNKS]; 1 for algorithms that are not pipelined. */
long hop_model_max_chunks(int kind, int algo, size_t bytes, int nranks,
			  const struct hop_model_link *l);

/* The chunk count in [1, max_chunks] with the least predicted time (the
 * smallest such count on ties); 1 when not pipelined or invalid. */
long hop_model_best_chunks(int kind, int algo, size_t bytes, int nranks,
			   const struct hop_model_link *l);

/*
 * hop_model_chunk_bytes() - The chunk size to give the schedule
 * (struct hop_coll_args.chunk_bytes) for @chunks chunks: the pipelined
 * region (whole vector for chains and trees, half for the double binary
 * tree, one block m/N for rings) divided by @chunks, rounded up, >= 1;
 * the whole vector (one chunk) for algorithms that are not pipelined.
 */
size_t hop_model_chunk_bytes(int kind, int algo, size_t bytes, int nranks,
			     long chunks);

/*
 * hop_model_sched_chunk() - hop_model_chunk_bytes() rounded up to a
 * multiple of 8 bytes (of every element size), what a schedule is given:
 * its chunks hold whole elements, and there are still at most @chunks.
 */
size_t hop_model_sched_chunk(int kind, int algo, size_t bytes, int nranks,
			     long chunks);

/*
 * hop_model_choose() - The algorithm of @kind with the least predicted
 * time at its best chunk count (ties: the earlier algorithm of the table).
 * @algo, @chunks, @predicted: results; any may be NULL.
 * Return: 0, or HOP_ERR_INVALID_ARG (bad kind, nranks < 1, bad link).
 */
int hop_model_choose(int kind, size_t bytes, int nranks,
		     const struct hop_model_link *l, int *algo, long *chunks,
		     double *predicted);

/* ---- link classes and placement (model_class.c, model_hier.c) ---- */

/* The link classes, numbered as enum hop_link_class (core/core.h):
 * ranks of one host, and hosts. */
#define HOP_MODEL_INTRA 0
#define HOP_MODEL_INTER 1
#define HOP_MODEL_CLASSES 2

/*
 * hop_model_link_class() - The link of class @cls from a profile: its pairs
 * labelled @cls, and its pairs without a class when they apply to @cls (a
 * version 1 profile: they apply to each class whose provider, in @prov,
 * is the profile's provider, and to both classes when neither is),
 * summarised as hop_model_link_from_profile() does. A class no pair
 * applies to gets @base.
 * Return: the number of pairs used (0: @out = *@base), or a negative
 * HOP_ERR_INVALID_ARG for NULL arguments or a bad @cls.
 */
int hop_model_link_class(const struct hop_profile *p, int cls,
			 const char *const prov[HOP_MODEL_CLASSES],
			 const struct hop_model_link *base,
			 struct hop_model_link *out);

/*
 * hop_model_links_load() - The link of each class: from the HOP_PROFILE
 * file @profile_path (NULL or "": none) by hop_model_link_class(), the
 * rest from the built-in defaults of the class's provider (@prov[c],
 * @caps[c]; NULL caps or caps without a link: the generic link).
 * @src: receives one line saying where each class came from (may be NULL).
 * Return: 0, or hop_model_link_load()'s errors with the file named.
 */
int hop_model_links_load(const char *profile_path,
			 const char *const prov[HOP_MODEL_CLASSES],
			 const struct hop_prov_caps *const caps[HOP_MODEL_CLASSES],
			 struct hop_model_link out[HOP_MODEL_CLASSES],
			 char *src, size_t srclen, char *err, size_t errlen);

/*
 * struct hop_model_place - how the ranks of a communicator sit on hosts,
 * as much as the model needs: the hierarchical forms run their intra-host
 * phases on every host at once, so the host with the most ranks paces
 * them.
 * @nranks:  N.
 * @nhosts:  H (>= 1).
 * @lmax:    the most ranks on one host.
 * @uniform: 1 when every host holds @lmax ranks.
 * @blocked: 1 when each host's ranks are consecutive (host order), so
 *           that the flat trees' edges between near ranks stay inside a
 *           host (0, as an initialiser leaves it: priced as if none did).
 */
struct hop_model_place {
	int nranks;
	int nhosts;
	int lmax;
	int uniform;
	int blocked;
};

/* hop_model_place_of() - The placement of @n ranks whose hosts are
 * @host_of[r] (any ids in [0, nids)). 0, or HOP_ERR_INVALID_ARG (an id out
 * of range, n < 1), HOP_ERR_NO_MEMORY. */
int hop_model_place_of(const int *host_of, int n, int nids,
		       struct hop_model_place *out);

/* 1 when @kind has a hierarchical form and @pl lets it differ from the
 * flat one: more than one host and some host with more than one rank. */
int hop_model_hier_applies(int kind, const struct hop_model_place *pl);

/*
 * struct hop_model_choice - the choice for a placement.
 * @algo:      a flat algorithm, or HOP_ALGO_HIER.
 * @sub_algo:  HOP_ALGO_HIER: the algorithm of its intra-host phases and
 *             of its inter-host phase; else HOP_ALGO_AUTO.
 * @chunks:    the chunk count of @algo (HIER: of its inter-host phase).
 * @chunk_bytes: what the schedule is given (hop_model_sched_chunk()).
 * @predicted: seconds; @flat and @hier: the best of each (hier NAN when
 *             it does not apply), @hier_sub the phase algorithms of @hier.
 * @hier_leaders: 1 when @hier (and so HOP_ALGO_HIER when picked) is an
 *             AllReduce's form through one leader per host rather than its
 *             rails (hop_model_hier_predict_form()).
 */
struct hop_model_choice {
	int algo;
	int sub_algo[HOP_MODEL_CLASSES];
	int hier_leaders;
	int hier_sub[HOP_MODEL_CLASSES];
	long chunks;
	size_t chunk_bytes;
	double predicted;
	double flat, hier;
};

/*
 * hop_model_hier_pieces() - How many pieces the rail-parallel AllReduce
 * of @bytes over @per_host ranks on each host runs in (src/coll's
 * builder and the model both read it): as many as keep every rail's slice
 * of a piece at least HOP_MODEL_HIER_PIECE bytes, at most
 * HOP_MODEL_HIER_MAX_PIECES, at least 1. A piece's phase inside the hosts
 * runs while the piece before it crosses between them.
 */
#define HOP_MODEL_HIER_PIECE (1u << 20)
/* The rails' AllReduce is taken over the leaders' when priced this much
 * lower (hop_model_hier_predict_form()). */
#define HOP_MODEL_HIER_TIE 0.02
#define HOP_MODEL_HIER_MAX_PIECES 4
int hop_model_hier_pieces(size_t bytes, int per_host);

/*
 * hop_model_hier_predict() - The time of the hierarchical form of @kind
 * (docs/model-hosts.md "Hierarchical collectives"): the sum of its phases, each
 * priced on its class's link with its own rank count and size; in
 * pieces (hop_model_hier_pieces()), one piece's phases plus the slowest
 * phase once for every further piece. @sub[c]
 * gives the algorithm of class c's phases, HOP_ALGO_AUTO to choose the
 * fastest; @sub_out (may be NULL) receives the algorithms priced and
 * @chunks_out (may be NULL) the inter-host phase's chunk count. An
 * AllReduce with both forms (hop_model_hier_has_forms()) is priced by
 * its rails here.
 * Return: seconds, or NAN when the form does not apply, an argument is
 * bad or @sub names an algorithm some phase of its class cannot run.
 */
double hop_model_hier_predict(int kind, size_t bytes,
			      const struct hop_model_place *pl,
			      const struct hop_model_link links[HOP_MODEL_CLASSES],
			      const int sub[HOP_MODEL_CLASSES],
			      int sub_out[HOP_MODEL_CLASSES], long *chunks_out);

/* The forms of a hierarchical AllReduce on a uniform placement
 * (HOP_HIER_FORM): chosen by the model, the rails, the leaders. */
#define HOP_MODEL_FORM_AUTO (-1)
#define HOP_MODEL_FORM_RAILS 0
#define HOP_MODEL_FORM_LEADERS 1

/* 1 when the hierarchical @kind on @pl has two forms, the rails and the
 * leaders (an AllReduce on a uniform placement of several ranks per host
 * on several hosts). */
int hop_model_hier_has_forms(int kind, const struct hop_model_place *pl);

/*
 * hop_model_hier_predict_form() - hop_model_hier_predict() in @form
 * where the placement has both (HOP_MODEL_FORM_*; elsewhere the one form
 * it has). HOP_MODEL_FORM_AUTO takes the leaders up to the inter link's
 * max_chunk bytes unless the rails are priced more than
 * HOP_MODEL_HIER_TIE lower: the model prices both forms' bytes between
 * hosts alike, while the rails send L times the messages there, and
 * split what is larger over L connections. @leaders_out (may be NULL)
 * receives 1 for the leaders' form.
 */
double hop_model_hier_predict_form(int kind, size_t bytes,
				   const struct hop_model_place *pl,
				   const struct hop_model_link links[HOP_MODEL_CLASSES],
				   const int sub[HOP_MODEL_CLASSES], int form,
				   int sub_out[HOP_MODEL_CLASSES],
				   long *chunks_out, int *leaders_out);

/*
 * hop_model_choose_place() - The choice of @kind for placement @pl: the
 * best flat algorithm (priced on the inter link when @pl spans hosts,
 * else on the intra link) against the hierarchical form when it applies;
 * the flat one on ties. @forced (HOP_ALGO, HOP_ALGO_AUTO = none) fixes
 * the algorithm; HOP_ALGO_HIER forced still chooses its phases.
 * Return: 0, or HOP_ERR_INVALID_ARG (bad kind, placement or link, or a
 * forced algorithm @kind has not).
 */
int hop_model_choose_place(int kind, size_t bytes,
			   const struct hop_model_place *pl,
			   const struct hop_model_link links[HOP_MODEL_CLASSES],
			   int forced, struct hop_model_choice *out);

/* hop_model_choose_place() with the hierarchical AllReduce's @form
 * (HOP_MODEL_FORM_*, HOP_HIER_FORM); hop_model_choose_place() is @form
 * HOP_MODEL_FORM_AUTO. */
int hop_model_choose_place_form(int kind, size_t bytes,
				const struct hop_model_place *pl,
				const struct hop_model_link links[HOP_MODEL_CLASSES],
				int forced, int form,
				struct hop_model_choice *out);

/* hop_model_choose_flat() - The flat choice on one link @l among @n ranks
 * (@forced, a flat algorithm of @kind, or the model's for HOP_ALGO_AUTO)
 * as a struct hop_model_choice (hier NAN). */
void hop_model_choose_flat(int kind, size_t bytes, int n, int forced,
			   const struct hop_model_link *l,
			   struct hop_model_choice *out);

/* hop_model_choose_flat_place() - The flat choice for the placement @pl
 * on its link classes: on one host the intra link; across hosts the inter
 * link, shared by a host's ranks in the algorithms whose every rank sends
 * across hosts at once (hop_model_algo_shares_host_link()); on uniform
 * host-ordered ranks the binomial tree AllReduce edge by edge, each on
 * its class's link (hop_model_form_hosts()). */
void hop_model_choose_flat_place(int kind, size_t bytes,
				 const struct hop_model_place *pl,
				 const struct hop_model_link links[HOP_MODEL_CLASSES],
				 int forced, struct hop_model_choice *out);
/* hop_model_predict_flat_hosts() - The flat @algo of @kind on @pl at
 * @chunks chunks, in place or not, priced edge by edge on its classes'
 * links where the model has such a form (the binomial tree AllReduce on
 * uniform host-ordered ranks on several hosts: hop_model_choose_flat_place()
 * prices it so); NAN elsewhere. */
double hop_model_predict_flat_hosts(int kind, int algo, size_t bytes,
				    const struct hop_model_place *pl,
				    const struct hop_model_link links[HOP_MODEL_CLASSES],
				    long chunks, int inplace);
/* 1 for a flat algorithm whose rounds pair each rank with a partner at a
 * growing distance (recursive doubling and halving, Rabenseifner, Bruck,
 * pairwise exchange, dissemination): with L ranks per host, L of them
 * cross the host's link in the same round. Rings, chains and trees over
 * host-ordered ranks cross it on one edge or two. */
int hop_model_algo_shares_host_link(int algo);

/* ---- multi-hop paths (m bytes over h hops, k chunks) ---- */

/* Store-and-forward over h equal hops: h (a + m/b). */
double hop_model_saf(double a, double b, double m, int h);
/* Pipelined over h equal hops: (h + k - 1)(a + m/(k b)). */
double hop_model_pipe(double a, double b, double m, int h, long k);
/* Continuous optimum k* = sqrt((h-1) m / (a b)) (INFINITY when a == 0). */
double hop_model_pipe_kreal(double a, double b, double m, int h);
/* T* = (h-1) a + m/b + 2 sqrt((h-1) m a / b), the time at real k*
 * (when k* < 1, e.g. h = 1: the time at k = 1). */
double hop_model_pipe_tstar(double a, double b, double m, int h);
/* Chunk-count bound: floor(m / min_chunk) within [1, MAX_CHUNKS]. */
long hop_model_kmax(double m, double min_chunk);
/*
 * hop_model_pipe_kopt() - The integer k that minimises hop_model_pipe():
 * floor and ceil of k*, each clamped to [1, hop_model_kmax()], the better
 * one (the smaller on ties).
 */
long hop_model_pipe_kopt(double a, double b, double m, int h,
			 double min_chunk);

/* Unequal hops: store-and-forward sum(a_i) + m sum(1/b_i). */
double hop_model_path_saf(const struct hop_model_hop *hops, int h,
			  double m);
/* Pipelined: sum of the stages + (k-1) times the slowest stage, a stage
 * being a_i + m/(k b_i). Equals hop_model_pipe() on equal hops. */
double hop_model_path_pipe(const struct hop_model_hop *hops, int h,
			   double m, long k);
/* The integer k in [1, hop_model_kmax()] minimising
 * hop_model_path_pipe() (exact: the function is convex in k). */
long hop_model_path_kopt(const struct hop_model_hop *hops, int h, double m,
			 double min_chunk);

/*
 * hop_model_argmin() - Smallest-value integer k in [lo, hi] of @f (ties:
 * the smallest k): a geometric scan (ratio 5/4), then a ternary search
 * and a final scan inside the bracket around the best scan point. Exact
 * for unimodal @f (every form in this model is).
 */
long hop_model_argmin(double (*f)(long k, const void *ctx), const void *ctx,
		      long lo, long hi, double *fmin);

#endif /* HOP_MODEL_MODEL_H */
