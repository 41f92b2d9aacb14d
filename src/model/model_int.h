/*
 * model_int.h - what the files of src/model share and nobody else needs.
 */
#ifndef HOP_MODEL_MODEL_INT_H
#define HOP_MODEL_MODEL_INT_H

#include "model/model.h"
#include "model/profile.h"

/*
 * hop_model_form() - The closed form of (@kind, @algo) at @chunks chunks
 * (model_coll.c), in place or not, or NAN when the pair is not modelled.
 * Arguments are already checked: nranks >= 2, chunks >= 1, a valid link.
 */
double hop_model_form(int kind, int algo, size_t bytes, int nranks,
		      const struct hop_model_link *l, long chunks,
		      int inplace);

/*
 * hop_model_form_hosts() - The closed form of (@kind, @algo) over @nranks
 * ranks in host order, @per_host on each host: each edge of the schedule
 * priced on its own link, @intra inside a host, @inter between hosts;
 * NAN when the pair has no such form (the binomial tree AllReduce and
 * the Broadcast and Reduce chains have one; recursive doubling when N and
 * @per_host are powers of two).
 */
double hop_model_form_hosts(int kind, int algo, size_t bytes, int nranks,
			    const struct hop_model_link *intra,
			    const struct hop_model_link *inter, int per_host,
			    long chunks, int inplace);

/*
 * hop_model_best_chunks_hosts() - hop_model_best_chunks() of
 * hop_model_form_hosts() (its bounds from @inter, the link that paces
 * the schedule); @intra NULL: of the one-link form on @inter.
 */
long hop_model_best_chunks_hosts(int kind, int algo, size_t bytes,
				 int nranks,
				 const struct hop_model_link *intra,
				 const struct hop_model_link *inter,
				 int per_host);

/* ceil(log2 @n): the rounds of a doubling or halving over @n ranks
 * (0 for n <= 1). */
static inline int hop_model_ceil_log2(long n)
{
	int l = 0;

	while ((1L << l) < n)
		l++;
	return l;
}

struct hop_profile_pair;

/*
 * hop_model_summarise() - @base with the numbers of the pairs of @p that
 * have a usable alpha and beta and that @use accepts (NULL: every pair):
 * the largest alpha, the smallest beta (the slowest link paces every
 * collective), the largest duplex factor, gamma from the smallest memory
 * bandwidth (1.5 / beta_mem: a reduction moves three bytes per byte where
 * memcpy moves two). Returns the number of pairs used (0: @out = @base).
 */
int hop_model_summarise(const struct hop_profile *p,
			int (*use)(const struct hop_profile_pair *q,
				   const void *ctx),
			const void *ctx, const struct hop_model_link *base,
			struct hop_model_link *out);

#endif /* HOP_MODEL_MODEL_INT_H */
