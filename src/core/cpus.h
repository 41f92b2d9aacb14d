/*
 * cpus.h - which ranks share this rank's cores, from every rank's CPU
 * affinity mask and kernel (pure, unit-tested).
 *
 * Oversubscription is about cores, so it is counted where cores are:
 * among the ranks of one kernel (a host, or the emulated hosts that
 * network namespaces make on one machine) whose affinity masks meet this
 * rank's, against the cores of their masks together. Ranks a launcher
 * bound to a core each (mpirun --bind-to core, Slurm --cpu-bind=cores) own
 * their cores; ranks bound to one core, or more ranks than the cores they
 * may use, share them.
 */
#ifndef HOP_CORE_CPUS_H
#define HOP_CORE_CPUS_H

#include <stdint.h>

/* The CPUs a record's mask holds; a process allowed others beyond them
 * counts them in ncpus only. */
#define HOP_CPU_MASK_CPUS 256

struct hop_cpu_rec {
	uint64_t kernel;        /* hash of the kernel's boot_id */
	uint64_t mask[HOP_CPU_MASK_CPUS / 64];
	uint32_t ncpus;         /* CPUs the process may use, all of them */
	uint32_t pad;
};

/* The kernel this process runs on: a hash of its boot_id, the same for
 * every process of one boot of one machine, network namespaces or not. */
uint64_t hop_kernel_id(void);

/* This process's record. */
void hop_cpu_rec_local(struct hop_cpu_rec *rec);

/*
 * Among the @n ranks of @all on rank @me's host (@host[r] equal to
 * @host[me]) or, with @host NULL, on its kernel, *@ranks = those whose
 * masks meet @me's, @me included, and *@cores = the CPUs of their masks
 * together (at least the largest ncpus of them).
 */
void hop_cpu_share(const struct hop_cpu_rec *all, const int *host, int n,
		   int me, int *ranks, int *cores);

#endif
