/*
 * profile_json.h - hop-probe's profile as JSON: the whole measurement
 * (format "hop-probe-profile", version 1; every field in docs/probe.md).
 * Written by hop-probe --json and read back by its tests; libhop never
 * parses JSON (HOP_PROFILE is the line format of model/profile.h). The
 * reader is strict: a truncated or malformed file, a field of the wrong
 * type, a missing required field or an insane value (alpha outside
 * [0, 1e9] us, beta outside (0, 1e6] GB/s) fails with HOP_ERR_PARSE and a
 * message naming the field path, e.g.
 * "probe.json: pairs[0].beta_GBps: expected number, got string".
 */
#ifndef HOP_PROBE_PROFILE_JSON_H
#define HOP_PROBE_PROFILE_JSON_H

#include <stddef.h>
#include <stdio.h>

#include "model/profile.h"

/*
 * hop_profile_write() - Write @p as JSON to @f.
 * Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_SYSTEM (write error).
 */
int hop_profile_write(const struct hop_profile *p, FILE *f);

/* Write as JSON to @path (atomically: hop_profile_save_with()). */
int hop_profile_save(const struct hop_profile *p, const char *path,
		     char *err, size_t errlen);

/*
 * hop_profile_parse() - Read a profile from @len bytes of @text into @p
 * (zeroed first; free with hop_profile_free() on success; nothing to free
 * on failure).
 * @err: "line L, column C: ..." for malformed JSON, "<path>: expected
 *       <type>, got <type>", "<path>: missing", "<path>: must be > 0 ...".
 * Return: 0, HOP_ERR_PARSE, HOP_ERR_NO_MEMORY, HOP_ERR_INVALID_ARG.
 */
int hop_profile_parse(const char *text, size_t len, struct hop_profile *p,
		      char *err, size_t errlen);

/* hop_profile_load() - hop_profile_parse() of the file @path; the message
 * starts with @path. Return: as parse, plus HOP_ERR_SYSTEM (open/read). */
int hop_profile_load(const char *path, struct hop_profile *p, char *err,
		     size_t errlen);

/* Write @p with @write to @path atomically (a temporary file renamed over
 * it). Return: 0, HOP_ERR_INVALID_ARG, HOP_ERR_SYSTEM (message in @err). */
int hop_profile_save_with(const struct hop_profile *p, const char *path,
			  int (*write)(const struct hop_profile *, FILE *),
			  char *err, size_t errlen);

#endif /* HOP_PROBE_PROFILE_JSON_H */
