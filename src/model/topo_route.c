/*
 * topo_route.c - the path of least predicted time between two ranks of a
 * topology: Dijkstra on alpha + m/beta for store-and-forward; for the
 * pipelined time sum(stages) + (k-1) max(stage), which is not a sum over
 * links, Dijkstra per bottleneck threshold (exact for one k) over a set of
 * chunk counts.
 */
#include "model/topo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "model/model.h"

struct hnode {
	double d;
	int v;
};

struct router {
	const struct hop_topo *t;
	double *w;              /* per link: stage time at the current k */
	double *thr;            /* sorted copy of w */
	double *dist;
	int *prev;              /* link index into each rank, -1 */
	struct hnode *heap;
	int hn, hcap;
	int from, to;
};

static void heap_push(struct router *r, double d, int v)
{
	int i = r->hn++;

	while (i > 0 && r->heap[(i - 1) / 2].d > d) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = (struct hnode){ d, v };
}

static struct hnode heap_pop(struct router *r)
{
	struct hnode top = r->heap[0], last = r->heap[--r->hn];
	int i = 0;

	for (;;) {
		int c = 2 * i + 1;

		if (c >= r->hn)
			break;
		if (c + 1 < r->hn && r->heap[c + 1].d < r->heap[c].d)
			c++;
		if (r->heap[c].d >= last.d)
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (r->hn)
		r->heap[i] = last;
	return top;
}

/* Shortest sum of w over links with w <= @theta; INFINITY if unreachable. */
static double dijkstra(struct router *r, double theta)
{
	const struct hop_topo *t = r->t;

	for (int v = 0; v < t->nranks; v++) {
		r->dist[v] = INFINITY;
		r->prev[v] = -1;
	}
	r->hn = 0;
	r->dist[r->from] = 0;
	heap_push(r, 0, r->from);
	while (r->hn) {
		struct hnode n = heap_pop(r);

		if (n.d > r->dist[n.v])
			continue;
		if (n.v == r->to)
			break;
		for (int i = t->adj_off[n.v]; i < t->adj_off[n.v + 1]; i++) {
			int li = t->adj[i];
			const struct hop_topo_link *l = &t->links[li];
			int u = l->a == n.v ? l->b : l->a;
			double nd = n.d + r->w[li];

			if (r->w[li] > theta || nd >= r->dist[u])
				continue;
			r->dist[u] = nd;
			r->prev[u] = li;
			heap_push(r, nd, u);
		}
	}
	return r->dist[r->to];
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

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
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

/* The best path for one k into @path; returns its rank count. */
static int best_for_k(struct router *r, long k, double m, int *path,
		      int *tmp)
{
	const struct hop_topo *t = r->t;
	double d0, best;
	int n = 0, nt = t->nlinks, lo, hi;

	for (int i = 0; i < nt; i++) {
		const struct hop_topo_link *l = &t->links[i];

		r->w[i] = l->alpha + m / ((double)k * l->beta);
		r->thr[i] = r->w[i];
	}
	d0 = dijkstra(r, INFINITY);
	if (!isfinite(d0))
		return 0;
	n = path_from_prev(r, path);
	if (k == 1)
		return n;
	best = 0;
	for (int i = 0; i + 1 < n; i++) {
		const struct hop_topo_link *l = hop_topo_find(t, path[i],
							      path[i + 1]);
		double s = l->alpha + m / ((double)k * l->beta);

		best = fmax(best, s);
	}
	best = d0 + (double)(k - 1) * best;
	qsort(r->thr, (size_t)nt, sizeof(double), cmp_dbl);
	/* the smallest threshold that still connects the two ranks */
	lo = 0;
	hi = nt - 1;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (isfinite(dijkstra(r, r->thr[mid])))
			hi = mid;
		else
			lo = mid + 1;
	}
	for (int i = lo; i < nt; i++) {
		double th = r->thr[i], d;

		if (i > lo && th == r->thr[i - 1])
			continue;
		if (d0 + (double)(k - 1) * th >= best)
			break;
		d = dijkstra(r, th);
		if (d + (double)(k - 1) * th < best) {
			best = d + (double)(k - 1) * th;
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
	r.hcap = 2 * t->nlinks + 1;
	r.w = malloc((size_t)t->nlinks * sizeof(double));
	r.thr = malloc((size_t)t->nlinks * sizeof(double));
	r.dist = malloc((size_t)t->nranks * sizeof(double));
	r.prev = malloc((size_t)t->nranks * sizeof(int));
	r.heap = malloc((size_t)r.hcap * sizeof(struct hnode));
	if (!r.w || !r.thr || !r.dist || !r.prev || !r.heap) {
		snprintf(err, errlen, "route: out of memory");
		ret = HOP_ERR_NO_MEMORY;
		goto out_free;
	}
	ret = route_search(&r, m, mode, min_chunk, out, err, errlen);
out_free:
	free(r.w);
	free(r.thr);
	free(r.dist);
	free(r.prev);
	free(r.heap);
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
