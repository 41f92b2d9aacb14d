/*
 * prov_ctx.c - the core's services as a provider sees them (struct
 * hop_prov_ctx of hop/provider.h), and opening/closing the provider of a
 * communicator. The context is embedded in struct hop_comm, so a callback
 * finds its communicator without any pointer a plugin could corrupt.
 */
#include "hop_autoconf.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bootstrap.h"
#include "core/core.h"
#include "core/cpus.h"
#include "core/hash.h"
#include "transport/mux/mux.h"
#include "transport/provider.h"

_Static_assert(HOP_PROV_SECRET_LEN == HOP_SECRET_BYTES,
	       "hop_prov_ctx.secret is the bootstrap secret");
_Static_assert(HOP_PROV_ALLGATHER_MAX == HOP_BS_MAX_MSG,
	       "ctx->allgather() is one bootstrap allgather");
_Static_assert(sizeof(((struct hop_comm *)0)->secret) == HOP_PROV_SECRET_LEN,
	       "the comm keeps the secret past the bootstrap");

/* The communicator whose prov_ctx @ctx is (hop_prov_ctx_init() filled
 * only contexts embedded in a struct hop_comm). */
static struct hop_comm *ctx_comm(const struct hop_prov_ctx *ctx)
{
	return (struct hop_comm *)((char *)(uintptr_t)ctx -
				   offsetof(struct hop_comm, prov_ctx));
}

/* The bootstrap closes when hop_comm_init_rank() returns (core.h). */
static int bootstrap_closed(struct hop_comm *comm, const char *what)
{
	return hop_set_error(comm, HOP_ERR_BOOTSTRAP, "%s: rank %d: "
			     "ctx->%s() after open(): the bootstrap serves "
			     "open() only and is closed once the communicator "
			     "is initialised", comm->prov_ctx.name, comm->rank,
			     what);
}

static int ctx_allgather(const struct hop_prov_ctx *ctx, const void *mine,
			 void *all, size_t len)
{
	struct hop_comm *comm = ctx_comm(ctx);
	int ret;

	if (!mine || !all || !len)
		return hop_set_error(comm, HOP_ERR_INVALID_ARG,
				     "%s: allgather of %zu bytes from %p to %p",
				     ctx->name, len, mine, all);
	if (comm->nranks == 1 && !comm->bs) {
		memcpy(all, mine, len);
		return 0;
	}
	if (!comm->bs)
		return bootstrap_closed(comm, "allgather");
	ret = hop_bootstrap_allgather(comm->bs, mine, all, len,
				      hop_comm_deadline(comm));
	if (ret)
		return hop_set_error(comm, ret, "%s: rank %d: address exchange "
				     "(%zu bytes per rank) failed: %s",
				     ctx->name, comm->rank, len,
				     hop_bootstrap_error(comm->bs));
	return 0;
}

/* ctx->fail_comm() and ctx->error(): the message formatted once, the
 * comm failed (@fail) or only told. A positive or zero code would read as
 * success to every caller. */
static int ctx_report(const struct hop_prov_ctx *ctx, int fail, int code,
		      const char *fmt, va_list ap)
{
	char msg[HOP_MSG_LEN];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (code >= 0)
		code = HOP_ERR_TRANSPORT;
	return fail ? hop_comm_fail(ctx_comm(ctx), code, "%s", msg)
		    : hop_set_error(ctx_comm(ctx), code, "%s", msg);
}

HOP_PROV_REPORTERS(ctx_fail, ctx_error, ctx_report)

static int ctx_failed(const struct hop_prov_ctx *ctx)
{
	struct hop_comm *comm = ctx_comm(ctx);
	int f = atomic_load_explicit(&comm->failed, memory_order_acquire);

	/* the core briefly stores a positive marker while it records a cause */
	if (f)
		return f < 0 ? f : HOP_ERR_COMM_FAILED;
	return atomic_load_explicit(&comm->aborted, memory_order_relaxed)
		       ? HOP_ERR_ABORTED : 0;
}

static void ctx_log(const struct hop_prov_ctx *ctx, int level,
		    const char *fmt, ...)
{
	char msg[HOP_MSG_LEN];
	va_list ap;

	if (level < HOP_LOG_WARN)
		level = HOP_LOG_WARN;
	if (level > HOP_LOG_TRACE)
		level = HOP_LOG_TRACE;
	if (hop_log_level_g < level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	hop_log_write(level, "%s: %s", ctx->name, msg);
}

const struct hop_prov_ops *hop_prov_ctx_ops(const struct hop_prov_ctx *ctx)
{
	return ctx_comm(ctx)->prov_ops;
}

/* HOP_PROV_<NAME>_<KEY>, NAME upper-cased with '-' as '_'. */
const char *hop_prov_config_env(const char *name, const char *key)
{
	char var[128];
	size_t n;

	if (!name || !key || !key[0])
		return NULL;
	n = (size_t)snprintf(var, sizeof(var), "HOP_PROV_%s_%s", name, key);
	if (n >= sizeof(var))
		return NULL;
	for (char *c = var; *c; c++)
		*c = *c == '-' ? '_' : (char)toupper((unsigned char)*c);
	return getenv(var);
}

static const char *ctx_config(const struct hop_prov_ctx *ctx, const char *key)
{
	return hop_prov_config_env(ctx->name, key);
}

static int ctx_setting(const struct hop_prov_ctx *ctx, const char *var,
		       long long *num, char *str, size_t len)
{
	return hop_config_get(&ctx_comm(ctx)->cfg, var, num, str, len);
}

static int ctx_barrier(const struct hop_prov_ctx *ctx)
{
	struct hop_comm *comm = ctx_comm(ctx);
	int ret;

	if (comm->nranks == 1 && !comm->bs)
		return 0;
	if (!comm->bs)
		return bootstrap_closed(comm, "barrier");
	ret = hop_bootstrap_barrier(comm->bs, hop_comm_deadline(comm));
	if (ret)
		return hop_set_error(comm, ret, "%s: rank %d: barrier failed: "
				     "%s", ctx->name, comm->rank,
				     hop_bootstrap_error(comm->bs));
	return 0;
}

/* Identity of this host (same for every process of one boot of one host). */
static uint64_t host_identity(void)
{
	uint64_t h = hop_kernel_id();
	char buf[256];

	if (gethostname(buf, sizeof(buf)) == 0) {
		buf[sizeof(buf) - 1] = '\0';
		h = hop_fnv1a64(h, buf, strlen(buf));
	}
	return h;
}

void hop_prov_ctx_init(struct hop_comm *comm, const char *name)
{
	static const uint8_t no_secret[HOP_PROV_SECRET_LEN];
	struct hop_prov_ctx *c = &comm->prov_ctx;

	c->size = sizeof(*c);
	c->rank = comm->rank;
	c->nranks = comm->nranks;
	c->timeout_ms = comm->cfg.timeout_ms;
	c->name = name ? name : "provider";
	c->allgather = ctx_allgather;
	c->fail_comm = ctx_fail;
	c->error = ctx_error;
	c->failed = ctx_failed;
	c->log = ctx_log;
	c->config = ctx_config;
	c->setting = ctx_setting;
	c->barrier = ctx_barrier;
	if (!c->host_id)
		c->host_id = host_identity();
	/* a single rank without a bootstrap talks to itself only */
	c->local_addr = comm->bs ? hop_bootstrap_local_addr(comm->bs).s_addr
				 : htonl(INADDR_LOOPBACK);
	c->secret = no_secret;
	if (comm->bs) { /* the comm's copy outlives the bootstrap */
		memcpy(comm->secret, hop_bootstrap_secret(comm->bs),
		       sizeof(comm->secret));
		c->secret = comm->secret;
	}
}

int hop_prov_open(struct hop_comm *comm)
{
	int ret;

	if (!comm || !comm->prov_ops)
		return HOP_ERR_INVALID_ARG;
	comm->prov = NULL;
	ret = comm->prov_ops->open(&comm->prov_ctx, &comm->prov);
	if (ret < 0 && comm->prov) {
		/* failed but returned an instance: still the provider's */
		comm->prov_ops->close(comm->prov);
		comm->prov = NULL;
	}
	if (ret > 0 || (!ret && !comm->prov)) {
		/* a plugin's slip must not pass for success */
		if (comm->prov)
			comm->prov_ops->close(comm->prov);
		comm->prov = NULL;
		return hop_set_error(comm, HOP_ERR_INTERNAL,
				     "%s: open() returned %d and no usable "
				     "instance", comm->prov_ctx.name, ret);
	}
	return ret;
}

void hop_prov_close(struct hop_comm *comm)
{
	if (comm->prov && comm->prov_ops)
		comm->prov_ops->close(comm->prov);
	comm->prov = NULL;
	if (hop_mux_is(comm->prov_ops)) {
		/* the table was the communicator's own */
		hop_mux_free(comm->prov_ops);
		comm->prov_ops = NULL;
	}
	free(comm->host_of);
	comm->host_of = NULL;
	comm->nhosts = 0;
	if (comm->prov_dl) {
		/* the ops table lives in the plugin: forget it first */
		comm->prov_ops = NULL;
		comm->class_ops[HOP_LINK_INTRA] = NULL;
		comm->class_ops[HOP_LINK_INTER] = NULL;
		hop_plugin_unload(comm->prov_dl);
		comm->prov_dl = NULL;
	}
}
