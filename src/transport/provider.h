/*
 * provider.h - hop's side of the provider ABI (include/hop/provider.h has
 * the ops table, the context and the contract every provider keeps): the
 * built-in tables, finding and selecting a provider, loading plugins, and
 * the internal access built-in providers have to the communicator.
 */
#ifndef HOP_TRANSPORT_PROVIDER_H
#define HOP_TRANSPORT_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

#include <hop/provider.h>

#include "core/core.h"

struct hop_bootstrap;

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
 * hop_prov_comm() - The communicator whose prov_ctx @ctx is. Built-in
 * providers reach the core directly (config, bootstrap, failure state);
 * plugins have only the callbacks of @ctx.
 */
static inline struct hop_comm *hop_prov_comm(const struct hop_prov_ctx *ctx)
{
	return (struct hop_comm *)((char *)(uintptr_t)ctx -
				   offsetof(struct hop_comm, prov_ctx));
}

/*
 * hop_prov_ctx_init() - Fill comm->prov_ctx (rank, size, timeout, the
 * callbacks) for provider @name. Idempotent; before usable()/open().
 */
void hop_prov_ctx_init(struct hop_comm *comm, const char *name);

extern const struct hop_prov_ops hop_prov_tcp;
extern const struct hop_prov_ops hop_prov_shm;
#ifdef HOP_HAVE_VERBS
extern const struct hop_prov_ops hop_prov_verbs;
#endif

/* Look a provider up by name; NULL when unknown or not built. */
const struct hop_prov_ops *hop_prov_find(const char *name);

/*
 * hop_prov_select() - Resolve cfg.transport ("auto" included) to a
 * provider, identically on every rank: auto takes verbs when every rank has
 * an ACTIVE device, else shm when every rank is on one host, else tcp. Uses
 * @bs to agree. An explicit choice that is not usable is HOP_ERR_NO_DEVICE
 * with the provider's reason. A name that is not built in is a plugin,
 * loaded on every rank (comm->prov_dl; hop_prov_close() unloads it); a
 * plugin missing on any rank is HOP_ERR_CONFIG, one built for another ABI
 * HOP_ERR_NOT_SUPPORTED. Nothing stays loaded when it fails.
 */
int hop_prov_select(struct hop_comm *comm, struct hop_bootstrap *bs,
		    const struct hop_prov_ops **out);

/* The identity of this host: equal for every process of one boot of one
 * host (boot id and host name), the test of "same host" for shm. */
uint64_t hop_prov_host_identity(void);

/* hop_prov_open() - comm->prov_ops->open() with comm->prov_ctx. */
int hop_prov_open(struct hop_comm *comm);

/*
 * hop_prov_close() - Close comm->prov (if open), then unload the plugin
 * (if any). Safe on a partly set-up comm, and twice.
 */
void hop_prov_close(struct hop_comm *comm);

/* ------------------------------------------------------------------ */
/* Plugins (plugin.c)                                                 */

/*
 * hop_plugin_load() - Find libhop-provider-@name.so in the colon list @path,
 * then in the installed LIBDIR/hop, dlopen it and check its descriptor.
 * Return: 0 with *@dl and *@ops set; HOP_ERR_CONFIG (bad name, no such
 * file in any folder: the folders are listed), HOP_ERR_SYSTEM (dlopen
 * failed: dlerror()), HOP_ERR_NOT_SUPPORTED (ABI version differs: file,
 * found and expected versions), HOP_ERR_PROTOCOL (no or malformed
 * descriptor); the message in @err names the file.
 */
int hop_plugin_load(const char *name, const char *path, void **dl,
		    const struct hop_prov_ops **ops, char *err, size_t errlen);

/* hop_plugin_unload() - dlclose @dl; NULL is fine. */
void hop_plugin_unload(void *dl);

/* Is @name a built-in provider name (built or not) or "auto"? */
int hop_prov_builtin_name(const char *name);

#endif /* HOP_TRANSPORT_PROVIDER_H */
