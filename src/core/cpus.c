/*
 * cpus.c - the ranks that share this rank's cores (cpus.h).
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "core/cpus.h"
#include "core/hash.h"

uint64_t hop_kernel_id(void)
{
	uint64_t h = HOP_FNV1A64_INIT;
	char buf[64];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");

	if (f) {
		h = hop_fnv1a64(h, buf, fread(buf, 1, sizeof(buf), f));
		fclose(f);
	}
	return h;
}

void hop_cpu_rec_local(struct hop_cpu_rec *rec)
{
	cpu_set_t set;

	memset(rec, 0, sizeof(*rec));
	rec->kernel = hop_kernel_id();
	if (sched_getaffinity(0, sizeof(set), &set)) {
		rec->ncpus = 1;         /* unknown: as one core */
		rec->mask[0] = 1;
		return;
	}
	rec->ncpus = (uint32_t)CPU_COUNT(&set);
	for (int c = 0; c < HOP_CPU_MASK_CPUS && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set))
			rec->mask[c / 64] |= 1ull << (c % 64);
}

/* Do the masks of @a and @b meet? A mask with none of its CPUs among the
 * first HOP_CPU_MASK_CPUS is taken to meet every other. */
static int meet(const struct hop_cpu_rec *a, const struct hop_cpu_rec *b)
{
	uint64_t any_a = 0, any_b = 0, both = 0;

	for (int w = 0; w < HOP_CPU_MASK_CPUS / 64; w++) {
		any_a |= a->mask[w];
		any_b |= b->mask[w];
		both |= a->mask[w] & b->mask[w];
	}
	return both || !any_a || !any_b;
}

void hop_cpu_share(const struct hop_cpu_rec *all, const int *host, int n,
		   int me, int *ranks, int *cores)
{
	uint64_t u[HOP_CPU_MASK_CPUS / 64] = { 0 };
	uint32_t most = 1;
	int count = 0, bits = 0;

	for (int r = 0; r < n; r++) {
		if ((host ? host[r] != host[me] : all[r].kernel != all[me].kernel) ||
		    !meet(&all[r], &all[me]))
			continue;
		count++;
		for (int w = 0; w < HOP_CPU_MASK_CPUS / 64; w++)
			u[w] |= all[r].mask[w];
		if (all[r].ncpus > most)
			most = all[r].ncpus;
	}
	for (int w = 0; w < HOP_CPU_MASK_CPUS / 64; w++)
		bits += __builtin_popcountll(u[w]);
	*ranks = count;
	*cores = bits > (int)most ? bits : (int)most;
}
