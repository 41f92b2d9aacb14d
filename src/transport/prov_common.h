/*
 * prov_common.h - helpers for provider code that sees hop only through
 * struct hop_prov_ctx (hop/provider.h), as a plugin would: nothing here
 * reaches the communicator, so the built-in providers build as plugins too.
 */
#ifndef HOP_TRANSPORT_PROV_COMMON_H
#define HOP_TRANSPORT_PROV_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <hop/provider.h>

#include "core/timer.h"

/*
 * hop_prov_range_ok() - Does [addr, addr + len) fit the address space? No
 * object is larger than PTRDIFF_MAX, and every bounds check of a key
 * relies on addr + len not wrapping, so such a range is never registered.
 */
static inline int hop_prov_range_ok(const void *addr, size_t len)
{
	return len <= PTRDIFF_MAX && len <= UINTPTR_MAX - (uintptr_t)addr;
}

/*
 * HOP_PROV_REPORTERS() - Define @fail_fn and @error_fn, the variadic
 * ctx->fail_comm() and ctx->error() of a context, over @report_fn(ctx,
 * fail, code, fmt, va_list) (fail: 1 for fail_comm). Needs <stdarg.h>.
 */
#define HOP_PROV_REPORTERS(fail_fn, error_fn, report_fn)                      \
	static int fail_fn(const struct hop_prov_ctx *ctx, int code,          \
			   const char *fmt, ...)                              \
	{                                                                     \
		va_list ap;                                                   \
		int ret;                                                      \
									      \
		va_start(ap, fmt);                                            \
		ret = report_fn(ctx, 1, code, fmt, ap);                       \
		va_end(ap);                                                   \
		return ret;                                                   \
	}                                                                     \
	static int error_fn(const struct hop_prov_ctx *ctx, int code,         \
			    const char *fmt, ...)                             \
	{                                                                     \
		va_list ap;                                                   \
		int ret;                                                      \
									      \
		va_start(ap, fmt);                                            \
		ret = report_fn(ctx, 0, code, fmt, ap);                       \
		va_end(ap);                                                   \
		return ret;                                                   \
	}

/* Room for a message a provider formats before handing it to ctx. */
#define HOP_PROV_MSG_LEN 512

/* Does @ctx (filled by a hop that may be older than this provider) have
 * @member? Members are only ever added at the end (hop/provider.h). */
#define HOP_PROV_CTX_HAS(ctx, member)                                         \
	((ctx)->size >= offsetof(struct hop_prov_ctx, member) +               \
			sizeof((ctx)->member))

/* Deadline of a wait that starts now (ctx->timeout_ms, HOP_TIMEOUT). */
static inline uint64_t hop_prov_deadline(const struct hop_prov_ctx *ctx)
{
	return hop_deadline_after(ctx->timeout_ms);
}

/* A line to hop's log through @ctx ("NAME: " is prefixed by hop). */
#define HOP_PROV_WARN(ctx, ...) (ctx)->log((ctx), HOP_PROV_LOG_WARN, __VA_ARGS__)
#define HOP_PROV_INFO(ctx, ...) (ctx)->log((ctx), HOP_PROV_LOG_INFO, __VA_ARGS__)
#define HOP_PROV_TRACE(ctx, ...) (ctx)->log((ctx), HOP_PROV_LOG_TRACE, __VA_ARGS__)

/*
 * hop_prov_setting_int() - hop's numeric variable @var through @ctx, or
 * @dflt when this hop does not have ctx->setting() or the variable.
 */
static inline long long hop_prov_setting_int(const struct hop_prov_ctx *ctx,
					     const char *var, long long dflt)
{
	long long v;

	if (!HOP_PROV_CTX_HAS(ctx, setting) || !ctx->setting ||
	    ctx->setting(ctx, var, &v, NULL, 0))
		return dflt;
	return v;
}

/* hop_prov_setting_str() - The same for a string into @buf (@dflt). */
static inline const char *hop_prov_setting_str(const struct hop_prov_ctx *ctx,
					       const char *var, char *buf,
					       size_t len, const char *dflt)
{
	if (!HOP_PROV_CTX_HAS(ctx, setting) || !ctx->setting ||
	    ctx->setting(ctx, var, NULL, buf, len))
		return dflt;
	return buf;
}

#endif /* HOP_TRANSPORT_PROV_COMMON_H */
