/*
 * probe_check - read a hop-probe profile and check that its values are
 * sane, for tests/integration/probe_shm_tcp.sh: the JSON profile (--json)
 * with hop-probe's reader, every part of it; the link profile
 * (--save-profile, HOP_PROFILE) with libhop's reader, the numbers the cost
 * model uses.
 *
 * usage: probe_check FILE PROVIDER NPAIRS
 * Exit 0 and one summary line per pair, or 1 naming the first bad value.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/profile_json.h"

static int bad(const char *file, int i, const char *what, double v)
{
	fprintf(stderr, "probe_check: %s: pairs[%d]: %s = %g is not sane\n", file,
		i, what, v);
	return 1;
}

/* A link profile starts with its format name (a JSON one with "{"). */
static int link_file(const char *path)
{
	char head[sizeof(HOP_PROFILE_LINK_FORMAT)] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (fread(head, 1, sizeof(head) - 1, f) != sizeof(head) - 1)
		head[0] = '\0';
	fclose(f);
	return !strcmp(head, HOP_PROFILE_LINK_FORMAT);
}

static int check_link(const char *file, const char *provider, int npairs)
{
	struct hop_profile p;
	char err[512];
	int ret = 0;

	if (hop_profile_link_load(file, &p, err, sizeof(err))) {
		fprintf(stderr, "probe_check: %s\n", err);
		return 1;
	}
	if (strcmp(p.provider, provider) || p.npairs != npairs) {
		fprintf(stderr, "probe_check: %s: provider %s with %d pairs, expected "
			"%s with %d\n", file, p.provider, p.npairs, provider, npairs);
		ret = 1;
	}
	for (int i = 0; i < p.npairs && !ret; i++) {
		const struct hop_profile_pair *q = &p.pairs[i];

		if (!(q->alpha_us > 0))
			ret = bad(file, i, "alpha_us", q->alpha_us);
		else if (!(q->beta_gbps > 0))
			ret = bad(file, i, "beta_GBps", q->beta_gbps);
		else if (!(q->beta_mem_gbps > 0))
			ret = bad(file, i, "beta_mem_GBps", q->beta_mem_gbps);
		else if (!(q->duplex_factor > 0))
			ret = bad(file, i, "duplex_factor", q->duplex_factor);
		else
			printf("probe_check: %s: pair %d->%d %s: alpha %.3f us, "
			       "beta %.3f GB/s: ok\n", file, q->a, q->b,
			       q->provider, q->alpha_us, q->beta_gbps);
	}
	hop_profile_free(&p);
	return ret;
}

int main(int argc, char **argv)
{
	struct hop_profile p;
	char err[512];
	int ret = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: probe_check FILE PROVIDER NPAIRS\n");
		return 2;
	}
	if (link_file(argv[1]))
		return check_link(argv[1], argv[2], atoi(argv[3]));
	if (hop_profile_load(argv[1], &p, err, sizeof(err))) {
		fprintf(stderr, "probe_check: %s\n", err);
		return 1;
	}
	if (strcmp(p.provider, argv[2]) || p.npairs != atoi(argv[3])) {
		fprintf(stderr, "probe_check: %s: provider %s with %d pairs, expected "
			"%s with %s\n", argv[1], p.provider, p.npairs, argv[2], argv[3]);
		ret = 1;
	}
	for (int i = 0; i < p.npairs && !ret; i++) {
		const struct hop_profile_pair *q = &p.pairs[i];
		double parts = q->sw.median_us + q->dma.median_us +
			       q->sync.median_us + q->wire.median_us;

		if (!(q->alpha_us > 0))
			ret = bad(argv[1], i, "alpha_us", q->alpha_us);
		else if (!(q->beta_gbps > 0))
			ret = bad(argv[1], i, "beta_GBps", q->beta_gbps);
		else if (!(q->sw.median_us > 0))
			ret = bad(argv[1], i, "alpha_parts.sw", q->sw.median_us);
		else if (!(parts > 0) || fabs(parts - q->alpha_sum_us) > 1e-6 * parts)
			ret = bad(argv[1], i, "sum of the alpha parts", parts);
		else if (!(q->beta_mem_gbps > 0))
			ret = bad(argv[1], i, "beta_mem_GBps", q->beta_mem_gbps);
		else if (!(q->duplex_factor > 0))
			ret = bad(argv[1], i, "duplex_factor", q->duplex_factor);
		else if (!(q->saf_gbps > 0) || !(q->saf_harmonic_gbps > 0))
			ret = bad(argv[1], i, "store_forward.measured_GBps", q->saf_gbps);
		else if (i == 0 && (q->nagg < 1 || !(q->agg[0].gbps > 0)))
			ret = bad(argv[1], i, "aggregate[0].GBps", q->agg[0].gbps);
		else if (q->nsizes < 2 || !(q->sync_cts.median_us >= 0) ||
			 !(q->sync_step.median_us >= 0))
			ret = bad(argv[1], i, "sweep/sync_cts/sync_step", q->nsizes);
		else
			printf("probe_check: %s: pair %d->%d %s: alpha %.3f us (parts "
			       "%.3f), beta %.3f GB/s, R^2 %.3f, %d sizes: ok\n",
			       argv[1], q->a, q->b, q->provider, q->alpha_us, parts,
			       q->beta_gbps, q->r2, q->nsizes);
	}
	hop_profile_free(&p);
	return ret;
}
