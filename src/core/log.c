/*
 * log.c - HOP_DEBUG logging to stderr, or to a handler the program
 * installed (hop/log.h).
 *
 * Each line is formatted into one buffer and written with a single write()
 * so that the lines of ranks sharing a terminal or a pipe never interleave
 * mid-line (pipes make writes up to PIPE_BUF atomic; lines are capped
 * below that).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <hop/common.h>
#include <hop/log.h>

#include "log.h"
#include "timer.h"

#define LOG_LINE_MAX 1024 /* < PIPE_BUF (4096): one atomic write */

atomic_int hop_log_level_g = HOP_LOG_WARN;
static atomic_int log_rank = -1;
/* The level when HOP_DEBUG is unset: warn, or what the handler asked. */
static atomic_int log_default = HOP_LOG_WARN;

/*
 * The installed handler. Calls hold the lock, so hop_log_set_handler(NULL)
 * returns only once no thread is inside the old handler: a plugin may then
 * be unloaded. A handler that logs through hop (on the same thread) gets
 * stderr instead of a deadlock.
 */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static hop_log_handler_t handler_fn;
static void *handler_arg;
static _Thread_local int in_handler;

static const char *const level_names[] = {
	[HOP_LOG_NONE] = "none",
	[HOP_LOG_WARN] = "warn",
	[HOP_LOG_INFO] = "info",
	[HOP_LOG_TRACE] = "trace",
};

static void set_level(int level)
{
	atomic_store_explicit(&hop_log_level_g, level, memory_order_relaxed);
}

int hop_log_init(void)
{
	const char *v = getenv("HOP_DEBUG");

	if (!v) {
		set_level(atomic_load(&log_default));
		return 0;
	}
	for (int l = HOP_LOG_NONE; l <= HOP_LOG_TRACE; l++) {
		if (strcasecmp(v, level_names[l]) == 0) {
			set_level(l);
			return 0;
		}
	}
	set_level(HOP_LOG_WARN);
	hop_log_write(HOP_LOG_WARN,
		      "HOP_DEBUG='%s' is not one of none, warn, info, trace; "
		      "the call fails with HOP_ERR_CONFIG", v);
	return HOP_ERR_CONFIG;
}

int hop_log_set_handler(hop_log_handler_t fn, void *arg,
			hop_log_severity_t level)
{
	int lvl = fn ? (int)level : HOP_LOG_WARN;

	if (fn && (lvl < HOP_LOG_WARN || lvl > HOP_LOG_TRACE)) {
		hop_log_write(HOP_LOG_WARN,
			      "hop_log_set_handler: level %d is not one of "
			      "HOP_LOG_SEV_WARN (1), _INFO (2), _TRACE (3)",
			      lvl);
		return HOP_ERR_INVALID_ARG;
	}
	pthread_mutex_lock(&handler_lock);
	handler_fn = fn;
	handler_arg = fn ? arg : NULL;
	pthread_mutex_unlock(&handler_lock);
	atomic_store(&log_default, lvl);
	if (!getenv("HOP_DEBUG"))
		set_level(lvl);
	return 0;
}

/* Hand @msg to the installed handler; 0 when there is none (or this thread
 * is already inside it). */
static int to_handler(int level, int rank, const char *msg)
{
	int done = 0;

	if (in_handler)
		return 0;
	pthread_mutex_lock(&handler_lock);
	if (handler_fn) {
		in_handler = 1;
		handler_fn(handler_arg, (hop_log_severity_t)level, rank, msg);
		in_handler = 0;
		done = 1;
	}
	pthread_mutex_unlock(&handler_lock);
	return done;
}

void hop_log_set_rank(int rank)
{
	atomic_store_explicit(&log_rank, rank < 0 ? -1 : rank,
			      memory_order_relaxed);
}

void hop_log_write(int level, const char *fmt, ...)
{
	char line[LOG_LINE_MAX];
	int saved_errno = errno;
	int rank = atomic_load_explicit(&log_rank, memory_order_relaxed);
	const char *lname;
	size_t n, body;
	va_list ap;
	int r;

	if (level < HOP_LOG_WARN || level > HOP_LOG_TRACE)
		level = HOP_LOG_WARN;
	lname = level_names[level];
	if (rank >= 0)
		r = snprintf(line, sizeof(line), "[hop r%d] %s: ", rank, lname);
	else
		r = snprintf(line, sizeof(line), "[hop pid%ld] %s: ",
			     (long)getpid(), lname);
	n = body = r > 0 ? (size_t)r : 0;

	va_start(ap, fmt);
	r = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (r < 0)
		r = 0;
	if (n + (size_t)r >= sizeof(line) - 1) {
		/* truncated: mark it, keep room for the newline */
		n = sizeof(line) - 5;
		memcpy(line + n, "...", 3);
		n += 3;
	} else {
		n += (size_t)r;
	}
	while (n > body && line[n - 1] == '\n')
		n--;
	line[n] = '\0';
	if (to_handler(level, rank, line + body)) {
		errno = saved_errno;
		return;
	}
	line[n++] = '\n';

	for (size_t off = 0; off < n;) {
		ssize_t w = write(STDERR_FILENO, line + off, n - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	errno = saved_errno;
}

/* 1 when @n is 10, 100, 1000, ...: a flood reports its size as it grows. */
static int power_of_ten(unsigned long n)
{
	if (n < 10)
		return 0;
	while (n % 10 == 0)
		n /= 10;
	return n == 1;
}

long hop_log_limit_pass(struct hop_log_limit *l, uint64_t now_ns,
			int *last)
{
	long ret = -1;

	*last = 0;
	pthread_mutex_lock(&l->lock);
	if (!l->window_ns ||
	    now_ns - l->window_ns >= HOP_LOG_WINDOW_S * 1000000000ull) {
		l->window_ns = now_ns ? now_ns : 1;
		l->printed = 0;
		l->flood = 0;
	}
	if (l->printed < HOP_LOG_BURST) {
		*last = ++l->printed == HOP_LOG_BURST;
		ret = (long)l->unreported;
		l->unreported = 0;
	} else if (power_of_ten(++l->flood)) {
		ret = (long)l->unreported;
		l->unreported = 0;
	} else {
		l->unreported++;
	}
	pthread_mutex_unlock(&l->lock);
	return ret;
}

void hop_log_limited(struct hop_log_limit *l, int level, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX];
	int last;
	long skipped = hop_log_limit_pass(l, hop_now_ns(), &last);
	va_list ap;

	if (skipped < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (skipped)
		hop_log_write(level, "%s (and %ld more like this suppressed)",
			      msg, skipped);
	else if (last)
		hop_log_write(level, "%s (more like this within %d s are "
			      "counted, not printed)", msg, HOP_LOG_WINDOW_S);
	else
		hop_log_write(level, "%s", msg);
}
