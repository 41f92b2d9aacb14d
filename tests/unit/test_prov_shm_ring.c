/*
 * test_prov_shm_ring.c - the shm provider's SPSC ring in one process:
 * empty, variable sizes, wrap-around with pad entries, full, corrupt
 * entries rejected, and a two-thread stress checking every byte.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "transport/shm/shm.h"

#define RSIZE 4096u

struct fx {
	struct shm_ring *r;
	struct shm_prod p;
	struct shm_cons c;
	char why[256];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->r = aligned_alloc(SHM_LINE, SHM_RING_HDR + RSIZE);
	assert_non_null(f->r);
	memset(f->r, 0xee, SHM_RING_HDR + RSIZE); /* garbage, as in a reused page */
	shm_ring_init(f->r);
	shm_prod_init(&f->p, f->r, RSIZE);
	shm_cons_init(&f->c, f->r, RSIZE);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	free(f->r);
	free(f);
	return 0;
}

static void fill(uint8_t *d, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		d[i] = (uint8_t)(seed * 31u + i * 7u);
}

static void check_fill(const uint8_t *d, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++)
		if (d[i] != (uint8_t)(seed * 31u + i * 7u))
			fail_msg("byte %zu of entry %u: %u", i, seed, d[i]);
}

static int push(struct fx *f, size_t len, uint32_t seq)
{
	struct shm_ent *e = shm_ring_reserve(&f->p, len);

	if (!e)
		return 0;
	e->op = SHM_OP_WRITE;
	e->flags = SHM_F_DATA;
	e->imm = seq;
	e->len = (uint32_t)len;
	e->raddr = 0;
	e->rkey = 0;
	fill(e->data, len, seq);
	shm_ring_commit(&f->p, e);
	return 1;
}

/* Pop one entry; returns its length, or -1 when empty. */
static long pop(struct fx *f, uint32_t expect_seq)
{
	const struct shm_ent *e;
	struct shm_ent h;
	int ret = shm_ring_peek(&f->c, &h, &e, f->why, sizeof(f->why));

	if (ret == 0)
		return -1;
	assert_int_equal(ret, 1);
	assert_int_equal(h.op, SHM_OP_WRITE);
	assert_int_equal(h.imm, expect_seq);
	assert_int_equal(h.size % SHM_LINE, 0);
	assert_true(h.size >= SHM_ENT_HDR + h.len);
	check_fill(e->data, h.len, expect_seq);
	shm_ring_consume(&f->c, &h);
	shm_ring_release(&f->c);
	return (long)h.len;
}

static void test_empty(void **state)
{
	struct fx *f = *state;

	assert_int_equal(shm_ring_pending(&f->c), 0);
	assert_int_equal(pop(f, 0), -1);
	assert_int_equal(shm_ring_used(&f->p), 0);
	assert_int_equal(shm_ent_size(0), 64);
	assert_int_equal(shm_ent_size(32), 64);
	assert_int_equal(shm_ent_size(33), 128);
	assert_int_equal(shm_ring_max_payload(RSIZE), RSIZE / 2 - 32);
}

static void test_sizes(void **state)
{
	struct fx *f = *state;
	const size_t sizes[] = { 0, 1, 31, 32, 33, 63, 64, 100, 1000, 2016 };

	for (uint32_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		assert_int_equal(push(f, sizes[i], i), 1);
		assert_int_equal(shm_ring_pending(&f->c), 1);
		assert_int_equal(pop(f, i), (long)sizes[i]);
	}
	/* larger than half the ring: refused (it might never fit) */
	assert_int_equal(push(f, shm_ring_max_payload(RSIZE) + 1, 99), 0);
	assert_int_equal(pop(f, 99), -1);
}

static void test_full(void **state)
{
	struct fx *f = *state;
	uint32_t n = 0, m = 0;

	/* 64-byte entries: exactly RSIZE / 64 fit */
	while (push(f, 16, n))
		n++;
	assert_int_equal(n, RSIZE / 64);
	assert_int_equal(shm_ring_used(&f->p), RSIZE);
	/* one freed slot admits exactly one more */
	assert_int_equal(pop(f, m++), 16);
	assert_int_equal(push(f, 16, n++), 1);
	assert_int_equal(push(f, 16, n), 0);
	while (pop(f, m) >= 0)
		m++;
	assert_int_equal(m, n);
	assert_int_equal(shm_ring_used(&f->p), 0);
}

static void test_wrap(void **state)
{
	struct fx *f = *state;
	uint32_t seq = 0, got = 0;

	/* 1000-byte payloads (1088-byte entries) never divide the ring, so
	 * pads appear at different offsets on every lap */
	for (int lap = 0; lap < 40; lap++) {
		while (push(f, 1000, seq))
			seq++;
		/* the ring refused: there is less room than pad + entry */
		assert_true(RSIZE - shm_ring_used(&f->p) < 2 * 1088);
		assert_int_equal(pop(f, got), 1000);
		got++;
	}
	while (pop(f, got) >= 0)
		got++;
	assert_int_equal(got, seq);
	assert_true(f->p.tail > 10 * RSIZE);
	assert_int_equal(f->c.head, f->p.tail);
}

static void test_corrupt(void **state)
{
	struct fx *f = *state;
	const struct shm_ent *e;
	struct shm_ent h, *w;

	assert_int_equal(push(f, 10, 1), 1);
	w = (struct shm_ent *)f->r->data;
	w->size = 0;
	assert_int_equal(shm_ring_peek(&f->c, &h, &e, f->why, sizeof(f->why)),
			 HOP_ERR_PROTOCOL);
	w->size = 65; /* not a multiple of a line */
	assert_int_equal(shm_ring_peek(&f->c, &h, &e, f->why, sizeof(f->why)),
			 HOP_ERR_PROTOCOL);
	w->size = 128; /* more than was published */
	assert_int_equal(shm_ring_peek(&f->c, &h, &e, f->why, sizeof(f->why)),
			 HOP_ERR_PROTOCOL);
	w->size = 64;
	w->len = 40; /* payload larger than the entry */
	assert_int_equal(shm_ring_peek(&f->c, &h, &e, f->why, sizeof(f->why)),
			 HOP_ERR_PROTOCOL);
	assert_non_null(strstr(f->why, "payload"));
	w->len = 10;
	assert_int_equal(shm_ring_peek(&f->c, &h, &e, f->why, sizeof(f->why)),
			 1);
	/* a tail published beyond the ring size */
	atomic_store(&f->r->tail, (uint64_t)RSIZE * 3);
	f->c.tail_cache = f->c.head;
	assert_int_equal(shm_ring_peek(&f->c, &h, &e, f->why, sizeof(f->why)),
			 HOP_ERR_PROTOCOL);
}

/* ---- two threads ---- */

#define STRESS_N 50000u

static void *producer(void *arg)
{
	struct fx *f = arg;
	uint32_t x = 12345;

	for (uint32_t seq = 0; seq < STRESS_N;) {
		x = x * 1103515245u + 12345u;
		size_t len = (x >> 16) % 700;

		if (seq % 1000 == 999)
			len = shm_ring_max_payload(RSIZE);
		while (!push(f, len, seq))
			; /* spin until the consumer frees room */
		seq++;
	}
	return NULL;
}

static void test_threads(void **state)
{
	struct fx *f = *state;
	pthread_t t;
	uint32_t got = 0;

	assert_int_equal(pthread_create(&t, NULL, producer, f), 0);
	while (got < STRESS_N) {
		if (pop(f, got) >= 0)
			got++;
	}
	pthread_join(t, NULL);
	assert_int_equal(pop(f, got), -1);
	assert_int_equal(f->c.head, f->p.tail);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
