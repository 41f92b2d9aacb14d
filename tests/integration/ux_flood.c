/*
 * ux_flood.c - messages that arrive before their receive is posted are
 * held within HOP_UNEXPECTED_MAX (ux_flood.sh sets 4M), and a sender that
 * floods a rank past it fails that rank's communicator with
 * HOP_ERR_NO_MEMORY naming the sender, instead of growing without bound.
 *
 *   fits   rank 1 sends 256 eager messages of 8 KiB (2 MiB) and 400
 *          rendezvous requests of 16 KiB (RTS: no payload held; at
 *          8 KiB each they would pass the 4M), all
 *          before rank 0 posts a receive; rank 0 then receives every one
 *          and checks every byte.
 *   flood  rank 1 sends 2048 eager messages of 8 KiB (16 MiB) that rank 0
 *          never receives; rank 0 waits for another tag and must get
 *          HOP_ERR_NO_MEMORY with "rank 1" and HOP_UNEXPECTED_MAX in the
 *          message (not the deadline); rank 1, whose sends then wait for
 *          credits, must learn of it from rank 0's close
 *          (HOP_ERR_PEER_FAILED), not from its own deadline.
 *
 *   unclaimed  rank 1 sends RNDV_LEN bytes (a rendezvous) that rank 0
 *          never receives (after a first message that connects the
 *          two): rank 0 closes its communicator, and rank 1's
 *          send must fail with HOP_ERR_PEER_FAILED naming the close, not
 *          at its deadline (ux_flood.sh keeps HOP_TIMEOUT short).
 *
 * Usage (under hop-run, 2 ranks): ux_flood fits|flood|unclaimed
 * Prints "ux_flood: rank R passed" on success.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hop/hop.h>

#define TEST_NAME "ux_flood"
static hop_comm_t *comm;
static int rank;
#include "rank_check.h"

#define EAGER_LEN 8192
#define RNDV_LEN 16384
#define N_EAGER_FIT 256
#define N_RTS 400
#define N_FLOOD 2048

static unsigned char byte_of(int msg, size_t i)
{
	return (unsigned char)(msg * 131 + i * 7 + 1);
}

static void fill(unsigned char *b, size_t len, int msg)
{
	for (size_t i = 0; i < len; i++)
		b[i] = byte_of(msg, i);
}

static void check(const unsigned char *b, size_t len, int msg)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != byte_of(msg, i))
			FAIL("message %d byte %zu: %u, want %u", msg, i, b[i],
			     byte_of(msg, i));
}

/* Rank 1: @n sends of @len bytes on tags from @tag0, all started at once. */
static hop_request_t **send_all(int n, size_t len, int tag0,
				unsigned char **bufs)
{
	hop_request_t **reqs = calloc((size_t)n, sizeof(*reqs));

	if (!reqs)
		FAIL("out of memory");
	for (int i = 0; i < n; i++) {
		if (!(bufs[i] = malloc(len)))
			FAIL("out of memory");
		fill(bufs[i], len, tag0 + i);
		OK(hop_isend(comm, bufs[i], len, 0, tag0 + i, &reqs[i]));
	}
	return reqs;
}

static void run_fits(void)
{
	int n = N_EAGER_FIT + N_RTS;
	unsigned char **bufs = calloc((size_t)n, sizeof(*bufs)), *in;
	hop_request_t **e, **r;

	if (!bufs || !(in = malloc(RNDV_LEN)))
		FAIL("out of memory");
	if (rank == 1) {
		e = send_all(N_EAGER_FIT, EAGER_LEN, 0, bufs);
		r = send_all(N_RTS, RNDV_LEN, N_EAGER_FIT, bufs + N_EAGER_FIT);
		OK(hop_barrier(comm));
		for (int i = 0; i < N_EAGER_FIT; i++)
			OK(hop_wait(&e[i], NULL));
		for (int i = 0; i < N_RTS; i++)
			OK(hop_wait(&r[i], NULL));
		free(e);
		free(r);
	} else {
		/* rank 1 entered the barrier after starting every send; the
		 * barrier's own progress collects them as unexpected */
		OK(hop_barrier(comm));
		for (int i = 0; i < n; i++) {
			size_t len = i < N_EAGER_FIT ? EAGER_LEN : RNDV_LEN;

			OK(hop_recv(comm, in, len, 1, i, NULL));
			check(in, len, i);
		}
	}
	for (int i = 0; i < n; i++)
		free(bufs[i]);
	free(bufs);
	free(in);
	OK(hop_barrier(comm));
}

static void run_flood(void)
{
	unsigned char **bufs = calloc(N_FLOOD, sizeof(*bufs)), byte;
	hop_request_t **reqs;
	int ret;

	if (!bufs)
		FAIL("out of memory");
	if (rank == 1) {
		/* rank 0 fails and leaves: how these end does not matter */
		reqs = send_all(N_FLOOD, EAGER_LEN, 0, bufs);
		for (int i = 0; i < N_FLOOD; i++)
			hop_wait(&reqs[i], NULL);
		ret = hop_recv(comm, &byte, 1, 0, N_FLOOD, NULL);
		/* its sends waited for credits rank 0 no longer returns:
		 * failed by rank 0's close (the receive then finds the comm
		 * failed), not at the deadline */
		if ((ret != HOP_ERR_PEER_FAILED && ret != HOP_ERR_COMM_FAILED) ||
		    !strstr(hop_comm_last_error(comm),
			    "closed its communicator"))
			FAIL("after the flood: %s, want HOP_ERR_PEER_FAILED "
			     "or HOP_ERR_COMM_FAILED naming rank 0's close",
			     hop_err_name(ret));
		free(reqs);
	} else {
		ret = hop_recv(comm, &byte, 1, 1, N_FLOOD, NULL);
		if (ret != HOP_ERR_NO_MEMORY ||
		    !strstr(hop_comm_last_error(comm), "rank 1") ||
		    !strstr(hop_comm_last_error(comm), "HOP_UNEXPECTED_MAX"))
			FAIL("waiting under a flood: %s, want HOP_ERR_NO_MEMORY "
			     "naming rank 1 and HOP_UNEXPECTED_MAX",
			     hop_err_name(ret));
	}
	for (int i = 0; i < N_FLOOD; i++)
		free(bufs[i]);
	free(bufs);
}

/* Rank 1's rendezvous send is never received: rank 0 closes first. A
 * message from rank 1 that rank 0 takes first connects them, so rank 0
 * closes a link rank 1 holds; with connections made on first use, rank 0
 * could otherwise exit before rank 1 ever reached it, a case of its own
 * (tcp_lazy.sh, shm_lazy.sh). */
static void run_unclaimed(void)
{
	unsigned char *buf = calloc(RNDV_LEN, 1);
	int ret;

	if (!buf)
		FAIL("out of memory");
	if (rank == 1)
		OK(hop_send(comm, NULL, 0, 0, 2));
	else
		OK(hop_recv(comm, NULL, 0, 1, 2, NULL));
	if (rank == 1) {
		ret = hop_send(comm, buf, RNDV_LEN, 0, 1);
		if (ret != HOP_ERR_PEER_FAILED ||
		    !strstr(hop_comm_last_error(comm),
			    "closed its communicator"))
			FAIL("rendezvous send to a rank that closed: %s, want "
			     "HOP_ERR_PEER_FAILED naming its close",
			     hop_err_name(ret));
	}
	free(buf);
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "fits") && strcmp(argv[1], "flood") &&
			  strcmp(argv[1], "unclaimed"))) {
		fprintf(stderr, "usage: ux_flood fits|flood|unclaimed\n");
		return 2;
	}
	rank = -1;
	if (hop_comm_init_env(&comm) != HOP_SUCCESS) {
		fprintf(stderr, "ux_flood: init failed: %s\n",
			hop_last_init_error());
		return 1;
	}
	rank = hop_comm_rank(comm);
	if (hop_comm_size(comm) != 2)
		FAIL("runs on 2 ranks");
	if (!strcmp(argv[1], "fits"))
		run_fits();
	else if (!strcmp(argv[1], "flood"))
		run_flood();
	else
		run_unclaimed();
	printf("ux_flood: rank %d passed\n", rank);
	hop_comm_destroy(comm);
	return 0;
}
