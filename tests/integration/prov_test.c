/*
 * prov_test.c - the tcp and shm providers across real processes.
 *
 *   prov_test PROVIDER NRANKS [TEST...]
 *
 * Tests (all by default, in this order): select, writes, sends, order, oob,
 * stale, access, impostor (tcp), kill. Each runs in fresh processes joined by the real bootstrap
 * and opens the provider directly (no p2p layer above it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prov_test.h"

/* tcp and shm: writes up to 64 MiB; both inline at least 64 bytes */
static const struct prov_cases_cfg cases_cfg = {
	.write_max = 64u << 20,
	.min_inline = 64,
};

/* ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	static const char *const all_tests[] = { "select", "writes", "sends",
						 "order", "oob", "stale",
						 "access", "impostor", "kill" };
	const char *prov;
	int n, fails = 0, ntests;
	const char *const *tests;

	if (argc < 3) {
		fprintf(stderr, "usage: %s tcp|shm NRANKS [test...]\n", argv[0]);
		return 2;
	}
	prov = argv[1];
	n = atoi(argv[2]);
	if (n < 1 || n > 64)
		return 2;
	tests = argc > 3 ? (const char *const *)argv + 3 : all_tests;
	ntests = argc > 3 ? argc - 3 : (int)(sizeof(all_tests) / sizeof(*all_tests));
	for (int i = 0; i < ntests; i++) {
		const char *t = tests[i];
		enum bad_kind k;
		int ret;

		if (!strcmp(t, "select"))
			ret = ph_run(prov, n, t_select, NULL, -1, 60);
		else if (!strcmp(t, "writes"))
			ret = ph_run(prov, n, prov_case_writes, (void *)&cases_cfg,
				     -1, 120);
		else if (!strcmp(t, "sends"))
			ret = ph_run(prov, n, prov_case_sends, NULL, -1, 60);
		else if (!strcmp(t, "order"))
			ret = ph_run(prov, n, prov_case_order, NULL, -1, 60);
		else if (!strcmp(t, "oob") || !strcmp(t, "stale") ||
			 !strcmp(t, "access")) {
			if (n < 2) {
				printf("SKIP %s %s: needs 2 ranks\n", prov, t);
				continue;
			}
			k = !strcmp(t, "oob") ? BAD_BOUNDS
			    : !strcmp(t, "stale") ? BAD_STALE : BAD_ACCESS;
			ret = ph_run(prov, n, t_bad, &k, -1, 60);
		} else if (!strcmp(t, "impostor")) {
			if (n < 2 || strcmp(prov, "tcp")) {
				printf("SKIP %s %s: tcp with 2+ ranks only\n",
				       prov, t);
				continue;
			}
			ret = ph_run(prov, n, t_impostor, NULL, -1, 60);
		} else if (!strcmp(t, "kill")) {
			if (n < 2) {
				printf("SKIP %s %s: needs 2 ranks\n", prov, t);
				continue;
			}
			ret = ph_run(prov, n, t_kill, NULL, n - 1, 60);
		} else {
			fprintf(stderr, "unknown test %s\n", t);
			return 2;
		}
		printf("%s %s %s (%d ranks)\n", ret ? "FAIL" : "PASS", prov, t,
		       n);
		fflush(stdout);
		if (ret)
			fails++;
	}
	return fails ? 1 : 0;
}
