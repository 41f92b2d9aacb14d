/*
 * config_int.h - the value parsers and formatters behind config.c's table
 * (config_parse.c), shared by the table's parser and its documentation.
 */
#ifndef HOP_CORE_CONFIG_INT_H
#define HOP_CORE_CONFIG_INT_H

#include <stddef.h>

#define KIB 1024ll
#define MIB (1024ll * 1024)
#define GIB (1024ll * 1024 * 1024)

/* Format @fmt into @err (when given); returns HOP_ERR_CONFIG. */
int hop_cfg_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "1G", "4K", "8192": the shortest exact spelling of a size. */
void hop_cfg_fmt_size(unsigned long long v, char *buf, size_t len);
/* "60", "0.5", "0.001": milliseconds as decimal seconds. */
void hop_cfg_fmt_ms(long long ms, char *buf, size_t len);

/* The "allowed" text of errors and of the documentation table. */
void hop_cfg_allowed_int(long min, long max, char *buf, size_t len);
void hop_cfg_allowed_size(size_t min, size_t max, char *buf, size_t len);
void hop_cfg_allowed_secs(long long min_ms, long long max_ms, char *buf,
			  size_t len);

/* HOP_ERR_CONFIG naming @name when @value is empty or starts with white
 * space; @allowed goes into the message. */
int hop_cfg_check_not_empty(const char *name, const char *value,
			    const char *allowed, char *err, size_t errlen);

/* Decimal seconds ("60", "0.5", ".25") to milliseconds, rounded, within
 * [@min_ms, @max_ms]. */
int hop_parse_seconds(const char *name, const char *value, long long min_ms,
		      long long max_ms, int *out, char *err, size_t errlen);

/* Is @value one of "a|b|c"? */
int hop_cfg_in_choices(const char *choices, const char *value);
/* "a|b|c" as "a, b, c". */
void hop_cfg_choices_list(const char *choices, char *buf, size_t len);

#endif
