/*
 * mux.h - the composite provider that carries each pair of ranks on the
 * provider of its link class: one provider between two ranks of one host
 * (intra, normally shm), another between hosts (inter: verbs or tcp).
 *
 * p2p keeps talking to one struct hop_prov_ops. The mux opens each child
 * provider on a sub-group of the ranks with a numbering of its own (the
 * ranks of one host for intra; every rank, numbered as the communicator,
 * for inter), so the children are the unchanged single providers. A child's
 * ctx->allgather() and ctx->barrier() run over its group in rounds of full
 * bootstrap allgathers that every rank joins (mux_ctx.c), so groups on
 * different hosts open at the same time and a child that fails on one rank
 * fails every rank with that rank's message instead of hanging the others.
 *
 * Keys: a region is registered in every child; its 64-bit key carries the
 * inter child's key in the high 32 bits and the intra child's in the low
 * 32 (a verbs rkey is 32 bits; a software key gen << 32 | slot is
 * compacted to gen << 16 | slot, lossless since mrtab keeps both below
 * 2^16).
 */
#ifndef HOP_TRANSPORT_MUX_H
#define HOP_TRANSPORT_MUX_H

#include <stddef.h>
#include <stdint.h>

#include <hop/provider.h>

/* The classes of a pair of ranks (the values of enum hop_link_class). */
enum { HOP_MUX_INTRA = 0, HOP_MUX_INTER = 1, HOP_MUX_NCLS = 2 };

/*
 * hop_mux_parse() - Parse a per-class HOP_TRANSPORT (e.g.
 * "intra:shm,inter:tcp"): comma-separated CLASS:NAME items, CLASS intra or
 * inter (each at most once; a class not named is auto), NAME one of the
 * @nnames built-in @names or "auto". @out[class] receives the index of the
 * name or @auto_val.
 * Return: 0, or HOP_ERR_CONFIG with a message in @err naming the bad part.
 */
int hop_mux_parse(const char *s, const char *const *names, int nnames,
		  int auto_val, int out[HOP_MUX_NCLS], char *err,
		  size_t errlen);

/* Is @s a per-class HOP_TRANSPORT (rather than one provider's name)? */
int hop_mux_is_classes(const char *s);

/*
 * hop_mux_key_pack() - @key of a child in 32 bits: a software provider's
 * (@soft: gen << 32 | slot, both < 2^16) as gen << 16 | slot, any other
 * (a verbs rkey) as is. hop_mux_key_unpack() is its inverse; a key that
 * does not survive the round trip cannot be carried (mr_reg refuses it).
 */
static inline uint32_t hop_mux_key_pack(uint64_t key, int soft)
{
	return soft ? (uint32_t)(((key >> 32) & 0xffffu) << 16 | (key & 0xffffu))
		    : (uint32_t)key;
}

static inline uint64_t hop_mux_key_unpack(uint32_t k, int soft)
{
	return soft ? (uint64_t)(k >> 16) << 32 | (k & 0xffffu) : k;
}

/* The key peers use: the inter child's in the high half, intra's low. */
static inline uint64_t hop_mux_key_join(uint32_t intra, uint32_t inter)
{
	return (uint64_t)inter << 32 | intra;
}

static inline uint32_t hop_mux_key_part(uint64_t key, int cls)
{
	return (uint32_t)(cls == HOP_MUX_INTER ? key >> 32 : key);
}

/*
 * hop_mux_new() - The ops table of a mux over @intra and @inter for the
 * @nranks ranks whose hosts are @host_of (hosts numbered 0..H-1); @soft
 * has bit HOP_MUX_INTRA/INTER set when that child's keys are mrtab keys
 * (tcp, shm: compacted to 32 bits, see hop_mux_key_pack()). With
 * caps merged from both (flags: both have them; eager_size: the smaller;
 * the link numbers: the inter child's). Its name is "INTRA+INTER". The
 * table belongs to the communicator: hop_mux_free() it after close().
 * Return: the table, or NULL when out of memory.
 */
const struct hop_prov_ops *hop_mux_new(const struct hop_prov_ops *intra,
				       const struct hop_prov_ops *inter,
				       unsigned soft, const int *host_of,
				       int nranks);

/* Is @ops a table made by hop_mux_new()? */
int hop_mux_is(const struct hop_prov_ops *ops);

/* hop_mux_free() - Free a table of hop_mux_new(); others are left alone. */
void hop_mux_free(const struct hop_prov_ops *ops);

/*
 * hop_prov_ctx_ops() - The ops table of the communicator @ctx belongs to
 * (prov_ctx.c): how the mux's open() finds its own table.
 */
const struct hop_prov_ops *hop_prov_ctx_ops(const struct hop_prov_ctx *ctx);

/* hop_prov_config_env() - HOP_PROV_<NAME>_<KEY> of provider @name. */
const char *hop_prov_config_env(const char *name, const char *key);

#endif /* HOP_TRANSPORT_MUX_H */
