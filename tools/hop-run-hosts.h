/*
 * hop-run-hosts.h - hop-run across emulated hosts: rank -> host mapping and
 * entering a host's namespaces (hop-run-hosts.c).
 */
#ifndef HOP_RUN_HOSTS_H
#define HOP_RUN_HOSTS_H

#include <stddef.h>
#include <sys/types.h>

struct run_hosts {
	int nhosts;             /* 0: every rank on this host */
	pid_t *pids;            /* per host: a process in its namespaces */
	int *host_of;           /* per rank */
};

/* "P0,P1,..." -> h->pids; exactly h->nhosts of them. */
int run_hosts_parse_pids(struct run_hosts *h, const char *list, char *err,
			 size_t errlen);
/*
 * h->host_of for *n ranks (0: as many as the map or ppn x hosts give):
 * map "block" (default; ppn per host, or as even as possible), "cyclic"
 * (rank r on host r mod H) or a file naming each rank's host.
 */
int run_hosts_map(struct run_hosts *h, const char *map, long ppn, long *n,
		  char *err, size_t errlen);
/* Join the namespaces of @pid named in @what (CLONE_NEWNET, then
 * CLONE_NEWUTS, then CLONE_NEWNS, a prefix of that order). */
int run_hosts_enter(pid_t pid, int what, char *err, size_t errlen);
/*
 * The options --hosts @nh (0: none), --ppn, --map, --host-pids -> @h, and
 * this process into host 0's network, where the rendezvous listener must
 * be made for every host to reach it.
 */
int run_hosts_setup(struct run_hosts *h, long nh, long ppn, const char *map,
		    const char *pids, long *n, char *err, size_t errlen);
void run_hosts_free(struct run_hosts *h);

#endif
