/*
 * fuzz_profile.c - the profile readers on arbitrary text: libhop's link
 * profile (HOP_PROFILE, src/model/profile_link.c) and hop-probe's JSON
 * profile (tools/probe/profile_read.c over the strict JSON parser
 * tools/probe/json.c). An accepted profile must satisfy what the cost
 * model assumes (version 1, at least one pair, ranks in range and
 * distinct, alpha >= 0, beta > 0, at most HOP_PROFILE_MAX_SIZES sweep
 * points) and must survive a round trip: the writer's output parses again
 * and writes back byte for byte the same.
 */
#include <math.h>

#include <hop/common.h>

#include "probe/json.h"
#include "probe/profile_json.h"
#include "fuzz_common.h"

typedef int (*writer_fn)(const struct hop_profile *, FILE *);
typedef int (*parser_fn)(const char *, size_t, struct hop_profile *, char *,
			 size_t);

static char *write_mem(const struct hop_profile *p, writer_fn wr, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	FUZZ_CHECK(f != NULL, "open_memstream");
	FUZZ_CHECK(wr(p, f) == 0, "writer failed on a profile the reader "
		   "accepted");
	fclose(f);
	return buf;
}

static void check_profile(const struct hop_profile *p)
{
	/* the link format's version 2 adds link classes to version 1 */
	FUZZ_CHECK(p->version == HOP_PROFILE_VERSION ||
		   p->version == HOP_PROFILE_LINK_VERSION, "version %d",
		   p->version);
	FUZZ_CHECK(p->npairs >= 1 && p->pairs, "npairs %d", p->npairs);
	FUZZ_CHECK(memchr(p->provider, '\0', sizeof(p->provider)) &&
		   memchr(p->host, '\0', sizeof(p->host)) &&
		   memchr(p->hop_version, '\0', sizeof(p->hop_version)),
		   "unterminated string field");
	for (int i = 0; i < p->npairs; i++) {
		const struct hop_profile_pair *q = &p->pairs[i];

		FUZZ_CHECK(q->a >= 0 && q->a < p->nranks && q->b >= 0 &&
			   q->b < p->nranks && q->a != q->b, "pair %d: %d-%d",
			   i, q->a, q->b);
		FUZZ_CHECK(q->alpha_us >= 0 && q->beta_gbps > 0,
			   "pair %d: alpha %g beta %g", i, q->alpha_us,
			   q->beta_gbps);
		FUZZ_CHECK(q->nsizes >= 0 && q->nsizes <= HOP_PROFILE_MAX_SIZES,
			   "pair %d: nsizes %d", i, q->nsizes);
		FUZZ_CHECK(q->nagg >= 0 && q->nagg <= HOP_PROFILE_MAX_LINKS,
			   "pair %d: nagg %d", i, q->nagg);
		FUZZ_CHECK(memchr(q->provider, '\0', sizeof(q->provider)),
			   "pair %d: provider unterminated", i);
		FUZZ_CHECK(hop_profile_find(p, q->a, q->b) != NULL, "find");
		(void)hop_profile_predict_us(q, 4096);
	}
}

/* @parse on @text; an accepted profile checked and written, read and
 * written again to the same bytes */
static void read_round_trip(const char *text, size_t size, parser_fn parse,
			    writer_fn wr)
{
	struct hop_profile p, q;
	char err[256] = "";
	int ret = parse(text, size, &p, err, sizeof(err));

	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PARSE || ret == HOP_ERR_NO_MEMORY,
		   "profile code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	if (ret)
		return;
	size_t n1 = 0, n2 = 0;
	char *w1, *w2;

	check_profile(&p);
	w1 = write_mem(&p, wr, &n1);
	ret = parse(w1, n1, &q, err, sizeof(err));
	FUZZ_CHECK(ret == 0, "the writer's output does not parse: %s", err);
	FUZZ_CHECK(q.npairs == p.npairs && q.nranks == p.nranks,
		   "round trip changed the pairs");
	w2 = write_mem(&q, wr, &n2);
	FUZZ_CHECK(n1 == n2 && memcmp(w1, w2, n1) == 0,
		   "write(parse(write(p))) != write(p)");
	free(w1);
	free(w2);
	hop_profile_free(&q);
	hop_profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exactly @size bytes, not NUL-terminated: ASan sees any overread */
	char *text = (char *)fuzz_dup(data, size);
	struct hop_json *tree = NULL;
	char err[256];
	int ret;

	err[0] = '\0';
	ret = hop_json_parse(text, size, &tree, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == HOP_ERR_PARSE || ret == HOP_ERR_NO_MEMORY,
		   "json code %d", ret);
	fuzz_check_reason(err, sizeof(err), ret);
	if (ret == 0)
		hop_json_free(tree);

	read_round_trip(text, size, hop_profile_parse, hop_profile_write);
	read_round_trip(text, size, hop_profile_link_parse,
			hop_profile_link_write);
	free(text);
	return 0;
}
