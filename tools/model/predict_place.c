/*
 * predict_place.c - hop-model predict for a placement of ranks on hosts:
 * per collective and size, the best flat algorithm (on the inter link
 * when the ranks span hosts), the hierarchical form with the algorithm of
 * each phase, and the one hop picks (hop_model_choose_place(), what a
 * communicator with this placement and these links chooses).
 */
#include "hop_model.h"

#include <math.h>
#include <stdio.h>

#include "model/model.h"

/* The best flat choice (@ch's own unless it picked the hierarchical form). */
static struct hop_model_choice flat_of(int kind, size_t m,
				       const struct hm_place *p,
				       const struct hop_model_choice *ch)
{
	struct hop_model_choice f = *ch;

	if (ch->algo == HOP_ALGO_HIER)
		hop_model_choose_flat_place(kind, m, &p->pl, p->links,
					    HOP_ALGO_AUTO, &f);
	return f;
}

/* Every flat algorithm's price on @p, "ring=1.5e-3 tree=..." (the last
 * column: what a measured best that hop did not pick was priced at). */
static void every_flat(int kind, size_t m, const struct hm_place *p)
{
	int algos[HOP_ALGO_COUNT], na = hop_model_algos(kind, algos,
							HOP_ALGO_COUNT);
	const char *sep = "";

	for (int i = 0; i < na; i++) {
		struct hop_model_choice c;

		if (algos[i] == HOP_ALGO_HIER)
			continue;
		hop_model_choose_flat_place(kind, m, &p->pl, p->links,
					    algos[i], &c);
		printf("%s%s=%.9g", sep, hop_model_algo_name(algos[i]),
		       c.predicted);
		sep = " ";
	}
}

static void row_csv(int kind, size_t m, const struct hm_place *p,
		    const struct hop_model_choice *ch)
{
	struct hop_model_choice f = flat_of(kind, m, p, ch);

	printf("%s,%d,%d,%d,%zu,%s,%.9g,%s,%s,%.9g,%s,%.9g,",
	       hop_model_kind_name(kind), p->pl.nranks, p->pl.nhosts,
	       p->pl.lmax, m, hop_model_algo_name(f.algo), ch->flat,
	       hop_model_algo_name(ch->hier_sub[0]),
	       hop_model_algo_name(ch->hier_sub[1]), ch->hier,
	       hop_model_algo_name(ch->algo), ch->predicted);
	every_flat(kind, m, p);
	printf("\n");
}

static void row_text(int kind, size_t m, const struct hm_place *p,
		     const struct hop_model_choice *ch)
{
	struct hop_model_choice f = flat_of(kind, m, p, ch);
	char t1[32], t2[32], hier[64] = "-";

	if (!isnan(ch->hier))
		snprintf(hier, sizeof(hier), "%s (%s%s + %s)",
			 hm_time(ch->hier, t2, sizeof(t2)),
			 ch->hier_leaders ? "leaders: " : "",
			 hop_model_algo_name(ch->hier_sub[0]),
			 hop_model_algo_name(ch->hier_sub[1]));
	printf("%14zu %13s %-13s %-45s %s\n", m,
	       hm_time(ch->flat, t1, sizeof(t1)), hop_model_algo_name(f.algo),
	       hier, hop_model_algo_name(ch->algo));
}

int hm_predict_place(const struct hm_place *p, const int *kinds, int nk,
		     const size_t *sizes, int ns, int csv)
{
	struct hop_model_choice ch;

	if (csv)
		printf("collective,nranks,hosts,max_ppn,bytes,flat_algo,"
		       "flat_seconds,hier_intra,hier_inter,hier_seconds,"
		       "picked,picked_seconds,every_flat\n");
	for (int ki = 0; ki < nk; ki++) {
		if (!csv)
			printf("\n# %s, N = %d on %d hosts%s\n%14s %13s %-13s "
			       "%-45s %s\n", hop_model_kind_name(kinds[ki]),
			       p->pl.nranks, p->pl.nhosts,
			       hop_model_hier_applies(kinds[ki], &p->pl) ? ""
			       : " (no hierarchical form here)", "bytes",
			       "flat", "flat algo", "hier (intra + inter)",
			       "pick");
		for (int si = 0; si < ns; si++) {
			if (hop_model_choose_place(kinds[ki], sizes[si], &p->pl,
						   p->links, HOP_ALGO_AUTO, &ch))
				return 1;
			if (csv)
				row_csv(kinds[ki], sizes[si], p, &ch);
			else
				row_text(kinds[ki], sizes[si], p, &ch);
		}
	}
	return 0;
}
