/*
 * test_core_log - HOP_DEBUG levels, the "[hop r<rank>] <level>: " prefix
 * (pid before the rank is known), one line per write, truncation, and
 * lines handed to an installed handler instead of stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <hop/log.h>

#include "core/core.h"

/* Run @fn with stderr captured; returns what was written (static). */
static const char *capture(void (*fn)(void))
{
	static char out[8192];
	int p[2], saved = dup(2);
	ssize_t n, got = 0;

	assert_int_equal(pipe(p), 0);
	dup2(p[1], 2);
	close(p[1]);
	fn();
	dup2(saved, 2);
	close(saved);
	while ((n = read(p[0], out + got, sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	out[got] = '\0';
	return out;
}

static void say_all(void)
{
	HOP_WARN("warned %d", 1);
	HOP_INFO("informed %s", "x");
	HOP_TRACE("traced");
}

static void test_levels(void **state)
{
	static const struct {
		const char *v;
		int level, ret;
		const char *has, *hasnt;
	} cases[] = {
		{ NULL, HOP_LOG_WARN, 0, "warn: warned 1", "informed" },
		{ "none", HOP_LOG_NONE, 0, "", "warned" },
		{ "warn", HOP_LOG_WARN, 0, "warned", "informed" },
		{ "info", HOP_LOG_INFO, 0, "info: informed x", "traced" },
		{ "trace", HOP_LOG_TRACE, 0, "trace: traced", NULL },
		{ "TRACE", HOP_LOG_TRACE, 0, "traced", NULL },
		{ "verbose", HOP_LOG_WARN, HOP_ERR_CONFIG, "warned", "informed" },
		{ "", HOP_LOG_WARN, HOP_ERR_CONFIG, "warned", "informed" },
	};

	(void)state;
	hop_log_set_rank(3);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *out;

		if (cases[i].v)
			setenv("HOP_DEBUG", cases[i].v, 1);
		else
			unsetenv("HOP_DEBUG");
		/* a bad value is itself warned about */
		assert_int_equal(hop_log_init(), cases[i].ret);
		assert_int_equal(hop_log_level_g, cases[i].level);
		out = capture(say_all);
		if (cases[i].has[0] && !strstr(out, cases[i].has))
			fail_msg("HOP_DEBUG=%s: '%s' missing in '%s'",
				 cases[i].v, cases[i].has, out);
		if (cases[i].hasnt && strstr(out, cases[i].hasnt))
			fail_msg("HOP_DEBUG=%s: '%s' unexpected in '%s'",
				 cases[i].v, cases[i].hasnt, out);
		if (!cases[i].has[0])
			assert_string_equal(out, "");
	}
	unsetenv("HOP_DEBUG");
	hop_log_init();
}

static void init_log(void)
{
	(void)hop_log_init();
}

/* A bad HOP_DEBUG says the call fails, as it does, not that it goes on. */
static void test_bad_level_message(void **state)
{
	const char *out;

	(void)state;
	setenv("HOP_DEBUG", "verbose", 1);
	out = capture(init_log);
	if (!strstr(out, "HOP_DEBUG='verbose'") ||
	    !strstr(out, "fails with HOP_ERR_CONFIG") ||
	    strstr(out, "using warn"))
		fail_msg("message: '%s'", out);
	unsetenv("HOP_DEBUG");
	hop_log_init();
}

static void one_warn(void)
{
	HOP_WARN("hello %s\n", "world"); /* a trailing newline is not doubled */
}

static void test_prefix(void **state)
{
	char want[64];

	(void)state;
	hop_log_set_rank(7);
	assert_string_equal(capture(one_warn), "[hop r7] warn: hello world\n");
	hop_log_set_rank(-1);
	snprintf(want, sizeof(want), "[hop pid%ld] warn: hello world\n",
		 (long)getpid());
	assert_string_equal(capture(one_warn), want);
}

static void long_warn(void)
{
	char big[3000];

	memset(big, 'z', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	HOP_WARN("%s", big);
	HOP_WARN("after");
}

static void test_truncation(void **state)
{
	const char *out;
	const char *nl;

	(void)state;
	hop_log_set_rank(0);
	out = capture(long_warn);
	nl = strchr(out, '\n');
	assert_non_null(nl);
	/* one line of at most 1024 bytes, marked, then the next line */
	assert_true(nl - out < 1024);
	assert_memory_equal(nl - 3, "...", 3);
	assert_string_equal(nl + 1, "[hop r0] warn: after\n");
}

/* errno survives a log call (callers log, then report errno) */
static void test_errno_kept(void **state)
{
	(void)state;
	hop_log_set_rank(0);
	int saved = dup(2), nul = open("/dev/null", O_WRONLY);

	dup2(nul, 2);
	errno = 42;
	HOP_WARN("x");
	assert_int_equal(errno, 42);
	dup2(saved, 2);
	close(saved);
	close(nul);
}

/* 3000 warnings in one window: the burst, then one line at 10, 100 and
 * 1000 past it; the next window's first line reports the rest. Every
 * warning is printed or counted. */
static void test_limit_counts(void **state)
{
	struct hop_log_limit l = HOP_LOG_LIMIT_INIT;
	const uint64_t t0 = 5000000000ull;
	long printed = 0, counted = 0, r;
	int last, lasts = 0;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		r = hop_log_limit_pass(&l, t0 + (uint64_t)i * 1000, &last);
		printed += r >= 0;
		counted += r > 0 ? r : 0;
		lasts += last;
	}
	assert_int_equal(printed, HOP_LOG_BURST + 3);
	assert_int_equal(lasts, 1);
	r = hop_log_limit_pass(&l, t0 + HOP_LOG_WINDOW_S * 1000000000ull, &last);
	assert_int_equal(counted + r, 3000 - printed);
	/* a new window prints again */
	for (int i = 1; i < HOP_LOG_BURST; i++)
		assert_int_equal(hop_log_limit_pass(&l, t0 + 10500000000ull,
						    &last), 0);
	assert_int_equal(last, 1);
}

static void warn_100(void)
{
	for (int i = 0; i < 100; i++)
		HOP_WARN_LIMITED("bad connection %d", i);
}

static void test_limited_lines(void **state)
{
	const char *out;
	int lines = 0;

	(void)state;
	setenv("HOP_DEBUG", "warn", 1);
	assert_int_equal(hop_log_init(), 0);
	out = capture(warn_100);
	for (const char *p = out; (p = strchr(p, '\n')); p++)
		lines++;
	assert_int_equal(lines, HOP_LOG_BURST + 1);
	assert_non_null(strstr(out, "bad connection 7 (more like this within "
				    "10 s are counted, not printed)"));
	assert_non_null(strstr(out, "bad connection 17 (and 9 more like this "
				    "suppressed)"));
	assert_null(strstr(out, "bad connection 18"));
}

/* What the handler of the tests below received. */
struct caught {
	int calls, sev, rank, nested;
	char msg[256];
};

static void catch_line(void *arg, hop_log_severity_t sev, int rank,
		       const char *msg)
{
	struct caught *c = arg;

	c->calls++;
	c->sev = (int)sev;
	c->rank = rank;
	snprintf(c->msg, sizeof(c->msg), "%s", msg);
	if (c->nested)
		HOP_WARN("from inside the handler"); /* stderr, no deadlock */
}

static void test_handler(void **state)
{
	struct caught c = { 0 };

	(void)state;
	unsetenv("HOP_DEBUG");
	hop_log_set_rank(5);
	assert_int_equal(hop_log_set_handler(catch_line, &c, HOP_LOG_SEV_INFO),
			 0);
	/* without HOP_DEBUG, the handler's level applies, at init too */
	assert_int_equal(hop_log_init(), 0);
	assert_string_equal(capture(say_all), "");
	assert_int_equal(c.calls, 2);
	assert_int_equal(c.sev, HOP_LOG_SEV_INFO);
	assert_int_equal(c.rank, 5);
	assert_string_equal(c.msg, "informed x"); /* no prefix, no newline */
	/* HOP_DEBUG wins over the handler's level */
	setenv("HOP_DEBUG", "trace", 1);
	assert_int_equal(hop_log_init(), 0);
	c.calls = 0;
	assert_string_equal(capture(say_all), "");
	assert_int_equal(c.calls, 3);
	assert_string_equal(c.msg, "traced");
	unsetenv("HOP_DEBUG");
	/* a handler that logs gets its own line on stderr */
	c.nested = 1;
	c.calls = 0;
	assert_non_null(strstr(capture(one_warn),
			       "warn: from inside the handler"));
	assert_int_equal(c.calls, 1);
	assert_string_equal(c.msg, "hello world");
	/* a bad level is refused and changes nothing */
	assert_int_equal(hop_log_set_handler(catch_line, &c,
					     (hop_log_severity_t)7),
			 HOP_ERR_INVALID_ARG);
	/* NULL restores stderr at warn */
	assert_int_equal(hop_log_set_handler(NULL, NULL, HOP_LOG_SEV_WARN), 0);
	assert_int_equal(hop_log_level_g, HOP_LOG_WARN);
	c.calls = 0;
	assert_string_equal(capture(one_warn), "[hop r5] warn: hello world\n");
	assert_int_equal(c.calls, 0);
	hop_log_init();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_bad_level_message),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_errno_kept),
		cmocka_unit_test(test_limit_counts),
		cmocka_unit_test(test_limited_lines),
		cmocka_unit_test(test_handler),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
