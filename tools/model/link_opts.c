/*
 * link_opts.c - the link options every hop-model subcommand that
 * predicts shares: --profile or --provider, then per-field overrides.
 */
#include "hop_model.h"

#include <stdio.h>
#include <string.h>

#include "model/profile.h"
#include "transport/provider.h"

int hm_link_opt(struct hm_link_opts *lo, int c, const char *arg)
{
	static const struct {
		int c;
		const char *name;
		double min;
		int open;
	} num[HM_LINK_NFIELDS] = {
		{ HM_OPT_ALPHA, "--alpha-us", 0, 0 },
		{ HM_OPT_BETA, "--beta-GBps", 0, 1 },
		{ HM_OPT_GAMMA, "--gamma-ns", 0, 0 },
		{ HM_OPT_DUPLEX, "--duplex", 1, 0 },
		{ HM_OPT_MINCHUNK, "--min-chunk", 1, 0 },
		{ HM_OPT_EAGER, "--eager", 0, 0 },
		{ HM_OPT_MAXCHUNK, "--max-chunk", 0, 0 },
	};

	if (c == HM_OPT_PROFILE) {
		lo->profile = arg;
		return 1;
	}
	if (c == HM_OPT_PROVIDER) {
		lo->provider = arg;
		return 1;
	}
	for (int i = 0; i < HM_LINK_NFIELDS; i++) {
		if (num[i].c != c)
			continue;
		if (hm_parse_double(num[i].name, arg, num[i].min, num[i].open,
				    &lo->v[i]))
			return -1;
		lo->have[i] = 1;
		return 1;
	}
	return 0;
}

/* The provider a profile measured, whose defaults fill what the profile
 * leaves open (eager size, min chunk); tcp's when it names none. A bad
 * profile is reported by hop_model_link_load(). */
static const struct hop_prov_ops *profile_provider(const char *path)
{
	const struct hop_prov_ops *ops = NULL;
	struct hop_profile prof;
	char err[256];

	if (!hop_profile_link_load(path, &prof, err, sizeof(err))) {
		if (prof.provider[0])
			ops = hop_prov_find(prof.provider);
		hop_profile_free(&prof);
	}
	return ops ? ops : &hop_prov_tcp;
}

int hm_link_load(const char *cmd, const struct hm_link_opts *lo,
		 struct hop_model_link *l, char *src, size_t srclen)
{
	const struct hop_prov_caps *caps;
	char err[512];

	if (lo->profile && lo->provider) {
		fprintf(stderr, "hop-model %s: give --profile or --provider, "
			"not both\n", cmd);
		return 2;
	}
	caps = hop_prov_caps_of(lo->provider ? hop_prov_find(lo->provider)
				: lo->profile ? profile_provider(lo->profile)
					      : &hop_prov_tcp);
	if (lo->provider && hop_model_link_default(caps, l)) {
		fprintf(stderr, "hop-model %s: --provider '%s': expected shm, "
			"tcp or verbs (a built-in provider)\n", cmd,
			lo->provider);
		return 2;
	}
	if (hop_model_link_load(lo->profile, lo->provider ? lo->provider : "tcp",
				caps, l, src, srclen, err, sizeof(err))) {
		fprintf(stderr, "hop-model %s: %s\n", cmd, err);
		return 1;
	}
	if (hm_link_overrides(cmd, lo, l) == 1)
		strncat(src, " with overrides", srclen - strlen(src) - 1);
	if (hop_model_link_check(l, err, sizeof(err))) {
		fprintf(stderr, "hop-model %s: %s\n", cmd, err);
		return 2;
	}
	return 0;
}

int hm_link_overrides(const char *cmd, const struct hm_link_opts *lo,
		      struct hop_model_link *l)
{
	static const double scale[HM_LINK_NFIELDS] = { 1e-6, 1e9, 1e-9, 1, 1, 1, 1 };
	int any = 0;

	(void)cmd;
	for (int i = 0; i < HM_LINK_NFIELDS; i++) {
		double v = lo->v[i] * scale[i];

		if (!lo->have[i])
			continue;
		any = 1;
		switch (i) {
		case 0: l->alpha = v; break;
		case 1: l->beta = v; break;
		case 2: l->gamma = v; break;
		case 3: l->duplex = v; break;
		case 4: l->min_chunk = v; break;
		case 5: l->eager = v; break;
		default: l->max_chunk = v; break;
		}
	}
	return any;
}

void hm_print_link(const struct hop_model_link *l, const char *src)
{
	printf("# link: %s: alpha %.2f us, beta %.3f GB/s, gamma %.3f ns/B, "
	       "duplex %.2f, min chunk %.0f B, eager %.0f B, max chunk %.0f B\n",
	       src, l->alpha * 1e6, l->beta / 1e9, l->gamma * 1e9, l->duplex,
	       l->min_chunk, l->eager, l->max_chunk);
}
