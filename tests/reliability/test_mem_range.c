/*
 * test_mem_range.c - hop_mem_register() refuses a region whose range does
 * not fit the address space (len = SIZE_MAX, or [buf, buf + len) wrapping
 * past the top) with HOP_ERR_INVALID_ARG and a message naming the size, on
 * every software provider. A key for such a range would make every
 * bounds check downstream meaningless. Ordinary edges (len 0, a region
 * ending at the last byte of a buffer) still register.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rel.h"

struct range_case {
	uintptr_t addr;         /* 0: a real buffer */
	size_t len;
	const char *what;
};

static void expect_refused(hop_comm_t *c, const struct range_case *rc,
			   const char *tr)
{
	static uint8_t buf[64];
	void *addr = rc->addr ? (void *)rc->addr : buf;
	hop_mr_t *mr = (void *)1;
	char want[64];
	int ret;

	ret = hop_mem_register(c, addr, rc->len, HOP_ACCESS_REMOTE_WRITE, &mr);
	if (ret == 0)
		hop_mem_deregister(c, mr);
	if (ret != HOP_ERR_INVALID_ARG)
		fail_msg("%s: %s (%p, %zu): %s, expected HOP_ERR_INVALID_ARG "
			 "(%s)", tr, rc->what, addr, rc->len, hop_err_name(ret),
			 hop_comm_last_error(c));
	assert_null(mr);
	snprintf(want, sizeof(want), "%zu", rc->len);
	if (!strstr(hop_comm_last_error(c), want))
		fail_msg("%s: %s: message does not name the length %s: %s", tr,
			 rc->what, want, hop_comm_last_error(c));
}

static void range_on(const char *tr)
{
	static const struct range_case bad[] = {
		{ 0, SIZE_MAX, "len SIZE_MAX" },
		{ 0, SIZE_MAX - 8, "a range past the top of the address space" },
		{ UINTPTR_MAX - 4095, 8192, "a range wrapping past the top" },
		{ 4096, (size_t)PTRDIFF_MAX + 1, "a region larger than any "
						  "object" },
	};
	uint8_t *buf = malloc(4096);
	hop_unique_id_t id;
	hop_comm_t *c = NULL;
	hop_mr_t *mr = NULL;
	hop_rkey_t k;
	int ret;

	setenv("HOP_TRANSPORT", tr, 1);
	assert_int_equal(hop_get_unique_id(&id), 0);
	ret = hop_comm_init_rank(&c, 1, id, 0);
	unsetenv("HOP_TRANSPORT");
	rel_drop_listener(&id);
	if (ret)
		fail_msg("%s: init: %s: %s", tr, hop_err_name(ret),
			 hop_last_init_error());
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(c, &bad[i], tr);
	/* the communicator is unharmed and ordinary edges still work */
	assert_int_equal(hop_mem_register(c, buf, 0, HOP_ACCESS_REMOTE_WRITE,
					  &mr), 0);
	assert_int_equal(hop_mem_deregister(c, mr), 0);
	assert_int_equal(hop_mem_register(c, buf + 4095, 1,
					  HOP_ACCESS_REMOTE_WRITE, &mr), 0);
	assert_int_equal(hop_mr_rkey(mr, &k), 0);
	assert_int_equal(k.len, 1);
	assert_int_equal(hop_mem_deregister(c, mr), 0);
	assert_int_equal(hop_barrier(c), 0);
	assert_int_equal(hop_comm_destroy(c), 0);
	free(buf);
}

static void t_range_tcp(void **s) { (void)s; range_on("tcp"); }
static void t_range_shm(void **s) { (void)s; range_on("shm"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_range_tcp),
		cmocka_unit_test(t_range_shm),
	};

	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_TIMEOUT", "20", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
