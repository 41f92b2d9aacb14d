/*
 * config_parse.c - strict parsing of one HOP_* value (integers, sizes with
 * K/M/G suffixes, decimal seconds, choices) and the "allowed" texts that
 * errors and docs/config.md's table print (config_int.h).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/common.h>

#include "config.h"
#include "config_int.h"

int hop_cfg_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return HOP_ERR_CONFIG;
}

/* "1G", "4K", "8192": the shortest exact spelling of a size. */
void hop_cfg_fmt_size(unsigned long long v, char *buf, size_t len)
{
	static const char sfx[] = { 'G', 'M', 'K' };
	static const unsigned long long mul[] = { GIB, MIB, KIB };

	for (int i = 0; i < 3; i++) {
		if (v >= mul[i] && v % mul[i] == 0) {
			snprintf(buf, len, "%llu%c", v / mul[i], sfx[i]);
			return;
		}
	}
	snprintf(buf, len, "%llu", v);
}

/* "60", "0.5", "0.001": milliseconds as decimal seconds. */
void hop_cfg_fmt_ms(long long ms, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%lld.%03lld", ms / 1000, ms % 1000);

	while (n > 0 && (size_t)n < len && buf[n - 1] == '0')
		buf[--n] = '\0';
	if (n > 0 && (size_t)n < len && buf[n - 1] == '.')
		buf[--n] = '\0';
}

/* The "allowed" text of errors and of the documentation table. */
void hop_cfg_allowed_int(long min, long max, char *buf, size_t len)
{
	snprintf(buf, len, "%ld..%ld", min, max);
}

void hop_cfg_allowed_size(size_t min, size_t max, char *buf, size_t len)
{
	char smin[32], smax[32];

	hop_cfg_fmt_size(min, smin, sizeof(smin));
	hop_cfg_fmt_size(max, smax, sizeof(smax));
	snprintf(buf, len, "%s..%s bytes, suffixes K, M, G", smin, smax);
}

void hop_cfg_allowed_secs(long long min_ms, long long max_ms, char *buf,
			 size_t len)
{
	char smin[32], smax[32];

	hop_cfg_fmt_ms(min_ms, smin, sizeof(smin));
	hop_cfg_fmt_ms(max_ms, smax, sizeof(smax));
	snprintf(buf, len, "%s..%s seconds, fractions allowed", smin, smax);
}

int hop_cfg_check_not_empty(const char *name, const char *value,
			   const char *allowed, char *err, size_t errlen)
{
	if (!value || !*value)
		return hop_cfg_err(err, errlen, "%s is set but empty (allowed: %s); "
			       "unset it for the default", name, allowed);
	if (isspace((unsigned char)value[0]))
		return hop_cfg_err(err, errlen, "%s='%s': leading white space "
			       "(allowed: %s)", name, value, allowed);
	return 0;
}

int hop_parse_int(const char *name, const char *value, long min, long max,
		  long *out, char *err, size_t errlen)
{
	char allowed[64];
	char *end;
	long v;
	int ret;

	hop_cfg_allowed_int(min, max, allowed, sizeof(allowed));
	if ((ret = hop_cfg_check_not_empty(name, value, allowed, err, errlen)))
		return ret;
	errno = 0;
	v = strtol(value, &end, 10);
	if (end == value)
		return hop_cfg_err(err, errlen, "%s='%s': not an integer (allowed: %s)",
			       name, value, allowed);
	if (*end)
		return hop_cfg_err(err, errlen, "%s='%s': trailing characters '%s' "
			       "after the number (allowed: %s)", name, value,
			       end, allowed);
	if (errno == ERANGE || v < min || v > max)
		return hop_cfg_err(err, errlen, "%s='%s': out of range (allowed: %s)",
			       name, value, allowed);
	*out = v;
	return 0;
}

int hop_parse_size(const char *name, const char *value, size_t min,
		   size_t max, size_t *out, char *err, size_t errlen)
{
	char allowed[96];
	unsigned long long v, mul = 1;
	char *end;
	int ret;

	hop_cfg_allowed_size(min, max, allowed, sizeof(allowed));
	if ((ret = hop_cfg_check_not_empty(name, value, allowed, err, errlen)))
		return ret;
	if (!isdigit((unsigned char)value[0]))
		return hop_cfg_err(err, errlen, "%s='%s': not a size (allowed: %s)",
			       name, value, allowed);
	errno = 0;
	v = strtoull(value, &end, 10);
	if (errno == ERANGE)
		return hop_cfg_err(err, errlen, "%s='%s': out of range (allowed: %s)",
			       name, value, allowed);
	switch (*end) {
	case 'K': case 'k': mul = KIB; end++; break;
	case 'M': case 'm': mul = MIB; end++; break;
	case 'G': case 'g': mul = GIB; end++; break;
	default: break;
	}
	if (*end)
		return hop_cfg_err(err, errlen, "%s='%s': trailing characters '%s' "
			       "after the size (allowed: %s)", name, value, end,
			       allowed);
	if (v > ULLONG_MAX / mul || v * mul < min || v * mul > max)
		return hop_cfg_err(err, errlen, "%s='%s': out of range (allowed: %s)",
			       name, value, allowed);
	*out = (size_t)(v * mul);
	return 0;
}

/* Decimal seconds ("60", "0.5", ".25") to milliseconds, rounded. */
int hop_parse_seconds(const char *name, const char *value, long long min_ms,
			 long long max_ms, int *out, char *err, size_t errlen)
{
	char allowed[96];
	long long sec = 0, frac = 0, ms;
	int ndig = 0, nfrac = 0, ret;
	const char *p = value;

	hop_cfg_allowed_secs(min_ms, max_ms, allowed, sizeof(allowed));
	if ((ret = hop_cfg_check_not_empty(name, value, allowed, err, errlen)))
		return ret;
	for (; isdigit((unsigned char)*p); p++, ndig++) {
		if (sec <= max_ms / 1000) /* stop growing once out of range */
			sec = sec * 10 + (*p - '0');
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, nfrac++) {
			if (nfrac < 4) /* 1/10 ms, for rounding */
				frac = frac * 10 + (*p - '0');
		}
	}
	if (ndig + nfrac == 0)
		return hop_cfg_err(err, errlen, "%s='%s': not a number of seconds "
			       "(allowed: %s)", name, value, allowed);
	if (*p)
		return hop_cfg_err(err, errlen, "%s='%s': trailing characters '%s' "
			       "after the number (allowed: %s)", name, value, p,
			       allowed);
	for (int i = nfrac; i < 4; i++)
		frac *= 10;
	if (sec > max_ms / 1000)
		return hop_cfg_err(err, errlen, "%s='%s': out of range (allowed: %s)",
			       name, value, allowed);
	ms = sec * 1000 + (frac + 5) / 10;
	if (ms < min_ms || ms > max_ms)
		return hop_cfg_err(err, errlen, "%s='%s': out of range (allowed: %s)",
			       name, value, allowed);
	*out = (int)ms;
	return 0;
}

int hop_cfg_in_choices(const char *choices, const char *value)
{
	size_t vlen = strlen(value);

	for (const char *c = choices; *c;) {
		size_t n = strcspn(c, "|");

		if (n == vlen && strncmp(c, value, n) == 0)
			return 1;
		c += n + (c[n] == '|');
	}
	return 0;
}

void hop_cfg_choices_list(const char *choices, char *buf, size_t len)
{
	size_t o = 0;

	for (const char *c = choices; *c && o + 1 < len; c++)
		o += (size_t)snprintf(buf + o, len - o, *c == '|' ? ", " : "%c", *c);
}
