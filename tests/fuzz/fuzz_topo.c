/*
 * fuzz_topo.c - the HOP_TOPO topology parser (src/model/topo.c) on
 * arbitrary text. An accepted topology must be self-consistent (ranks in
 * range, no self links, finite alpha >= 0 and beta > 0, adjacency lists
 * that point at links touching the rank) and routable: a least-time route
 * between two of its ranks either succeeds with a well-formed path or
 * fails with a reason.
 */
#include <math.h>

#include <hop/common.h>

#include "model/topo.h"
#include "fuzz_common.h"

static void check_topo(const struct hop_topo *t)
{
	FUZZ_CHECK(t->nranks >= 1 && t->nranks <= HOP_TOPO_MAX_RANKS,
		   "nranks %d", t->nranks);
	FUZZ_CHECK(t->nlinks >= 0 && t->nlinks <= HOP_TOPO_MAX_LINKS,
		   "nlinks %d", t->nlinks);
	for (int i = 0; i < t->nlinks; i++) {
		const struct hop_topo_link *l = &t->links[i];

		FUZZ_CHECK(l->a >= 0 && l->a < t->nranks && l->b >= 0 &&
			   l->b < t->nranks && l->a != l->b,
			   "link %d: %d-%d of %d ranks", i, l->a, l->b,
			   t->nranks);
		FUZZ_CHECK(isfinite(l->alpha) && l->alpha >= 0 &&
			   isfinite(l->beta) && l->beta > 0,
			   "link %d: alpha %g beta %g", i, l->alpha, l->beta);
		FUZZ_CHECK(hop_topo_find(t, l->a, l->b) != NULL,
			   "link %d not found", i);
	}
	if (!t->adj_off)
		return;
	FUZZ_CHECK(t->adj_off[0] == 0, "adj_off[0] %d", t->adj_off[0]);
	for (int r = 0; r < t->nranks; r++) {
		FUZZ_CHECK(t->adj_off[r] <= t->adj_off[r + 1], "adj_off order");
		for (int k = t->adj_off[r]; k < t->adj_off[r + 1]; k++) {
			int li = t->adj[k];

			FUZZ_CHECK(li >= 0 && li < t->nlinks, "adj %d", li);
			FUZZ_CHECK(t->links[li].a == r || t->links[li].b == r,
				   "rank %d lists link %d not touching it", r, li);
		}
	}
}

static void route_case(const struct hop_topo *t, int from, int to, double m,
		       enum hop_route_mode mode)
{
	struct hop_route r;
	char err[256];
	int ret;

	memset(&r, 0, sizeof(r));
	err[0] = '\0';
	ret = hop_topo_route(t, from, to, m, mode, 4096, &r, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_INVALID_ARG ||
		   ret == HOP_ERR_NO_MEMORY, "route code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	if (ret)
		return;
	FUZZ_CHECK(r.nhops >= 0 && r.nhops < t->nranks, "nhops %d", r.nhops);
	FUZZ_CHECK(r.path[0] == from && r.path[r.nhops] == to, "ends");
	for (int i = 0; i < r.nhops; i++)
		FUZZ_CHECK(hop_topo_find(t, r.path[i], r.path[i + 1]),
			   "hop %d-%d is not a link", r.path[i], r.path[i + 1]);
	FUZZ_CHECK(!(r.t_saf < 0) && !(r.t_pipe < 0), "negative time");
	hop_route_free(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly @size bytes, not NUL-terminated: ASan sees any overread */
	char *text = (char *)fuzz_dup(data, size);
	struct hop_topo t;
	char err[256];
	int ret;

	memset(&t, 0, sizeof(t));
	err[0] = '\0';
	ret = hop_topo_parse(text, size, "fuzz.topo", &t, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PARSE || ret == HOP_ERR_NO_MEMORY ||
		   ret == HOP_ERR_INVALID_ARG, "code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	if (ret) {
		FUZZ_CHECK(strncmp(err, "fuzz.topo", 9) == 0,
			   "message does not name the file: %s", err);
	} else {
		check_topo(&t);
		/* routing is O(ranks * links): keep it to small topologies */
		if (t.nranks <= 256 && t.nlinks <= 1024 && t.nranks > 1) {
			route_case(&t, 0, t.nranks - 1, 1 << 20, HOP_ROUTE_SAF);
			route_case(&t, t.nranks - 1, 0, 1 << 20, HOP_ROUTE_PIPE);
		}
		hop_topo_free(&t);
	}
	free(text);
	return 0;
}
