/*
 * hop-run-hosts.c - hop-run across emulated hosts (scripts/hop-cluster):
 * which host each rank runs on (--ppn, --map), and entering a host, which
 * is joining the network, UTS and mount namespaces of a process that
 * holds them (--host-pids).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hop-run-hosts.h"

void run_hosts_free(struct run_hosts *h)
{
	free(h->pids);
	free(h->host_of);
	h->pids = NULL;
	h->host_of = NULL;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return errno || end == s || *end || *out < lo || *out > hi ? -1 : 0;
}

int run_hosts_parse_pids(struct run_hosts *h, const char *list, char *err,
			 size_t errlen)
{
	const char *p = list;

	if (!(h->pids = calloc((size_t)h->nhosts, sizeof(*h->pids)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < h->nhosts; i++) {
		char tok[24];
		size_t n = strcspn(p, ",");
		long v;

		if (n == 0 || n >= sizeof(tok)) {
			snprintf(err, errlen, "--host-pids '%s': host %d has no "
				 "process id (one per host, comma separated)",
				 list, i);
			return -1;
		}
		memcpy(tok, p, n);
		tok[n] = '\0';
		if (parse_long(tok, 1, INT_MAX, &v)) {
			snprintf(err, errlen, "--host-pids: '%s' (host %d) is "
				 "not a process id", tok, i);
			return -1;
		}
		h->pids[i] = (pid_t)v;
		p += n + (p[n] == ',');
	}
	if (*p || p[-1] == ',') {
		snprintf(err, errlen, "--host-pids '%s': more process ids than "
			 "the %d hosts of --hosts", list, h->nhosts);
		return -1;
	}
	return 0;
}

/* FILE: one host number (0-based) per rank, in rank order; '#' comments. */
static int map_file(struct run_hosts *h, const char *path, long *n, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[256];
	int cap = 0, cnt = 0, lineno = 0, ret = -1;

	if (!f) {
		snprintf(err, errlen, "--map '%s': %s (not block, cyclic or a "
			 "readable file)", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t");
		long v;

		lineno++;
		s[strcspn(s, "#\r\n")] = '\0';
		for (char *e = s + strlen(s); e > s && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		if (!*s)
			continue;
		if (parse_long(s, 0, h->nhosts - 1, &v)) {
			snprintf(err, errlen, "--map %s:%d: '%s' is not a host "
				 "number in 0..%d", path, lineno, s, h->nhosts - 1);
			goto out;
		}
		if (cnt == cap) {
			int *t = realloc(h->host_of, sizeof(int) * (size_t)(cap = cap ? 2 * cap : 64));

			if (!t || cap > 65536) {
				free(t);
				h->host_of = NULL;
				snprintf(err, errlen, "--map %s: more than 65536 "
					 "ranks, or out of memory", path);
				goto out;
			}
			h->host_of = t;
		}
		h->host_of[cnt++] = (int)v;
	}
	if (cnt == 0)
		snprintf(err, errlen, "--map %s: no ranks in it", path);
	else if (*n && *n != cnt)
		snprintf(err, errlen, "--map %s places %d ranks; -n says %ld",
			 path, cnt, *n);
	else
		ret = 0;
	*n = cnt;
out:
	fclose(f);
	return ret;
}

int run_hosts_map(struct run_hosts *h, const char *map, long ppn, long *n,
		  char *err, size_t errlen)
{
	int cyclic = map && !strcmp(map, "cyclic");

	if (map && !cyclic && strcmp(map, "block"))
		return map_file(h, map, n, err, errlen);
	if (ppn && *n && *n != ppn * h->nhosts) {
		snprintf(err, errlen, "-n %ld is not --hosts %d x --ppn %ld",
			 *n, h->nhosts, ppn);
		return -1;
	}
	if (!*n)
		*n = (ppn ? ppn : 1) * h->nhosts;
	if (*n > 65536) {
		snprintf(err, errlen, "%ld ranks: more than 65536", *n);
		return -1;
	}
	if (!ppn) /* block: as even as it gets, the first hosts fuller */
		ppn = (*n + h->nhosts - 1) / h->nhosts;
	if (!(h->host_of = calloc((size_t)*n, sizeof(int)))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (long r = 0; r < *n; r++)
		h->host_of[r] = (int)(cyclic ? r % h->nhosts : r / ppn);
	return 0;
}

int run_hosts_enter(pid_t pid, int what, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		int type;
	} ns[] = { { "net", CLONE_NEWNET }, { "uts", CLONE_NEWUTS },
		   { "mnt", CLONE_NEWNS } };
	int fd[3] = { -1, -1, -1 }, ret = -1;
	char path[64], cwd[PATH_MAX];
	size_t k = 0;

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	/* open every one before entering any: /proc is the caller's */
	for (k = 0; k < 3 && (what & ns[k].type); k++) {
		snprintf(path, sizeof(path), "/proc/%ld/ns/%s", (long)pid, ns[k].name);
		if ((fd[k] = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			snprintf(err, errlen, "host process %ld: %s: %s", (long)pid,
				 path, strerror(errno));
			goto out;
		}
	}
	for (size_t i = 0; i < k; i++)
		if (setns(fd[i], ns[i].type) < 0) {
			snprintf(err, errlen, "entering the %s namespace of host "
				 "process %ld: %s", ns[i].name, (long)pid,
				 strerror(errno));
			goto out;
		}
	/* a new mount namespace starts at its root; the tree is a copy */
	if (k == 3 && cwd[0] && chdir(cwd) < 0) {
		snprintf(err, errlen, "working directory %s on the host of "
			 "process %ld: %s", cwd, (long)pid, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < 3; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	return ret;
}

int run_hosts_setup(struct run_hosts *h, long nh, long ppn, const char *map,
		    const char *pids, long *n, char *err, size_t errlen)
{
	if (!nh && (ppn || map || pids)) {
		snprintf(err, errlen, "--ppn, --map and --host-pids need --hosts");
		return -1;
	}
	if (!nh)
		return 0;
	if (!pids || (ppn && map && strcmp(map, "block"))) {
		snprintf(err, errlen, "%s", !pids ?
			 "--hosts needs --host-pids (scripts/hop-cluster passes them)" :
			 "--ppn places ranks in blocks: not with --map cyclic or FILE");
		return -1;
	}
	h->nhosts = (int)nh;
	if (run_hosts_parse_pids(h, pids, err, errlen) ||
	    run_hosts_map(h, map, ppn, n, err, errlen) ||
	    run_hosts_enter(h->pids[0], CLONE_NEWNET, err, errlen)) {
		run_hosts_free(h);
		h->nhosts = 0;
		return -1;
	}
	return 0;
}
