/*
 * test_prov_mrtab.c - the MR table of the software providers: keys carry
 * slot + generation (stale keys rejected after reuse), bounds are exact,
 * access is enforced, the table fills up cleanly; and the completion ring.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "transport/emu.h"
#include "transport/mux/mux.h"

#define NSLOTS 8

struct fx {
	struct hop_mrtab_owner own;
	void *mem;
	char why[256];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->mem = malloc(hop_mrtab_size(NSLOTS));
	assert_non_null(f->mem);
	assert_int_equal(hop_mrtab_init(&f->own, f->mem, NSLOTS), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	hop_mrtab_fini(&f->own);
	free(f->mem);
	free(f);
	return 0;
}

static int check(struct fx *f, uint64_t key, uint64_t a, uint64_t len,
		 unsigned need)
{
	f->why[0] = '\0';
	return hop_mrtab_check(f->own.tab, key, a, len, need, f->why,
			       sizeof(f->why));
}

static void test_add_check(void **state)
{
	struct fx *f = *state;
	static char buf[1000];
	uint64_t base = (uint64_t)(uintptr_t)buf, key;

	assert_int_equal(hop_mrtab_add(&f->own, buf, sizeof(buf),
				       HOP_PROV_REMOTE_WRITE, &key), 0);
	assert_int_equal((uint32_t)key, 0);      /* first slot */
	assert_int_equal(key >> 32, 1);          /* first generation */
	assert_int_equal(check(f, key, base, 1000, HOP_PROV_REMOTE_WRITE), 0);
	assert_int_equal(check(f, key, base + 999, 1, HOP_PROV_REMOTE_WRITE),
			 0);
	assert_int_equal(check(f, key, base + 1000, 0, HOP_PROV_REMOTE_WRITE),
			 0);
	assert_int_equal(check(f, key, base + 500, 500, 0), 0);
}

static void test_bounds(void **state)
{
	struct fx *f = *state;
	static char buf[1000];
	uint64_t base = (uint64_t)(uintptr_t)buf, key;

	assert_int_equal(hop_mrtab_add(&f->own, buf, sizeof(buf),
				       HOP_PROV_REMOTE_WRITE, &key), 0);
	assert_int_equal(check(f, key, base, 1001, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_non_null(strstr(f->why, "outside"));
	assert_int_equal(check(f, key, base - 1, 1, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(check(f, key, base + 1000, 1, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(check(f, key, base + 999, 2, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	/* overflow of raddr + len must not wrap into the region */
	assert_int_equal(check(f, key, base + 10, UINT64_MAX - 5,
			       HOP_PROV_REMOTE_WRITE), HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(check(f, key, UINT64_MAX, 2, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
}

static void test_access(void **state)
{
	struct fx *f = *state;
	static char buf[64];
	uint64_t base = (uint64_t)(uintptr_t)buf, klocal, kread;

	assert_int_equal(hop_mrtab_add(&f->own, buf, sizeof(buf), 0, &klocal),
			 0);
	assert_int_equal(check(f, klocal, base, 8, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_non_null(strstr(f->why, "remote-write"));
	assert_int_equal(hop_mrtab_add(&f->own, buf, sizeof(buf),
				       HOP_PROV_REMOTE_READ, &kread), 0);
	assert_int_equal(check(f, kread, base, 8, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(check(f, kread, base, 8, HOP_PROV_REMOTE_READ), 0);
	/* unknown access bits are dropped, not granted */
	{
		uint64_t k;

		assert_int_equal(hop_mrtab_add(&f->own, buf, sizeof(buf),
					       0xf0u, &k), 0);
		assert_int_equal(check(f, k, base, 8, HOP_PROV_REMOTE_WRITE),
				 HOP_ERR_OUT_OF_BOUNDS);
	}
}

static void test_generation(void **state)
{
	struct fx *f = *state;
	static char a[64], b[64];
	uint64_t ka, kb, ka2;

	assert_int_equal(hop_mrtab_add(&f->own, a, sizeof(a),
				       HOP_PROV_REMOTE_WRITE, &ka), 0);
	assert_int_equal(hop_mrtab_remove(&f->own, ka), 0);
	/* stale at once, before any reuse */
	assert_int_equal(check(f, ka, (uintptr_t)a, 1, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_non_null(strstr(f->why, "stale"));
	/* the slot is reused with a new generation */
	assert_int_equal(hop_mrtab_add(&f->own, b, sizeof(b),
				       HOP_PROV_REMOTE_WRITE, &kb), 0);
	assert_int_equal((uint32_t)kb, (uint32_t)ka);
	assert_int_equal(kb >> 32, (ka >> 32) + 1);
	/* the old key must not resolve to the new region */
	assert_int_equal(check(f, ka, (uintptr_t)b, 1, HOP_PROV_REMOTE_WRITE),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(check(f, kb, (uintptr_t)b, 1, HOP_PROV_REMOTE_WRITE),
			 0);
	/* double remove and removing a stale key are refused */
	assert_int_equal(hop_mrtab_remove(&f->own, ka),
			 HOP_ERR_INVALID_HANDLE);
	assert_int_equal(hop_mrtab_remove(&f->own, kb), 0);
	assert_int_equal(hop_mrtab_remove(&f->own, kb),
			 HOP_ERR_INVALID_HANDLE);
	assert_int_equal(hop_mrtab_add(&f->own, a, sizeof(a),
				       HOP_PROV_REMOTE_WRITE, &ka2), 0);
	assert_int_equal(ka2 >> 32, (kb >> 32) + 1);
}

/* The mux carries a software key in 32 bits (gen << 16 | slot): every
 * generation a slot goes through, wrap included, must survive that, and a
 * table too large for 16-bit slots is refused. */
static void test_generation_16bit(void **state)
{
	struct fx *f = *state;
	static char a[64];
	uint64_t key, prev = 0;
	struct hop_mrtab_owner big;

	for (uint32_t i = 0; i < 70000; i++) {
		assert_int_equal(hop_mrtab_add(&f->own, a, sizeof(a),
					       HOP_PROV_REMOTE_WRITE, &key), 0);
		assert_true(key >> 32 != 0 && key >> 32 <= 0xffff);
		assert_true(key != prev);
		assert_int_equal(hop_mux_key_unpack(hop_mux_key_pack(key, 1),
						    1), key);
		assert_int_equal(check(f, key, (uintptr_t)a, 1,
				       HOP_PROV_REMOTE_WRITE), 0);
		assert_int_equal(hop_mrtab_remove(&f->own, key), 0);
		prev = key;
	}
	assert_int_equal(hop_mrtab_init(&big, f->mem, 65537),
			 HOP_ERR_INVALID_ARG);
}

static void test_bad_keys(void **state)
{
	struct fx *f = *state;

	assert_int_equal(check(f, 0, 0, 0, 0), HOP_ERR_OUT_OF_BOUNDS);
	assert_non_null(strstr(f->why, "names no region"));
	assert_int_equal(check(f, hop_mrtab_key(NSLOTS, 1), 0, 0, 0),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(check(f, hop_mrtab_key(0xffffffffu, 1), 0, 0, 0),
			 HOP_ERR_OUT_OF_BOUNDS);
	/* a never-used slot, with a made-up generation */
	assert_int_equal(check(f, hop_mrtab_key(3, 1), 0, 0, 0),
			 HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(hop_mrtab_remove(&f->own, hop_mrtab_key(3, 1)),
			 HOP_ERR_INVALID_HANDLE);
	assert_int_equal(hop_mrtab_remove(&f->own, hop_mrtab_key(NSLOTS, 1)),
			 HOP_ERR_INVALID_HANDLE);
	/* a table that was never initialised */
	{
		struct hop_mrtab t = { 0 };

		assert_int_equal(hop_mrtab_check(&t, hop_mrtab_key(0, 1), 0, 0,
						 0, f->why, sizeof(f->why)),
				 HOP_ERR_OUT_OF_BOUNDS);
	}
}

static void test_full(void **state)
{
	struct fx *f = *state;
	static char buf[NSLOTS][16];
	uint64_t keys[NSLOTS], k;

	for (int i = 0; i < NSLOTS; i++)
		assert_int_equal(hop_mrtab_add(&f->own, buf[i], 16,
					       HOP_PROV_REMOTE_WRITE, &keys[i]),
				 0);
	assert_int_equal(hop_mrtab_add(&f->own, buf[0], 16, 0, &k),
			 HOP_ERR_NO_MEMORY);
	for (int i = 0; i < NSLOTS; i++)
		assert_int_equal(check(f, keys[i], (uintptr_t)buf[i], 16,
				       HOP_PROV_REMOTE_WRITE), 0);
	/* keys of different live regions never collide or cross-check */
	assert_int_equal(check(f, keys[1], (uintptr_t)buf[2], 16,
			       HOP_PROV_REMOTE_WRITE), HOP_ERR_OUT_OF_BOUNDS);
	assert_int_equal(hop_mrtab_remove(&f->own, keys[5]), 0);
	assert_int_equal(hop_mrtab_add(&f->own, buf[5], 16, 0, &k), 0);
	assert_int_equal((uint32_t)k, (uint32_t)keys[5]);
	/* zero-length region with a NULL address is allowed */
	assert_int_equal(hop_mrtab_remove(&f->own, k), 0);
	assert_int_equal(hop_mrtab_add(&f->own, NULL, 0, 0, &k), 0);
	assert_int_equal(hop_mrtab_add(&f->own, NULL, 1, 0, &k),
			 HOP_ERR_INVALID_ARG);
}

static void test_cqring(void **state)
{
	struct hop_cqring q;
	struct hop_cqe out[7];
	uint64_t next_in = 0, next_out = 0;

	(void)state;
	assert_int_equal(hop_cqring_init(&q, 4), 0);
	assert_int_equal(q.cap, 16);
	/* interleave pushes and pops across growth and wrap-around */
	for (int round = 0; round < 50; round++) {
		int push = (round * 7) % 23 + 1;

		for (int i = 0; i < push; i++) {
			struct hop_cqe *c = hop_cqring_push(&q);

			assert_non_null(c);
			c->op = (next_in % 5 == 0) ? HOP_CQE_RECV
						   : HOP_CQE_WRITE;
			c->wr_id = next_in;
			c->data[0] = (uint8_t)next_in;
			next_in++;
		}
		int n = hop_cqring_pop(&q, out, 7);

		for (int i = 0; i < n; i++) {
			assert_int_equal(out[i].wr_id, next_out);
			if (out[i].op == HOP_CQE_RECV)
				assert_int_equal(out[i].data[0],
						 (uint8_t)next_out);
			next_out++;
		}
	}
	while (q.count) {
		int n = hop_cqring_pop(&q, out, 7);

		for (int i = 0; i < n; i++)
			assert_int_equal(out[i].wr_id, next_out++);
	}
	assert_int_equal(next_in, next_out);
	assert_int_equal(hop_cqring_pop(&q, out, 7), 0);
	hop_cqring_fini(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_add_check, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_access, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generation, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_generation_16bit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_bad_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full, setup, teardown),
		cmocka_unit_test(test_cqring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
