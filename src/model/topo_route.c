/*
 * topo_route.c - the path of least predicted time between two ranks of a
 * topology: Dijkstra on alpha + m/beta for store-and-forward; for the
 * pipelined time sum(stages) + (k-1) max(stage), which is not a sum over
 * links, an incremental Dijkstra over ascending bottleneck thresholds
 * (exact for one k), for a set of chunk counts.
 */
#include "model/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "model/model.h"

/* A link and its stage time at the current k, for sorting. */
struct wlink {
	double w;
	int li;
};

struct router {
	const struct hop_topo *t;
	double *w;              /* per link: stage time at the current k */
	struct wlink *order;    /* links by ascending w */
	double *dist;
	int *prev;              /* link index into each rank, -1 */
	int *heap;              /* ranks, min-heap on dist */
	int *pos;               /* each rank's heap index, -1 */
	int hn;
	int from, to;
};

/* ---- indexed binary heap: each rank at most once, decrease-key ---- */

static void heap_set(struct router *r, int i, int v)
{
	r->heap[i] = v;
	r->pos[v] = i;
}

static void heap_up(struct router *r, int i)
{
	int v = r->heap[i];

	while (i > 0 && r->dist[r->heap[(i - 1) / 2]] > r->dist[v]) {
		heap_set(r, i, r->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(r, i, v);
}

/* Insert @v or move it up after its dist decreased. */
static void heap_update(struct router *r, int v)
{
	if (r->pos[v] < 0) {
		r->pos[v] = r->hn;
		r->heap[r->hn++] = v;
	}
	heap_up(r, r->pos[v]);
}

static int heap_pop(struct router *r)
{
	int top = r->heap[0], last = r->heap[--r->hn], i = 0;

	r->pos[top] = -1;
	if (!r->hn)
		return top;
	for (;;) {
		int c = 2 * i + 1;

		if (c >= r->hn)
			break;
		if (c + 1 < r->hn && r->dist[r->heap[c + 1]] < r->dist[r->heap[c]])
			c++;
		if (r->dist[r->heap[c]] >= r->dist[last])
			break;
		heap_set(r, i, r->heap[c]);
		i = c;
	}
	heap_set(r, i, last);
	return top;
}

static void sssp_reset(struct router *r)
{
	for (int v = 0; v < r->t->nranks; v++) {
		r->dist[v] = INFINITY;
		r->prev[v] = -1;
		r->pos[v] = -1;
	}
	r->hn = 0;
	r->dist[r->from] = 0;
	heap_update(r, r->from);
}

/* Relax link @li out of @v; queue the other end when it got closer. */
static void relax(struct router *r, int li, int v)
{
	const struct hop_topo_link *l = &r->t->links[li];
	int u = l->a == v ? l->b : l->a;
	double nd = r->dist[v] + r->w[li];

	if (nd < r->dist[u]) {
		r->dist[u] = nd;
		r->prev[u] = li;
		heap_update(r, u);
	}
}

/*
 * Settle the queued ranks over the links with w <= @theta. With
 * @stop_at_to the search ends once the target is settled (labels of other
 * ranks may then be unfinished); otherwise every label is exact, so links
 * can be added later and the search resumed (distances only decrease).
 */
static void settle(struct router *r, double theta, int stop_at_to)
{
	const struct hop_topo *t = r->t;

	while (r->hn) {
		int v = heap_pop(r);

		if (stop_at_to && v == r->to)
			break;
		for (int i = t->adj_off[v]; i < t->adj_off[v + 1]; i++)
			if (r->w[t->adj[i]] <= theta)
				relax(r, t->adj[i], v);
	}
}

/* The ranks of the path Dijkstra left in prev, into @path (count back). */
static int path_from_prev(const struct router *r, int *path)
{
	int n = 0, v = r->to;

	while (v != r->from) {
		const struct hop_topo_link *l = &r->t->links[r->prev[v]];

		path[n++] = v;
		v = l->a == v ? l->b : l->a;
	}
	path[n++] = r->from;
	for (int i = 0; i < n / 2; i++) {
		int x = path[i];

		path[i] = path[n - 1 - i];
		path[n - 1 - i] = x;
	}
	return n;
}

/* Evaluate @path (@n ranks) into @out (path copied). */
static int eval_path(const struct hop_topo *t, const int *path, int n,
		     double m, double min_chunk, struct hop_route *out,
		     char *err, size_t errlen)
{
	struct hop_model_hop *hops = NULL;
	int h = n - 1;

	memset(out, 0, sizeof(*out));
	out->path = malloc((size_t)n * sizeof(int));
	if (h > 0)
		hops = malloc((size_t)h * sizeof(*hops));
	if (!out->path || (h > 0 && !hops)) {
		free(hops);
		free(out->path);
		out->path = NULL;
		snprintf(err, errlen, "route: out of memory");
		return HOP_ERR_NO_MEMORY;
	}
	memcpy(out->path, path, (size_t)n * sizeof(int));
	for (int i = 0; i < h; i++) {
		const struct hop_topo_link *l = hop_topo_find(t, path[i],
							      path[i + 1]);

		if (!l) {
			snprintf(err, errlen, "route: ranks %d and %d (hop %d) "
				 "have no link", path[i], path[i + 1], i + 1);
			free(hops);
			hop_route_free(out);
			return HOP_ERR_INVALID_ARG;
		}
		hops[i] = (struct hop_model_hop){ l->alpha, l->beta };
	}
	out->nhops = h;
	out->t_saf = hop_model_path_saf(hops, h, m);
	out->k = h > 0 ? hop_model_path_kopt(hops, h, m, min_chunk) : 1;
	out->t_pipe = h > 0 ? hop_model_path_pipe(hops, h, m, out->k) : 0;
	free(hops);
	return 0;
}

int hop_topo_path_eval(const struct hop_topo *t, const int *path,
		       int nranks, double m, double min_chunk,
		       struct hop_route *r, char *err, size_t errlen)
{
	if (!t || !path || !r || nranks < 1) {
		snprintf(err, errlen, "route: NULL or empty path");
		return HOP_ERR_INVALID_ARG;
	}
	for (int i = 0; i < nranks; i++) {
		if (path[i] < 0 || path[i] >= t->nranks) {
			snprintf(err, errlen, "route: rank %d (position %d) out "
				 "of range 0..%d", path[i], i, t->nranks - 1);
			return HOP_ERR_INVALID_ARG;
		}
	}
	return eval_path(t, path, nranks, m, min_chunk, r, err, errlen);
}

/* Chunk counts tried by the pipelined search: all up to 64, then x1.25. */
static long next_k(long k)
{
	return k < 64 ? k + 1 : k + k / 4;
}

static int cmp_wlink(const void *x, const void *y)
{
	const struct wlink *a = x, *b = y;

	if (a->w != b->w)
		return a->w < b->w ? -1 : 1;
	return a->li - b->li;
}

/*
 * The best path for one k into @path; returns its rank count (0: no
 * path). Exact: for each threshold theta among the stage times, the
 * shortest path over links with w <= theta plus (k-1) theta bounds every
 * path whose slowest stage is theta. Thresholds are visited in ascending
 * order with the links added one batch at a time and the search resumed
 * (distances only decrease), until even the unrestricted distance plus
 * (k-1) theta cannot beat the best found.
 */
static int best_for_k(struct router *r, long k, double m, int *path,
		      int *tmp)
{
	const struct hop_topo *t = r->t;
	double d0, best = 0, km1 = (double)(k - 1);
	int n, nt = t->nlinks;

	for (int i = 0; i < nt; i++) {
		const struct hop_topo_link *l = &t->links[i];

		r->w[i] = l->alpha + m / ((double)k * l->beta);
		r->order[i] = (struct wlink){ r->w[i], i };
	}
	sssp_reset(r);
	settle(r, INFINITY, 1);
	d0 = r->dist[r->to];
	if (!isfinite(d0))
		return 0;
	n = path_from_prev(r, path);
	if (k == 1)
		return n;
	for (int i = 0; i + 1 < n; i++) {
		const struct hop_topo_link *l = hop_topo_find(t, path[i],
							      path[i + 1]);

		best = fmax(best, l->alpha + m / ((double)k * l->beta));
	}
	best = d0 + km1 * best;
	qsort(r->order, (size_t)nt, sizeof(*r->order), cmp_wlink);
	sssp_reset(r);
	for (int i = 0; i < nt;) {
		double th = r->order[i].w;

		if (d0 + km1 * th >= best)
			break;
		for (; i < nt && r->order[i].w == th; i++) {
			const struct hop_topo_link *l = &t->links[r->order[i].li];

			if (isfinite(r->dist[l->a]))
				relax(r, r->order[i].li, l->a);
			if (isfinite(r->dist[l->b]))
				relax(r, r->order[i].li, l->b);
		}
		settle(r, th, 0);
		if (r->dist[r->to] + km1 * th < best) {
			best = r->dist[r->to] + km1 * th;
			n = path_from_prev(r, tmp);
			memcpy(path, tmp, (size_t)n * sizeof(int));
		}
	}
	return n;
}

static int route_search(struct router *r, double m, enum hop_route_mode mode,
			double min_chunk, struct hop_route *out, char *err,
			size_t errlen)
{
	const struct hop_topo *t = r->t;
	int *path = malloc((size_t)t->nranks * 2 * sizeof(int));
	long kmax = mode == HOP_ROUTE_PIPE ? hop_model_kmax(m, min_chunk) : 1;
	int ret = 0, found = 0;

	if (!path) {
		snprintf(err, errlen, "route: out of memory");
		return HOP_ERR_NO_MEMORY;
	}
	for (long k = 1, next; k <= kmax; k = next) {
		struct hop_route cand;
		int n = best_for_k(r, k, m, path, path + t->nranks);

		if (!n) {
			snprintf(err, errlen, "route: no path from rank %d to "
				 "rank %d in the topology", r->from, r->to);
			ret = HOP_ERR_INVALID_ARG;
			break;
		}
		if ((ret = eval_path(t, path, n, m, min_chunk, &cand, err,
				     errlen)))
			break;
		if (!found || (mode == HOP_ROUTE_PIPE
				       ? cand.t_pipe < out->t_pipe
				       : cand.t_saf < out->t_saf)) {
			if (found)
				hop_route_free(out);
			*out = cand;
			found = 1;
		} else {
			hop_route_free(&cand);
		}
		next = next_k(k);
		if (k < kmax && next > kmax)
			next = kmax;    /* always try kmax itself */
	}
	if (ret && found)
		hop_route_free(out);
	free(path);
	return ret;
}

int hop_topo_route(const struct hop_topo *t, int from, int to, double m,
		   enum hop_route_mode mode, double min_chunk,
		   struct hop_route *out, char *err, size_t errlen)
{
	struct router r = { .t = t, .from = from, .to = to };
	int ret;

	if (!t || !out || !(m >= 0) || !isfinite(m)) {
		snprintf(err, errlen, "route: NULL topology/result or bad size");
		return HOP_ERR_INVALID_ARG;
	}
	if (from < 0 || from >= t->nranks || to < 0 || to >= t->nranks) {
		snprintf(err, errlen, "route: %s rank %d out of range 0..%d",
			 from < 0 || from >= t->nranks ? "from" : "to",
			 from < 0 || from >= t->nranks ? from : to,
			 t->nranks - 1);
		return HOP_ERR_INVALID_ARG;
	}
	if (from == to)
		return eval_path(t, &from, 1, m, min_chunk, out, err, errlen);
	r.w = malloc((size_t)t->nlinks * sizeof(double));
	r.order = malloc((size_t)t->nlinks * sizeof(*r.order));
	r.dist = malloc((size_t)t->nranks * sizeof(double));
	r.prev = malloc((size_t)t->nranks * sizeof(int));
	r.heap = malloc((size_t)t->nranks * sizeof(int));
	r.pos = malloc((size_t)t->nranks * sizeof(int));
	if (!r.w || !r.order || !r.dist || !r.prev || !r.heap || !r.pos) {
		snprintf(err, errlen, "route: out of memory");
		ret = HOP_ERR_NO_MEMORY;
		goto out_free;
	}
	ret = route_search(&r, m, mode, min_chunk, out, err, errlen);
out_free:
	free(r.w);
	free(r.order);
	free(r.dist);
	free(r.prev);
	free(r.heap);
	free(r.pos);
	return ret;
}

void hop_route_free(struct hop_route *r)
{
	if (!r)
		return;
	free(r->path);
	r->path = NULL;
	r->nhops = 0;
}
