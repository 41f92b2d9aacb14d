/*
 * config.c - every HOP_* variable of struct hop_config in one table that
 * drives the defaults, the strict parsing of the environment and the
 * documentation table (docs/config.md is checked against it by a test).
 *
 * Defaults are written as a user would write them and go through the same
 * parser as the environment, so the documented default is the one in use.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "config.h"
#include "config_int.h"
#include "log.h"

extern char **environ;

enum cfg_type {
	CFG_INT,        /* int; min/max are values */
	CFG_SIZE,       /* size_t; min/max in bytes; K/M/G suffixes */
	CFG_STR,        /* char[]; max is the longest length accepted */
	CFG_SECONDS,    /* int milliseconds; user writes (fractional) seconds */
};

struct cfg_var {
	const char *name;
	enum cfg_type type;
	const char *def;        /* default, as a user would write it */
	long long min, max;
	const char *choices;    /* "a|b|c": the only values accepted, or NULL */
	size_t off, fsize;      /* field in struct hop_config */
	const char *help;       /* one line, no '|' */
};

#define FIELD(f) offsetof(struct hop_config, f), sizeof(((struct hop_config *)0)->f)

static const struct cfg_var cfg_vars[] = {
	/* core */
	{ "HOP_TIMEOUT", CFG_SECONDS, "60", 1, 2000000000ll, NULL, FIELD(timeout_ms),
	  "deadline of every blocking wait, in seconds, e.g. 60 or 0.5" },
	{ "HOP_TRANSPORT", CFG_STR, "auto", 0, 47, NULL, FIELD(transport),
	  "provider: auto picks per pair of ranks: shm inside a host, between hosts verbs if every rank has an active device, else tcp (docs/providers.md); verbs, tcp, shm or NAME of a plugin libhop-provider-NAME.so for every pair; or per class, e.g. intra:shm,inter:tcp (built-in names or auto)" },
	{ "HOP_PLUGIN_PATH", CFG_STR, "", 0, 255, NULL, FIELD(plugin_path),
	  "colon-separated folders searched for libhop-provider-NAME.so before the installed LIBDIR/hop; HOP_PROV_NAME_* variables configure a plugin" },
	{ "HOP_SOCKET_IFNAME", CFG_STR, "", 0, 15, NULL, FIELD(socket_ifname),
	  "interface for the rendezvous and TCP traffic; unset: first non-loopback IPv4 interface, else lo" },
	{ "HOP_CONNECT", CFG_STR, "lazy", 0, 15, "eager|lazy", FIELD(connect),
	  "lazy: a pair of ranks is connected by its first message or by a receive posted from the peer (tcp, shm, and verbs with HOP_IB_CM=rdmacm; verbs with oob connects every pair at init), so a rank's sockets, shm segments or QPs grow with the peers it uses; eager: every pair is connected at init (docs/connect.md)" },
	{ "HOP_SPIN", CFG_INT, "-1", -1, 100000000, NULL, FIELD(spin_count),
	  "polls a waiter spins before it yields or blocks; -1: 2000 polls and at least 1 ms, or 0 when oversubscribed: more ranks share the rank's cores than those are (the ranks of its kernel whose CPU affinity meets its own, against the CPUs of their masks together; ranks bound to a core each are not)" },
	{ "HOP_YIELD_US", CFG_INT, "-1", -1, 1000000000, NULL, FIELD(yield_us),
	  "microseconds a waiter then polls with sched_yield() between polls before it blocks in the provider; -1: 10000 when oversubscribed up to 4 ranks per core, 40000 / (ranks per core) beyond, else 0" },
	{ "HOP_COPY_PIECE", CFG_SIZE, "2K", 0, 1 * GIB, NULL, FIELD(copy_piece),
	  "bytes per memcpy() when a payload copied into or out of a ring, slot, eager or scratch buffer lands less than 64 bytes past its source modulo 4096: glibc's rep movsb runs about 15 times slower at such distances on some AMD processors, and pieces avoid it in the sizes glibc copies with rep movsb (below the L2 cache's size; docs/performance.md); other copies take one memcpy(); one value per process, set by every communicator's init; 0: one memcpy() for every copy" },
	/* p2p */
	{ "HOP_EAGER_SIZE", CFG_SIZE, "auto", 64, 1 * MIB, "auto", FIELD(eager_size),
	  "largest payload sent eagerly (bytes per pre-registered slot); larger messages use rendezvous; auto: 8 KiB on shm; the largest of 32, 16 and 8 KiB on tcp, and of 64, 32, 16 and 8 KiB on verbs, whose slots ((ranks + 2) x HOP_EAGER_SLOTS) take at most 16 MiB and, on verbs without CAP_IPC_LOCK, a quarter of RLIMIT_MEMLOCK; the smallest of every rank's choice, agreed at init" },
	{ "HOP_EAGER_SLOTS", CFG_INT, "16", 1, 1024, NULL, FIELD(eager_slots),
	  "eager slots per peer (receive ring depth)" },
	{ "HOP_EAGER_POLL", CFG_INT, "-1", -1, 1, NULL, FIELD(eager_poll),
	  "-1: 1 on verbs, 0 on tcp and shm; 1: eager messages up to 224 B go to a peer heard from within 25 ms as plain writes its receiver polls in memory (no completion; docs/verbs.md); 0: always writes with immediate" },
	{ "HOP_RNDV_CHUNK", CFG_SIZE, "1M", 4 * KIB, 1 * GIB, NULL, FIELD(rndv_chunk),
	  "bytes per write of a rendezvous transfer" },
	{ "HOP_RNDV_ADVERT", CFG_SIZE, "4K", 0, 1 * GIB, NULL, FIELD(rndv_advert),
	  "a receive of at least this many bytes posted before its message tells the sender where to write it, and a message of at least this many bytes is written straight into it (docs/p2p.md); between ranks whose provider is not RDMA (tcp, shm) only above HOP_EAGER_SIZE, and between hosts over tcp never; 0: never" },
	{ "HOP_UNEXPECTED_MAX", CFG_SIZE, "64M", 4 * MIB, 1024 * GIB, NULL, FIELD(unexpected_max),
	  "bytes a rank holds for messages that arrived before their receive was posted (an eager message about HOP_EAGER_SIZE each, a rendezvous request under 64 B) and for put immediates not yet waited for (under 64 B each); one more fails the communicator with HOP_ERR_NO_MEMORY naming the sender" },
	{ "HOP_REG_CACHE", CFG_INT, "256", 0, 1 << 20, NULL, FIELD(reg_cache),
	  "registrations of user buffers kept for reuse, in use or not (unused ones dropped least recently used first); 0: each is deregistered when its transfer ends (docs/regcache.md, docs/security.md)" },
	{ "HOP_REG_CACHE_BYTES", CFG_SIZE, "256M", 0, 1024 * GIB, NULL, FIELD(reg_cache_bytes),
	  "registered (on verbs pinned) bytes of user buffers the cache keeps; unused registrations beyond it are dropped least recently used first; 0: none kept (docs/regcache.md)" },
	{ "HOP_REG_MONITOR", CFG_STR, "uffd", 0, 15, "uffd|none", FIELD(reg_monitor),
	  "how cached registrations learn that their memory was unmapped or freed: uffd, a userfaultfd (unprivileged) whose events drop them; if it cannot be opened nothing is cached; none: cached without watching, only for programs that never unmap or free memory passed to hop while it may be cached (docs/regcache.md)" },
	/* collectives */
	{ "HOP_ALGO", CFG_STR, "", 0, 255, NULL, FIELD(algo),
	  "force algorithms per collective, e.g. allreduce:ring,broadcast:tree,alltoall:bruck; unset: chosen by the model" },
	{ "HOP_CHUNK_SIZE", CFG_SIZE, "0", 0, 1 * GIB, NULL, FIELD(chunk_size),
	  "pipelining chunk in bytes; 0: chosen by the model" },
	{ "HOP_PIPELINE_DEPTH", CFG_INT, "0", 0, 1024, NULL, FIELD(pipeline_depth),
	  "chunks in flight per step; 0: chosen by the model" },
	{ "HOP_PIPELINE_CHUNKS", CFG_INT, "0", 0, 65536, NULL, FIELD(pipeline_chunks),
	  "chunks k of a multi-hop pipelined transfer; 0: the model's optimum" },
	{ "HOP_HIER_FORM", CFG_STR, "auto", 0, 15, "auto|rails|leaders", FIELD(hier_form),
	  "the hierarchical AllReduce where every host has the same number (more than one) of ranks: rails, each local rank reduces its slice with its counterparts on the other hosts (in pieces from 2 MiB per rank); leaders, one rank per host reduces the whole vector with the other hosts' leaders; auto: the leaders up to 1 MiB (the inter-host link's max_chunk) unless the model prices the rails 2 % lower, else the rails (docs/hierarchical.md); must be equal on every rank" },
	{ "HOP_PROFILE", CFG_STR, "", 0, 255, NULL, FIELD(profile),
	  "path of a hop-probe link profile (hop-probe --save-profile: alpha/beta per pair); unset: built-in estimates" },
	{ "HOP_TOPO", CFG_STR, "", 0, 255, NULL, FIELD(topo),
	  "path of a topology file describing hosts and links; unset: flat" },
	{ "HOP_ROOTED_SYNC", CFG_INT, "64", 0, 1 << 20, NULL, FIELD(rooted_sync),
	  "a Broadcast, Reduce, Gather or Scatter run as a schedule ends with a barrier every this many calls, or sooner once such calls moved a quarter of HOP_UNEXPECTED_MAX, so ranks that only send cannot run ahead of a slow receiver without limit (docs/flow-control.md); 0: never, and a long enough loop may fail with HOP_ERR_NO_MEMORY" },
	{ "HOP_FBOX", CFG_INT, "1", 0, 1, NULL, FIELD(fbox),
	  "1: blocking AllReduce, Broadcast, Reduce, AllGather, AllToAll and ReduceScatter among 2-8 ranks all on one host joined by shm skip the schedule when the model prices it higher: up to 1 KiB per rank (an AllToAll's or ReduceScatter's N blocks) through per-rank shared-memory slots, up to 256 KiB (an AllReduce up to 256 KiB / (N-1)) through a shared ring per rank, and larger calls of every kind but ReduceScatter by reading the peers' buffers with process_vm_readv (HOP_SHM_CMA) (docs/fastbox.md); 0: always the scheduled algorithms" },
	/* shm */
	{ "HOP_SHM_CMA", CFG_INT, "1", 0, 1, NULL, FIELD(shm_cma),
	  "shm provider: 1 moves large writes with one process_vm_writev copy, and fast boxes above 1 KiB read the peers' buffers by process_vm_readv (docs/fastbox.md); 0 through the ring and the scheduled algorithms" },
	/* verbs */
	{ "HOP_IB_DEVICE", CFG_STR, "", 0, 63, NULL, FIELD(ib_device),
	  "verbs device name (e.g. mlx5_0, rxe0); unset: the first with an ACTIVE port" },
	{ "HOP_IB_PORT", CFG_INT, "1", 1, 255, NULL, FIELD(ib_port),
	  "verbs port number" },
	{ "HOP_IB_GID_INDEX", CFG_INT, "-1", -1, 1023, NULL, FIELD(ib_gid_index),
	  "GID table index (RoCE); -1: automatic (RoCE v2 IPv4 GID when present)" },
	{ "HOP_IB_TIMEOUT", CFG_INT, "18", 0, 31, NULL, FIELD(ib_timeout),
	  "local ACK timeout exponent: 4.096 us * 2^value" },
	{ "HOP_IB_RETRY_CNT", CFG_INT, "7", 0, 7, NULL, FIELD(ib_retry_cnt),
	  "transport retries before a QP fails" },
	{ "HOP_IB_MTU", CFG_INT, "0", 0, 4096, "0|256|512|1024|2048|4096", FIELD(ib_mtu),
	  "path MTU in bytes; 0: the port's active MTU" },
	{ "HOP_IB_CM", CFG_STR, "rdmacm", 0, 15, "rdmacm|oob", FIELD(ib_cm),
	  "connection setup: rdmacm, or oob (QP numbers exchanged through the bootstrap)" },
	{ "HOP_IB_SIGNAL_EVERY", CFG_INT, "16", 1, 4096, NULL, FIELD(ib_signal_every),
	  "request a hardware completion every this many posts (selective signalling)" },
	{ "HOP_IB_LIVENESS_MS", CFG_INT, "1000", 0, 3600000, NULL, FIELD(ib_liveness_ms),
	  "a waiter that saw no completion for this many ms sends a zero-length RDMA write to every idle peer, so a cut link fails after HOP_IB_TIMEOUT x HOP_IB_RETRY_CNT naming the peer; 0: off" },
};
#define N_CFG_VARS (sizeof(cfg_vars) / sizeof(cfg_vars[0]))

/* Read by the launcher, hop_comm_init_env() or a provider itself, not
 * stored in hop_config. */
static const struct {
	const char *name, *def, *help;
} env_vars[] = {
	{ "HOP_DEBUG", "warn", "log level: none, warn, info or trace; any other value fails init with HOP_ERR_CONFIG. Lines go to stderr, or to the handler a program installed with `hop_log_set_handler()` (hop/log.h), whose level applies when this is unset" },
	{ "HOP_RANK", "", "rank of this process (set by hop-run; read by hop_comm_init_env)" },
	{ "HOP_SIZE", "", "number of ranks (set by hop-run; read by hop_comm_init_env)" },
	{ "HOP_UNIQUE_ID", "", "hex unique id of the job (set by hop-run; read by hop_comm_init_env)" },
	{ "HOP_ADDR", "", "host:port where rank 0 listens, when HOP_UNIQUE_ID is not set" },
	{ "HOP_SECRET", "", "32 hex digits shared by every rank, with HOP_ADDR, not all zero; unset: derived from the job id (warned)" },
	{ "HOP_BOOTSTRAP_FD", "", "rendezvous listening socket inherited by rank 0 from hop-run" },
};
#define N_ENV_VARS (sizeof(env_vars) / sizeof(env_vars[0]))

static int parse_var(const struct cfg_var *v, const char *value,
		     struct hop_config *cfg, char *err, size_t errlen)
{
	char *field = (char *)cfg + v->off;
	char allowed[128];
	long lv;
	size_t sv;
	int ret;

	switch (v->type) {
	case CFG_INT:
		ret = hop_parse_int(v->name, value, (long)v->min, (long)v->max,
				    &lv, err, errlen);
		if (ret)
			return ret;
		if (v->choices) {
			char buf[24];

			snprintf(buf, sizeof(buf), "%ld", lv);
			if (!hop_cfg_in_choices(v->choices, buf)) {
				hop_cfg_choices_list(v->choices, allowed, sizeof(allowed));
				return hop_cfg_err(err, errlen, "%s='%s': not an "
					       "allowed value (allowed: %s)",
					       v->name, value, allowed);
			}
		}
		*(int *)(void *)field = (int)lv;
		return 0;
	case CFG_SIZE:
		/* a size's only word ("auto") is stored as 0 */
		if (v->choices && hop_cfg_in_choices(v->choices, value)) {
			*(size_t *)(void *)field = 0;
			return 0;
		}
		ret = hop_parse_size(v->name, value, (size_t)v->min,
				     (size_t)v->max, &sv, err, errlen);
		if (ret && v->choices && err &&
		    strlen(err) + 4 + strlen(v->choices) < errlen)
			strcat(strcat(err, " or "), v->choices);
		if (ret)
			return ret;
		*(size_t *)(void *)field = sv;
		return 0;
	case CFG_SECONDS:
		return hop_parse_seconds(v->name, value, v->min, v->max,
				     (int *)(void *)field, err, errlen);
	case CFG_STR:
		if (v->choices)
			hop_cfg_choices_list(v->choices, allowed, sizeof(allowed));
		else
			snprintf(allowed, sizeof(allowed), "up to %lld "
				 "characters", v->max);
		if ((ret = hop_cfg_check_not_empty(v->name, value, allowed, err, errlen)))
			return ret;
		if (v->choices) {
			if (!hop_cfg_in_choices(v->choices, value))
				return hop_cfg_err(err, errlen, "%s='%s': not an "
					       "allowed value (allowed: %s)",
					       v->name, value, allowed);
		}
		if (strlen(value) > (size_t)v->max || strlen(value) >= v->fsize)
			return hop_cfg_err(err, errlen, "%s='%.40s...': longer than "
				       "%lld characters", v->name, value, v->max);
		snprintf(field, v->fsize, "%s", value);
		return 0;
	}
	return hop_cfg_err(err, errlen, "%s: internal error (type %d)", v->name,
		       (int)v->type);
}

/*
 * HOP_EAGER_SIZE=auto on @provider. On verbs a rendezvous costs two more
 * crossings of the wire (RTS, CTS) than an eager message, which costs two
 * copies: in the SoftRoCE VMs a 16 KiB ping-pong took 1818 us by
 * rendezvous against 762 us eager (ib_write_lat 586 us), 64 KiB 3718
 * against 2423 us (2264 us; docs/verbs.md). On an HCA (not measured here)
 * a round trip of a few us and a 64 KiB copy at memory speed are of the
 * same order. A rank registers (@nranks + 2) x @slots slots (its receive
 * ring and the staging slots), so the size falls as the job grows: the
 * largest of 64, 32, 16 KiB whose slots fit in 16 MiB, or in a quarter of
 * @memlock (RLIMIT_MEMLOCK in bytes; 0: unlimited, or the process holds
 * CAP_IPC_LOCK, as root does, and may pin beyond it) when that is less; else
 * 8 KiB. On shm a larger eager message leaves the ring for
 * process_vm_writev and was slower (docs/providers.md), so shm keeps 8 KiB.
 * tcp offers 32 KiB: a message of 16-32 KiB that waits for its clear to
 * send waits for the receiver to be scheduled, which a copy out of the
 * slot never costs as much as (docs/results/2026-12-07-tcp-eager.md). Its
 * slots are not pinned, so only the 16 MiB budget bounds them. The
 * provider's caps give the size (@eager_max) and whether it registers
 * memory with an RDMA device (@rdma).
 */
size_t hop_config_eager_auto(size_t eager_max, int rdma, int nranks,
			     int slots, uint64_t memlock)
{
	double budget = 16.0 * 1024 * 1024;
	size_t sz = eager_max ? eager_max : HOP_EAGER_AUTO;

	if (rdma && memlock && (double)memlock / 4 < budget)
		budget = (double)memlock / 4;
	while (sz > HOP_EAGER_AUTO && ((double)nranks + 2) * slots * (double)sz > budget)
		sz /= 2;
	return sz;
}

int hop_config_get(const struct hop_config *cfg, const char *name,
		   long long *num, char *str, size_t len)
{
	for (size_t i = 0; cfg && name && i < N_CFG_VARS; i++) {
		const struct cfg_var *v = &cfg_vars[i];
		const char *field = (const char *)cfg + v->off;

		if (strcmp(v->name, name))
			continue;
		if (v->type == CFG_STR) {
			if (str && len)
				snprintf(str, len, "%s", field);
			return 0;
		}
		if (num)
			*num = v->type == CFG_SIZE ? (long long)*(const size_t *)(const void *)field
						   : *(const int *)(const void *)field;
		return 0;
	}
	return HOP_ERR_CONFIG;
}

void hop_config_defaults(struct hop_config *cfg)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < N_CFG_VARS; i++) {
		/* the unit tests check that every default parses */
		if (cfg_vars[i].type == CFG_STR && !cfg_vars[i].def[0])
			continue;
		if (parse_var(&cfg_vars[i], cfg_vars[i].def, cfg, err, sizeof(err)))
			HOP_WARN("bad built-in default: %s", err);
	}
}

static int is_known_name(const char *name, size_t len)
{
	for (size_t i = 0; i < N_CFG_VARS; i++)
		if (strlen(cfg_vars[i].name) == len &&
		    strncmp(cfg_vars[i].name, name, len) == 0)
			return 1;
	for (size_t i = 0; i < N_ENV_VARS; i++)
		if (strlen(env_vars[i].name) == len &&
		    strncmp(env_vars[i].name, name, len) == 0)
			return 1;
	return 0;
}

/* HOP_PROV_<NAME>_*: a plugin's own settings (hop/provider.h); the rest
 * are read by hop's scripts and tests (docs/config.md), not the library,
 * and they reach every rank that a script starts. */
static int is_other_owners_name(const char *name)
{
	static const char *const prefixes[] = {
		"HOP_PROV_", "HOP_TEST_", "HOP_FUZZ_", "HOP_SOAK_", "HOP_PD_",
		"HOP_SOFTROCE_", "HOP_VM_",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

/* A typo such as HOP_TIMOUT would otherwise be silently ignored. */
static void warn_unknown_vars(void)
{
	static atomic_int warned;

	if (atomic_exchange(&warned, 1) || !environ)
		return;
	for (char **e = environ; *e; e++) {
		size_t len = strcspn(*e, "=");

		if (strncmp(*e, "HOP_", 4) == 0 && !is_known_name(*e, len) &&
		    !is_other_owners_name(*e))
			HOP_WARN("unknown variable %.*s ignored (every HOP_* "
				 "variable is listed in docs/config.md)",
				 (int)len, *e);
	}
}

/* The value @settings give variable @name, or NULL. */
static const char *setting_value(const char *const *settings,
				 const char *name)
{
	size_t len = strlen(name);

	for (; settings && *settings; settings++)
		if (!strncmp(*settings, name, len) && (*settings)[len] == '=')
			return *settings + len + 1;
	return NULL;
}

/* Every entry of @settings is NAME=value, once, for a variable of the
 * table (those read elsewhere apply to the whole process). */
static int check_settings(const char *const *settings, char *err,
			  size_t errlen)
{
	for (size_t i = 0; settings && settings[i]; i++) {
		const char *s = settings[i], *eq = strchr(s, '=');
		size_t len = eq ? (size_t)(eq - s) : 0, v;

		if (!eq || !len)
			return hop_cfg_err(err, errlen, "setting %zu '%s' is not "
				       "NAME=value", i, s);
		for (v = 0; v < N_CFG_VARS; v++)
			if (strlen(cfg_vars[v].name) == len &&
			    !strncmp(cfg_vars[v].name, s, len))
				break;
		if (v == N_CFG_VARS)
			return hop_cfg_err(err, errlen, "setting %zu: %.*s is %s",
				       i, (int)len, s, is_known_name(s, len) ?
				       "read from the environment only, for "
				       "the whole process" :
				       "not a hop variable (docs/config.md)");
		for (size_t j = 0; j < i; j++)
			if (!strncmp(settings[j], s, len + 1))
				return hop_cfg_err(err, errlen, "setting %zu: %.*s "
					       "is given twice (also setting "
					       "%zu)", i, (int)len, s, j);
	}
	return 0;
}

int hop_config_load(struct hop_config *cfg, char *err, size_t errlen)
{
	return hop_config_load_with(cfg, NULL, err, errlen);
}

int hop_config_load_with(struct hop_config *cfg, const char *const *settings,
			 char *err, size_t errlen)
{
	struct hop_config tmp;
	int ret;

	if (!cfg)
		return hop_cfg_err(err, errlen, "hop_config_load: cfg is NULL");
	if (err && errlen)
		err[0] = '\0';
	if ((ret = check_settings(settings, err, errlen)))
		return ret;
	hop_config_defaults(&tmp);
	for (size_t i = 0; i < N_CFG_VARS; i++) {
		const char *value = setting_value(settings, cfg_vars[i].name);

		if (!value)
			value = getenv(cfg_vars[i].name);
		if (!value)
			continue;
		if ((ret = parse_var(&cfg_vars[i], value, &tmp, err, errlen)))
			return ret;
	}
	warn_unknown_vars();
	*cfg = tmp;
	return 0;
}

static void var_allowed(const struct cfg_var *v, char *buf, size_t len)
{
	if (v->choices && v->type == CFG_SIZE) {
		size_t n;

		snprintf(buf, len, "%s, or ", v->choices);
		n = strlen(buf);
		hop_cfg_allowed_size((size_t)v->min, (size_t)v->max, buf + n, len - n);
		return;
	}
	if (v->choices) {
		hop_cfg_choices_list(v->choices, buf, len);
		return;
	}
	switch (v->type) {
	case CFG_INT:
		hop_cfg_allowed_int((long)v->min, (long)v->max, buf, len);
		break;
	case CFG_SIZE:
		hop_cfg_allowed_size((size_t)v->min, (size_t)v->max, buf, len);
		break;
	case CFG_SECONDS:
		hop_cfg_allowed_secs(v->min, v->max, buf, len);
		break;
	case CFG_STR:
		snprintf(buf, len, "up to %lld characters", v->max);
		break;
	}
}

void hop_config_print_table(void *file)
{
	FILE *f = file ? (FILE *)file : stdout;
	char allowed[128];

	for (size_t i = 0; i < N_CFG_VARS; i++) {
		var_allowed(&cfg_vars[i], allowed, sizeof(allowed));
		fprintf(f, "%s|%s|%s (allowed: %s)\n", cfg_vars[i].name,
			cfg_vars[i].def, cfg_vars[i].help, allowed);
	}
	for (size_t i = 0; i < N_ENV_VARS; i++)
		fprintf(f, "%s|%s|%s\n", env_vars[i].name, env_vars[i].def,
			env_vars[i].help);
}
