/*
 * tool_util.h - small helpers shared by hop's command-line tools
 * (hop-p2p-bench, hop-relay-bench, hop-bench): a monotonic clock and the
 * size and number syntax of their options.
 */
#ifndef HOP_TOOL_UTIL_H
#define HOP_TOOL_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

/* Microseconds of CLOCK_MONOTONIC. */
static inline double tool_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*
 * "4096", "4K", "64M", "1G" (powers of 1024, an optional trailing B) into
 * *@out. Returns 1, or 0 on a malformed, negative or overflowing value;
 * callers check their own range.
 */
static inline int tool_parse_size(const char *s, size_t *out)
{
	unsigned long long v, mul = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return 0;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (unsigned long long)(size_t)-1 / mul)
		return 0;
	*out = (size_t)(v * mul);
	return 1;
}

/* A decimal in [@min, @max] into *@out. Returns 1, or 0 when malformed or
 * out of range. */
static inline int tool_parse_long(const char *s, long min, long max,
				  long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return 0;
	*out = v;
	return 1;
}

/* tool_parse_long() into an int. */
static inline int tool_parse_int(const char *s, int min, int max, int *out)
{
	long v;

	if (!tool_parse_long(s, min, max, &v))
		return 0;
	*out = (int)v;
	return 1;
}

#endif /* HOP_TOOL_UTIL_H */
