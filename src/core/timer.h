/*
 * timer.h - monotonic time and deadlines. Every wait in hop carries a
 * deadline computed with hop_deadline_after().
 */
#ifndef HOP_CORE_TIMER_H
#define HOP_CORE_TIMER_H

#include <stdint.h>
#include <time.h>

static inline uint64_t hop_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Deadline @ms milliseconds from now; ms <= 0 means "already expired". */
static inline uint64_t hop_deadline_after(int64_t ms)
{
	return hop_now_ns() + (ms > 0 ? (uint64_t)ms * 1000000ull : 0);
}

static inline int hop_deadline_passed(uint64_t deadline_ns)
{
	return hop_now_ns() >= deadline_ns;
}

/* Milliseconds left before @deadline_ns, 0 when passed (for poll()). */
static inline int hop_deadline_ms_left(uint64_t deadline_ns)
{
	uint64_t now = hop_now_ns();

	if (now >= deadline_ns)
		return 0;
	uint64_t left = (deadline_ns - now + 999999ull) / 1000000ull;
	return left > 0x7fffffff ? 0x7fffffff : (int)left;
}

#endif /* HOP_CORE_TIMER_H */
