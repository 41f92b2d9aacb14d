/*
 * test_run_hosts.c - hop-run's placement of ranks on emulated hosts
 * (--host-pids, --ppn, --map block|cyclic|FILE) and its option errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "hop-run-hosts.h"

static char err[512];

static void pids_ok(void **state)
{
	struct run_hosts h = { .nhosts = 3 };

	(void)state;
	assert_int_equal(run_hosts_parse_pids(&h, "10,20,30", err, sizeof(err)), 0);
	assert_int_equal(h.pids[0], 10);
	assert_int_equal(h.pids[2], 30);
	run_hosts_free(&h);
}

static void pids_bad(void **state)
{
	static const struct {
		const char *list, *says;
	} bad[] = {
		{ "10,20", "host 2 has no process id" },
		{ "10,20,30,40", "more process ids than the 3 hosts" },
		{ "10,20,30,", "more process ids than the 3 hosts" },
		{ "10,x,30", "'x' (host 1) is not a process id" },
		{ "10,,30", "host 1 has no process id" },
		{ "10,0,30", "'0' (host 1) is not a process id" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct run_hosts h = { .nhosts = 3 };

		err[0] = '\0';
		assert_int_equal(run_hosts_parse_pids(&h, bad[i].list, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].says))
			fail_msg("'%s': got '%s', want '%s'", bad[i].list, err, bad[i].says);
		run_hosts_free(&h);
	}
}

static void expect_map(const char *map, long ppn, long n_in, long n_want,
		       const int *want)
{
	struct run_hosts h = { .nhosts = 3 };
	long n = n_in;

	assert_int_equal(run_hosts_map(&h, map, ppn, &n, err, sizeof(err)), 0);
	assert_int_equal(n, n_want);
	for (long r = 0; r < n; r++)
		if (h.host_of[r] != want[r])
			fail_msg("map %s ppn %ld: rank %ld on host %d, want %d",
				 map ? map : "(none)", ppn, r, h.host_of[r], want[r]);
	run_hosts_free(&h);
}

static void map_builtin(void **state)
{
	(void)state;
	expect_map(NULL, 2, 0, 6, (const int[]){ 0, 0, 1, 1, 2, 2 });
	expect_map("block", 2, 6, 6, (const int[]){ 0, 0, 1, 1, 2, 2 });
	expect_map(NULL, 0, 0, 3, (const int[]){ 0, 1, 2 });
	/* 7 on 3 hosts: blocks of 3, the last host gets the rest */
	expect_map(NULL, 0, 7, 7, (const int[]){ 0, 0, 0, 1, 1, 1, 2 });
	expect_map("cyclic", 0, 7, 7, (const int[]){ 0, 1, 2, 0, 1, 2, 0 });
	expect_map("cyclic", 0, 0, 3, (const int[]){ 0, 1, 2 });
}

static char *map_file(const char *text)
{
	static char path[64];
	int fd;

	strcpy(path, "/tmp/test_run_hosts.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void map_from_file(void **state)
{
	char *p = map_file("# rank -> host\n2\n\n 0 \n1 # three\n2\n");

	(void)state;
	expect_map(p, 0, 0, 4, (const int[]){ 2, 0, 1, 2 });
	expect_map(p, 0, 4, 4, (const int[]){ 2, 0, 1, 2 });
	unlink(p);
}

static void map_bad(void **state)
{
	static const struct {
		const char *text;
		long n;
		const char *says;
	} bad[] = {
		{ "0\n3\n", 0, ":2: '3' is not a host number in 0..2" },
		{ "0\nx\n", 0, ":2: 'x' is not a host number" },
		{ "# none\n", 0, "no ranks in it" },
		{ "0\n1\n", 3, "places 2 ranks; -n says 3" },
	};
	struct run_hosts h = { .nhosts = 3 };
	long n = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *p = map_file(bad[i].text);

		n = bad[i].n;
		err[0] = '\0';
		assert_int_equal(run_hosts_map(&h, p, 0, &n, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].says))
			fail_msg("map '%s': got '%s', want '%s'", bad[i].text, err, bad[i].says);
		run_hosts_free(&h);
		unlink(p);
	}
	n = 7;
	assert_int_equal(run_hosts_map(&h, NULL, 2, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "-n 7 is not --hosts 3 x --ppn 2"));
	n = 0;
	assert_int_equal(run_hosts_map(&h, "/nonexistent/map", 0, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not block, cyclic or a readable file"));
}

static void setup_errors(void **state)
{
	struct run_hosts h = { 0 };
	long n = 0;

	(void)state;
	assert_int_equal(run_hosts_setup(&h, 0, 2, NULL, NULL, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "need --hosts"));
	assert_int_equal(run_hosts_setup(&h, 2, 0, NULL, NULL, &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--hosts needs --host-pids"));
	assert_int_equal(run_hosts_setup(&h, 2, 2, "cyclic", "1,2", &n, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not with --map cyclic or FILE"));
	assert_int_equal(run_hosts_setup(&h, 0, 0, NULL, NULL, &n, err, sizeof(err)), 0);
	assert_int_equal(h.nhosts, 0);
}

/* entering a process that does not exist names it */
static void enter_missing(void **state)
{
	(void)state;
	assert_int_equal(run_hosts_enter(2147483646, 0x40000000 /* CLONE_NEWNET */,
					 err, sizeof(err)), -1);
	assert_non_null(strstr(err, "host process 2147483646"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pids_ok),
		cmocka_unit_test(pids_bad),
		cmocka_unit_test(map_builtin),
		cmocka_unit_test(map_from_file),
		cmocka_unit_test(map_bad),
		cmocka_unit_test(setup_errors),
		cmocka_unit_test(enter_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
