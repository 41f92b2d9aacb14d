/*
 * memmon.c - the userfaultfd unmapping monitor (memmon.h).
 *
 * One monitor per process, started by the first cache that attaches and
 * stopped (its descriptor closed, which unregisters every range) when the
 * last one is done. Its thread appends every unmapped range to a ring
 * numbered by a sequence; each cache remembers the sequence it applied and,
 * if it fell more than the ring behind, forgets everything.
 *
 * Ordering: the kernel lets munmap() return once the event is read. The
 * thread counts itself busy before read() and idle only after the event is
 * in the ring, so a lookup that sees it idle after the application's
 * munmap() also sees the event.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__linux__) && __has_include(<linux/userfaultfd.h>)
#include <linux/userfaultfd.h>
#endif
/* valgrind does not know userfaultfd and warns on every attempt */
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND() RUNNING_ON_VALGRIND
#else
#define UNDER_VALGRIND() 0
#endif

#include "core/config.h"
#include "core/log.h"
#include "core/timer.h"
#include "p2p/memmon.h"

#define MON_RING 1024u
#define MON_BATCH 64
/* how long a lookup waits for the thread to log what it just read */
#define MON_SETTLE_MS 1000

struct mon_range {
	uintptr_t start, end;
};

static struct {
	pthread_mutex_t lock;
	int users;
	int fd, stopfd;
	pid_t pid;                      /* the process that opened fd */
	pthread_t thread;
	_Atomic uint64_t head;          /* events logged */
	atomic_int busy;                /* thread between read() and log */
	struct mon_range ring[MON_RING];
} mon = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .stopfd = -1 };

unsigned long long hop_memmon_events(void)
{
	return (unsigned long long)atomic_load(&mon.head);
}

#ifdef UFFD_USER_MODE_ONLY

static void mon_log(const struct uffd_msg *m)
{
	struct mon_range r;
	uint64_t h;

	switch (m->event) {
	case UFFD_EVENT_UNMAP:
	case UFFD_EVENT_REMOVE:
		r.start = (uintptr_t)m->arg.remove.start;
		r.end = (uintptr_t)m->arg.remove.end;
		break;
	case UFFD_EVENT_REMAP:
		r.start = (uintptr_t)m->arg.remap.from;
		r.end = r.start + (uintptr_t)m->arg.remap.len;
		break;
	default:        /* no page is write-protected: no fault to serve */
		return;
	}
	pthread_mutex_lock(&mon.lock);
	h = atomic_load(&mon.head);
	mon.ring[h % MON_RING] = r;
	atomic_store(&mon.head, h + 1);
	pthread_mutex_unlock(&mon.lock);
}

/* Read and log every pending event; -1 when the descriptor broke. */
static int mon_drain(int fd)
{
	struct uffd_msg msg[16];
	ssize_t n;

	for (;;) {
		atomic_fetch_add(&mon.busy, 1);
		n = read(fd, msg, sizeof(msg));
		for (ssize_t i = 0; i < n / (ssize_t)sizeof(msg[0]); i++)
			mon_log(&msg[i]);
		atomic_fetch_sub(&mon.busy, 1);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
	}
}

/* @arg: the descriptors (uffd | stopfd << 32), its own: a stopping
 * thread may still run while the next monitor opens. */
static void *mon_thread(void *arg)
{
	uint64_t fds = (uint64_t)(uintptr_t)arg;
	struct pollfd pfd[2] = {
		{ .fd = (int)(fds & 0xffffffffu), .events = POLLIN },
		{ .fd = (int)(fds >> 32), .events = POLLIN } };

	/* woken by events or by the stop descriptor; the timeout only
	 * bounds each wait */
	while (!(pfd[1].revents & POLLIN)) {
		if (poll(pfd, 2, 1000) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			break;
		if ((pfd[0].revents & POLLIN) && mon_drain(pfd[0].fd))
			break;
	}
	return NULL;
}

static int mon_watch(uintptr_t start, uintptr_t end)
{
	struct uffdio_register reg = {
		.range = { .start = start, .len = end - start },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	/* EINVAL: a kind of mapping userfaultfd cannot watch (file backed);
	 * EBUSY: another userfaultfd (the application's) watches it */
	return ioctl(mon.fd, UFFDIO_REGISTER, &reg) ? -1 : 0;
}

/* The thread takes no signals: the application's handlers run in its own
 * threads. */
static int mon_spawn(void)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&mon.thread, NULL, mon_thread,
			     (void *)(uintptr_t)((uint64_t)(uint32_t)mon.fd |
						 (uint64_t)mon.stopfd << 32));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* Under mon.lock, users == 0. */
static int mon_open(void)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_EVENT_UNMAP |
			    UFFD_FEATURE_EVENT_REMOVE |
			    UFFD_FEATURE_EVENT_REMAP,
	};
	const char *what = "userfaultfd";
	int err;

	if (UNDER_VALGRIND()) {
		what = "userfaultfd under valgrind";
		errno = ENOSYS;
		goto err;
	}
	mon.fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK |
			      UFFD_USER_MODE_ONLY);
	if (mon.fd < 0)
		goto err;
	if (ioctl(mon.fd, UFFDIO_API, &api)) {
		what = "UFFDIO_API";
		goto err_fd;
	}
	if ((mon.stopfd = eventfd(0, EFD_CLOEXEC)) < 0) {
		what = "eventfd";
		goto err_fd;
	}
	if ((errno = mon_spawn())) {
		what = "pthread_create";
		goto err_stop;
	}
	mon.pid = getpid();
	return 0;
err_stop:
	err = errno;
	close(mon.stopfd);
	mon.stopfd = -1;
	errno = err;
err_fd:
	err = errno;
	close(mon.fd);
	mon.fd = -1;
	errno = err;
err:
	{
		static atomic_flag said = ATOMIC_FLAG_INIT;

		if (!atomic_flag_test_and_set(&said))
			HOP_INFO("reg cache: no unmapping monitor (%s: %s): "
				 "user buffers are deregistered when their "
				 "transfer ends (docs/regcache.md)", what,
				 strerror(errno));
	}
	return -1;
}

/* Not under mon.lock: the thread may be waiting for it to log an event. */
static void mon_close(int fd, int stopfd, pthread_t thread)
{
	uint64_t one = 1;

	if (write(stopfd, &one, sizeof(one)) == sizeof(one))
		pthread_join(thread, NULL);
	else
		pthread_detach(thread);
	close(stopfd);
	close(fd);
}

#else /* no userfaultfd */

static int mon_watch(uintptr_t start, uintptr_t end)
{
	(void)start;
	(void)end;
	return -1;
}

static int mon_open(void)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	if (!atomic_flag_test_and_set(&said))
		HOP_INFO("reg cache: no unmapping monitor on this platform: "
			 "user buffers are deregistered when their transfer "
			 "ends (docs/regcache.md)");
	return -1;
}

static void mon_close(int fd, int stopfd, pthread_t thread)
{
	(void)fd;
	(void)stopfd;
	(void)thread;
}

#endif

/* Wait, bounded, until the thread has logged what it read. */
static void mon_settle(void)
{
	uint64_t deadline;

	if (!atomic_load(&mon.busy))
		return;
	deadline = hop_deadline_after(MON_SETTLE_MS);
	while (atomic_load(&mon.busy) && !hop_deadline_passed(deadline))
		sched_yield();
}

static void mon_sync(struct hop_regcache *rc)
{
	struct mon_range r[MON_BATCH];
	uint64_t head;
	int n;

	mon_settle();
	while (rc->mon_seq != atomic_load(&mon.head)) {
		pthread_mutex_lock(&mon.lock);
		head = atomic_load(&mon.head);
		for (n = 0; n < MON_BATCH && rc->mon_seq + (uint64_t)n < head; n++)
			r[n] = mon.ring[(rc->mon_seq + (uint64_t)n) % MON_RING];
		pthread_mutex_unlock(&mon.lock);
		if (head - rc->mon_seq > MON_RING) {
			/* fell behind the ring: forget everything */
			hop_regcache_invalidate(rc, NULL, SIZE_MAX);
			rc->mon_seq = head;
			break;
		}
		rc->mon_seq += (uint64_t)n;
		for (int i = 0; i < n; i++)
			hop_regcache_invalidate(rc, (const void *)r[i].start,
						r[i].end - r[i].start);
	}
}

static void mon_release(struct hop_regcache *rc)
{
	int fd = -1, stopfd = -1;
	pthread_t thread = { 0 };

	(void)rc;
	pthread_mutex_lock(&mon.lock);
	if (--mon.users == 0) {
		fd = mon.fd;
		stopfd = mon.stopfd;
		thread = mon.thread;
		mon.fd = mon.stopfd = -1;
	}
	pthread_mutex_unlock(&mon.lock);
	if (fd >= 0)
		mon_close(fd, stopfd, thread);
}

static const struct hop_rc_mon uffd_mon = {
	.watch = mon_watch,
	.sync = mon_sync,
	.release = mon_release,
};

void hop_memmon_attach(struct hop_regcache *rc, const struct hop_config *cfg)
{
	rc->max = (size_t)cfg->reg_cache;
	hop_regcache_budget(rc, cfg->reg_cache_bytes);
	if (strcmp(cfg->reg_monitor, "uffd") || !rc->max || !rc->max_bytes)
		return;
	pthread_mutex_lock(&mon.lock);
	if (mon.users && mon.pid != getpid()) {
		/* a child of fork(): the descriptor watches the parent's
		 * address space and no thread reads it here */
		rc->max = 0;
	} else if (mon.users || !mon_open()) {
		mon.users++;
		rc->mon = &uffd_mon;
		rc->mon_seq = atomic_load(&mon.head);
	} else {
		rc->max = 0;
	}
	pthread_mutex_unlock(&mon.lock);
}
