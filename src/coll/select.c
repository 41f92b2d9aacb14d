/*
 * select.c - algorithm selection: HOP_ALGO parsing and the cost model's
 * choice.
 *
 * hop_coll_select() is the one function that chooses: HOP_ALGO when set,
 * else the algorithm and chunk count of least time predicted by
 * src/model on the comm's links: the link of each class (intra-host,
 * inter-host) agreed by every rank at init (src/core/comm_agree.c) and
 * the comm's placement on hosts (hop_model_choose_place(): flat or
 * hierarchical, and the algorithm of each phase). The agreed links and the
 * placement are equal on every rank and the model is a pure function, so
 * every rank picks the same schedule even when their HOP_PROFILE files
 * differ; a different HOP_ALGO still fails the collective's signature
 * check with HOP_ERR_MISMATCH. Without a comm (unit tests) the one link
 * of the tune prices every flat choice.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_int.h"
#include "core/log.h"
#include "model/model_comm.h"

/* Collective spellings HOP_ALGO accepts besides the model's names;
 * algorithm names and aliases are the model's (hop_model_algo_lookup). */
static const struct {
	const char *name;
	int id;
} kind_alias[] = {
	{ "bcast", HOP_COLL_BROADCAST },
	{ "reduce_scatter", HOP_COLL_REDUCESCATTER },
};

static int kind_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(kind_alias) / sizeof(*kind_alias); i++)
		if (!strcmp(name, kind_alias[i].name))
			return kind_alias[i].id;
	return hop_model_kind_lookup(name);
}

const char *hop_coll_kind_name(int kind)
{
	const char *n = hop_model_kind_name(kind);

	return n ? n : "invalid";
}

const char *hop_coll_algo_name(int algo)
{
	const char *n = hop_model_algo_name(algo);

	return n ? n : "invalid";
}

static void list_algos(int kind, char *buf, size_t len)
{
	int algos[HOP_ALGO_COUNT], n = hop_model_algos(kind, algos,
						       HOP_ALGO_COUNT);
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "|" : "",
				      hop_model_algo_name(algos[i]));
}

int hop_coll_parse_algo(const char *spec, int forced[HOP_COLL_KIND_COUNT],
			char *err, size_t errlen)
{
	char item[HOP_CFG_STR];
	const char *p = spec ? spec : "";

	for (int k = 0; k < HOP_COLL_KIND_COUNT; k++)
		forced[k] = HOP_ALGO_AUTO;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 0 || n >= sizeof(item)) {
			snprintf(err, errlen, "HOP_ALGO=\"%s\": empty or overlong "
				 "item; expected collective:algorithm[,...]",
				 spec);
			return HOP_ERR_CONFIG;
		}
		memcpy(item, p, n);
		item[n] = 0;
		p += n + (p[n] == ',');
		char *colon = strchr(item, ':');
		if (!colon) {
			snprintf(err, errlen, "HOP_ALGO=\"%s\": item \"%s\" has no "
				 "':'; expected collective:algorithm", spec, item);
			return HOP_ERR_CONFIG;
		}
		*colon = 0;
		int kind = kind_lookup(item), algo;
		if (kind < 0) {
			snprintf(err, errlen, "HOP_ALGO=\"%s\": unknown collective "
				 "\"%s\" (allreduce, broadcast, reduce, "
				 "allgather, reducescatter, barrier, gather, "
				 "scatter, allgatherv, reducescatterv, alltoall, "
				 "alltoallv)", spec, item);
			return HOP_ERR_CONFIG;
		}
		algo = strcmp(colon + 1, "auto")
			? hop_model_algo_lookup(kind, colon + 1) : HOP_ALGO_AUTO;
		if (algo < 0) {
			char names[128];
			list_algos(kind, names, sizeof(names));
			snprintf(err, errlen, "HOP_ALGO=\"%s\": unknown algorithm "
				 "\"%s\" for %s (%s|auto)", spec, colon + 1,
				 hop_coll_kind_name(kind), names);
			return HOP_ERR_CONFIG;
		}
		forced[kind] = algo;
	}
	return 0;
}

int hop_coll_tune_model(struct hop_coll_tune *tune, const char *profile,
			const char *provider, const struct hop_prov_caps *caps,
			char *err, size_t errlen)
{
	char msg[HOP_MSG_LEN - 16]; /* room for the prefix in @err */
	int ret;

	ret = hop_model_link_load(profile, provider, caps, &tune->link,
				  tune->link_src, sizeof(tune->link_src), msg,
				  sizeof(msg));
	if (ret) {
		snprintf(err, errlen, "HOP_PROFILE: %s", msg);
		return ret;
	}
	tune->have_link = 1;
	memset(tune->memo, 0, sizeof(tune->memo));
	HOP_INFO("cost model: %s: alpha %.2f us, beta %.3f GB/s, gamma %.3f "
		 "ns/B, duplex %.2f", tune->link_src, tune->link.alpha * 1e6,
		 tune->link.beta / 1e9, tune->link.gamma * 1e9,
		 tune->link.duplex);
	return 0;
}

/* The model's algorithm (or the forced one) and its best chunk size, for
 * the comm's placement on its agreed link classes when it has them. */
static void model_choice(int kind, size_t bytes, int nranks, int forced,
			 const struct hop_model_link *l,
			 const struct hop_coll_tune *tune,
			 struct hop_coll_choice *out)
{
	struct hop_model_choice mc;

	if (tune && tune->have_cls > 0 && tune->place.nranks == nranks &&
	    !hop_model_choose_place_form(kind, bytes, &tune->place,
					 tune->cls, forced, tune->hier_form,
					 &mc)) {
		/* a kind whose hierarchical schedule is not built (no HIER
		 * row in the model's table of algorithms) runs flat */
		if (mc.algo == HOP_ALGO_HIER &&
		    !hop_model_algo_valid(kind, HOP_ALGO_HIER))
			hop_model_choose_flat_place(kind, bytes, &tune->place,
						    tune->cls, HOP_ALGO_AUTO,
						    &mc);
		out->algo = mc.algo;
		out->sub_algo[0] = mc.sub_algo[0];
		out->sub_algo[1] = mc.sub_algo[1];
		out->leaders = mc.algo == HOP_ALGO_HIER && mc.hier_leaders;
		out->predicted = mc.predicted;
		out->chunk_bytes = mc.chunk_bytes;
		return;
	}
	if (forced == HOP_ALGO_HIER)    /* no placement: the flat form */
		forced = HOP_ALGO_AUTO;
	hop_model_choose_flat(kind, bytes, nranks, forced, l, &mc);
	out->algo = mc.algo;
	out->sub_algo[0] = out->sub_algo[1] = HOP_ALGO_AUTO;
	out->leaders = 0;
	out->predicted = mc.predicted;
	out->chunk_bytes = mc.chunk_bytes;
}

static unsigned memo_slot(int kind, size_t bytes, int nranks)
{
	uint64_t h = (uint64_t)bytes * 0x9e3779b97f4a7c15ull;

	h ^= (uint64_t)(unsigned)(kind * 131 + nranks) * 0xc2b2ae3d27d4eb4full;
	return (unsigned)(h >> 40) % HOP_COLL_MEMO;
}

/* The memo holds a choice for every input of it: the tuning fields may
 * change between calls (tests and the soak force algorithms). */
static int memo_hit(const struct hop_coll_memo *m, int kind, size_t bytes,
		    int nranks, const struct hop_coll_tune *t)
{
	return m->kind == kind + 1 && m->nranks == nranks &&
	       m->bytes == bytes && m->forced == t->forced[kind] &&
	       m->chunk_size == t->chunk_size && m->depth == t->depth;
}

void hop_coll_select(int kind, size_t bytes, int nranks,
		     struct hop_coll_tune *tune, struct hop_coll_choice *out)
{
	struct hop_model_link dflt;
	const struct hop_model_link *l = &dflt;
	struct hop_coll_memo *m = NULL;
	int forced = tune ? tune->forced[kind] : HOP_ALGO_AUTO;
	int depth = tune && tune->depth > 0 ? tune->depth : 4;

	if (tune) {
		m = &tune->memo[memo_slot(kind, bytes, nranks)];
		if (memo_hit(m, kind, bytes, nranks, tune)) {
			*out = m->choice;
			return;
		}
	}
	if (tune && tune->have_link)
		l = &tune->link;
	else /* no comm (unit tests): the model's fallback link */
		hop_model_link_generic(&dflt);
	model_choice(kind, bytes, nranks, forced, l, tune, out);
	out->depth = depth < HOP_SCHED_MAX_DEPTH ? depth : HOP_SCHED_MAX_DEPTH;
	if (tune && tune->chunk_size)
		out->chunk_bytes = tune->chunk_size;
	char sub[64] = "";
	if (out->algo == HOP_ALGO_HIER)
		snprintf(sub, sizeof(sub), " (%sintra %s, inter %s)",
			 out->leaders ? "leaders: " : "",
			 hop_coll_algo_name(out->sub_algo[0]),
			 hop_coll_algo_name(out->sub_algo[1]));
	HOP_INFO("%s %zu B N=%d: %s%s chunk=%zu predicted %.1f us%s",
		 hop_coll_kind_name(kind), bytes, nranks,
		 hop_coll_algo_name(out->algo), sub, out->chunk_bytes,
		 out->predicted * 1e6,
		 forced != HOP_ALGO_AUTO ? " (forced by HOP_ALGO)" : "");
	if (m) {
		m->kind = kind + 1;
		m->nranks = nranks;
		m->bytes = bytes;
		m->forced = tune->forced[kind];
		m->chunk_size = tune->chunk_size;
		m->depth = tune->depth;
		m->choice = *out;
	}
}

size_t hop_coll_call_bytes(int kind, size_t count, hop_dtype_t dtype)
{
	/* alltoallv's blocks differ per rank; every rank prices it at 0 B */
	return kind == HOP_COLL_BARRIER || kind == HOP_COLL_ALLTOALLV
		       ? 0 : count * hop_dtype_size(dtype);
}

/* The agreed links and the placement of @comm into @t, once: every rank
 * reads the same agreed numbers and the same host of every rank. */
static void tune_classes(struct hop_comm *comm, struct hop_coll_tune *t)
{
	const struct hop_comm *root = comm->root ? comm->root : comm;
	int *host = NULL;

	t->have_cls = -1;
	if (!hop_model_comm_agreed(comm, t->cls) ||
	    !(host = malloc((size_t)comm->nranks * sizeof(*host))))
		return;
	for (int r = 0; r < comm->nranks; r++)
		host[r] = hop_comm_host(comm, r);
	if (!hop_model_place_of(host, comm->nranks,
				root->nhosts > 0 ? root->nhosts : 1, &t->place))
		t->have_cls = 1;
	free(host);
	if (t->have_cls > 0)
		HOP_INFO("cost model: %d ranks on %d hosts (at most %d on one, "
			 "%s): flat algorithms priced on the %s link",
			 t->place.nranks, t->place.nhosts, t->place.lmax,
			 t->place.uniform ? "uniform" : "uneven",
			 t->place.nhosts > 1 ? "inter-host" : "intra-host");
}

void hop_coll_choose_bytes(struct hop_comm *comm, int kind, size_t bytes,
			   struct hop_coll_choice *out)
{
	struct hop_coll_tune *t = &comm->coll->tune;

	if (!t->have_cls)
		tune_classes(comm, t);
	hop_coll_select(kind, bytes, comm->nranks, t, out);
}

void hop_coll_choose(struct hop_comm *comm, int kind, size_t count,
		     hop_dtype_t dtype, struct hop_coll_choice *out)
{
	hop_coll_choose_bytes(comm, kind,
			      hop_coll_call_bytes(kind, count, dtype), out);
}
