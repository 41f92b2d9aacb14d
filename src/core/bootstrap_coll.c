/*
 * bootstrap_coll.c - the entry of allgather and barrier over the bootstrap
 * star: every rank tells rank 0 which operation it entered (with its
 * allgather block), rank 0 checks each header (type, rank, operation
 * number, length), then releases every rank: a barrier is then done, an
 * allgather's table (every block, gathered by rank 0) goes around the ring
 * (bootstrap_ring.c).
 * Any failure at rank 0 is broadcast as ABORT with its reason, so every
 * rank reports the same cause.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bs_int.h"
#include "core_int.h"
#include "wire.h"

static const char *op_name(uint16_t type)
{
	return type == HOP_BS_GATHER ? "allgather" : "barrier";
}

/* A peer's header is complete: is it the message we wait for? */
static int root_check_hdr(struct hop_bootstrap *bs, int r, uint16_t type,
			  size_t len)
{
	struct hop_bs_peer *p = &bs->peers[r];
	struct hop_bs_hdr h;
	char msg[200];
	int ret;

	if ((ret = hop_bs_hdr_parse(p->hdr, HOP_BS_HDR_LEN, HOP_BS_MAX_MSG, &h,
				    msg, sizeof(msg))))
		return hop_bs_root_abort(bs, ret, "bootstrap %s: from rank %d: "
					 "%s", op_name(type), r, msg);
	if (h.type == HOP_BS_FAIL) /* its ring broke after ours was done */
		return hop_bs_root_failmsg(bs, r, &h);
	if (h.type != type && (h.type == HOP_BS_GATHER || h.type == HOP_BS_BARRIER))
		return hop_bs_root_abort(bs, HOP_ERR_MISMATCH, "rank %d entered "
					 "bootstrap %s while rank 0 is in "
					 "bootstrap %s", r, op_name(h.type),
					 op_name(type));
	if (h.type != type || h.rank != (uint32_t)r)
		return hop_bs_root_abort(bs, HOP_ERR_PROTOCOL, "bootstrap %s: "
					 "rank %d sent %s claiming rank %u",
					 op_name(type), r,
					 hop_bs_type_name(h.type), h.rank);
	if (h.flags != bs->seq)
		return hop_bs_root_abort(bs, HOP_ERR_MISMATCH, "rank %d is at "
					 "bootstrap operation #%u, rank 0 at #%u",
					 r, (unsigned)h.flags, (unsigned)bs->seq);
	if (h.len != len && type == HOP_BS_GATHER)
		return hop_bs_root_abort(bs, HOP_ERR_MISMATCH, "bootstrap "
					 "allgather: rank %d contributed %u "
					 "bytes, rank 0 %zu (every rank must "
					 "pass the same len)", r, h.len, len);
	if (h.len != len)
		return hop_bs_root_abort(bs, HOP_ERR_PROTOCOL, "bootstrap %s: "
					 "rank %d sent %u bytes, not %zu",
					 op_name(type), r, h.len, len);
	return 0;
}

static int root_timeout(struct hop_bootstrap *bs, uint16_t type, size_t len)
{
	uint8_t *missing = calloc((size_t)bs->nranks, 1);
	char list[256], secs[32];
	int n = 0;

	hop_bs_secs(bs->timeout_ms, secs, sizeof(secs));
	if (!missing)
		return hop_bs_root_abort(bs, HOP_ERR_TIMEOUT, "bootstrap %s: "
					 "not every rank took part within %s s",
					 op_name(type), secs);
	for (int r = 1; r < bs->nranks; r++)
		missing[r] = bs->peers[r].got < HOP_BS_HDR_LEN + len;
	hop_bs_rank_list(missing, bs->nranks, list, sizeof(list), &n);
	free(missing);
	return hop_bs_root_abort(bs, HOP_ERR_TIMEOUT, "bootstrap %s: %s %s "
				 "did not take part within %s s", op_name(type),
				 n == 1 ? "rank" : "ranks", list, secs);
}

/* Receive every peer's block into @all, whatever order they come in. */
static int root_collect(struct hop_bootstrap *bs, uint16_t type, uint8_t *all,
			size_t len, uint64_t deadline)
{
	struct epoll_event evs[64];
	int ep = epoll_create1(EPOLL_CLOEXEC), left = bs->nranks - 1, ret = 0;

	if (ep < 0)
		return hop_bs_root_abort(bs, HOP_ERR_SYSTEM, "bootstrap %s: "
					 "epoll_create1: %s", op_name(type),
					 strerror(errno));
	for (int r = 1; r < bs->nranks; r++) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP,
					  .data.u32 = (uint32_t)r };

		bs->peers[r].got = 0;
		epoll_ctl(ep, EPOLL_CTL_ADD, bs->peers[r].fd, &ev);
	}
	while (left > 0 && !ret) {
		int n = epoll_wait(ep, evs, 64, hop_deadline_ms_left(deadline));

		if (n < 0 && errno != EINTR) {
			ret = hop_bs_root_abort(bs, HOP_ERR_SYSTEM, "bootstrap %s: "
						"epoll_wait: %s", op_name(type),
						strerror(errno));
			break;
		}
		if (n <= 0 && hop_deadline_passed(deadline)) {
			ret = root_timeout(bs, type, len);
			break;
		}
		for (int i = 0; i < n && !ret; i++) {
			int r = (int)evs[i].data.u32;
			struct hop_bs_peer *p = &bs->peers[r];
			size_t hdr = HOP_BS_HDR_LEN;
			ssize_t got;

			if (p->got < hdr)
				got = recv(p->fd, p->hdr + p->got, hdr - p->got, 0);
			else
				got = recv(p->fd, all + (size_t)r * len +
					   (p->got - hdr), hdr + len - p->got, 0);
			if (got < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (got <= 0) {
				char who[32];

				hop_sockaddr_str(&p->addr, who, sizeof(who));
				p->tx_broken = 1;
				ret = hop_bs_root_abort(bs, HOP_ERR_BOOTSTRAP,
							"bootstrap %s: rank %d "
							"(%s, pid %u) closed its "
							"connection (%s)",
							op_name(type), r, who,
							p->pid, got ? strerror(errno)
							: "exited or failed?");
				break;
			}
			p->got += (size_t)got;
			if (p->got == hdr && (ret = root_check_hdr(bs, r, type, len)))
				break;
			if (p->got == hdr + len) {
				epoll_ctl(ep, EPOLL_CTL_DEL, p->fd, NULL);
				left--;
			}
		}
	}
	close(ep);
	return ret;
}

static int root_release(struct hop_bootstrap *bs, uint16_t type,
			const uint8_t *all, size_t total, uint64_t deadline)
{
	uint16_t reply = type == HOP_BS_GATHER ? HOP_BS_START : HOP_BS_RELEASE;

	for (int r = 1; r < bs->nranks; r++) {
		struct hop_bs_peer *p = &bs->peers[r];
		uint64_t before = bs->tx_bytes;
		int e = hop_bs_send_counted(bs, p->fd, reply, 0, all, total,
					    deadline, 0);

		if (e) {
			char who[32];

			p->tx_broken = bs->tx_bytes > before;
			hop_sockaddr_str(&p->addr, who, sizeof(who));
			return hop_bs_root_abort(bs, e == -ETIMEDOUT ?
						 HOP_ERR_TIMEOUT : HOP_ERR_BOOTSTRAP,
						 "bootstrap %s: sending %zu bytes "
						 "to rank %d (%s): %s", op_name(type),
						 total, r, who, strerror(-e));
		}
	}
	return 0;
}

/* Rank 0: wait for every rank to enter @type (with its @len-byte block,
 * into @all), then release them all. */
static int root_enter(struct hop_bootstrap *bs, uint16_t type, uint8_t *all,
		      size_t len, uint64_t deadline)
{
	int ret = root_collect(bs, type, all, len, deadline);

	return ret ? ret : root_release(bs, type, NULL, 0, deadline);
}

/* Other ranks: tell rank 0 we entered @type, wait until it releases us. */
static int peer_enter(struct hop_bootstrap *bs, uint16_t type,
		      const uint8_t *ann, size_t alen, uint64_t late)
{
	uint16_t reply = type == HOP_BS_GATHER ? HOP_BS_START : HOP_BS_RELEASE;
	char root[32];
	int ret = hop_bs_send_counted(bs, bs->fd, type, (uint32_t)bs->rank, ann,
				      alen, late, 1);

	if (ret < 0) {
		hop_sockaddr_str(&bs->root_addr, root, sizeof(root));
		return hop_bs_fail(bs, ret == -ETIMEDOUT ? HOP_ERR_TIMEOUT
				   : HOP_ERR_BOOTSTRAP, "rank %d: bootstrap %s: "
				   "sending to rank 0 (%s): %s", bs->rank,
				   op_name(type), root, strerror(-ret));
	}
	/* ret == 1: rank 0 spoke before taking all our data: ABORT */
	int early = ret == 1;

	ret = hop_bs_peer_recv(bs, reply, NULL, 0, late,
			       type == HOP_BS_GATHER ? "bootstrap allgather"
			       : "bootstrap barrier");
	if (!ret && early)
		ret = hop_bs_fail(bs, HOP_ERR_PROTOCOL, "rank %d: bootstrap %s: "
				  "rank 0 replied before receiving our data",
				  bs->rank, op_name(type));
	return ret;
}

static int bs_enter(struct hop_bootstrap *bs, uint16_t type, uint8_t *all,
		    size_t len, uint64_t deadline)
{
	if (bs->nranks == 1)
		return 0;
	if (bs->rank)   /* rank 0 is the judge of deadlines: wait a bit past ours */
		return peer_enter(bs, type, len ? all + (size_t)bs->rank * len
					  : NULL, len,
				  deadline + HOP_BS_GRACE_MS * 1000000ull);
	return root_enter(bs, type, all, len, deadline);
}

static int bs_gather(struct hop_bootstrap *bs, uint16_t type, const void *mine,
		     void *all, size_t len, uint64_t deadline)
{
	int ret;

	if (!bs)
		return HOP_ERR_INVALID_ARG;
	if (bs->failed)
		return bs->failed;
	if (len && (!mine || !all)) {
		snprintf(bs->err, sizeof(bs->err), "hop_bootstrap_allgather: "
			 "%s is NULL with len %zu", mine ? "all" : "mine", len);
		return HOP_ERR_INVALID_ARG;
	}
	if (len > HOP_BS_MAX_MSG / (size_t)bs->nranks) {
		snprintf(bs->err, sizeof(bs->err), "hop_bootstrap_allgather: "
			 "%zu bytes x %d ranks exceeds the bootstrap limit of "
			 "%u bytes", len, bs->nranks, HOP_BS_MAX_MSG);
		return HOP_ERR_INVALID_ARG;
	}
	if (len)
		memmove((uint8_t *)all + (size_t)bs->rank * len, mine, len);
	ret = bs_enter(bs, type, all, len, deadline);
	if (!ret && type == HOP_BS_GATHER && bs->nranks > 1)
		ret = hop_bs_ring_bcast(bs, all, len * (size_t)bs->nranks,
					deadline);
	if (!ret)
		bs->seq++;
	return ret;
}

int hop_bootstrap_allgather(struct hop_bootstrap *bs, const void *mine,
			    void *all, size_t len, uint64_t deadline_ns)
{
	return bs_gather(bs, HOP_BS_GATHER, mine, all, len, deadline_ns);
}

int hop_bootstrap_barrier(struct hop_bootstrap *bs, uint64_t deadline_ns)
{
	return bs_gather(bs, HOP_BS_BARRIER, NULL, NULL, 0, deadline_ns);
}
