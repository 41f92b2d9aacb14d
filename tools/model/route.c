/*
 * route.c - hop-model route: the best relay path between two ranks of a
 * HOP_TOPO topology, store-and-forward and pipelined, with k* and times.
 */
#include "hop_model.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <hop/common.h>

#include "model/model.h"
#include "model/topo.h"

static void print_path(const struct hop_topo *t, const struct hop_route *r)
{
	printf("  path:");
	for (int i = 0; i <= r->nhops; i++)
		printf("%s%d", i ? " -> " : " ", r->path[i]);
	printf("  (%d hop%s%s)\n", r->nhops, r->nhops == 1 ? "" : "s",
	       r->nhops > 1 ? ", relays in between" : "");
	for (int i = 0; i < r->nhops; i++) {
		const struct hop_topo_link *l =
			hop_topo_find(t, r->path[i], r->path[i + 1]);

		printf("    hop %d: %d -> %d  alpha %.3f us  beta %.3f GB/s  "
		       "(line %d)\n", i + 1, r->path[i], r->path[i + 1],
		       l->alpha * 1e6, l->beta / 1e9, l->line);
	}
}

/* Continuous k* and T* when every hop of @r has the same link. */
static void print_equal(const struct hop_topo *t, const struct hop_route *r,
			double m)
{
	const struct hop_topo_link *l0;
	char tb[32];

	if (r->nhops < 2)
		return;
	l0 = hop_topo_find(t, r->path[0], r->path[1]);
	for (int i = 1; i < r->nhops; i++) {
		const struct hop_topo_link *l =
			hop_topo_find(t, r->path[i], r->path[i + 1]);

		if (l->alpha != l0->alpha || l->beta != l0->beta)
			return;
	}
	printf("  equal links: k* = sqrt((h-1) m / (a b)) = %.2f, "
	       "T* = %s\n",
	       hop_model_pipe_kreal(l0->alpha, l0->beta, m, r->nhops),
	       hm_time(hop_model_pipe_tstar(l0->alpha, l0->beta, m, r->nhops),
		       tb, sizeof(tb)));
}

static void print_route(const char *title, const struct hop_topo *t,
			const struct hop_route *r, double m, double min_chunk)
{
	char t1[32], t2[32];

	printf("%s\n", title);
	print_path(t, r);
	printf("  store-and-forward: %s\n", hm_time(r->t_saf, t1, sizeof(t1)));
	if (r->k > 1)
		printf("  pipelined: k* = %ld (chunks of %.0f B, at least %.0f "
		       "B): %s\n", r->k, ceil(m / (double)r->k), min_chunk,
		       hm_time(r->t_pipe, t2, sizeof(t2)));
	else
		printf("  pipelined: k* = 1 (chunking does not pay%s): %s\n",
		       m < 2 * min_chunk ? ", or under 2 x min chunk" : "",
		       hm_time(r->t_pipe, t2, sizeof(t2)));
	print_equal(t, r, m);
}

static int same_path(const struct hop_route *a, const struct hop_route *b)
{
	return a->nhops == b->nhops &&
	       !memcmp(a->path, b->path, (size_t)(a->nhops + 1) * sizeof(int));
}

int hm_route(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "topo", required_argument, NULL, 't' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 'T' },
		{ "size", required_argument, NULL, 's' },
		{ "min-chunk", required_argument, NULL, 'm' },
		{ NULL, 0, NULL, 0 },
	};
	const char *topo = NULL, *from_s = NULL, *to_s = NULL, *size_s = NULL;
	struct hop_topo t;
	struct hop_route saf, pipe;
	double min_chunk = 4096;
	long from, to;
	size_t m;
	int c, n, ret;
	char err[512];

	optind = 1;
	while ((c = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (c) {
		case 't': topo = optarg; break;
		case 'f': from_s = optarg; break;
		case 'T': to_s = optarg; break;
		case 's': size_s = optarg; break;
		case 'm':
			if (hm_parse_double("--min-chunk", optarg, 1, 0,
					    &min_chunk))
				return 2;
			break;
		default:
			fprintf(stderr, "hop-model route: see hop-model --help\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hop-model route: unexpected '%s'\n",
			argv[optind]);
		return 2;
	}
	if (!topo || !from_s || !to_s || !size_s) {
		fprintf(stderr, "hop-model route: --topo, --from, --to and "
			"--size are required\n");
		return 2;
	}
	if (hm_parse_ints("--from", from_s, 0, HOP_TOPO_MAX_RANKS - 1, &from,
			  1, &n) ||
	    hm_parse_ints("--to", to_s, 0, HOP_TOPO_MAX_RANKS - 1, &to, 1,
			  &n) ||
	    hm_parse_sizes("--size", size_s, &m, 1, &n))
		return 2;
	if ((ret = hop_topo_load(topo, &t, err, sizeof(err)))) {
		fprintf(stderr, "hop-model route: %s\n", err);
		return 1;
	}
	ret = hop_topo_route(&t, (int)from, (int)to, (double)m, HOP_ROUTE_SAF,
			     min_chunk, &saf, err, sizeof(err));
	if (ret)
		goto err_topo;
	ret = hop_topo_route(&t, (int)from, (int)to, (double)m, HOP_ROUTE_PIPE,
			     min_chunk, &pipe, err, sizeof(err));
	if (ret)
		goto err_saf;
	printf("topology %s: %d ranks, %d links; %zu bytes from rank %ld to "
	       "rank %ld\n", topo, t.nranks, t.nlinks, m, from, to);
	if (same_path(&saf, &pipe)) {
		print_route("best route (store-and-forward and pipelined):", &t,
			    &pipe, (double)m, min_chunk);
	} else {
		print_route("best store-and-forward route:", &t, &saf, (double)m,
			    min_chunk);
		print_route("best pipelined route:", &t, &pipe, (double)m,
			    min_chunk);
	}
	hop_route_free(&pipe);
	hop_route_free(&saf);
	hop_topo_free(&t);
	return 0;
err_saf:
	hop_route_free(&saf);
err_topo:
	fprintf(stderr, "hop-model route: %s: %s\n", topo, err);
	hop_topo_free(&t);
	return 1;
}
