/*
 * comm_error.c - the error state of a communicator (core.h) and the
 * thread-local message of a failed init (hop_last_init_error()).
 *
 * Failure is recorded once: the first hop_comm_fail() claims comm->failed
 * with a compare-and-swap (0 -> FAIL_WRITING), writes fail_msg, then
 * publishes its code with a release store. Readers that acquire a negative
 * code see the complete message. hop_comm_abort() may race with the owner
 * thread; only fail_msg and the atomics are touched from other threads,
 * last_error belongs to the owner thread.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "core.h"
#include "core_int.h"

#define FAIL_WRITING 1  /* failed: a cause is being recorded */


static _Thread_local char init_error[HOP_MSG_LEN];

int hop_set_error(struct hop_comm *comm, int code, const char *fmt, ...)
{
	char msg[HOP_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (comm)
		memcpy(comm->last_error, msg, sizeof(msg));
	HOP_INFO("%s (%s)", msg, hop_err_name(code));
	return code;
}

static int comm_fail_v(struct hop_comm *comm, int code, int set_last,
		       const char *fmt, va_list ap)
{
	char msg[HOP_MSG_LEN];
	int expected = 0;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (!comm) {
		HOP_WARN("%s", msg);
		return code;
	}
	if (code >= 0) /* a failure always carries an error code */
		code = HOP_ERR_INTERNAL;
	if (atomic_compare_exchange_strong(&comm->failed, &expected,
					   FAIL_WRITING)) {
		memcpy(comm->fail_msg, msg, sizeof(msg));
		atomic_store_explicit(&comm->failed, code, memory_order_release);
		HOP_WARN("communicator failed: %s", msg);
		if (comm->on_fail)
			comm->on_fail(comm, code);
	} else {
		/* first cause kept; later ones only at info */
		HOP_INFO("after failure: %s", msg);
	}
	if (set_last)
		memcpy(comm->last_error, msg, sizeof(msg));
	return code;
}

int hop_comm_fail(struct hop_comm *comm, int code, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = comm_fail_v(comm, code, 1, fmt, ap);
	va_end(ap);
	return ret;
}

int hop_comm_fail_async(struct hop_comm *comm, int code, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = comm_fail_v(comm, code, 0, fmt, ap);
	va_end(ap);
	return ret;
}

int hop_comm_inherit_failure(struct hop_comm *comm)
{
	struct hop_comm *root = comm->root;
	int f;

	if (!hop_comm_derived(comm) ||
	    (f = atomic_load_explicit(&root->failed, memory_order_acquire)) >= 0)
		return 0;
	return hop_comm_fail_async(comm, f, "rank %d: the communicator whose "
				   "endpoints this one shares (split, dup) "
				   "failed: %.*s", root->rank,
				   HOP_MSG_LEN - 128, root->fail_msg);
}

int hop_comm_derived_refuse(struct hop_comm *comm, const char *fn)
{
	return hop_set_error(comm, HOP_ERR_NOT_SUPPORTED, "%s on rank %d: not "
			     "supported on a communicator made by "
			     "hop_comm_split() or hop_comm_dup(); use the one "
			     "made by init", fn, comm->rank);
}

int hop_comm_check_failed(struct hop_comm *comm)
{
	int failed;

	hop_comm_inherit_failure(comm);
	/* hop_comm_abort() records itself as the failure (first cause
	 * kept): the call that was waiting returns ABORTED from its wait
	 * loop, every later call COMM_FAILED (comm.h) */
	failed = atomic_load_explicit(&comm->failed, memory_order_acquire);
	if (failed == 0)
		return 0;
	if (failed == FAIL_WRITING)
		snprintf(comm->last_error, sizeof(comm->last_error),
			 "rank %d: communicator has failed", comm->rank);
	else
		snprintf(comm->last_error, sizeof(comm->last_error),
			 "rank %d: communicator has failed: %.*s", comm->rank,
			 HOP_MSG_LEN - 64, comm->fail_msg);
	return HOP_ERR_COMM_FAILED;
}

int hop_comm_check(struct hop_comm *comm)
{
	if (!comm)
		return hop_comm_refuse(comm, HOP_ERR_INVALID_HANDLE, "comm is "
				       "NULL");
	if (!hop_comm_live(comm))
		return hop_comm_refuse(comm, HOP_ERR_INVALID_HANDLE, "comm %p "
				       "is not a live communicator "
				       "(destroyed)", (void *)comm);
	hop_comm_refusal_clear(comm);
	return hop_comm_check_failed(comm);
}

const char *hop_comm_last_error(const hop_comm_t *comm)
{
	const char *refusal = hop_comm_refusal(comm);

	if (!comm)
		return "hop_comm_last_error: comm is NULL";
	if (refusal)
		return refusal;
	if (!hop_comm_live(comm))
		return "hop_comm_last_error: comm is not a live communicator "
		       "(destroyed)";
	if (!comm->last_error[0] &&
	    atomic_load_explicit(&((struct hop_comm *)comm)->failed,
				 memory_order_acquire) < 0)
		return comm->fail_msg;
	return comm->last_error;
}

void hop_set_init_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(init_error, sizeof(init_error), fmt, ap);
	va_end(ap);
	HOP_WARN("%s", init_error);
}

void hop_clear_init_error(void)
{
	init_error[0] = '\0';
}

const char *hop_last_init_error(void)
{
	return init_error;
}
