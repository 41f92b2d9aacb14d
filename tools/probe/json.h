/*
 * json.h - a small, strict, self-contained JSON (RFC 8259) reader into a
 * tree, for hop-probe's JSON profile (--json) and its tests; libhop
 * itself parses no JSON. Errors name the line and column and what was expected:
 * "line 3, column 17: unexpected end of input inside an object (truncated
 * file?)". Duplicate keys, trailing commas, comments, NaN/Infinity, control
 * characters in strings and nesting deeper than HOP_JSON_MAX_DEPTH are
 * rejected.
 */
#ifndef HOP_PROBE_JSON_H
#define HOP_PROBE_JSON_H

#include <stddef.h>

#define HOP_JSON_MAX_DEPTH 64

enum hop_json_type {
	HOP_JSON_NULL = 0,
	HOP_JSON_BOOL,
	HOP_JSON_NUMBER,
	HOP_JSON_STRING,
	HOP_JSON_ARRAY,
	HOP_JSON_OBJECT,
};

/*
 * struct hop_json - one value. Arrays and objects list their members
 * through @child / @next; object members carry their @key.
 */
struct hop_json {
	enum hop_json_type type;
	int boolean;
	double number;
	char *string;           /* STRING: decoded UTF-8, NUL-terminated */
	char *key;              /* member of an object: its key */
	struct hop_json *child; /* ARRAY/OBJECT: first member */
	struct hop_json *next;  /* next member of the parent */
	size_t count;           /* ARRAY/OBJECT: number of members */
	int line, col;          /* where the value starts (1-based) */
};

/*
 * hop_json_parse() - Parse @len bytes of @text (need not be NUL-terminated).
 * @out: receives the tree; free with hop_json_free().
 * @err: receives "line L, column C: what" on failure.
 * Return: 0, HOP_ERR_PARSE, HOP_ERR_NO_MEMORY or HOP_ERR_INVALID_ARG.
 */
int hop_json_parse(const char *text, size_t len, struct hop_json **out,
		   char *err, size_t errlen);

void hop_json_free(struct hop_json *v);

/* Member @key of @obj, or NULL (also when @obj is not an object). */
const struct hop_json *hop_json_get(const struct hop_json *obj,
				    const char *key);

/* Element @i of @arr, or NULL. */
const struct hop_json *hop_json_at(const struct hop_json *arr, size_t i);

/* "null", "boolean", "number", "string", "array", "object". */
const char *hop_json_type_name(enum hop_json_type t);

#endif /* HOP_PROBE_JSON_H */
