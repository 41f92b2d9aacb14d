/*
 * log.h - HOP_DEBUG=warn|info|trace logging to stderr, each line prefixed
 * with the rank ("[hop r3] warn: ..."). Level checks are a load and a
 * compare, so trace calls cost nothing when off.
 */
#ifndef HOP_CORE_LOG_H
#define HOP_CORE_LOG_H

#include <stdatomic.h>

enum hop_log_level {
	HOP_LOG_NONE = 0,
	HOP_LOG_WARN = 1,
	HOP_LOG_INFO = 2,
	HOP_LOG_TRACE = 3,
};

/* Current level; set from HOP_DEBUG by hop_log_init(). Default WARN.
 * Atomic: every init stores it while other threads (the NCCL plugin runs
 * inits on threads of its own) log; relaxed, as only the value matters. */
extern atomic_int hop_log_level_g;

static inline int hop_log_level(void)
{
	return atomic_load_explicit(&hop_log_level_g, memory_order_relaxed);
}

/* Read HOP_DEBUG (once per process; later calls re-read it). Returns 0 or
 * HOP_ERR_CONFIG when the value is not none|warn|info|trace. */
int hop_log_init(void);

/* Rank shown in the prefix; -1 (the default) shows the pid instead. */
void hop_log_set_rank(int rank);

void hop_log_write(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define HOP_LOG_AT(lvl, ...)                                                  \
	do {                                                                  \
		if (hop_log_level() >= (lvl))                                 \
			hop_log_write((lvl), __VA_ARGS__);                    \
	} while (0)
#define HOP_WARN(...) HOP_LOG_AT(HOP_LOG_WARN, __VA_ARGS__)
#define HOP_INFO(...) HOP_LOG_AT(HOP_LOG_INFO, __VA_ARGS__)
#define HOP_TRACE(...) HOP_LOG_AT(HOP_LOG_TRACE, __VA_ARGS__)

#endif /* HOP_CORE_LOG_H */
