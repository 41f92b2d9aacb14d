/*
 * topo.h - HOP_TOPO topology files and routing over them.
 *
 * A topology lists the links between ranks with their alpha and beta;
 * ranks without a direct link reach each other through relays, along the
 * path of least predicted time. The file format (docs/model.md):
 *
 *     # comments run from '#' to the end of the line
 *     hop-topo 1                  first line that is not blank/comment
 *     ranks 8                     optional: rank count (else max rank + 1)
 *     default 2.0 12.5            optional: alpha_us beta_GBps of link
 *                                 lines that give no numbers
 *     link 0 1 1.5 12.5           rank rank alpha_us beta_GBps (both ways)
 *     link 1 2                    numbers from the default line
 *
 * alpha_us: microseconds, finite, >= 0; beta_GBps: 1e9 bytes per second,
 * finite, > 0. Every line ends with a newline (a last line without one is
 * taken as a truncated file). The parser is strict: any other line, field
 * count or value fails with HOP_ERR_PARSE and a message
 * "<file>:<line>: <field>: <what is wrong>".
 */
#ifndef HOP_MODEL_TOPO_H
#define HOP_MODEL_TOPO_H

#include <stddef.h>

#define HOP_TOPO_MAX_RANKS 65536
#define HOP_TOPO_MAX_LINKS (1 << 22)

/* One link; alpha in seconds, beta in bytes per second. */
struct hop_topo_link {
	int a, b;
	double alpha;
	double beta;
	int line;               /* where it was declared */
};

struct hop_topo {
	int nranks;
	int nlinks;
	struct hop_topo_link *links;
	int *adj_off;           /* nranks + 1 offsets into adj */
	int *adj;               /* link indices touching each rank */
};

/*
 * hop_topo_parse() - Parse @len bytes of @text (need not be NUL-terminated;
 * a pure function the fuzzer calls).
 * @name: the file name used in messages (e.g. "topo.txt").
 * @t: receives the topology (free with hop_topo_free() on success; nothing
 *     to free on failure).
 * Return: 0, HOP_ERR_PARSE, HOP_ERR_NO_MEMORY, HOP_ERR_INVALID_ARG.
 */
int hop_topo_parse(const char *text, size_t len, const char *name,
		   struct hop_topo *t, char *err, size_t errlen);

/* hop_topo_parse() of the file @path. Also HOP_ERR_SYSTEM (open/read),
 * the message naming @path. */
int hop_topo_load(const char *path, struct hop_topo *t, char *err,
		  size_t errlen);

void hop_topo_free(struct hop_topo *t);

/* The link between @a and @b (either direction), or NULL. */
const struct hop_topo_link *hop_topo_find(const struct hop_topo *t, int a,
					  int b);

enum hop_route_mode {
	HOP_ROUTE_SAF = 0,      /* least store-and-forward time (Dijkstra) */
	HOP_ROUTE_PIPE = 1,     /* least pipelined time at the best k */
};

/*
 * struct hop_route - a path and its predicted times.
 * @path: nhops + 1 ranks, from first to last; @path[1..nhops-1] relay.
 * @t_saf: store-and-forward time of this path.
 * @k: the best chunk count on this path; @t_pipe: the pipelined time at k.
 */
struct hop_route {
	int nhops;
	int *path;
	double t_saf;
	long k;
	double t_pipe;
};

/*
 * hop_topo_route() - The path from @from to @to with the least predicted
 * time for @m bytes in @mode; chunks are at least @min_chunk bytes.
 * HOP_ROUTE_SAF is exact (Dijkstra on alpha + m/beta). HOP_ROUTE_PIPE
 * minimises sum(stages) + (k-1) max(stage) exactly for each of a set of
 * chunk counts (every k up to 64, then a geometric series) and keeps the
 * best path at its own best k.
 * @r: filled on success (free with hop_route_free()).
 * Return: 0, HOP_ERR_INVALID_ARG (rank out of range, no path: the message
 * says which), HOP_ERR_NO_MEMORY.
 */
int hop_topo_route(const struct hop_topo *t, int from, int to, double m,
		   enum hop_route_mode mode, double min_chunk,
		   struct hop_route *r, char *err, size_t errlen);

/* Times of an explicit @path of @nranks ranks (consecutive ranks must be
 * linked); fills @r like hop_topo_route(). */
int hop_topo_path_eval(const struct hop_topo *t, const int *path,
		       int nranks, double m, double min_chunk,
		       struct hop_route *r, char *err, size_t errlen);

void hop_route_free(struct hop_route *r);

#endif /* HOP_MODEL_TOPO_H */
