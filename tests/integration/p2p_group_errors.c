/*
 * p2p_group_errors.c - p2p_group's argument errors and its group that
 * times out (p2p_group.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p_group.h"

#define HAS(s) (strstr(hop_comm_last_error(comm), (s)) != NULL)
void test_errors(void)
{
	uint8_t buf[16] = { 0 };
	hop_request_t *req = NULL, *reqs[2] = { NULL, NULL };
	int idx, done;

	CHECK_RC(hop_send(comm, buf, 1, HOP_ANY_SOURCE, 1), HOP_ERR_INVALID_ARG);
	if (!HAS("peer -1"))
		FAIL("no peer in: %s", hop_comm_last_error(comm));
	CHECK_RC(hop_send(comm, buf, 1, 0, HOP_ANY_TAG), HOP_ERR_INVALID_ARG);
	if (!HAS("tag -1"))
		FAIL("no tag in: %s", hop_comm_last_error(comm));
	CHECK_RC(hop_recv(comm, buf, 1, -2, 1, NULL), HOP_ERR_INVALID_ARG);
	if (!HAS("peer -2") || !HAS("HOP_ANY_SOURCE"))
		FAIL("no peer in: %s", hop_comm_last_error(comm));
	CHECK_RC(hop_irecv(comm, buf, 1, 0, -5, &req), HOP_ERR_INVALID_ARG);
	if (!HAS("tag -5"))
		FAIL("no tag in: %s", hop_comm_last_error(comm));
	/* blocking self transfers that nothing could complete */
	CHECK_RC(hop_recv(comm, buf, 1, rank, 99, NULL), HOP_ERR_INVALID_ARG);
	if (!HAS("this rank"))
		FAIL("self receive: %s", hop_comm_last_error(comm));
	{
		uint8_t *b = xmalloc(100000);

		CHECK_RC(hop_send(comm, b, 100000, rank, 98),
			 HOP_ERR_INVALID_ARG);
		if (!HAS("this rank") || !HAS("100000 B"))
			FAIL("self send: %s", hop_comm_last_error(comm));
		free(b);
	}
	/* on one rank a blocking receive from any source has only this
	 * rank to hear from: refused at once, not left to HOP_TIMEOUT */
	if (size == 1) {
		CHECK_RC(hop_recv(comm, buf, 1, HOP_ANY_SOURCE, 99, NULL),
			 HOP_ERR_INVALID_ARG);
		if (!HAS("HOP_ANY_SOURCE") || !HAS("one rank"))
			FAIL("any-source receive on one rank: %s",
			     hop_comm_last_error(comm));
	}
	/* small blocking self send/recv: copied */
	OK(hop_send(comm, "abc", 3, rank, 97));
	OK(hop_recv(comm, buf, sizeof(buf), rank, 97, NULL));
	if (memcmp(buf, "abc", 3))
		FAIL("self copy");
	/* groups */
	CHECK_RC(hop_group_end(comm), HOP_ERR_INVALID_ARG);
	if (!HAS("no group is open"))
		FAIL("group end: %s", hop_comm_last_error(comm));
	CHECK_RC(hop_group_start(NULL), HOP_ERR_INVALID_HANDLE);
	OK(hop_irecv(comm, buf, 4, rank, 96, &req));
	OK(hop_group_start(comm));
	CHECK_RC(hop_send(comm, NULL, 4, rank, 96), HOP_ERR_INVALID_ARG);
	OK(hop_send(comm, "wxyz", 4, rank, 96));
	CHECK_RC(hop_wait(&req, NULL), HOP_ERR_INVALID_ARG);
	if (!HAS("group is open") || !req)
		FAIL("wait in group: %s", hop_comm_last_error(comm));
	CHECK_RC(hop_waitall(1, &req, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_waitany(1, &req, &idx, NULL), HOP_ERR_INVALID_ARG);
	OK(hop_testany(1, &req, &idx, &done, NULL));
	if (done)
		FAIL("testany completed a receive whose send is queued");
	OK(hop_group_end(comm));
	OK(hop_wait(&req, NULL));
	if (memcmp(buf, "wxyz", 4))
		FAIL("self message of a group into an earlier irecv");
	/* request sets */
	CHECK_RC(hop_waitall(-1, reqs, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_waitall(2, NULL, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_testany(2, reqs, NULL, &done, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_testany(2, reqs, &idx, NULL, NULL), HOP_ERR_INVALID_ARG);
	OK(hop_waitall(2, reqs, NULL));         /* all NULL */
	OK(hop_irecv(comm, buf, 4, rank, 95, &reqs[1]));
	reqs[0] = (hop_request_t *)buf;         /* not a request */
	memset(buf, 0, sizeof(buf));
	CHECK_RC(hop_waitall(2, reqs, NULL), HOP_ERR_INVALID_HANDLE);
	reqs[0] = NULL;
	OK(hop_send(comm, "1234", 4, rank, 95));
	OK(hop_waitall(2, reqs, NULL));
	OK(hop_barrier(comm));
}

void test_timeout(void)
{
	uint8_t b[4];
	hop_status_t st;
	const char *e;

	OK(hop_group_start(comm));
	OK(hop_send(comm, "ab", 2, rank, 5));
	OK(hop_recv(comm, b, sizeof(b), (rank + 1) % size, 404, &st));
	CHECK_RC(hop_group_end(comm), HOP_ERR_TIMEOUT);
	e = hop_comm_last_error(comm);
	if (!strstr(e, "operation 1") || !strstr(e, "404"))
		FAIL("timeout message does not name operation 1: %s", e);
	check_status(&st, (rank + 1) % size, 404, 0, HOP_ERR_TIMEOUT,
		     "timed out");
	if (rank == 0)
		printf("p2p_group: %d ranks on %s: timeout checks passed\n",
		       size, hop_comm_transport(comm));
}
