/*
 * net_drain.c - progress for comms NCCL is not calling.
 *
 * hop moves data only inside hop calls: a small send counts as complete
 * once it is posted, yet the provider may still hold it in its send queue
 * (socket buffer or shared-memory ring full) until the next call pushes it
 * on. NCCL stops calling into a comm once its requests are complete, so
 * the last messages of a burst could wait forever and the peer with them.
 * One thread per process (running while any comm is open) therefore polls
 * every comm through a receive that never matches (tag HN_IDLE_TAG): every
 * millisecond for comms NCCL used within the last second, every 20 ms for
 * the others. A comm's mutex keeps it to one thread at a time, as hop
 * requires; the drainer only try-locks, so NCCL's calls never wait on it.
 */
#include <time.h>

#include "net_hop.h"

#define DRAIN_TICK_NS 1000000ull       /* 1 ms between sweeps */
#define DRAIN_RECENT_NS 1000000000ull  /* "recently used": 1 s */
#define DRAIN_IDLE_NS 20000000ull      /* others: every 20 ms */

static struct hn_comm *live;
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t drainer;
static int running;
static atomic_int stop;

uint64_t hn_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Progress @c once; the caller holds c->lock. */
static void drain_one(struct hn_comm *c, uint64_t now)
{
	int done = 0, ret;

	c->polled_ns = now;
	ret = hop_test(&c->idle, &done, NULL);
	if (ret || done) { /* a failed comm: its owner sees it on next use */
		if (c->idle)
			HN_INFO("drain: stopped polling a failed comm");
		c->idle = NULL;
	}
}

static void *drain_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		struct timespec tick = { 0, (long)DRAIN_TICK_NS };
		uint64_t now = hn_now_ns();

		pthread_mutex_lock(&live_lock);
		for (struct hn_comm *c = live; c; c = c->next_live) {
			if (pthread_mutex_trylock(&c->lock))
				continue; /* NCCL's thread is in it */
			if (c->idle &&
			    (now - c->active_ns < DRAIN_RECENT_NS ||
			     now - c->polled_ns >= DRAIN_IDLE_NS))
				drain_one(c, now);
			pthread_mutex_unlock(&c->lock);
		}
		pthread_mutex_unlock(&live_lock);
		nanosleep(&tick, NULL);
	}
	return NULL;
}

int hn_drain_add(struct hn_comm *c)
{
	int e = 0;

	pthread_mutex_lock(&live_lock);
	if (!running) {
		atomic_store(&stop, 0);
		if ((e = pthread_create(&drainer, NULL, drain_main, NULL)))
			HN_WARN("progress thread: pthread_create failed (%d)", e);
		running = !e;
	}
	if (!e) {
		c->next_live = live;
		live = c;
	}
	pthread_mutex_unlock(&live_lock);
	return e;
}

/* Stop the drainer when no comm is left (or at unload, @force). */
static void drain_stop_if(int force)
{
	pthread_t t;
	int join = 0;

	pthread_mutex_lock(&live_lock);
	if (running && (force || !live)) {
		t = drainer;
		atomic_store(&stop, 1);
		running = 0;
		join = 1;
	}
	pthread_mutex_unlock(&live_lock);
	if (join)
		pthread_join(t, NULL);
}

void hn_drain_remove(struct hn_comm *c)
{
	struct hn_comm **pp;

	/* once we hold live_lock, no sweep is inside @c */
	pthread_mutex_lock(&live_lock);
	for (pp = &live; *pp; pp = &(*pp)->next_live) {
		if (*pp == c) {
			*pp = c->next_live;
			break;
		}
	}
	pthread_mutex_unlock(&live_lock);
	drain_stop_if(0);
}

void hn_drain_fini(void)
{
	drain_stop_if(1);
}
