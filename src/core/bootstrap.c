/*
 * bootstrap.c - joining the rendezvous at rank 0 (rank 0's side is in
 * bootstrap_root.c): other ranks connect, retrying every 10-50 ms while
 * rank 0 is not listening yet, say HELLO with the id's secret and the port
 * of their ring listener, and wait for rank 0's verdict, which carries the
 * address of the next rank's ring listener. Rank 0 is the judge: on a timeout it names the missing
 * ranks and sends that reason to everyone connected, so every rank fails
 * with the same message.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bs_int.h"
#include "core_int.h"
#include "wire.h"

int hop_bs_connect(struct hop_bootstrap *bs, const struct sockaddr_in *addr,
		   const char *who, uint64_t deadline, int *out)
{
	char where[32], secs[32];
	int last = ECONNREFUSED, attempts = 0;

	hop_sockaddr_str(addr, where, sizeof(where));
	for (;;) {
		int fd, e = 0;

		if (attempts++ && hop_deadline_passed(deadline)) {
			hop_bs_secs(bs->timeout_ms, secs, sizeof(secs));
			return hop_bs_fail(bs, HOP_ERR_TIMEOUT, "rank %d could not "
					   "connect to %s at %s within %s s "
					   "(%d attempts; last: %s)", bs->rank,
					   who, where, secs, attempts - 1,
					   strerror(last));
		}
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank %d: socket: "
					   "%s", bs->rank, strerror(errno));
		if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
			e = errno;
			if (e == EINPROGRESS) {
				struct pollfd pfd = { .fd = fd, .events = POLLOUT };
				socklen_t elen = sizeof(e);

				if (poll(&pfd, 1, hop_deadline_ms_left(deadline)) <= 0)
					e = ETIMEDOUT;
				else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e,
						    &elen) < 0)
					e = errno;
			}
		}
		if (e == 0) {
			hop_bs_nodelay(fd);
			*out = fd;
			return 0;
		}
		close(fd);
		last = e;
		if (e == EACCES || e == EPERM || e == EAFNOSUPPORT)
			return hop_bs_fail(bs, HOP_ERR_BOOTSTRAP, "rank %d cannot "
					   "connect to %s at %s: %s", bs->rank,
					   who, where, strerror(e));
		/* not listening yet: try again in 10-50 ms */
		int nap = 10 + (int)(hop_now_ns() / 1000 % 41);
		int left = hop_deadline_ms_left(deadline);

		poll(NULL, 0, nap < left ? nap : left);
	}
}

static int peer_open(struct hop_bootstrap *bs, uint64_t deadline)
{
	uint8_t hello[HOP_BS_HELLO_LEN] = { 0 };
	uint8_t ready[HOP_BS_READY_LEN];
	struct sockaddr_in sa;
	socklen_t slen = sizeof(sa);
	char where[32];
	int ret;

	if ((ret = hop_bs_connect(bs, &bs->root_addr, "rank 0", deadline,
				  &bs->fd)))
		return ret;
	if (getsockname(bs->fd, (struct sockaddr *)&sa, &slen) == 0)
		bs->local_addr = sa.sin_addr;
	if ((ret = hop_bs_ring_listen(bs)))
		return ret;
	slen = sizeof(sa);
	if (getsockname(bs->lfd, (struct sockaddr *)&sa, &slen) < 0)
		return hop_bs_fail(bs, HOP_ERR_SYSTEM, "rank %d: getsockname of "
				   "the ring listener: %s", bs->rank,
				   strerror(errno));
	hop_put_be32(hello, HOP_BS_VERSION);
	hop_put_be32(hello + 4, (uint32_t)bs->nranks);
	hop_put_be32(hello + 8, (uint32_t)getpid());
	hop_put_be32(hello + 12, ntohs(sa.sin_port));
	memcpy(hello + 16, bs->secret, HOP_SECRET_BYTES);
	ret = hop_bs_send_counted(bs, bs->fd, HOP_BS_HELLO, (uint32_t)bs->rank,
				  hello, sizeof(hello), deadline, 1);
	if (ret < 0) {
		hop_sockaddr_str(&bs->root_addr, where, sizeof(where));
		return hop_bs_fail(bs, HOP_ERR_BOOTSTRAP, "rank %d: sending "
				   "HELLO to rank 0 at %s: %s", bs->rank, where,
				   strerror(-ret));
	}
	/* rank 0 decides; give its verdict time to arrive */
	if ((ret = hop_bs_peer_recv(bs, HOP_BS_READY, ready, sizeof(ready),
				    deadline + HOP_BS_GRACE_MS * 1000000ull,
				    "rendezvous")))
		return ret;
	bs->right_addr.sin_family = AF_INET;
	memcpy(&bs->right_addr.sin_addr.s_addr, ready, 4);
	memcpy(&bs->right_addr.sin_port, ready + 4, 2);
	return 0;
}

static int open_err(char *err, size_t errlen, int code, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", msg);
	return code;
}

int hop_bootstrap_open(const hop_unique_id_t *id, int rank, int nranks,
		       const struct hop_config *cfg, uint64_t deadline_ns,
		       struct hop_bootstrap **out, char *err, size_t errlen)
{
	struct hop_bootstrap *bs;
	struct hop_id_info info;
	char msg[HOP_MSG_LEN];
	int ret;

	if (!out)
		return open_err(err, errlen, HOP_ERR_INVALID_ARG,
				"hop_bootstrap_open: out is NULL");
	*out = NULL;
	if (nranks < 1 || nranks > 65536 || rank < 0 || rank >= nranks) {
		snprintf(msg, sizeof(msg), "hop_bootstrap_open: rank %d of %d "
			 "ranks is invalid (nranks 1..65536, rank 0..nranks-1)",
			 rank, nranks);
		return open_err(err, errlen, HOP_ERR_INVALID_ARG, msg);
	}
	if ((ret = hop_id_decode_msg(id, &info, msg, sizeof(msg))))
		return open_err(err, errlen, ret, msg);
	if (!(bs = calloc(1, sizeof(*bs))) ||
	    (rank == 0 && !(bs->peers = calloc((size_t)nranks, sizeof(*bs->peers))))) {
		free(bs);
		return open_err(err, errlen, HOP_ERR_NO_MEMORY,
				"hop_bootstrap_open: out of memory");
	}
	bs->rank = rank;
	bs->nranks = nranks;
	bs->fd = bs->lfd = bs->left = bs->right = -1;
	for (int r = 0; rank == 0 && r < nranks; r++)
		bs->peers[r].fd = -1;
	bs->root_addr = info.addr;
	bs->local_addr = info.addr.sin_addr;
	memcpy(bs->secret, info.secret, HOP_SECRET_BYTES);
	bs->timeout_ms = cfg ? cfg->timeout_ms : 60000;

	ret = rank == 0 ? hop_bs_root_open(bs, &info, deadline_ns)
			: peer_open(bs, deadline_ns);
	if (!ret && nranks > 1)
		ret = hop_bs_ring_link(bs, deadline_ns);
	if (ret) {
		open_err(err, errlen, ret, bs->err);
		hop_bootstrap_close(bs);
		return ret;
	}
	bs->seq = 1;
	*out = bs;
	return 0;
}

const char *hop_bootstrap_error(const struct hop_bootstrap *bs)
{
	return bs ? bs->err : "";
}

const uint8_t *hop_bootstrap_secret(const struct hop_bootstrap *bs)
{
	return bs->secret;
}

struct in_addr hop_bootstrap_local_addr(const struct hop_bootstrap *bs)
{
	return bs->local_addr;
}

uint64_t hop_bootstrap_bytes_sent(const struct hop_bootstrap *bs)
{
	return bs ? bs->tx_bytes : 0;
}

void hop_bootstrap_close(struct hop_bootstrap *bs)
{
	if (!bs)
		return;
	HOP_INFO("bootstrap: rank %d of %d sent %llu bytes in %u operations",
		 bs->rank, bs->nranks, (unsigned long long)bs->tx_bytes,
		 (unsigned)bs->seq);
	int fds[] = { bs->fd, bs->lfd, bs->left, bs->right };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (int r = 1; bs->peers && r < bs->nranks; r++)
		if (bs->peers[r].fd >= 0)
			close(bs->peers[r].fd);
	free(bs->peers);
	free(bs);
}
