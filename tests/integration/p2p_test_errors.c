/*
 * p2p_test_errors.c - p2p_test's "errors" part: each bad argument returns
 * its specific code and a message naming the problem; truncation on both
 * ends (eager and rendezvous) writes nothing; put out of bounds; the
 * communicator stays usable afterwards.
 */
#include <string.h>

#include "p2p_test.h"

/* Bad arguments: each call returns its code and names the problem. */
void test_errors(void)
{
	int peer = (rank + 1) % size, from = (rank - 1 + size) % size;
	uint8_t buf[64], *big1 = xmalloc(1000000);
	hop_request_t *req = NULL;
	hop_rkey_t key;
	hop_mr_t *mr;
	int done;

	CHECK_RC(hop_send(comm, NULL, 10, peer, 1), HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), "NULL"))
		FAIL("message does not name the NULL buffer");
	CHECK_RC(hop_send(comm, buf, 1, size + 5, 1), HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), "out of range"))
		FAIL("message does not say out of range");
	CHECK_RC(hop_send(comm, buf, 1, -1, 1), HOP_ERR_INVALID_ARG);
	/* to self beyond the eager size with no receive posted: nothing
	 * could ever take it */
	CHECK_RC(hop_send(comm, big1, 1000000, rank, 1), HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), "this rank"))
		FAIL("message does not say self");
	CHECK_RC(hop_send(comm, buf, 1, peer, -3), HOP_ERR_INVALID_ARG);
	if (!strstr(hop_comm_last_error(comm), "tag -3"))
		FAIL("message does not name the tag");
	CHECK_RC(hop_recv(comm, NULL, 5, peer, 1, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_isend(comm, buf, 1, peer, 1, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_irecv(comm, buf, 1, size, 1, &req), HOP_ERR_INVALID_ARG);
	if (req)
		FAIL("failed hop_irecv left a request");
	CHECK_RC(hop_wait(&req, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_test(&req, &done, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_send(NULL, buf, 1, peer, 1), HOP_ERR_INVALID_HANDLE);
	CHECK_RC(hop_mem_register(comm, NULL, 10, HOP_ACCESS_REMOTE_WRITE, &mr),
		 HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_mem_register(comm, buf, 10, 0x80, &mr),
		 HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_wait_imm(comm, 0, NULL, NULL, NULL), HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_wait_imm(comm, size, (uint32_t *)buf, NULL, NULL),
		 HOP_ERR_INVALID_ARG);
	CHECK_RC(hop_mr_rkey(NULL, &key), HOP_ERR_INVALID_ARG);

	/* put out of bounds, NULL key, region without remote write */
	OK(hop_mem_register(comm, buf, sizeof(buf), HOP_ACCESS_REMOTE_WRITE,
			    &mr));
	OK(hop_mr_rkey(mr, &key));
	CHECK_RC(hop_put(comm, NULL, buf, 65, &key, 0, 1),
		 HOP_ERR_OUT_OF_BOUNDS);
	CHECK_RC(hop_put(comm, NULL, buf, 8, &key, 60, 1),
		 HOP_ERR_OUT_OF_BOUNDS);
	if (!strstr(hop_comm_last_error(comm), "exceeds"))
		FAIL("out-of-bounds message unclear");
	CHECK_RC(hop_put(comm, NULL, buf, 1, NULL, 0, 1), HOP_ERR_INVALID_ARG);
	key.owner = (uint32_t)size;
	CHECK_RC(hop_put(comm, NULL, buf, 1, &key, 0, 1), HOP_ERR_INVALID_ARG);
	key.owner = (uint32_t)rank;
	key.access = 0;         /* no remote write: outside what is allowed */
	CHECK_RC(hop_put(comm, NULL, buf, 1, &key, 0, 1),
		 HOP_ERR_OUT_OF_BOUNDS);
	OK(hop_mem_deregister(comm, mr));
	CHECK_RC(hop_mem_deregister(comm, mr), HOP_ERR_INVALID_HANDLE);

	/* truncation: eager (receiver only learns) and rendezvous (both) */
	memset(buf, 0x11, sizeof(buf));
	if (rank == 0) {
		/* 40 B is eager under any HOP_EAGER_SIZE (>= 64) */
		fill(big1, 0, 1, 40, 0);
		OK(hop_send(comm, big1, 40, 1, 400));   /* eager: completes */
		CHECK_RC(hop_send(comm, big1, 1000000, 1, 401),
			 HOP_ERR_TRUNCATED);
		if (!strstr(hop_comm_last_error(comm), "does not fit"))
			FAIL("sender's truncation message unclear");
	} else if (rank == 1) {
		hop_status_t st;

		CHECK_RC(hop_recv(comm, buf, 20, 0, 400, &st),
			 HOP_ERR_TRUNCATED);
		for (size_t i = 0; i < sizeof(buf); i++)
			if (buf[i] != 0x11)
				FAIL("truncated receive wrote byte %zu", i);
		if (!strstr(hop_comm_last_error(comm), "40 B"))
			FAIL("receiver's truncation message unclear: %s",
			     hop_comm_last_error(comm));
		CHECK_RC(hop_recv(comm, buf, 50, 0, 401, NULL),
			 HOP_ERR_TRUNCATED);
		for (size_t i = 0; i < sizeof(buf); i++)
			if (buf[i] != 0x11)
				FAIL("truncated rendezvous wrote byte %zu", i);
	}
	/* the communicator still works after all that */
	fill(big1, rank, peer, 1000000, 5);
	OK(hop_irecv(comm, big1 + 0, 0, from, 402, &req));
	OK(hop_send(comm, NULL, 0, peer, 402));
	OK(hop_wait(&req, NULL));
	free(big1);
}
