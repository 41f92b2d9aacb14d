/*
 * put_stream.c - nonblocking one-sided puts (hop_iput, docs/p2p.md "One-
 * sided put"), 2 ranks, every byte and every immediate checked against a
 * reference each rank computes on its own.
 *
 *   stream   rank 0 keeps a window of hop_iput()s in flight into rank 1's
 *            registered 4 MiB region: NPUTS puts of 0 B .. 1.5 MiB (inline,
 *            registered, through the cache, split into HOP_RNDV_CHUNK
 *            writes) at pseudo-random offsets that overlap, so the region
 *            holds the last write of each byte only when every put landed
 *            where it was aimed and in order; every other immediate fits
 *            28 bits (a put of one write with such an immediate goes as
 *            that write alone, the others as writes and a note). Each
 *            source slot is refilled only after its put's request
 *            completed. Rank 1 takes every
 *            immediate with hop_wait_imm() and checks its value, writer and
 *            length in order, then the whole region bit for bit.
 *   self     each rank puts into its own region with hop_iput() and
 *            hop_put(): data and immediates checked.
 *   badargs  hop_iput() with each argument wrong in turn: its code, a
 *            message naming it, and *req left NULL.
 *
 * Usage (under hop-run, 2 ranks): put_stream CASE
 * Prints "put_stream CASE: rank R passed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/hop.h>

#define TEST_NAME "put_stream"
static hop_comm_t *comm;
static int rank;
#include "rank_check.h"

#define REGION (4u << 20)
#define NPUTS 600
#define WINDOW 24
#define SLOT (3u << 19)         /* largest put: 1.5 MiB */
#define TAG_KEY 1
#define TAG_ACK 2

/* Put @i: its length, offset and immediate (the same on both ranks). */
struct put_desc {
	size_t len;
	uint64_t off;
	uint32_t imm;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static struct put_desc desc_of(int i)
{
	static const size_t lens[] = { 0, 1, 7, 64, 100, 513, 4096, 5000,
				       65536, 200001 };
	uint64_t h = mix((uint64_t)i + 1);
	struct put_desc d;

	d.len = lens[h % 10];
	if (i % 97 == 50)
		d.len = SLOT;   /* more than one HOP_RNDV_CHUNK write */
	else if (d.len > 4096)
		d.len -= (h >> 8) % 61;
	d.off = (h >> 16) % (REGION - d.len + 1);
	d.imm = (uint32_t)(h >> 32) ^ (uint32_t)i;
	/* every other immediate fits 28 bits: a put of one write then goes
	 * as that write alone, the others as writes and a note, mixed */
	if (i % 2)
		d.imm &= 0x0fffffffu;
	return d;
}

static unsigned char byte_of(int i, size_t k)
{
	return (unsigned char)(i * 131 + k * 7 + (k >> 9) + 3);
}

static void *alloc(size_t len)
{
	void *p = malloc(len);

	if (!p)
		FAIL("out of memory (%zu B)", len);
	return p;
}

static void put_source(hop_mr_t *smr, unsigned char *src,
		       const hop_rkey_t *key)
{
	hop_request_t *req[WINDOW] = { NULL };
	hop_status_t st;

	for (int i = 0; i < NPUTS + WINDOW; i++) {
		int k = i % WINDOW;
		unsigned char *s = src + (size_t)k * SLOT;
		struct put_desc d;

		if (req[k]) {   /* the put of slot k, WINDOW puts ago */
			struct put_desc o = desc_of(i - WINDOW);

			OK(hop_wait(&req[k], &st));
			if (req[k] || st.source != 1 || st.tag != -1 ||
			    st.bytes != o.len || st.error)
				FAIL("put %d: status source %d tag %d bytes "
				     "%zu error %d", i - WINDOW, st.source,
				     st.tag, st.bytes, st.error);
		}
		if (i >= NPUTS)
			continue;
		d = desc_of(i);
		for (size_t j = 0; j < d.len; j++)
			s[j] = byte_of(i, j);
		/* every third put leaves the registration to hop's cache */
		OK(hop_iput(comm, i % 3 ? smr : NULL, d.len ? s : NULL, d.len,
			    key, d.off, d.imm, &req[k]));
	}
	OK(hop_recv(comm, NULL, 0, 1, TAG_ACK, NULL));
}

static void put_target(unsigned char *dst)
{
	unsigned char *ref = alloc(REGION);

	memset(ref, 0, REGION);
	for (int i = 0; i < NPUTS; i++) {
		struct put_desc d = desc_of(i);
		uint32_t imm;
		size_t bytes;
		int from;

		OK(hop_wait_imm(comm, -1, &imm, &from, &bytes));
		if (imm != d.imm || from != 0 || bytes != d.len)
			FAIL("immediate %d: 0x%08x from %d (%zu B), expected "
			     "0x%08x from 0 (%zu B)", i, imm, from, bytes,
			     d.imm, d.len);
		for (size_t j = 0; j < d.len; j++)
			ref[d.off + j] = byte_of(i, j);
	}
	for (size_t j = 0; j < REGION; j++)
		if (dst[j] != ref[j])
			FAIL("region byte %zu is 0x%02x, expected 0x%02x", j,
			     dst[j], ref[j]);
	OK(hop_send(comm, NULL, 0, 0, TAG_ACK));
	free(ref);
}

static void case_stream(void)
{
	unsigned char *buf = alloc(rank ? REGION : (size_t)WINDOW * SLOT);
	hop_rkey_t key;
	hop_mr_t *mr;

	if (rank == 1) {
		memset(buf, 0, REGION);
		OK(hop_mem_register(comm, buf, REGION, HOP_ACCESS_REMOTE_WRITE,
				    &mr));
		OK(hop_mr_rkey(mr, &key));
		OK(hop_send(comm, &key, sizeof(key), 0, TAG_KEY));
		put_target(buf);
	} else {
		OK(hop_mem_register(comm, buf, (size_t)WINDOW * SLOT,
				    HOP_ACCESS_LOCAL, &mr));
		OK(hop_recv(comm, &key, sizeof(key), 1, TAG_KEY, NULL));
		put_source(mr, buf, &key);
	}
	OK(hop_mem_deregister(comm, mr));
	free(buf);
}

static void case_self(void)
{
	unsigned char src[3000], dst[8192];
	hop_request_t *req;
	hop_status_t st;
	hop_rkey_t key;
	hop_mr_t *mr;
	uint32_t imm;
	size_t bytes;
	int from;

	memset(dst, 0, sizeof(dst));
	for (size_t j = 0; j < sizeof(src); j++)
		src[j] = byte_of(rank, j);
	OK(hop_mem_register(comm, dst, sizeof(dst), HOP_ACCESS_REMOTE_WRITE,
			    &mr));
	OK(hop_mr_rkey(mr, &key));
	OK(hop_iput(comm, NULL, src, sizeof(src), &key, 100, 0x5e1f0000u,
		    &req));
	OK(hop_wait(&req, &st));
	if (st.source != rank || st.tag != -1 || st.bytes != sizeof(src))
		FAIL("self put status: source %d tag %d bytes %zu", st.source,
		     st.tag, st.bytes);
	OK(hop_put(comm, NULL, src, 10, &key, 5000, 0x5e1f0001u));
	for (uint32_t n = 0; n < 2; n++) {
		OK(hop_wait_imm(comm, rank, &imm, &from, &bytes));
		if (imm != 0x5e1f0000u + n || from != rank ||
		    bytes != (n ? 10u : sizeof(src)))
			FAIL("self immediate %u: 0x%08x from %d (%zu B)", n,
			     imm, from, bytes);
	}
	for (size_t j = 0; j < sizeof(dst); j++) {
		unsigned char want = 0;

		if (j >= 100 && j < 100 + sizeof(src))
			want = byte_of(rank, j - 100);
		else if (j >= 5000 && j < 5010)
			want = byte_of(rank, j - 5000);
		if (dst[j] != want)
			FAIL("self put: byte %zu is 0x%02x, expected 0x%02x",
			     j, dst[j], want);
	}
	OK(hop_mem_deregister(comm, mr));
}

/* hop_iput() must fail with @want, a message holding @word, no request. */
#define BAD(want, word, ...)                                                  \
	do {                                                                  \
		hop_request_t *r_ = (hop_request_t *)&junk;                   \
		CHECK_RC(hop_iput(__VA_ARGS__, &r_), want);                   \
		if (r_)                                                       \
			FAIL("a failed hop_iput left a request");             \
		if (!strstr(hop_comm_last_error(comm), word))                 \
			FAIL("message '%s' does not name %s",                 \
			     hop_comm_last_error(comm), word);                \
	} while (0)

static void case_badargs(void)
{
	unsigned char buf[64], other[64];
	uint64_t junk[16] = { 0 };
	hop_rkey_t key, k;
	hop_mr_t *mr, *smr;
	int size = hop_comm_size(comm);

	OK(hop_mem_register(comm, buf, sizeof(buf), HOP_ACCESS_REMOTE_WRITE,
			    &mr));
	OK(hop_mem_register(comm, other, 32, HOP_ACCESS_LOCAL, &smr));
	OK(hop_mr_rkey(mr, &key));
	CHECK_RC(hop_iput(NULL, NULL, buf, 1, &key, 0, 1, NULL),
		 HOP_ERR_INVALID_HANDLE);
	CHECK_RC(hop_iput(comm, NULL, buf, 1, &key, 0, 1, NULL),
		 HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), "req"))
		FAIL("NULL req: message does not name req");
	BAD(HOP_ERR_INVALID_ARG, "local_mr", comm, (hop_mr_t *)junk, other,
	    1, &key, 0, 1);
	BAD(HOP_ERR_INVALID_ARG, "not inside local_mr", comm, smr, other + 16,
	    17, &key, 0, 1);
	BAD(HOP_ERR_INVALID_ARG, "src is NULL", comm, NULL, NULL, 1, &key, 0,
	    1);
	BAD(HOP_ERR_OUT_OF_BOUNDS, "exceeds", comm, NULL, buf, 65, &key, 0, 1);
	BAD(HOP_ERR_INVALID_ARG, "rkey is NULL", comm, NULL, buf, 1, NULL, 0,
	    1);
	BAD(HOP_ERR_OUT_OF_BOUNDS, "offset 60", comm, NULL, buf, 8, &key, 60,
	    1);
	BAD(HOP_ERR_OUT_OF_BOUNDS, "offset 18446744073709551615", comm, NULL,
	    buf, 0, &key, UINT64_MAX, 1);
	k = key;
	k.owner = (uint32_t)size;
	BAD(HOP_ERR_INVALID_ARG, "owner rank", comm, NULL, buf, 1, &k, 0, 1);
	k = key;
	k.access = 0;
	BAD(HOP_ERR_OUT_OF_BOUNDS, "REMOTE_WRITE", comm, NULL, buf, 1, &k, 0,
	    1);
	k = key;
	k.key ^= 0x5a5a;        /* to self: no live region with that key */
	BAD(HOP_ERR_OUT_OF_BOUNDS, "no live region", comm, NULL, buf, 1, &k, 0,
	    1);
	OK(hop_mem_deregister(comm, smr));
	OK(hop_mem_deregister(comm, mr));
	/* the comm still works: nothing above started a put */
	OK(hop_barrier(comm));
}

int main(int argc, char **argv)
{
	const char *c = argc == 2 ? argv[1] : "";
	int ret;

	if ((ret = hop_comm_init_env(&comm))) {
		fprintf(stderr, "put_stream: init: %s: %s\n",
			hop_err_name(ret), hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	if (hop_comm_size(comm) != 2)
		FAIL("needs 2 ranks, got %d", hop_comm_size(comm));
	if (!strcmp(c, "stream"))
		case_stream();
	else if (!strcmp(c, "self"))
		case_self();
	else if (!strcmp(c, "badargs"))
		case_badargs();
	else
		FAIL("usage: put_stream stream|self|badargs");
	OK(hop_barrier(comm));
	printf("put_stream %s: rank %d passed\n", c, rank);
	hop_comm_destroy(comm);
	return 0;
}
