/*
 * comm_handle.c - communicator handles that stay safe to look at after
 * hop_comm_destroy(), and the one-thread-at-a-time claim of a
 * communicator (hop/comm.h).
 *
 * The memory of a struct hop_comm is never given back to the allocator:
 * a destroyed communicator keeps its storage, with magic cleared, so every
 * public call can read the magic of a stale handle and refuse it instead
 * of reading freed memory. Reusing that storage at once would turn a stale
 * handle into the next communicator (the allocator hands freed memory
 * straight back), so a destroyed one waits in a FIFO quarantine and is
 * reused only once QUARANTINE others were destroyed after it. Memory
 * stays bounded: the largest number ever alive plus QUARANTINE, and is
 * given back when the library is unloaded.
 *
 * A call claims the communicator by swapping its name into comm->busy;
 * another thread that finds a name there is refused with both names
 * instead of running the progress engine concurrently. Refusals cannot
 * write comm->last_error, which the owning thread may be writing, so
 * their message is thread-local and hop_comm_last_error() returns it to
 * the thread that was refused.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

#define QUARANTINE 16

static pthread_mutex_t shells_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hop_comm *dead_head, *dead_tail;  /* FIFO, oldest first */
static int ndead;

/* This thread's last refusal and the handle it was about. */
static _Thread_local const struct hop_comm *refused_comm;
static _Thread_local char refused_msg[HOP_MSG_LEN];

struct hop_comm *hop_comm_alloc(void)
{
	struct hop_comm *comm = NULL;

	pthread_mutex_lock(&shells_lock);
	if (ndead > QUARANTINE) {
		comm = dead_head;
		dead_head = comm->next_dead;
		if (!dead_head)
			dead_tail = NULL;
		ndead--;
	}
	pthread_mutex_unlock(&shells_lock);
	if (comm)
		memset(comm, 0, sizeof(*comm));
	else if (!(comm = calloc(1, sizeof(*comm))))
		return NULL;
	atomic_init(&comm->busy, NULL);
	atomic_init(&comm->magic, HOP_COMM_MAGIC);
	return comm;
}

void hop_comm_release(struct hop_comm *comm)
{
	atomic_store(&comm->magic, 0);
	atomic_store(&comm->busy, NULL);
	comm->next_dead = NULL;
	pthread_mutex_lock(&shells_lock);
	if (dead_tail)
		dead_tail->next_dead = comm;
	else
		dead_head = comm;
	dead_tail = comm;
	ndead++;
	pthread_mutex_unlock(&shells_lock);
}

/* When libhop is unloaded (dlclose of a plugin linking it, or exit) no
 * handle can be used again: give the quarantined storage back. */
__attribute__((destructor)) static void comm_shells_free(void)
{
	pthread_mutex_lock(&shells_lock);
	while (dead_head) {
		struct hop_comm *c = dead_head;

		dead_head = c->next_dead;
		free(c);
	}
	dead_tail = NULL;
	ndead = 0;
	pthread_mutex_unlock(&shells_lock);
}

int hop_comm_live(const struct hop_comm *comm)
{
	return comm && atomic_load_explicit(&((struct hop_comm *)comm)->magic,
					    memory_order_acquire) ==
			       HOP_COMM_MAGIC;
}

int hop_comm_refuse(const struct hop_comm *comm, int code, const char *fmt,
		    ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(refused_msg, sizeof(refused_msg), fmt, ap);
	va_end(ap);
	refused_comm = comm;
	HOP_INFO("%s (%s)", refused_msg, hop_err_name(code));
	return code;
}

const char *hop_comm_refusal(const struct hop_comm *comm)
{
	return comm && refused_comm == comm ? refused_msg : NULL;
}

void hop_comm_refusal_clear(const struct hop_comm *comm)
{
	if (refused_comm == comm)
		refused_comm = NULL;
}

int hop_comm_claim(struct hop_comm *comm, const char *fn)
{
	const char *none = NULL;

	if (!comm)
		return hop_comm_refuse(comm, HOP_ERR_INVALID_HANDLE, "%s: comm "
				       "is NULL", fn);
	if (!hop_comm_live(comm))
		return hop_comm_refuse(comm, HOP_ERR_INVALID_HANDLE, "%s: comm "
				       "%p is not a live communicator "
				       "(destroyed)", fn, (void *)comm);
	if (!atomic_compare_exchange_strong(&comm->busy, &none, fn))
		return hop_comm_refuse(comm, HOP_ERR_INVALID_ARG, "%s on rank "
				       "%d: %s is running on this communicator "
				       "in another thread (a communicator is "
				       "used by one thread at a time)", fn,
				       comm->rank, none);
	/* a destroy that claimed it first has released it since */
	if (!hop_comm_live(comm)) {
		atomic_store(&comm->busy, NULL);
		return hop_comm_refuse(comm, HOP_ERR_INVALID_HANDLE, "%s: comm "
				       "%p was destroyed", fn, (void *)comm);
	}
	/* communicators sharing endpoints share the progress engine: one
	 * thread at a time in all of them (the root's claim stands for it) */
	if (hop_comm_derived(comm) &&
	    !atomic_compare_exchange_strong(&comm->root->busy, &none, fn)) {
		atomic_store(&comm->busy, NULL);
		return hop_comm_refuse(comm, HOP_ERR_INVALID_ARG, "%s on rank "
				       "%d: %s is running in another thread on "
				       "a communicator this one shares "
				       "endpoints with (split, dup)", fn,
				       comm->rank, none);
	}
	hop_comm_refusal_clear(comm);
	return 0;
}

int hop_comm_enter(struct hop_comm *comm, const char *fn)
{
	int ret;

	if ((ret = hop_comm_claim(comm, fn)))
		return ret;
	/* the claim checked the handle and cleared an old refusal */
	if ((ret = hop_comm_check_failed(comm)))
		hop_comm_leave(comm);
	return ret;
}

void hop_comm_leave(struct hop_comm *comm)
{
	if (hop_comm_derived(comm))
		atomic_store_explicit(&comm->root->busy, NULL,
				      memory_order_release);
	atomic_store_explicit(&comm->busy, NULL, memory_order_release);
}
