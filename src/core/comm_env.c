/*
 * comm_env.c - what hop_comm_init_env() reads: rank and size from the
 * launcher (hop-run, Open MPI, PMI, Slurm) and the rendezvous (HOP_UNIQUE_ID,
 * else HOP_ADDR + HOP_SECRET or a secret derived from the job id).
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "core.h"
#include "core_int.h"
#include "hash.h"

static const struct {
	const char *rank, *size;
} rank_vars[] = {
	{ "HOP_RANK", "HOP_SIZE" },
	{ "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE" },
	{ "PMI_RANK", "PMI_SIZE" },
	{ "SLURM_PROCID", "SLURM_NTASKS" },
};

static const char *const jobid_vars[] = {
	"SLURM_JOB_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
};

static int env_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int env_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return HOP_ERR_CONFIG;
}

static int parse_rank_size(struct hop_env_job *job, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		const char *rv = getenv(rank_vars[i].rank);
		const char *sv = getenv(rank_vars[i].size);
		long size, rank;
		int ret;

		if (!rv && !sv)
			continue;
		if (!rv || !sv)
			return env_err(err, errlen, "%s is set but %s is not",
				       rv ? rank_vars[i].rank : rank_vars[i].size,
				       rv ? rank_vars[i].size : rank_vars[i].rank);
		if ((ret = hop_parse_int(rank_vars[i].size, sv, 1, 65536, &size,
					 err, errlen)) ||
		    (ret = hop_parse_int(rank_vars[i].rank, rv, 0, size - 1,
					 &rank, err, errlen)))
			return ret;
		job->rank = (int)rank;
		job->nranks = (int)size;
		job->rank_var = rank_vars[i].rank;
		return 0;
	}
	return env_err(err, errlen, "no rank in the environment: set HOP_RANK "
		       "and HOP_SIZE, or start the job with hop-run, mpirun or "
		       "srun");
}

static int parse_hex(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < 2 * n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (v < 0)
			return -1;
		if (i % 2 == 0)
			out[i / 2] = (uint8_t)(v << 4);
		else
			out[i / 2] |= (uint8_t)v;
	}
	return 0;
}

static int parse_unique_id(const char *v, struct hop_env_job *job, char *err,
			   size_t errlen)
{
	struct hop_id_info info;
	char why[200];

	if (strlen(v) != 2 * HOP_UNIQUE_ID_BYTES)
		return env_err(err, errlen, "HOP_UNIQUE_ID has %zu characters; "
			       "a hop unique id has %d hex digits", strlen(v),
			       2 * HOP_UNIQUE_ID_BYTES);
	if (parse_hex(v, (uint8_t *)job->id.internal, HOP_UNIQUE_ID_BYTES))
		return env_err(err, errlen, "HOP_UNIQUE_ID is not hexadecimal");
	if (hop_id_decode_msg(&job->id, &info, why, sizeof(why)))
		return env_err(err, errlen, "HOP_UNIQUE_ID: %s", why);
	return 0;
}

/* Same inputs -> same secret on every rank of the job. */
static int derive_secret(const char *addr, uint8_t *secret, char *err,
			 size_t errlen)
{
	static atomic_int warned;

	for (size_t i = 0; i < sizeof(jobid_vars) / sizeof(jobid_vars[0]); i++) {
		const char *v = getenv(jobid_vars[i]);
		char buf[512];
		int n;

		if (!v || !*v)
			continue;
		n = snprintf(buf, sizeof(buf), "hop-secret-v1|%s=%s|%s",
			     jobid_vars[i], v, addr);
		if (n < 0 || (size_t)n >= sizeof(buf))
			n = (int)sizeof(buf) - 1;
		uint64_t a = hop_fnv1a64(HOP_FNV1A64_INIT, buf, (size_t)n);
		uint64_t b = hop_fnv1a64(a ^ 0x9e3779b97f4a7c15ull, buf,
					 (size_t)n);

		for (int k = 0; k < 8; k++) {
			secret[k] = (uint8_t)(a >> (56 - 8 * k));
			secret[8 + k] = (uint8_t)(b >> (56 - 8 * k));
		}
		if (!atomic_exchange(&warned, 1))
			HOP_WARN("HOP_SECRET is not set: using a secret derived "
				 "from %s; anyone who can read the job id can "
				 "join. Set HOP_SECRET to 32 random hex digits",
				 jobid_vars[i]);
		return 0;
	}
	return env_err(err, errlen, "HOP_ADDR is set but neither HOP_SECRET "
		       "(32 hex digits) nor a job id (SLURM_JOB_ID, "
		       "OMPI_MCA_ess_base_jobid, PMIX_NAMESPACE) is");
}

static int parse_addr(const char *v, struct hop_id_info *info, char *err,
		      size_t errlen)
{
	const char *colon = strrchr(v, ':');
	char host[256];
	long port;
	int ret;

	if (!colon || colon == v || (size_t)(colon - v) >= sizeof(host))
		return env_err(err, errlen, "HOP_ADDR='%s': expected host:port",
			       v);
	memcpy(host, v, (size_t)(colon - v));
	host[colon - v] = '\0';
	if ((ret = hop_parse_int("HOP_ADDR port", colon + 1, 1, 65535, &port,
				 err, errlen)))
		return ret;
	info->addr.sin_family = AF_INET;
	info->addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &info->addr.sin_addr) != 1) {
		struct addrinfo hints = { .ai_family = AF_INET,
					  .ai_socktype = SOCK_STREAM };
		struct addrinfo *res;
		int e = getaddrinfo(host, NULL, &hints, &res);

		if (e)
			return env_err(err, errlen, "HOP_ADDR='%s': cannot "
				       "resolve '%s' to an IPv4 address: %s", v,
				       host, gai_strerror(e));
		info->addr.sin_addr =
			((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
		freeaddrinfo(res);
	}
	if (info->addr.sin_addr.s_addr == htonl(INADDR_ANY) ||
	    info->addr.sin_addr.s_addr == htonl(INADDR_BROADCAST))
		return env_err(err, errlen, "HOP_ADDR='%s': rank 0's own "
			       "address is needed, not a wildcard", v);
	return 0;
}

int hop_env_job_parse(struct hop_env_job *job, char *err, size_t errlen)
{
	struct hop_id_info info = { .version = HOP_ID_VERSION };
	const char *uid, *addr, *secret;
	int ret;

	memset(job, 0, sizeof(*job));
	if ((ret = parse_rank_size(job, err, errlen)))
		return ret;
	if ((uid = getenv("HOP_UNIQUE_ID")))
		return parse_unique_id(uid, job, err, errlen);
	if (!(addr = getenv("HOP_ADDR")))
		return env_err(err, errlen, "no rendezvous in the environment: "
			       "set HOP_UNIQUE_ID (hop-run does), or HOP_ADDR="
			       "host:port of rank 0 and HOP_SECRET");
	if ((ret = parse_addr(addr, &info, err, errlen)))
		return ret;
	if ((secret = getenv("HOP_SECRET"))) {
		if (parse_hex(secret, info.secret, HOP_SECRET_BYTES))
			return env_err(err, errlen, "HOP_SECRET must be %d hex "
				       "digits (it has %zu characters%s)",
				       2 * HOP_SECRET_BYTES, strlen(secret),
				       strlen(secret) == 2 * HOP_SECRET_BYTES ?
				       ", not all hex" : "");
		if (!memcmp(info.secret, (uint8_t[HOP_SECRET_BYTES]){ 0 },
			    HOP_SECRET_BYTES))
			return env_err(err, errlen, "HOP_SECRET is all zero: "
				       "anyone can guess it; set %d random hex "
				       "digits", 2 * HOP_SECRET_BYTES);
	} else if ((ret = derive_secret(addr, info.secret, err, errlen))) {
		return ret;
	}
	hop_id_encode(&info, &job->id);
	return 0;
}
