/*
 * select.c - algorithm selection: HOP_ALGO parsing and the default table.
 *
 * hop_coll_select() is the one function that chooses; the cost model
 * (src/model, issue 6) replaces its table with predicted times. All
 * inputs are identical on every rank (size, N, environment), so every
 * rank picks the same schedule; when they are not (different HOP_ALGO),
 * the signature check fails the collective with HOP_ERR_MISMATCH.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll_int.h"

static const char *const kind_names[HOP_COLL_KIND_COUNT] = {
	[HOP_COLL_BROADCAST] = "broadcast", [HOP_COLL_REDUCE] = "reduce",
	[HOP_COLL_ALLREDUCE] = "allreduce", [HOP_COLL_ALLGATHER] = "allgather",
	[HOP_COLL_REDUCESCATTER] = "reducescatter",
	[HOP_COLL_BARRIER] = "barrier",
};

static const char *const algo_names[HOP_ALGO_COUNT] = {
	[HOP_ALGO_AUTO] = "auto", [HOP_ALGO_FLAT] = "flat",
	[HOP_ALGO_TREE] = "tree", [HOP_ALGO_CHAIN] = "chain",
	[HOP_ALGO_RING] = "ring", [HOP_ALGO_DBTREE] = "dbtree",
	[HOP_ALGO_RD] = "rd", [HOP_ALGO_RABENSEIFNER] = "rabenseifner",
	[HOP_ALGO_BRUCK] = "bruck", [HOP_ALGO_HALVING] = "halving",
	[HOP_ALGO_DISSEMINATION] = "dissemination",
};

/* accepted spellings */
static const struct {
	const char *name;
	int id;
} kind_alias[] = {
	{ "broadcast", HOP_COLL_BROADCAST }, { "bcast", HOP_COLL_BROADCAST },
	{ "reduce", HOP_COLL_REDUCE }, { "allreduce", HOP_COLL_ALLREDUCE },
	{ "allgather", HOP_COLL_ALLGATHER },
	{ "reducescatter", HOP_COLL_REDUCESCATTER },
	{ "reduce_scatter", HOP_COLL_REDUCESCATTER },
	{ "barrier", HOP_COLL_BARRIER },
}, algo_alias[] = {
	{ "auto", HOP_ALGO_AUTO }, { "flat", HOP_ALGO_FLAT },
	{ "tree", HOP_ALGO_TREE }, { "binomial", HOP_ALGO_TREE },
	{ "chain", HOP_ALGO_CHAIN }, { "pipeline", HOP_ALGO_CHAIN },
	{ "ring", HOP_ALGO_RING }, { "dbtree", HOP_ALGO_DBTREE },
	{ "double_binary_tree", HOP_ALGO_DBTREE }, { "rd", HOP_ALGO_RD },
	{ "recursive_doubling", HOP_ALGO_RD },
	{ "rabenseifner", HOP_ALGO_RABENSEIFNER },
	{ "bruck", HOP_ALGO_BRUCK }, { "halving", HOP_ALGO_HALVING },
	{ "recursive_halving", HOP_ALGO_HALVING },
	{ "dissemination", HOP_ALGO_DISSEMINATION },
};

/* which algorithms each collective has */
static int algo_valid(int kind, int algo)
{
	static const unsigned mask[HOP_COLL_KIND_COUNT] = {
		[HOP_COLL_BROADCAST] = 1u << HOP_ALGO_FLAT | 1u << HOP_ALGO_TREE |
				       1u << HOP_ALGO_CHAIN,
		[HOP_COLL_REDUCE] = 1u << HOP_ALGO_FLAT | 1u << HOP_ALGO_TREE |
				    1u << HOP_ALGO_CHAIN,
		[HOP_COLL_ALLREDUCE] = 1u << HOP_ALGO_RING | 1u << HOP_ALGO_TREE |
				       1u << HOP_ALGO_DBTREE | 1u << HOP_ALGO_RD |
				       1u << HOP_ALGO_RABENSEIFNER,
		[HOP_COLL_ALLGATHER] = 1u << HOP_ALGO_RING | 1u << HOP_ALGO_BRUCK,
		[HOP_COLL_REDUCESCATTER] = 1u << HOP_ALGO_RING |
					   1u << HOP_ALGO_HALVING,
		[HOP_COLL_BARRIER] = 1u << HOP_ALGO_DISSEMINATION,
	};

	return algo == HOP_ALGO_AUTO || (mask[kind] >> algo & 1u);
}

const char *hop_coll_kind_name(int kind)
{
	return kind >= 0 && kind < HOP_COLL_KIND_COUNT ? kind_names[kind]
						       : "invalid";
}

const char *hop_coll_algo_name(int algo)
{
	return algo >= 0 && algo < HOP_ALGO_COUNT ? algo_names[algo]
						  : "invalid";
}

static void list_algos(int kind, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (int a = 1; a < HOP_ALGO_COUNT && o < len; a++)
		if (algo_valid(kind, a))
			o += (size_t)snprintf(buf + o, len - o, "%s%s",
					      o ? "|" : "", algo_names[a]);
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
		int kind = -1, algo = -1;
		for (size_t i = 0; i < sizeof(kind_alias) / sizeof(*kind_alias); i++)
			if (!strcmp(item, kind_alias[i].name))
				kind = kind_alias[i].id;
		if (kind < 0) {
			snprintf(err, errlen, "HOP_ALGO=\"%s\": unknown collective "
				 "\"%s\" (allreduce, broadcast, reduce, "
				 "allgather, reducescatter, barrier)", spec, item);
			return HOP_ERR_CONFIG;
		}
		for (size_t i = 0; i < sizeof(algo_alias) / sizeof(*algo_alias); i++)
			if (!strcmp(colon + 1, algo_alias[i].name))
				algo = algo_alias[i].id;
		if (algo < 0 || !algo_valid(kind, algo)) {
			char names[128];
			list_algos(kind, names, sizeof(names));
			snprintf(err, errlen, "HOP_ALGO=\"%s\": unknown algorithm "
				 "\"%s\" for %s (%s|auto)", spec, colon + 1,
				 kind_names[kind], names);
			return HOP_ERR_CONFIG;
		}
		forced[kind] = algo;
	}
	return 0;
}

/* Pipelining chunk: near the optimum of (h+k-1)(a + m/(k b)),
 * m / k* = sqrt(m a b / (h - 1)), with a b ~ 32 KB (a few us at a few
 * GB/s), clamped to [lo, hi] and rounded to 4 KiB. */
static size_t auto_chunk(size_t m, int hops, size_t lo, size_t hi)
{
	double c = sqrt((double)m * 32768.0 / (double)(hops > 1 ? hops - 1 : 1));
	size_t ch = (size_t)c & ~(size_t)4095;

	return ch < lo ? lo : ch > hi ? hi : ch;
}

void hop_coll_select(int kind, size_t bytes, int nranks,
		     const struct hop_coll_tune *tune,
		     struct hop_coll_choice *out)
{
	int algo = tune ? tune->forced[kind] : HOP_ALGO_AUTO;
	int n = nranks;

	if (algo == HOP_ALGO_AUTO) {
		switch (kind) {
		case HOP_COLL_BROADCAST:
		case HOP_COLL_REDUCE:
			algo = n <= 2 ? HOP_ALGO_FLAT
			     : bytes <= 64 * 1024 ? HOP_ALGO_TREE
						 : HOP_ALGO_CHAIN;
			break;
		case HOP_COLL_ALLREDUCE:
			algo = bytes <= 16 * 1024 ? HOP_ALGO_RD
			     : bytes <= 1024 * 1024 || n < 3
				       ? HOP_ALGO_RABENSEIFNER : HOP_ALGO_RING;
			break;
		case HOP_COLL_ALLGATHER:
			algo = bytes * (size_t)n <= 256 * 1024 ? HOP_ALGO_BRUCK
							       : HOP_ALGO_RING;
			break;
		case HOP_COLL_REDUCESCATTER:
			algo = bytes * (size_t)n <= 256 * 1024 ? HOP_ALGO_HALVING
							       : HOP_ALGO_RING;
			break;
		default:
			algo = HOP_ALGO_DISSEMINATION;
			break;
		}
	}
	out->algo = algo;
	out->depth = tune && tune->depth > 0 ? tune->depth : 4;
	if (out->depth > HOP_SCHED_MAX_DEPTH)
		out->depth = HOP_SCHED_MAX_DEPTH;
	if (tune && tune->chunk_size) {
		out->chunk_bytes = tune->chunk_size;
		return;
	}
	switch (algo) {
	case HOP_ALGO_CHAIN:
		out->chunk_bytes = auto_chunk(bytes, n, 16384, 1u << 20);
		break;
	case HOP_ALGO_TREE:
	case HOP_ALGO_DBTREE:
	case HOP_ALGO_FLAT: {
		int h = 1;
		while ((1 << h) < n)
			h++;
		out->chunk_bytes = auto_chunk(bytes, h + 1, 16384, 1u << 20);
		break;
	}
	case HOP_ALGO_RING: /* chunks of one block per step */
		out->chunk_bytes = auto_chunk(bytes / (size_t)(n ? n : 1), 2,
					      65536, 1u << 20);
		break;
	default:
		out->chunk_bytes = 1u << 20;
		break;
	}
}
