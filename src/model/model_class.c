/*
 * model_class.c - the link of each link class (intra: ranks of one host,
 * inter: hosts) from a probe profile or the class's provider, and the
 * placement of a communicator's ranks on hosts, as the model prices them.
 */
#include "model/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>
#include <hop/provider.h>

#include "model/model_int.h"
#include "model/profile.h"

struct class_ctx {
	int cls;
	int loose;      /* pairs without a class apply to @cls */
};

static int class_use(const struct hop_profile_pair *q, const void *ctx)
{
	const struct class_ctx *c = ctx;

	return q->link_class == c->cls || (q->link_class < 0 && c->loose);
}

/* Whether the pairs of @p without a class apply to class @cls: a profile
 * measured one provider; it describes the classes that provider serves,
 * and, when it serves neither (a profile from another setup), both, as it
 * did when one provider served every peer. */
static int loose_applies(const struct hop_profile *p, int cls,
			 const char *const prov[HOP_MODEL_CLASSES])
{
	int match[HOP_MODEL_CLASSES];

	for (int c = 0; c < HOP_MODEL_CLASSES; c++)
		match[c] = prov[c] && p->provider[0] &&
			   !strcmp(prov[c], p->provider);
	return match[cls] || (!match[HOP_MODEL_INTRA] && !match[HOP_MODEL_INTER]);
}

int hop_model_link_class(const struct hop_profile *p, int cls,
			 const char *const prov[HOP_MODEL_CLASSES],
			 const struct hop_model_link *base,
			 struct hop_model_link *out)
{
	struct class_ctx c = { cls, 0 };

	if (!p || !prov || !base || !out || cls < 0 || cls >= HOP_MODEL_CLASSES)
		return HOP_ERR_INVALID_ARG;
	c.loose = loose_applies(p, cls, prov);
	return hop_model_summarise(p, class_use, &c, base, out);
}

/* The built-in link of a provider, the generic one when it has none;
 * 1 when generic. */
static int class_base(const struct hop_prov_caps *caps,
		      struct hop_model_link *out)
{
	if (!hop_model_link_default(caps, out))
		return 0;
	hop_model_link_generic(out);
	return 1;
}

static const char *const class_label[HOP_MODEL_CLASSES] = { "intra", "inter" };

int hop_model_links_load(const char *profile_path,
			 const char *const prov[HOP_MODEL_CLASSES],
			 const struct hop_prov_caps *const caps[HOP_MODEL_CLASSES],
			 struct hop_model_link out[HOP_MODEL_CLASSES],
			 char *src, size_t srclen, char *err, size_t errlen)
{
	struct hop_model_link base[HOP_MODEL_CLASSES];
	struct hop_profile prof;
	int used[HOP_MODEL_CLASSES] = { 0, 0 }, generic[HOP_MODEL_CLASSES];
	int have = profile_path && *profile_path, ret;
	size_t o = 0;

	if (!prov || !caps || !out) {
		snprintf(err, errlen, "model: NULL argument");
		return HOP_ERR_INVALID_ARG;
	}
	for (int c = 0; c < HOP_MODEL_CLASSES; c++)
		generic[c] = class_base(caps[c], &base[c]);
	if (have && (ret = hop_profile_link_load(profile_path, &prof, err,
						 errlen)))
		return ret;
	for (int c = 0; c < HOP_MODEL_CLASSES; c++) {
		used[c] = have ? hop_model_link_class(&prof, c, prov, &base[c],
						      &out[c])
			       : 0;
		if (!have)
			out[c] = base[c];
	}
	if (have && !used[HOP_MODEL_INTRA] && !used[HOP_MODEL_INTER]) {
		snprintf(err, errlen, "%s: profile: no pair has a finite "
			 "alpha_us >= 0 and beta_GBps > 0 (%d pairs)",
			 profile_path, prof.npairs);
		hop_profile_free(&prof);
		return HOP_ERR_PARSE;
	}
	for (int c = 0; c < HOP_MODEL_CLASSES && src && srclen && o < srclen;
	     c++) {
		const char *name = prov[c] && *prov[c] ? prov[c] : "auto";

		if (used[c])
			o += (size_t)snprintf(src + o, srclen - o,
					      "%s%s: profile %s (%d pairs)",
					      c ? "; " : "", class_label[c],
					      profile_path, used[c]);
		else
			o += (size_t)snprintf(src + o, srclen - o, "%s%s: %s%s",
					      c ? "; " : "", class_label[c],
					      generic[c] ? "built-in generic, no "
							   "defaults for "
							 : "built-in ",
					      name);
	}
	if (have)
		hop_profile_free(&prof);
	return 0;
}

int hop_model_place_of(const int *host_of, int n, int nids,
		       struct hop_model_place *out)
{
	int *cnt, runs = 1;

	if (!host_of || !out || n < 1 || nids < 1)
		return HOP_ERR_INVALID_ARG;
	if (!(cnt = calloc((size_t)nids, sizeof(*cnt))))
		return HOP_ERR_NO_MEMORY;
	for (int r = 0; r < n; r++) {
		if (host_of[r] < 0 || host_of[r] >= nids) {
			free(cnt);
			return HOP_ERR_INVALID_ARG;
		}
		cnt[host_of[r]]++;
	}
	out->nranks = n;
	out->nhosts = 0;
	out->lmax = 0;
	out->uniform = 1;
	for (int h = 0; h < nids; h++) {
		if (!cnt[h])
			continue;
		if (out->nhosts && cnt[h] != out->lmax)
			out->uniform = 0;
		out->nhosts++;
		if (cnt[h] > out->lmax)
			out->lmax = cnt[h];
	}
	/* host order: as many runs of one host as there are hosts */
	for (int r = 1; r < n; r++)
		runs += host_of[r] != host_of[r - 1];
	out->blocked = runs == out->nhosts;
	free(cnt);
	return 0;
}
