/*
 * plugin.c - loading a provider built outside hop: HOP_TRANSPORT=NAME that
 * is not built in names libhop-provider-NAME.so, searched in the folders of
 * HOP_PLUGIN_PATH, then in the installed LIBDIR/hop. The file exports one
 * struct hop_prov_plugin (hop/provider.h) whose first member is the ABI
 * version it was built with; anything else is refused before a single
 * provider function runs.
 */
#include "hop_autoconf.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "transport/provider.h"

#ifndef HOP_PLUGIN_DIR
#define HOP_PLUGIN_DIR "/usr/local/lib/hop"
#endif

/* Names become file names: nothing that could leave the folder. */
static int name_ok(const char *name)
{
	if (!name[0] || strlen(name) > 15)
		return 0;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
		      *c == '_' || *c == '-'))
			return 0;
	return 1;
}

/*
 * The first folder of @path (then HOP_PLUGIN_DIR) holding the file; @tried
 * collects the folders looked at, for the message when none has it.
 */
static int find_file(const char *name, const char *path, char *file,
		     size_t filelen, char *tried, size_t triedlen)
{
	char dirs[HOP_CFG_STR + sizeof(HOP_PLUGIN_DIR) + 2];
	char *save = NULL;
	size_t used = 0;

	tried[0] = '\0';
	snprintf(dirs, sizeof(dirs), "%s%s%s", path, path[0] ? ":" : "",
		 HOP_PLUGIN_DIR);
	for (char *d = strtok_r(dirs, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		int n = snprintf(file, filelen, "%s/libhop-provider-%s.so", d,
				 name);

		if (n > 0 && (size_t)n < filelen && access(file, R_OK) == 0)
			return 0;
		if (used < triedlen)
			used += (size_t)snprintf(tried + used, triedlen - used,
						 "%s%s", used ? ", " : "", d);
	}
	return -1;
}

/* The descriptor is sane for this ABI version. */
static int check_desc(const struct hop_prov_plugin *d, const char *name,
		      const char *file, char *err, size_t errlen)
{
	const struct hop_prov_ops *o;

	if (d->abi_version != HOP_PROV_ABI_VERSION) {
		snprintf(err, errlen, "%s: provider ABI version %u, this hop "
			 "expects version %u (rebuild the plugin against this "
			 "hop's hop/provider.h)", file, d->abi_version,
			 (unsigned)HOP_PROV_ABI_VERSION);
		return HOP_ERR_NOT_SUPPORTED;
	}
	o = d->ops;
	if (!d->name || strcmp(d->name, name) || !o) {
		snprintf(err, errlen, "%s: descriptor names provider '%s' with "
			 "%s ops table, expected '%s'", file,
			 d->name ? d->name : "(null)", o ? "an" : "no", name);
		return HOP_ERR_PROTOCOL;
	}
	if (o->size < offsetof(struct hop_prov_ops, mem_alloc) ||
	    !o->usable || !o->open || !o->close || !o->mr_reg ||
	    !o->mr_dereg || !o->post_write || !o->post_send || !o->poll ||
	    !o->wait || !o->max_inline) {
		snprintf(err, errlen, "%s: ops table of %zu bytes lacks a "
			 "required function (usable .. max_inline)", file,
			 o->size);
		return HOP_ERR_PROTOCOL;
	}
	return 0;
}

int hop_plugin_load(const char *name, const char *path, void **dl,
		    const struct hop_prov_ops **ops, char *err, size_t errlen)
{
	char file[HOP_CFG_STR + 64], tried[HOP_CFG_STR + 64];
	const struct hop_prov_plugin *desc;
	void *h;
	int ret;

	*dl = NULL;
	*ops = NULL;
	if (!name_ok(name)) {
		snprintf(err, errlen, "not auto, verbs, tcp, shm, nor a plugin "
			 "name (1 to 15 of a-z, 0-9, '_', '-')");
		return HOP_ERR_CONFIG;
	}
	if (find_file(name, path ? path : "", file, sizeof(file), tried,
		      sizeof(tried))) {
		snprintf(err, errlen, "not built in (auto, verbs, tcp, shm) and "
			 "no libhop-provider-%s.so in HOP_PLUGIN_PATH or the "
			 "install folder (looked in %s)", name, tried);
		return HOP_ERR_CONFIG;
	}
	/* RTLD_LOCAL: two plugins' internals cannot collide */
	if (!(h = dlopen(file, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(err, errlen, "%s: dlopen failed: %s", file, dlerror());
		return HOP_ERR_SYSTEM;
	}
	desc = dlsym(h, HOP_PROV_PLUGIN_SYMBOL);
	if (!desc) {
		snprintf(err, errlen, "%s: no symbol %s (declare the provider "
			 "with HOP_PROV_PLUGIN())", file,
			 HOP_PROV_PLUGIN_SYMBOL);
		dlclose(h);
		return HOP_ERR_PROTOCOL;
	}
	if ((ret = check_desc(desc, name, file, err, errlen))) {
		dlclose(h);
		return ret;
	}
	*dl = h;
	*ops = desc->ops;
	return 0;
}

void hop_plugin_unload(void *dl)
{
	if (dl)
		dlclose(dl);
}
