/*
 * profile.c - the measured link profile in memory: initialisation,
 * lookup and prediction (profile.h). The link file HOP_PROFILE names is
 * read in profile_link.c; hop-probe's JSON report is in tools/probe.
 */
#include "model/profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void hop_profile_pair_init(struct hop_profile_pair *q)
{
	struct hop_pstat nan2 = { NAN, NAN };

	memset(q, 0, sizeof(*q));
	q->a = q->b = -1;
	q->link_class = -1;
	q->saf_relay = q->saf_dest = -1;
	q->alpha_us = q->beta_gbps = q->r2 = NAN;
	q->beta_mem_gbps = q->duplex_factor = NAN;
	q->sw = q->dma = q->sync = q->wire = nan2;
	q->sync_cts = q->sync_step = nan2;
	q->post_inline = q->post_noninline = q->post_to_completion = nan2;
	q->oneway_inline = q->oneway_noninline = q->oneway_mem = nan2;
	q->alpha_sum_us = q->alpha_diff_pct = q->timer_overhead_us = NAN;
	q->duplex_size = q->duplex_one_us = q->duplex_both_us = NAN;
	q->saf_size = q->saf_beta1_gbps = q->saf_beta2_gbps = NAN;
	q->saf_gbps = q->saf_harmonic_gbps = NAN;
}

void hop_profile_free(struct hop_profile *p)
{
	if (!p)
		return;
	free(p->pairs);
	p->pairs = NULL;
	p->npairs = 0;
}

const struct hop_profile_pair *hop_profile_find(const struct hop_profile *p,
						int a, int b)
{
	for (int i = 0; p && i < p->npairs; i++)
		if ((p->pairs[i].a == a && p->pairs[i].b == b) ||
		    (p->pairs[i].a == b && p->pairs[i].b == a))
			return &p->pairs[i];
	return NULL;
}

double hop_profile_predict_us(const struct hop_profile_pair *pair,
			      double bytes)
{
	return pair->alpha_us + bytes / (pair->beta_gbps * 1e3);
}
