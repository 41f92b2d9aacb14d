/*
 * mux_cfg.c - the per-class form of HOP_TRANSPORT
 * ("intra:shm,inter:tcp"): which provider carries the pairs of ranks of
 * one host, and which the pairs on different hosts.
 */
#include <stdio.h>
#include <string.h>

#include <hop/common.h>

#include "transport/mux/mux.h"

static const char *const cls_names[HOP_MUX_NCLS] = { "intra", "inter" };

int hop_mux_is_classes(const char *s)
{
	return s && strchr(s, ':') != NULL;
}

/* The index of @name (@len bytes) among @names, @auto_val for "auto",
 * or -1. */
static int name_index(const char *name, size_t len,
		      const char *const *names, int nnames, int auto_val)
{
	if (len == 4 && !strncmp(name, "auto", 4))
		return auto_val;
	for (int i = 0; i < nnames; i++)
		if (strlen(names[i]) == len && !strncmp(name, names[i], len))
			return i;
	return -1;
}

/* One CLASS:NAME item of @len bytes at @it into @out; @seen: classes
 * already given. */
static int parse_item(const char *s, const char *it, size_t len,
		      const char *const *names, int nnames, int auto_val,
		      int *out, int *seen, char *err, size_t errlen)
{
	const char *colon = memchr(it, ':', len);
	int cls = -1, idx;

	for (int c = 0; colon && c < HOP_MUX_NCLS; c++)
		if ((size_t)(colon - it) == strlen(cls_names[c]) &&
		    !strncmp(it, cls_names[c], (size_t)(colon - it)))
			cls = c;
	if (!colon || cls < 0) {
		snprintf(err, errlen, "HOP_TRANSPORT=%s: '%.*s' is not "
			 "CLASS:NAME with CLASS intra or inter", s, (int)len,
			 it);
		return HOP_ERR_CONFIG;
	}
	if (seen[cls]) {
		snprintf(err, errlen, "HOP_TRANSPORT=%s: '%.*s': class %s is "
			 "given twice", s, (int)len, it, cls_names[cls]);
		return HOP_ERR_CONFIG;
	}
	idx = name_index(colon + 1, len - (size_t)(colon - it) - 1, names,
			 nnames, auto_val);
	if (idx < 0) {
		snprintf(err, errlen, "HOP_TRANSPORT=%s: '%.*s' names no "
			 "built-in provider (auto, verbs, tcp, shm)", s,
			 (int)len, it);
		return HOP_ERR_CONFIG;
	}
	if (cls == HOP_MUX_INTER && idx != auto_val &&
	    !strcmp(names[idx], "shm")) {
		snprintf(err, errlen, "HOP_TRANSPORT=%s: '%.*s': shm reaches "
			 "only the ranks of one host", s, (int)len, it);
		return HOP_ERR_CONFIG;
	}
	seen[cls] = 1;
	out[cls] = idx;
	return 0;
}

int hop_mux_parse(const char *s, const char *const *names, int nnames,
		  int auto_val, int out[HOP_MUX_NCLS], char *err,
		  size_t errlen)
{
	int seen[HOP_MUX_NCLS] = { 0 };
	const char *it;

	if (!s || !names || !out || !err || !errlen)
		return HOP_ERR_INVALID_ARG;
	out[HOP_MUX_INTRA] = out[HOP_MUX_INTER] = auto_val;
	for (it = s;; it++) {
		size_t len = strcspn(it, ",");
		int ret = parse_item(s, it, len, names, nnames, auto_val, out,
				     seen, err, errlen);

		if (ret)
			return ret;
		it += len;
		if (!*it)
			return 0;
	}
}
