/*
 * bootstrap_rank - one rank of a bootstrap-only job, for the integration
 * tests: reads rank, size and rendezvous from the environment exactly as
 * hop_comm_init_env() does (hop-run's HOP_UNIQUE_ID + HOP_BOOTSTRAP_FD, or
 * HOP_ADDR + HOP_SECRET), opens the bootstrap, allgathers rank-specific
 * bytes, checks every byte, runs a barrier and prints one line.
 *
 * usage: bootstrap_rank [BYTES [FAIL_RANK]]
 *   BYTES      bytes per rank in the allgather (default 4096)
 *   FAIL_RANK  this rank exits with status 3 right after the rendezvous,
 *              the others must then fail naming it
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "core/core.h"
#include "core/core_int.h"

static uint8_t pattern(int rank, size_t i)
{
	return (uint8_t)(rank * 131 + i * 7 + (i >> 8));
}

int main(int argc, char **argv)
{
	size_t bytes = argc > 1 ? strtoul(argv[1], NULL, 10) : 4096;
	int fail_rank = argc > 2 ? atoi(argv[2]) : -1;
	struct hop_env_job job;
	struct hop_config cfg;
	struct hop_bootstrap *bs;
	char err[HOP_MSG_LEN], ip[INET_ADDRSTRLEN];
	uint8_t *mine, *all;
	int ret;

	hop_log_init();
	if ((ret = hop_env_job_parse(&job, err, sizeof(err))) ||
	    (ret = hop_config_load(&cfg, err, sizeof(err)))) {
		fprintf(stderr, "bootstrap_rank: %s\n", err);
		return 2;
	}
	hop_log_set_rank(job.rank);
	ret = hop_bootstrap_open(&job.id, job.rank, job.nranks, &cfg,
				 hop_deadline_after(cfg.timeout_ms), &bs, err,
				 sizeof(err));
	if (ret) {
		fprintf(stderr, "rank %d: open: %s: %s\n", job.rank,
			hop_err_name(ret), err);
		return 1;
	}
	if (job.rank == fail_rank) {
		hop_bootstrap_close(bs);
		return 3;
	}
	mine = malloc(bytes ? bytes : 1);
	all = malloc(bytes * (size_t)job.nranks + 1);
	for (size_t i = 0; i < bytes; i++)
		mine[i] = pattern(job.rank, i);
	ret = hop_bootstrap_allgather(bs, mine, all, bytes,
				      hop_deadline_after(cfg.timeout_ms));
	if (!ret)
		ret = hop_bootstrap_barrier(bs, hop_deadline_after(cfg.timeout_ms));
	if (ret) {
		fprintf(stderr, "rank %d: %s: %s\n", job.rank, hop_err_name(ret),
			hop_bootstrap_error(bs));
		goto out;
	}
	for (int r = 0; r < job.nranks; r++)
		for (size_t i = 0; i < bytes; i++)
			if (all[(size_t)r * bytes + i] != pattern(r, i)) {
				fprintf(stderr, "rank %d: byte %zu of rank %d is "
					"%u, expected %u\n", job.rank, i, r,
					all[(size_t)r * bytes + i], pattern(r, i));
				ret = 1;
				goto out;
			}
	struct in_addr a = hop_bootstrap_local_addr(bs);

	inet_ntop(AF_INET, &a, ip, sizeof(ip));
	printf("rank %d of %d: bootstrap ok (%zu bytes x %d, local %s)\n",
	       job.rank, job.nranks, bytes, job.nranks, ip);
out:
	free(mine);
	free(all);
	hop_bootstrap_close(bs);
	return ret ? 1 : 0;
}
