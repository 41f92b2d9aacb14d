/*
 * json.c - strict recursive-descent JSON reader (see json.h). Depth is
 * bounded, so the recursion is too.
 */
#include "probe/json.h"
#include "model/cnum.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

struct jp {
	const char *s;
	size_t len, pos;
	int line;
	size_t line_start;
	int depth;
	int code;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int jp_fail(struct jp *p,
							 const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "line %d, column %zu: %s", p->line,
			 p->pos - p->line_start + 1, msg);
	p->code = HOP_ERR_PARSE;
	return HOP_ERR_PARSE;
}

static int jp_eof(struct jp *p, const char *inside)
{
	return jp_fail(p, "unexpected end of input inside %s (truncated file?)",
		       inside);
}

static void jp_ws(struct jp *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c == '\n') {
			p->line++;
			p->line_start = p->pos + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			return;
		}
		p->pos++;
	}
}

static struct hop_json *jp_new(struct jp *p, enum hop_json_type t)
{
	struct hop_json *v = calloc(1, sizeof(*v));

	if (!v) {
		p->code = HOP_ERR_NO_MEMORY;
		if (p->err && p->errlen)
			snprintf(p->err, p->errlen, "out of memory");
		return NULL;
	}
	v->type = t;
	v->line = p->line;
	v->col = (int)(p->pos - p->line_start + 1);
	return v;
}

static const char *jp_char_name(char c, char *buf, size_t len)
{
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", (unsigned char)c);
	return buf;
}

static int jp_hex4(struct jp *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		if (p->pos >= p->len)
			return jp_eof(p, "a \\u escape");
		char c = p->s[p->pos++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return jp_fail(p, "bad hex digit in \\u escape");
	}
	*out = v;
	return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* At the opening quote; returns a malloc'd decoded string or NULL. */
static char *jp_string(struct jp *p)
{
	size_t start = ++p->pos, n = 0;
	char *o, *buf;

	/* decoded length never exceeds the raw length */
	while (p->pos < p->len && p->s[p->pos] != '"') {
		if (p->s[p->pos] == '\\')
			p->pos++;
		p->pos++;
	}
	if (p->pos >= p->len) {
		jp_eof(p, "a string");
		return NULL;
	}
	n = p->pos - start;
	p->pos = start;
	if (!(buf = malloc(n + 1))) {
		p->code = HOP_ERR_NO_MEMORY;
		if (p->err && p->errlen)
			snprintf(p->err, p->errlen, "out of memory");
		return NULL;
	}
	o = buf;
	for (;;) {
		unsigned char c = (unsigned char)p->s[p->pos];

		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20) {
			jp_fail(p, "control character 0x%02x in a string", c);
			goto err;
		}
		p->pos++;
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		char e = p->s[p->pos++];
		unsigned cp, lo;

		switch (e) {
		case '"': case '\\': case '/':
			*o++ = e;
			break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (jp_hex4(p, &cp))
				goto err;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (p->pos + 1 >= p->len || p->s[p->pos] != '\\' ||
				    p->s[p->pos + 1] != 'u') {
					jp_fail(p, "unpaired surrogate in \\u escape");
					goto err;
				}
				p->pos += 2;
				if (jp_hex4(p, &lo))
					goto err;
				if (lo < 0xdc00 || lo > 0xdfff) {
					jp_fail(p, "bad low surrogate in \\u escape");
					goto err;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				jp_fail(p, "unpaired surrogate in \\u escape");
				goto err;
			}
			if (cp == 0) {
				jp_fail(p, "\\u0000 is not allowed in a string");
				goto err;
			}
			o += utf8_put(o, cp);
			break;
		default:
			jp_fail(p, "bad escape '\\%c' in a string", e);
			goto err;
		}
	}
	*o = '\0';
	return buf;
err:
	free(buf);
	return NULL;
}

static int jp_number(struct jp *p, struct hop_json *v)
{
	size_t st = p->pos, i = p->pos;
	const char *s = p->s;
	char tmp[64];

#define DIG(k) ((k) < p->len && s[k] >= '0' && s[k] <= '9')
	if (i < p->len && s[i] == '-')
		i++;
	if (i >= p->len)
		return jp_eof(p, "a number");
	if (!DIG(i))
		return jp_fail(p, "expected a digit in a number");
	if (s[i] == '0' && DIG(i + 1))
		return jp_fail(p, "leading zero in a number");
	while (DIG(i))
		i++;
	if (i < p->len && s[i] == '.') {
		i++;
		if (i >= p->len)
			return jp_eof(p, "a number");
		if (!DIG(i))
			return jp_fail(p, "expected a digit after '.'");
		while (DIG(i))
			i++;
	}
	if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < p->len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= p->len)
			return jp_eof(p, "a number");
		if (!DIG(i))
			return jp_fail(p, "expected a digit in an exponent");
		while (DIG(i))
			i++;
	}
#undef DIG
	if (i - st >= sizeof(tmp))
		return jp_fail(p, "number too long");
	memcpy(tmp, s + st, i - st);
	tmp[i - st] = '\0';
	errno = 0;
	v->number = hop_strtod_c(tmp, NULL);
	if (!isfinite(v->number))
		return jp_fail(p, "number out of range");
	p->pos = i;
	return 0;
}

static int jp_value(struct jp *p, struct hop_json **out);

static int jp_lit(struct jp *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n && !strncmp(p->s + p->pos, word, p->len - p->pos))
		return jp_eof(p, "a literal");
	if (p->len - p->pos < n || strncmp(p->s + p->pos, word, n))
		return jp_fail(p, "invalid literal (expected %s)", word);
	p->pos += n;
	return 0;
}

static int jp_container(struct jp *p, struct hop_json *v)
{
	int obj = v->type == HOP_JSON_OBJECT;
	const char *what = obj ? "an object" : "an array";
	struct hop_json **tail = &v->child;
	char cb[16];

	if (++p->depth > HOP_JSON_MAX_DEPTH)
		return jp_fail(p, "nesting deeper than %d", HOP_JSON_MAX_DEPTH);
	p->pos++;
	jp_ws(p);
	if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']')) {
		p->pos++;
		p->depth--;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct hop_json *m;

		jp_ws(p);
		if (p->pos >= p->len)
			return jp_eof(p, what);
		if (obj) {
			if (p->s[p->pos] != '"')
				return jp_fail(p, "expected a key string in an object, got %s",
					       jp_char_name(p->s[p->pos], cb, sizeof(cb)));
			if (!(key = jp_string(p)))
				return p->code;
			for (m = v->child; m; m = m->next)
				if (!strcmp(m->key, key)) {
					jp_fail(p, "duplicate key \"%s\"", key);
					free(key);
					return HOP_ERR_PARSE;
				}
			jp_ws(p);
			if (p->pos >= p->len) {
				free(key);
				return jp_eof(p, what);
			}
			if (p->s[p->pos] != ':') {
				free(key);
				return jp_fail(p, "expected ':' after a key, got %s",
					       jp_char_name(p->s[p->pos], cb, sizeof(cb)));
			}
			p->pos++;
		}
		m = NULL;
		if (jp_value(p, &m)) {
			hop_json_free(m);
			free(key);
			return p->code;
		}
		m->key = key;
		*tail = m;
		tail = &m->next;
		v->count++;
		jp_ws(p);
		if (p->pos >= p->len)
			return jp_eof(p, what);
		char c = p->s[p->pos++];

		if (c == (obj ? '}' : ']'))
			break;
		if (c != ',') {
			p->pos--;
			return jp_fail(p, "expected ',' or '%c' in %s, got %s",
				       obj ? '}' : ']', what,
				       jp_char_name(c, cb, sizeof(cb)));
		}
		jp_ws(p);
		if (p->pos < p->len && p->s[p->pos] == (obj ? '}' : ']'))
			return jp_fail(p, "trailing comma in %s", what);
	}
	p->depth--;
	return 0;
}

static int jp_value(struct jp *p, struct hop_json **out)
{
	struct hop_json *v;
	char cb[16];
	int ret = 0;

	jp_ws(p);
	if (p->pos >= p->len)
		return jp_eof(p, "a value");
	char c = p->s[p->pos];
	enum hop_json_type t = c == '{' ? HOP_JSON_OBJECT
			     : c == '[' ? HOP_JSON_ARRAY
			     : c == '"' ? HOP_JSON_STRING
			     : c == 't' || c == 'f' ? HOP_JSON_BOOL
			     : c == 'n' ? HOP_JSON_NULL : HOP_JSON_NUMBER;

	if (t == HOP_JSON_NUMBER && c != '-' && (c < '0' || c > '9'))
		return jp_fail(p, "expected a value, got %s",
			       jp_char_name(c, cb, sizeof(cb)));
	if (!(v = jp_new(p, t)))
		return p->code;
	*out = v; /* owned by the caller from here, freed on error too */
	switch (t) {
	case HOP_JSON_OBJECT:
	case HOP_JSON_ARRAY:
		ret = jp_container(p, v);
		break;
	case HOP_JSON_STRING:
		if (!(v->string = jp_string(p)))
			ret = p->code;
		break;
	case HOP_JSON_BOOL:
		v->boolean = c == 't';
		ret = jp_lit(p, c == 't' ? "true" : "false");
		break;
	case HOP_JSON_NULL:
		ret = jp_lit(p, "null");
		break;
	case HOP_JSON_NUMBER:
		ret = jp_number(p, v);
		break;
	}
	return ret;
}

int hop_json_parse(const char *text, size_t len, struct hop_json **out,
		   char *err, size_t errlen)
{
	struct jp p = { .s = text, .len = len, .line = 1, .err = err,
			.errlen = errlen };
	struct hop_json *root = NULL;
	char cb[16];

	if (err && errlen)
		err[0] = '\0';
	if (!text || !out)
		return HOP_ERR_INVALID_ARG;
	*out = NULL;
	jp_ws(&p);
	if (p.pos >= len) {
		jp_fail(&p, "empty input (no JSON value)");
		return HOP_ERR_PARSE;
	}
	if (jp_value(&p, &root))
		goto err;
	jp_ws(&p);
	if (p.pos < len) {
		jp_fail(&p, "unexpected %s after the JSON value",
			jp_char_name(text[p.pos], cb, sizeof(cb)));
		goto err;
	}
	*out = root;
	return 0;
err:
	hop_json_free(root);
	return p.code ? p.code : HOP_ERR_PARSE;
}

void hop_json_free(struct hop_json *v)
{
	while (v) {
		struct hop_json *next = v->next;

		hop_json_free(v->child);
		free(v->string);
		free(v->key);
		free(v);
		v = next;
	}
}

const struct hop_json *hop_json_get(const struct hop_json *obj,
				    const char *key)
{
	if (!obj || obj->type != HOP_JSON_OBJECT || !key)
		return NULL;
	for (const struct hop_json *m = obj->child; m; m = m->next)
		if (!strcmp(m->key, key))
			return m;
	return NULL;
}

const struct hop_json *hop_json_at(const struct hop_json *arr, size_t i)
{
	const struct hop_json *m;

	if (!arr || arr->type != HOP_JSON_ARRAY)
		return NULL;
	for (m = arr->child; m && i; m = m->next)
		i--;
	return m;
}

const char *hop_json_type_name(enum hop_json_type t)
{
	static const char *const names[] = { "null",   "boolean", "number",
					     "string", "array",   "object" };

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t]
							      : "invalid";
}
