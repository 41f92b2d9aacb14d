/*
 * config.h - every HOP_* environment variable, parsed and validated in one
 * place. One table (config.c) drives parsing, defaults, range checks and
 * the documentation table (docs/config.md is checked against it by a test).
 */
#ifndef HOP_CORE_CONFIG_H
#define HOP_CORE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#define HOP_CFG_STR 256

struct hop_config {
	/* core */
	int timeout_ms;                 /* HOP_TIMEOUT (seconds, may be fractional), default 60 */
	char transport[48];             /* HOP_TRANSPORT auto|verbs|tcp|shm|plugin, default auto */
	char plugin_path[HOP_CFG_STR];  /* HOP_PLUGIN_PATH folders of provider plugins, default "" */
	char socket_ifname[64];         /* HOP_SOCKET_IFNAME, default "" (first non-loopback, else lo) */
	char connect[16];               /* HOP_CONNECT eager|lazy, default lazy */
	int spin_count;                 /* HOP_SPIN polls before a waiter yields, default -1 = auto */
	int yield_us;                   /* HOP_YIELD_US polling with sched_yield() before blocking, default -1 = auto */
	size_t copy_piece;              /* HOP_COPY_PIECE bytes per memcpy() of a payload copy, default 2 KiB, 0 = whole */
	/* p2p */
	size_t eager_size;              /* HOP_EAGER_SIZE payload bytes per eager slot; 0 (auto) until comm.c resolves it */
	int eager_slots;                /* HOP_EAGER_SLOTS slots per peer, default 16 */
	int eager_poll;                 /* HOP_EAGER_POLL memory-polled eager: 1, 0, -1 (default: verbs only) */
	size_t rndv_chunk;              /* HOP_RNDV_CHUNK bytes per rendezvous write, default 1 MiB */
	size_t rndv_advert;             /* HOP_RNDV_ADVERT smallest receive that advertises, default 4 KiB, 0 = none */
	size_t unexpected_max;          /* HOP_UNEXPECTED_MAX bytes held for messages not yet received, default 64 MiB */
	int reg_cache;                  /* HOP_REG_CACHE unused registrations kept, default 256, 0 = none */
	size_t reg_cache_bytes;         /* HOP_REG_CACHE_BYTES registered bytes kept, default 256 MiB */
	char reg_monitor[16];           /* HOP_REG_MONITOR uffd|none */
	/* collectives */
	char algo[HOP_CFG_STR];         /* HOP_ALGO e.g. "allreduce:ring,broadcast:tree", default "" */
	size_t chunk_size;              /* HOP_CHUNK_SIZE pipelining chunk bytes, default 0 = auto */
	int pipeline_depth;             /* HOP_PIPELINE_DEPTH chunks in flight, default 0 = auto */
	int pipeline_chunks;            /* HOP_PIPELINE_CHUNKS multi-hop k override, default 0 = model */
	char hier_form[16];             /* HOP_HIER_FORM auto|rails|leaders, default auto */
	char profile[HOP_CFG_STR];      /* HOP_PROFILE hop-probe link profile path, default "" */
	char topo[HOP_CFG_STR];         /* HOP_TOPO topology file path, default "" */
	int rooted_sync;                /* HOP_ROOTED_SYNC calls between a rooted collective's closing barriers, 0 = none */
	int fbox;                       /* HOP_FBOX small collectives on one host through fast boxes: 1 (default) or 0 */
	/* shm */
	int shm_cma;                    /* HOP_SHM_CMA large writes by process_vm_writev: 1 (default) or 0 */
	/* verbs */
	char ib_device[64];             /* HOP_IB_DEVICE, default "" = first ACTIVE */
	int ib_port;                    /* HOP_IB_PORT, default 1 */
	int ib_gid_index;               /* HOP_IB_GID_INDEX, default -1 = auto */
	int ib_timeout;                 /* HOP_IB_TIMEOUT local ACK timeout exponent, default 18 */
	int ib_retry_cnt;               /* HOP_IB_RETRY_CNT, default 7 */
	int ib_mtu;                     /* HOP_IB_MTU bytes (256..4096), default 0 = port's active MTU */
	char ib_cm[16];                 /* HOP_IB_CM rdmacm|oob, default rdmacm */
	int ib_signal_every;            /* HOP_IB_SIGNAL_EVERY selective signalling period, default 16 */
	int ib_liveness_ms;             /* HOP_IB_LIVENESS_MS idle time before a probe, default 1000, 0 = off */
};

/*
 * hop_config_load() - Fill @cfg from the environment.
 * @err: receives a message naming the variable, its value and what is
 *       allowed, when a value is malformed or out of range.
 * Return: 0 or HOP_ERR_CONFIG.
 */
int hop_config_load(struct hop_config *cfg, char *err, size_t errlen);

/*
 * hop_config_load_with() - hop_config_load(), with @settings (NULL or a
 * NULL-terminated array of "HOP_NAME=value") taking precedence over the
 * environment. An entry that is not NAME=value, names a variable that is
 * not in the table (or is read only from the environment), or repeats a
 * name, is HOP_ERR_CONFIG naming it.
 */
int hop_config_load_with(struct hop_config *cfg, const char *const *settings,
			 char *err, size_t errlen);

/* Defaults only, no environment (tests, tools). */
void hop_config_defaults(struct hop_config *cfg);

/* HOP_EAGER_SIZE=auto of a provider whose caps leave eager_size 0, and
 * the floor on RDMA providers (hop_config_eager_auto()). */
#define HOP_EAGER_AUTO 8192

/* The eager size HOP_EAGER_SIZE=auto stands for on a provider whose caps
 * say @eager_max bytes (0: HOP_EAGER_AUTO) and, @rdma, registered RDMA
 * memory, with @nranks ranks, @slots eager slots per peer and @memlock
 * bytes of RLIMIT_MEMLOCK (0: unlimited, or not binding under
 * CAP_IPC_LOCK): @eager_max, on RDMA halved down to 8 KiB as the
 * registered slots would pass 16 MiB or a quarter of @memlock. */
size_t hop_config_eager_auto(size_t eager_max, int rdma, int nranks,
			     int slots, uint64_t memlock);

/*
 * hop_config_get() - The value of variable @name in @cfg: integers, sizes
 * (bytes) and times (milliseconds) in *@num, strings in @str (cut to @len).
 * Return: 0, or HOP_ERR_CONFIG when @name is not a hop_config variable.
 */
int hop_config_get(const struct hop_config *cfg, const char *name,
		   long long *num, char *str, size_t len);

/* Print "NAME|default|meaning" lines, one per variable (for docs checks). */
void hop_config_print_table(void *file /* FILE * */);

/*
 * Parsers shared by config.c and tools; each returns 0 or HOP_ERR_CONFIG
 * with a message naming @name and @value in @err.
 */
int hop_parse_int(const char *name, const char *value, long min, long max,
		  long *out, char *err, size_t errlen);
/* Sizes accept K, M, G suffixes (powers of 1024) and "k", "m", "g". */
int hop_parse_size(const char *name, const char *value, size_t min,
		   size_t max, size_t *out, char *err, size_t errlen);

#endif /* HOP_CORE_CONFIG_H */
