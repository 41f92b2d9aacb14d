/*
 * test_core_config - HOP_* parsing: defaults, strict rejection of every
 * malformed value with a message naming the variable, the value and the
 * allowed range; sizes with suffixes; fractional seconds; and
 * docs/config.md row by row against the table in config.c.
 *
 * `test_core_config --markdown` prints the rows of docs/config.md.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"

extern char **environ;

/* Start every test from an environment without HOP_* variables. */
static int clear_hop_env(void **state)
{
	(void)state;
	for (int again = 1; again;) {
		again = 0;
		for (char **e = environ; e && *e; e++) {
			if (strncmp(*e, "HOP_", 4) == 0) {
				char name[128];
				size_t n = strcspn(*e, "=");

				snprintf(name, sizeof(name), "%.*s", (int)n, *e);
				unsetenv(name);
				again = 1;
				break;
			}
		}
	}
	return 0;
}

static void test_defaults(void **state)
{
	struct hop_config c, l;
	char err[256];

	(void)state;
	hop_config_defaults(&c);
	assert_int_equal(c.timeout_ms, 60000);
	assert_string_equal(c.transport, "auto");
	assert_string_equal(c.socket_ifname, "");
	assert_int_equal(c.spin_count, -1);
	assert_int_equal(c.yield_us, -1);
	assert_int_equal(c.eager_size, 0);     /* auto, resolved by comm.c */
	assert_int_equal(c.eager_slots, 16);
	assert_int_equal(c.rndv_chunk, 1 << 20);
	assert_string_equal(c.algo, "");
	assert_int_equal(c.chunk_size, 0);
	assert_int_equal(c.pipeline_depth, 0);
	assert_int_equal(c.pipeline_chunks, 0);
	assert_string_equal(c.profile, "");
	assert_string_equal(c.topo, "");
	assert_string_equal(c.ib_device, "");
	assert_int_equal(c.ib_port, 1);
	assert_int_equal(c.ib_gid_index, -1);
	assert_int_equal(c.ib_timeout, 18);
	assert_int_equal(c.ib_retry_cnt, 7);
	assert_int_equal(c.ib_mtu, 0);
	assert_string_equal(c.ib_cm, "rdmacm");
	assert_int_equal(c.ib_signal_every, 16);
	assert_int_equal(c.reg_cache, 256);
	assert_int_equal(c.shm_cma, 1);

	/* an empty environment loads exactly the defaults */
	assert_int_equal(hop_config_load(&l, err, sizeof(err)), 0);
	assert_memory_equal(&c, &l, sizeof(c));
	assert_string_equal(err, "");
}

static void test_valid_values(void **state)
{
	struct hop_config c;
	char err[256];

	(void)state;
	setenv("HOP_TIMEOUT", "0.5", 1);
	setenv("HOP_TRANSPORT", "shm", 1);
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	setenv("HOP_EAGER_SIZE", "16k", 1);
	setenv("HOP_RNDV_CHUNK", "4M", 1);
	setenv("HOP_CHUNK_SIZE", "1G", 1);
	setenv("HOP_EAGER_SLOTS", "+32", 1);
	setenv("HOP_IB_GID_INDEX", "-1", 1);
	setenv("HOP_IB_MTU", "4096", 1);
	setenv("HOP_IB_CM", "oob", 1);
	setenv("HOP_ALGO", "allreduce:ring,broadcast:tree", 1);
	setenv("HOP_REG_CACHE", "0", 1);
	setenv("HOP_SHM_CMA", "0", 1);
	assert_int_equal(hop_config_load(&c, err, sizeof(err)), 0);
	assert_int_equal(c.reg_cache, 0);
	assert_int_equal(c.shm_cma, 0);
	assert_int_equal(c.timeout_ms, 500);
	assert_string_equal(c.transport, "shm");
	assert_string_equal(c.socket_ifname, "lo");
	assert_int_equal(c.eager_size, 16384);
	assert_int_equal(c.rndv_chunk, 4 << 20);
	assert_int_equal(c.chunk_size, 1ull << 30);
	assert_int_equal(c.eager_slots, 32);
	assert_int_equal(c.ib_gid_index, -1);
	assert_int_equal(c.ib_mtu, 4096);
	assert_string_equal(c.ib_cm, "oob");
	assert_string_equal(c.algo, "allreduce:ring,broadcast:tree");
}

static void test_timeout_fractional(void **state)
{
	static const struct {
		const char *v;
		int ms;
	} ok[] = {
		{ "1", 1000 },     { "0.5", 500 },   { ".25", 250 },
		{ "60", 60000 },   { "0.001", 1 },   { "2.0005", 2001 },
		{ "1.23449", 1234 }, { "007", 7000 }, { "5.", 5000 },
		{ "2000000", 2000000000 },
	};
	struct hop_config c;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		setenv("HOP_TIMEOUT", ok[i].v, 1);
		assert_int_equal(hop_config_load(&c, err, sizeof(err)), 0);
		assert_int_equal(c.timeout_ms, ok[i].ms);
	}
}

static void test_sizes(void **state)
{
	static const struct {
		const char *v;
		size_t bytes;
	} ok[] = {
		{ "4096", 4096 }, { "4k", 4096 },        { "4K", 4096 },
		{ "1m", 1 << 20 }, { "3M", 3u << 20 },   { "1G", 1u << 30 },
		{ "1g", 1u << 30 }, { "1048576", 1 << 20 },
	};
	size_t v;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(hop_parse_size("X", ok[i].v, 0, 1ull << 30, &v,
						err, sizeof(err)), 0);
		assert_int_equal(v, ok[i].bytes);
	}
	/* overflowing and out of range */
	assert_int_equal(hop_parse_size("HOP_X", "99999999999999999999999", 0,
					1ull << 30, &v, err, sizeof(err)),
			 HOP_ERR_CONFIG);
	assert_non_null(strstr(err, "HOP_X"));
	assert_int_equal(hop_parse_size("HOP_X", "17179869184G", 0, SIZE_MAX,
					&v, err, sizeof(err)), HOP_ERR_CONFIG);
	assert_int_equal(hop_parse_size("HOP_X", "2G", 0, 1ull << 30, &v, err,
					sizeof(err)), HOP_ERR_CONFIG);
	assert_non_null(strstr(err, "0..1G bytes"));
}

/* HOP_EAGER_SIZE=auto: stored as 0; the size it stands for per provider,
 * falling on verbs as the registered slots pass 16 MiB or a quarter of
 * RLIMIT_MEMLOCK. */
static void test_eager_auto(void **state)
{
	struct hop_config c;
	char err[256];

	(void)state;
	setenv("HOP_EAGER_SIZE", "8K", 1);
	assert_int_equal(hop_config_load(&c, err, sizeof(err)), 0);
	assert_int_equal(c.eager_size, 8192);
	setenv("HOP_EAGER_SIZE", "auto", 1);
	assert_int_equal(hop_config_load(&c, err, sizeof(err)), 0);
	assert_int_equal(c.eager_size, 0);
	setenv("HOP_EAGER_SIZE", "0", 1);
	assert_int_equal(hop_config_load(&c, err, sizeof(err)), HOP_ERR_CONFIG);
	assert_non_null(strstr(err, "64..1M bytes"));
	assert_non_null(strstr(err, "or auto"));

	/* shm (8 KiB caps) keeps its size; caps without one mean 8 KiB */
	assert_int_equal(hop_config_eager_auto(8192, 0, 2, 16, 0), 8192);
	assert_int_equal(hop_config_eager_auto(8192, 0, 65536, 1024, 0), 8192);
	assert_int_equal(hop_config_eager_auto(0, 0, 2, 16, 0), 8192);
	assert_int_equal(hop_config_eager_auto(0, 1, 2, 16, 0), 8192);
	/* tcp (32 KiB caps): the same 16 MiB budget, never memlock (its
	 * slots are not pinned) */
	assert_int_equal(hop_config_eager_auto(32768, 0, 2, 16, 1 << 20), 32768);
	assert_int_equal(hop_config_eager_auto(32768, 0, 30, 16, 0), 32768);
	assert_int_equal(hop_config_eager_auto(32768, 0, 31, 16, 0), 16384);
	assert_int_equal(hop_config_eager_auto(32768, 0, 62, 16, 0), 16384);
	assert_int_equal(hop_config_eager_auto(32768, 0, 63, 16, 0), 8192);
	assert_int_equal(hop_config_eager_auto(16384, 0, 65536, 1024, 0), 8192);
	/* (ranks + 2) x 16 slots within 16 MiB */
	assert_int_equal(hop_config_eager_auto(65536, 1, 2, 16, 0), 65536);
	assert_int_equal(hop_config_eager_auto(65536, 1, 14, 16, 0), 65536);
	assert_int_equal(hop_config_eager_auto(65536, 1, 15, 16, 0), 32768);
	assert_int_equal(hop_config_eager_auto(65536, 1, 30, 16, 0), 32768);
	assert_int_equal(hop_config_eager_auto(65536, 1, 62, 16, 0), 16384);
	assert_int_equal(hop_config_eager_auto(65536, 1, 63, 16, 0), 8192);
	assert_int_equal(hop_config_eager_auto(65536, 1, 65536, 1024, 0), 8192);
	assert_int_equal(hop_config_eager_auto(65536, 1, 2, 1024, 0), 8192);
	/* or within a quarter of RLIMIT_MEMLOCK: 8 MiB -> 2 MiB of slots */
	assert_int_equal(hop_config_eager_auto(65536, 1, 2, 16, 8u << 20), 32768);
	assert_int_equal(hop_config_eager_auto(65536, 1, 2, 16, 64u << 20), 65536);
	assert_int_equal(hop_config_eager_auto(65536, 1, 2, 16, 65536), 8192);
	assert_int_equal(hop_config_eager_auto(8192, 0, 2, 16, 65536), 8192);
}

static void test_parse_int(void **state)
{
	long v = 42;
	char err[256];

	(void)state;
	assert_int_equal(hop_parse_int("N", "-7", -10, 10, &v, err, sizeof(err)), 0);
	assert_int_equal(v, -7);
	v = 42;
	assert_int_equal(hop_parse_int("N", "99999999999999999999", 0, 10, &v,
				       err, sizeof(err)), HOP_ERR_CONFIG);
	assert_int_equal(v, 42); /* unchanged on failure */
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(hop_parse_int("N", "0x10", 0, 100, &v, err,
				       sizeof(err)), HOP_ERR_CONFIG);
	assert_non_null(strstr(err, "trailing characters 'x10'"));
	assert_int_equal(hop_parse_int("N", NULL, 0, 100, &v, err, sizeof(err)),
			 HOP_ERR_CONFIG);
}

/* Every malformed value: HOP_ERR_CONFIG, message names variable + value +
 * what is allowed, and the output config is left untouched. */
static void test_malformed(void **state)
{
	static const struct {
		const char *var, *value, *allowed;
	} bad[] = {
		{ "HOP_TIMEOUT", "", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "abc", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "10s", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "-1", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "0", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "0.0004", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "1e3", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", " 5", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "1.2.3", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", ".", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "2000001", "0.001..2000000 seconds" },
		{ "HOP_TIMEOUT", "99999999999999999999999", "0.001..2000000" },
		{ "HOP_TIMEOUT", "nan", "0.001..2000000 seconds" },
		/* any name may be a plugin: checked when it is looked for */
		{ "HOP_TRANSPORT", "", "up to 47 characters" },
		{ "HOP_TRANSPORT", "intra:shm,inter:tcp,and-then-a-far-too-long-remainder",
		  "longer than 47" },
		{ "HOP_PLUGIN_PATH", "", "up to 255 characters" },
		{ "HOP_IB_CM", "cm", "rdmacm, oob" },
		{ "HOP_SPIN", "", "-1..100000000" },
		{ "HOP_SPIN", "12abc", "-1..100000000" },
		{ "HOP_SPIN", "-2", "-1..100000000" },
		{ "HOP_YIELD_US", "-2", "-1..1000000000" },
		{ "HOP_YIELD_US", "1e3", "-1..1000000000" },
		{ "HOP_EAGER_SLOTS", "0", "1..1024" },
		{ "HOP_EAGER_SLOTS", "1025", "1..1024" },
		{ "HOP_EAGER_SLOTS", "1.5", "1..1024" },
		{ "HOP_EAGER_SLOTS", "16x", "1..1024" },
		{ "HOP_EAGER_SIZE", "", "64..1M bytes" },
		{ "HOP_EAGER_SIZE", "8q", "64..1M bytes" },
		{ "HOP_EAGER_SIZE", "-5", "64..1M bytes" },
		{ "HOP_EAGER_SIZE", "2M", "64..1M bytes" },
		{ "HOP_EAGER_SIZE", "K", "64..1M bytes" },
		{ "HOP_EAGER_SIZE", "8KB", "64..1M bytes" },
		{ "HOP_EAGER_SIZE", "32", "64..1M bytes" },
		{ "HOP_RNDV_CHUNK", "1T", "4K..1G bytes" },
		{ "HOP_IB_PORT", "0", "1..255" },
		{ "HOP_IB_RETRY_CNT", "8", "0..7" },
		{ "HOP_IB_TIMEOUT", "32", "0..31" },
		{ "HOP_IB_MTU", "1000", "0, 256, 512, 1024, 2048, 4096" },
		{ "HOP_IB_MTU", "8192", "0..4096" },
		{ "HOP_IB_GID_INDEX", "-2", "-1..1023" },
		{ "HOP_SOCKET_IFNAME", "a-very-long-ifname", "15 characters" },
		{ "HOP_SOCKET_IFNAME", "", "up to 15 characters" },
		{ "HOP_REG_CACHE", "lots", "0..1048576" },
		{ "HOP_REG_CACHE", "-1", "0..1048576" },
		{ "HOP_REG_CACHE", "1048577", "0..1048576" },
		{ "HOP_SHM_CMA", "garbage", "0..1" },
		{ "HOP_SHM_CMA", "2", "0..1" },
		{ "HOP_SHM_CMA", "yes", "0..1" },
	};
	struct hop_config c, before;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[64];

		clear_hop_env(NULL);
		setenv(bad[i].var, bad[i].value, 1);
		memset(&c, 0xa5, sizeof(c));
		before = c;
		err[0] = '\0';
		int ret = hop_config_load(&c, err, sizeof(err));

		if (ret != HOP_ERR_CONFIG || !strstr(err, bad[i].var) ||
		    !strstr(err, bad[i].allowed))
			fail_msg("%s='%s': ret %d, message '%s'", bad[i].var,
				 bad[i].value, ret, err);
		/* the value itself is quoted (long ones shortened) */
		snprintf(want, sizeof(want), "%.20s", bad[i].value);
		if (bad[i].value[0] && !strstr(err, want))
			fail_msg("%s: value '%s' not in '%s'", bad[i].var,
				 bad[i].value, err);
		if (!bad[i].value[0] && !strstr(err, "empty"))
			fail_msg("%s: empty not said in '%s'", bad[i].var, err);
		assert_memory_equal(&c, &before, sizeof(c));
	}
}

/* Rows of docs/config.md: "| `NAME` | `default` or (none) | meaning |" */
static void print_markdown(void)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	hop_config_print_table(f);
	fclose(f);
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *def = strchr(line, '|'), *help;

		*def++ = '\0';
		help = strchr(def, '|');
		*help++ = '\0';
		if (*def)
			printf("| `%s` | `%s` | %s |\n", line, def, help);
		else
			printf("| `%s` | (none) | %s |\n", line, help);
	}
	free(buf);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\n'))
		*--e = '\0';
	if (*s == '`' && e > s + 1 && e[-1] == '`') {
		e[-1] = '\0';
		s++;
	}
	return s;
}

static void test_docs_table(void **state)
{
	const char *top = getenv("top_srcdir") ? getenv("top_srcdir") : HOP_TOP_SRCDIR;
	char path[4096], line[2048], *buf = NULL;
	size_t len = 0;
	int in_doc = 0, in_table = 0, tables = 0;
	FILE *doc, *tab;

	(void)state;
	snprintf(path, sizeof(path), "%s/docs/config.md", top);
	doc = fopen(path, "r");
	if (!doc)
		fail_msg("cannot open %s", path);
	tab = open_memstream(&buf, &len);
	hop_config_print_table(tab);
	fclose(tab);

	/* every documented row is in the table, with the same default and
	 * meaning; count the rows that are */
	while (fgets(line, sizeof(line), doc)) {
		char *cols[3], *p = line, *bar;
		char want[2048];

		if (strncmp(line, "| `HOP_", 7) != 0) {
			in_table = 0;
			continue;
		}
		if (!in_table && ++tables > 1)
			fail_msg("docs/config.md has more than one HOP_* table");
		in_table = 1;
		p++;
		for (int c = 0; c < 3; c++) {
			if (!(bar = strchr(p, '|')))
				fail_msg("short row in docs/config.md: %s", line);
			*bar = '\0';
			cols[c] = trim(p);
			p = bar + 1;
		}
		if (strcmp(cols[1], "(none)") == 0)
			cols[1] = "";
		snprintf(want, sizeof(want), "%s|%s|%s\n", cols[0], cols[1], cols[2]);
		if (!strstr(buf, want))
			fail_msg("docs/config.md row differs from config.c: %s"
				 "(run tests/unit/test_core_config --markdown)", want);
		in_doc++;
	}
	fclose(doc);
	/* and every variable of the table is documented */
	int in_table_count = 0;

	for (char *l = buf; *l; l = strchr(l, '\n') + 1)
		in_table_count++;
	if (in_doc != in_table_count)
		fail_msg("docs/config.md documents %d variables, config.c has %d "
			 "(run tests/unit/test_core_config --markdown)", in_doc,
			 in_table_count);
	assert_true(in_doc >= 28);
	free(buf);
}

static void test_unknown_var_warns(void **state)
{
	struct hop_config c;
	char err[256];

	(void)state;
	/* a typo is ignored (warned once on stderr), not an error */
	setenv("HOP_TIMOUT", "5", 1);
	assert_int_equal(hop_config_load(&c, err, sizeof(err)), 0);
	assert_int_equal(c.timeout_ms, 60000);
	assert_int_equal(hop_config_load(NULL, err, sizeof(err)), HOP_ERR_CONFIG);
}

/* `test_core_config --load`: one hop_config_load() in a fresh process
 * (the unknown variable warning comes once per process). */
static int load_once(void)
{
	struct hop_config c;
	char err[256];

	hop_log_init();
	return hop_config_load(&c, err, sizeof(err)) ? 1 : 0;
}

/* Run `--load` with HOP_* @var=@value; its stderr into @out. */
static int load_in_child(const char *var, const char *value, char *out,
			 size_t outlen)
{
	char path[] = "/tmp/hop-cfg-XXXXXX";
	int fd = mkstemp(path), st = -1;
	ssize_t n;
	pid_t pid;

	assert_true(fd >= 0);
	unlink(path);
	fflush(NULL);
	if ((pid = fork()) == 0) {
		dup2(fd, 2);
		setenv(var, value, 1);
		execl("/proc/self/exe", "test_core_config", "--load",
		      (char *)NULL);
		_exit(127);
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	n = pread(fd, out, outlen - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* HOP_REG_CACHE is read by p2p: a documented variable, not an unknown. */
static void test_reg_cache_known(void **state)
{
	char out[1024];

	(void)state;
	assert_int_equal(load_in_child("HOP_REG_CACHE", "8", out, sizeof(out)),
			 0);
	if (strstr(out, "HOP_REG_CACHE"))
		fail_msg("HOP_REG_CACHE=8 was warned about: %s", out);
	assert_int_equal(load_in_child("HOP_REG_CACHX", "8", out, sizeof(out)),
			 0);
	assert_non_null(strstr(out, "unknown variable HOP_REG_CACHX"));
}

/* Init from the environment with @var=@value: HOP_ERR_CONFIG whose
 * message has @want, and nothing on stderr that says the value is used
 * anyway. */
static void init_fails(const char *var, const char *value, const char *want)
{
	char path[] = "/tmp/hop-cfg-XXXXXX", out[1024];
	int fd = mkstemp(path), saved = dup(2), ret;
	hop_comm_t *comm = NULL;
	ssize_t n;

	assert_true(fd >= 0 && saved >= 0);
	unlink(path);
	setenv("HOP_RANK", "0", 1);
	setenv("HOP_SIZE", "1", 1);
	setenv("HOP_ADDR", "127.0.0.1:9", 1);
	setenv("HOP_SECRET", "0123456789abcdef0123456789abcdef", 1);
	setenv("HOP_TIMEOUT", "2", 1);
	setenv(var, value, 1);
	fflush(stderr);
	dup2(fd, 2);
	ret = hop_comm_init_env(&comm);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	out[n > 0 ? n : 0] = '\0';
	close(fd);
	if (comm)
		hop_comm_destroy(comm);
	if (ret != HOP_ERR_CONFIG || !strstr(hop_last_init_error(), want))
		fail_msg("%s=%s: %s, '%s' (want HOP_ERR_CONFIG and '%s')", var,
			 value, hop_err_name(ret), hop_last_init_error(), want);
	if (strstr(out, "using"))
		fail_msg("%s=%s: stderr says it is used anyway: %s", var, value,
			 out);
}

static void test_secret_all_zero(void **state)
{
	(void)state;
	init_fails("HOP_SECRET", "00000000000000000000000000000000",
		   "all zero");
}

static void test_shm_cma_strict(void **state)
{
	(void)state;
	setenv("HOP_TRANSPORT", "shm", 1);
	init_fails("HOP_SHM_CMA", "garbage", "HOP_SHM_CMA='garbage'");
}

/* Per-communicator settings win over the environment; a bad entry is
 * named, and nothing is loaded. */
static void test_settings(void **state)
{
	static const struct {
		const char *set[3];
		const char *msg;
	} bad[] = {
		{ { "HOP_TIMEOUT", NULL }, "setting 0 'HOP_TIMEOUT' is not NAME=value" },
		{ { "=5", NULL }, "is not NAME=value" },
		{ { "HOP_TIMOUT=5", NULL }, "HOP_TIMOUT is not a hop variable" },
		{ { "HOP_DEBUG=info", NULL }, "HOP_DEBUG is read from the environment only" },
		{ { "HOP_TIMEOUT=5", "HOP_TIMEOUT=6" }, "setting 1: HOP_TIMEOUT is given twice (also setting 0)" },
		{ { "HOP_TRANSPORT=shm", "HOP_EAGER_SIZE=lots" }, "HOP_EAGER_SIZE" },
	};
	const char *const good[] = { "HOP_IB_DEVICE=rxe1", "HOP_TIMEOUT=7",
				     "HOP_SOCKET_IFNAME=eth1", NULL };
	struct hop_config c;
	char err[256];

	(void)state;
	setenv("HOP_TIMEOUT", "3", 1);
	setenv("HOP_TRANSPORT", "tcp", 1);
	assert_int_equal(hop_config_load_with(&c, good, err, sizeof(err)), 0);
	assert_string_equal(c.ib_device, "rxe1");
	assert_int_equal(c.timeout_ms, 7000);
	assert_string_equal(c.socket_ifname, "eth1");
	assert_string_equal(c.transport, "tcp"); /* from the environment */
	assert_int_equal(hop_config_load_with(&c, NULL, err, sizeof(err)), 0);
	assert_int_equal(c.timeout_ms, 3000);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c.timeout_ms = -42;
		assert_int_equal(hop_config_load_with(&c, bad[i].set, err,
						      sizeof(err)),
				 HOP_ERR_CONFIG);
		if (!strstr(err, bad[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, err,
				 bad[i].msg);
		assert_int_equal(c.timeout_ms, -42);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_defaults, clear_hop_env),
		cmocka_unit_test_setup(test_valid_values, clear_hop_env),
		cmocka_unit_test_setup(test_timeout_fractional, clear_hop_env),
		cmocka_unit_test_setup(test_sizes, clear_hop_env),
		cmocka_unit_test_setup(test_eager_auto, clear_hop_env),
		cmocka_unit_test_setup(test_parse_int, clear_hop_env),
		cmocka_unit_test_setup(test_malformed, clear_hop_env),
		cmocka_unit_test_setup(test_docs_table, clear_hop_env),
		cmocka_unit_test_setup(test_unknown_var_warns, clear_hop_env),
		cmocka_unit_test_setup(test_reg_cache_known, clear_hop_env),
		cmocka_unit_test_setup(test_secret_all_zero, clear_hop_env),
		cmocka_unit_test_setup(test_shm_cma_strict, clear_hop_env),
		cmocka_unit_test_setup(test_settings, clear_hop_env),
	};

	if (argc > 1 && strcmp(argv[1], "--markdown") == 0) {
		print_markdown();
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--load") == 0)
		return load_once();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
