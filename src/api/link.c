/*
 * link.c - hop_link_estimate(): the cost model's link for a transport,
 * from HOP_PROFILE or the built-in defaults, for programs outside hop.
 */
#include <string.h>

#include <hop/model.h>

#include "core/config.h"
#include "model/model.h"
#include "transport/provider.h"

int hop_link_estimate(const char *transport, hop_link_estimate_t *out)
{
	const struct hop_prov_ops *ops;
	struct hop_model_link l;
	struct hop_config cfg;
	const char *profile;
	int ret;

	if (!out)
		return HOP_ERR_INVALID_ARG;
	memset(out, 0, sizeof(*out));
	/* the environment as a communicator reads it, checks included */
	if ((ret = hop_config_load(&cfg, out->detail, sizeof(out->detail))))
		return ret;
	profile = cfg.profile;
	if (!transport || !*transport || !strcmp(transport, "auto"))
		transport = "tcp";
	ops = hop_prov_find(transport);
	ret = hop_model_link_load(profile, transport,
				  ops ? hop_prov_caps_of(ops) : NULL, &l,
				  out->detail, sizeof(out->detail),
				  out->detail, sizeof(out->detail));
	if (ret)
		return ret;
	out->alpha_us = l.alpha * 1e6;
	out->beta_GBps = l.beta / 1e9;
	out->from_profile = profile && *profile;
	return 0;
}
