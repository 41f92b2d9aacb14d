/*
 * log.h - HOP_DEBUG=warn|info|trace logging to stderr, each line prefixed
 * with the rank ("[hop r3] warn: ..."). Level checks are a load and a
 * compare, so trace calls cost nothing when off. Warnings that a hostile
 * peer can repeat at will are rate limited (HOP_WARN_LIMITED).
 */
#ifndef HOP_CORE_LOG_H
#define HOP_CORE_LOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

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

/*
 * Rate limit of one warning site that outsiders can fire at will (a
 * stranger's bad connections): per window of HOP_LOG_WINDOW_S seconds the
 * first HOP_LOG_BURST lines print; later ones are counted, and a line
 * prints when the count reaches 10, 100, 1000, ... and with the first line
 * of the next window, each saying how many were suppressed.
 */
#define HOP_LOG_BURST 8
#define HOP_LOG_WINDOW_S 10

struct hop_log_limit {
	pthread_mutex_t lock;
	uint64_t window_ns;     /* start of the current window; 0: none yet */
	unsigned printed;       /* lines printed in it (up to the burst) */
	unsigned long flood;    /* warnings past the burst in it */
	unsigned long unreported; /* suppressed since the last line printed */
};
#define HOP_LOG_LIMIT_INIT { PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0 }

/*
 * hop_log_limit_pass() - Whether a warning at @now_ns prints under @l;
 * *@last is set for the last line of a burst.
 * Return: -1 to suppress it (counted), else the number suppressed since
 * the last line printed, which its line reports.
 */
long hop_log_limit_pass(struct hop_log_limit *l, uint64_t now_ns,
			int *last);

/* hop_log_write() at @level under @l (HOP_WARN_LIMITED). */
void hop_log_limited(struct hop_log_limit *l, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define HOP_WARN_LIMITED(...)                                                 \
	do {                                                                  \
		static struct hop_log_limit lim_ = HOP_LOG_LIMIT_INIT;        \
		if (hop_log_level() >= HOP_LOG_WARN)                          \
			hop_log_limited(&lim_, HOP_LOG_WARN, __VA_ARGS__);    \
	} while (0)
#define HOP_INFO(...) HOP_LOG_AT(HOP_LOG_INFO, __VA_ARGS__)
#define HOP_TRACE(...) HOP_LOG_AT(HOP_LOG_TRACE, __VA_ARGS__)

#endif /* HOP_CORE_LOG_H */
