/*
 * dead_peer_send.c - a 4 KiB hop_send() to a peer that exited without
 * destroying its communicator must fail with HOP_ERR_PEER_FAILED naming
 * that peer, at the latest on the next call. Run by
 * dead_peer_send.sh through hop-run with 2 ranks on shm and tcp.
 *
 * Rank 1 exits once it has received rank 0's last message (so nothing
 * is owed to it); rank 0 waits until the kernel says it is gone (a
 * pidfd), lets one liveness tick pass (docs/providers.md), then sends
 * twice.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <hop/hop.h>

static void check(hop_comm_t *comm, const char *what, int ret)
{
	if (ret) {
		fprintf(stderr, "dead_peer_send: %s: %s: %s\n", what,
			hop_err_name(ret), comm ? hop_comm_last_error(comm)
						: hop_last_init_error());
		exit(1);
	}
}

/* 0 once @pid has exited (within @ms), -1 if it has not. */
static int wait_dead(pid_t pid, int ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	int ret;

	if (fd < 0)
		return errno == ESRCH ? 0 : -1;
	ret = poll(&pf, 1, ms);
	close(fd);
	return ret == 1 ? 0 : -1;
}

int main(void)
{
	static char buf[4096];
	hop_comm_t *comm = NULL;
	int32_t pids[2], me = (int32_t)getpid();
	int rank, r1, r2;

	check(comm, "hop_comm_init_env", hop_comm_init_env(&comm));
	rank = hop_comm_rank(comm);
	if (hop_comm_size(comm) != 2) {
		fprintf(stderr, "dead_peer_send: needs 2 ranks\n");
		return 2;
	}
	check(comm, "hop_allgather",
	      hop_allgather(comm, &me, pids, 1, HOP_INT32));
	if (rank == 1) {
		check(comm, "hop_recv", hop_recv(comm, buf, 1, 0, 1, NULL));
		_exit(0); /* no hop_comm_destroy(): the peer just goes */
	}
	check(comm, "hop_send", hop_send(comm, buf, 1, 1, 1));
	if (wait_dead((pid_t)pids[1], 10000)) {
		fprintf(stderr, "dead_peer_send: rank 1 did not exit\n");
		return 1;
	}
	usleep(20000);
	memset(buf, 0x5a, sizeof(buf));
	r1 = hop_send(comm, buf, sizeof(buf), 1, 7);
	r2 = hop_send(comm, buf, sizeof(buf), 1, 8);
	printf("dead_peer_send: sends to the dead rank: %s, %s: %s\n",
	       hop_err_name(r1), hop_err_name(r2), hop_comm_last_error(comm));
	if (r1 != HOP_ERR_PEER_FAILED && r2 != HOP_ERR_PEER_FAILED) {
		fprintf(stderr, "dead_peer_send: FAIL: sends to a dead peer "
			"succeeded\n");
		return 1;
	}
	if (!strstr(hop_comm_last_error(comm), "rank 1")) {
		fprintf(stderr, "dead_peer_send: FAIL: the error does not "
			"name rank 1\n");
		return 1;
	}
	hop_comm_destroy(comm);
	printf("dead_peer_send: rank 0 passed\n");
	return 0;
}
