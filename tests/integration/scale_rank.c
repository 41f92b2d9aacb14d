/*
 * scale_rank - one rank of a job that measures what starting and stopping
 * costs (scripts/scale-bench, tests/integration/scale_init.sh): join
 * (hop_comm_init_env), one 8-byte AllReduce (SUM of rank + 1, checked bit
 * for bit against n (n + 1) / 2, exact in a double), count the open
 * descriptors, destroy. Prints one line:
 *
 *   SCALE rank fds maxrss_kb init_s allreduce_s destroy_s
 *
 * Rank 0 logs at HOP_DEBUG=info (its bootstrap byte count).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <hop/hop.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = -1; /* the directory's own */

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	const char *r = getenv("HOP_RANK");
	hop_comm_t *comm = NULL;
	double t0, t1, t2, t3, v[1], sum;
	struct rusage ru;
	int rank, n, nfd, rc;

	if (r && atoi(r) == 0)
		setenv("HOP_DEBUG", "info", 1); /* its bootstrap byte count */
	t0 = now();
	if ((rc = hop_comm_init_env(&comm))) {
		fprintf(stderr, "init: %s: %s\n", hop_err_name(rc),
			hop_last_init_error());
		return 1;
	}
	t1 = now();
	rank = hop_comm_rank(comm);
	n = hop_comm_size(comm);
	v[0] = rank + 1;
	rc = hop_allreduce(comm, v, v, 1, HOP_FLOAT64, HOP_SUM);
	t2 = now();
	sum = (double)n * (n + 1) / 2;
	if (rc || memcmp(v, &sum, sizeof(sum))) {
		fprintf(stderr, "allreduce: %s, %g instead of %g\n",
			hop_err_name(rc), v[0], sum);
		return 1;
	}
	nfd = fds();
	hop_comm_destroy(comm);
	t3 = now();
	getrusage(RUSAGE_SELF, &ru);
	printf("SCALE %d %d %ld %.6f %.6f %.6f\n", rank, nfd, ru.ru_maxrss,
	       t1 - t0, t2 - t1, t3 - t2);
	return 0;
}
