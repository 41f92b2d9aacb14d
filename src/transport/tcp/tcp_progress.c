/*
 * tcp_progress.c - the tcp provider's progress: everything happens inside
 * poll(), never blocking.
 *
 * Send: per peer, one sendmsg gathers the queued headers and payloads
 * (a large write goes out as header + payload in one call; the kernel
 * takes what fits). Receive: headers and small payloads come through a
 * per-peer staging buffer (one recv picks up many small messages); a large
 * payload is received straight into the target region. Every poll moves
 * both directions on every peer, so two ranks streaming large writes at
 * each other cannot deadlock on full socket buffers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/copy.h"
#include "transport/tcp/tcp.h"

static int tcp_rx_progress(struct hop_prov *prov, struct tcp_peer *p);

int tcp_tx_progress(struct hop_prov *prov, struct tcp_peer *p)
{
	struct iovec iov[TCP_IOV_MAX];

	while (p->sq_count && p->fd >= 0) { /* lazy: may not be connected */
		struct msghdr msg = { .msg_iov = iov };
		size_t total = 0;
		uint32_t i;
		ssize_t n;
		int niov = 0;

		for (i = 0; i < p->sq_count && niov + 2 <= TCP_IOV_MAX; i++) {
			struct tcp_sqe *e =
				&p->sq[(p->sq_head + i) % TCP_SQ_DEPTH];

			if (e->off < TCP_HDR_LEN) {
				iov[niov].iov_base = e->hdr + e->off;
				iov[niov++].iov_len = TCP_HDR_LEN - e->off;
				total += TCP_HDR_LEN - e->off;
				if (e->len) {
					iov[niov].iov_base = (void *)e->payload;
					iov[niov++].iov_len = e->len;
					total += e->len;
				}
			} else {
				size_t done = e->off - TCP_HDR_LEN;

				iov[niov].iov_base =
					(void *)(e->payload + done);
				iov[niov++].iov_len = e->len - done;
				total += e->len - done;
			}
		}
		msg.msg_iovlen = (size_t)niov;
		n = sendmsg(p->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			if (p->bye) {
				/* it said goodbye first: what is left here
				 * was only for a live peer (credit returns) */
				tcp_peer_forget(prov, p);
				return 0;
			}
			/* a peer that refused our data said why before it
			 * closed: report its REJECT rather than the reset */
			int e = errno, r = tcp_rx_progress(prov, p);

			if (r < 0 || p->fd < 0) /* REJECT, EOF or its BYE */
				return r;
			return tcp_peer_fail(prov, p, HOP_ERR_PEER_FAILED,
					     "tcp: rank %d: connection lost "
					     "while sending (%s)",
					     p->rank, strerror(e));
		}
		/* retire what was fully sent */
		size_t left = (size_t)n;

		p->sq_bytes -= (size_t)n;

		while (left && p->sq_count) {
			struct tcp_sqe *e = &p->sq[p->sq_head];
			size_t rest = TCP_HDR_LEN + e->len - e->off;

			if (left < rest) {
				e->off += left;
				break;
			}
			left -= rest;
			if (e->signaled) {
				struct hop_cqe *c = hop_cqring_push(&prov->cq);

				if (!c)
					return prov->ctx->fail_comm(prov->ctx,
						HOP_ERR_NO_MEMORY,
						"tcp: out of memory");
				c->op = e->op;
				c->peer = p->rank;
				c->wr_id = e->wr_id;
			}
			p->sq_head = (p->sq_head + 1) % TCP_SQ_DEPTH;
			if (--p->sq_count == 0)
				prov->sq_busy--;
		}
		if ((size_t)n < total)
			return 0; /* socket buffer full */
	}
	return 0;
}

/* A message (header + payload) has fully arrived. */
static int tcp_rx_complete(struct hop_prov *prov, struct tcp_peer *p)
{
	struct hop_cqe *c;

	p->rx_state = TCP_RX_HDR;
	if (p->cur.op == TCP_OP_WRITE && !(p->cur.flags & TCP_F_IMM))
		return 0;
	if (!(c = hop_cqring_push(&prov->cq)))
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
				     "tcp: out of memory");
	if (p->cur.op == TCP_OP_WRITE) {
		c->op = HOP_CQE_RECV_IMM;
		c->imm = p->cur.imm;
	} else {
		c->op = HOP_CQE_RECV;
		hop_copy(c->data, p->msg.data, (size_t)p->cur.len);
	}
	c->peer = p->rank;
	c->len = p->cur.len > UINT32_MAX ? UINT32_MAX : (uint32_t)p->cur.len;
	return 0;
}

/* Decode the header at the front of the staging buffer. */
static int tcp_rx_header(struct hop_prov *prov, struct tcp_peer *p)
{
	char why[200];

	if (tcp_hdr_parse(p->rx + p->rx_head, p->rx_tail - p->rx_head, &p->cur,
			  why, sizeof(why)))
		return tcp_peer_reject(prov, p, HOP_ERR_PROTOCOL,
				       "tcp: rank %d sent a malformed header: "
				       "%s", p->rank, why);
	p->rx_head += TCP_HDR_LEN;
	switch (p->cur.op) {
	case TCP_OP_WRITE:
		if (p->cur.len &&
		    hop_mrtab_check(prov->mrs.tab, p->cur.rkey, p->cur.raddr,
				    p->cur.len, HOP_PROV_REMOTE_WRITE, why,
				    sizeof(why)))
			return tcp_peer_reject(prov, p, HOP_ERR_OUT_OF_BOUNDS,
					       "tcp: write of %llu bytes from "
					       "rank %d rejected: %s",
					       (unsigned long long)p->cur.len,
					       p->rank, why);
		p->dst = (uint8_t *)(uintptr_t)p->cur.raddr;
		break;
	case TCP_OP_SEND:
		p->dst = p->msg.data;
		break;
	case TCP_OP_BYE:
		p->bye = 1;
		p->rx_state = TCP_RX_HDR;
		return 0;
	case TCP_OP_REJECT: {
		int code = -(int)p->cur.imm;

		return tcp_peer_fail(prov, p, code,
				     "tcp: rank %d rejected data from this "
				     "rank (error %d) and closed the "
				     "connection; its log names the cause",
				     p->rank, code);
	}
	}
	p->left = p->cur.len;
	if (p->left == 0)
		return tcp_rx_complete(prov, p);
	p->rx_state = TCP_RX_PAYLOAD;
	return 0;
}

static int tcp_rx_eof(struct hop_prov *prov, struct tcp_peer *p, int err)
{
	if (p->bye || prov->closing) {
		/* orderly: the peer closed its communicator */
		tcp_peer_forget(prov, p);
		return 0;
	}
	if (err)
		return tcp_peer_fail(prov, p, HOP_ERR_PEER_FAILED,
				     "tcp: rank %d: connection lost (%s)",
				     p->rank, strerror(err));
	return tcp_peer_fail(prov, p, HOP_ERR_PEER_FAILED,
			     "tcp: rank %d closed the connection (EOF)%s",
			     p->rank,
			     p->rx_state == TCP_RX_PAYLOAD
				     ? " in the middle of a message"
				     : "");
}

/* Does @p have staged bytes the next poll can use without reading? */
static int tcp_rx_staged(const struct tcp_peer *p)
{
	size_t avail = p->rx_tail - p->rx_head;

	return p->rx_state == TCP_RX_PAYLOAD ? avail > 0 : avail >= TCP_HDR_LEN;
}

/* Receive and handle everything readable from @p without blocking. */
static int tcp_rx_progress(struct hop_prov *prov, struct tcp_peer *p)
{
	size_t got = 0;
	ssize_t n;
	int ret;

	/* a budget per call keeps one streaming peer from starving the
	 * others and our own sends */
	while (p->fd >= 0 && got < TCP_RX_BUDGET) {
		if (p->rx_state == TCP_RX_PAYLOAD) {
			size_t avail = p->rx_tail - p->rx_head;

			if (avail) {
				size_t k = avail < p->left ? avail
							   : (size_t)p->left;

				hop_copy(p->dst, p->rx + p->rx_head, k);
				p->rx_head += k;
				p->dst += k;
				p->left -= k;
				if (p->left == 0) {
					if ((ret = tcp_rx_complete(prov, p)))
						return ret;
					continue;
				}
			}
			p->rx_head = p->rx_tail = 0;
			if (p->left >= TCP_RX_DIRECT) {
				/* large payload: straight into place */
				n = recv(p->fd, p->dst, (size_t)p->left,
					 MSG_DONTWAIT);
				if (n > 0) {
					got += (size_t)n;
					p->dst += n;
					p->left -= (size_t)n;
					if (p->left == 0 &&
					    (ret = tcp_rx_complete(prov, p)))
						return ret;
					continue;
				}
			} else {
				n = recv(p->fd, p->rx, TCP_RX_BUF,
					 MSG_DONTWAIT);
				if (n > 0) {
					got += (size_t)n;
					p->rx_tail = (size_t)n;
					continue;
				}
			}
		} else {
			size_t avail = p->rx_tail - p->rx_head;

			if (avail >= TCP_HDR_LEN) {
				if (prov->cq.count >= TCP_CQ_HIGH)
					return 0; /* let the caller drain */
				if ((ret = tcp_rx_header(prov, p)))
					return ret;
				continue;
			}
			if (p->rx_head) {
				memmove(p->rx, p->rx + p->rx_head, avail);
				p->rx_head = 0;
				p->rx_tail = avail;
			}
			n = recv(p->fd, p->rx + p->rx_tail,
				 TCP_RX_BUF - p->rx_tail, MSG_DONTWAIT);
			if (n > 0) {
				got += (size_t)n;
				p->rx_tail += (size_t)n;
				continue;
			}
		}
		if (n == 0)
			return tcp_rx_eof(prov, p, 0);
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno == EINTR)
			continue;
		return tcp_rx_eof(prov, p, errno);
	}
	return 0;
}

void tcp_rx_cut(struct hop_prov *prov, uint64_t key)
{
	for (int r = 0; r < prov->nranks; r++) {
		struct tcp_peer *p = &prov->peers[r];

		if (p->fd < 0 || p->rx_state != TCP_RX_PAYLOAD ||
		    p->cur.op != TCP_OP_WRITE || p->cur.rkey != key)
			continue;
		tcp_peer_reject(prov, p, HOP_ERR_OUT_OF_BOUNDS,
				"tcp: write of %llu bytes from rank %d cut off "
				"after %llu bytes: its region (key 0x%llx) was "
				"deregistered while the write arrived",
				(unsigned long long)p->cur.len, p->rank,
				(unsigned long long)(p->cur.len - p->left),
				(unsigned long long)key);
	}
}

int tcp_poll(struct hop_prov *prov, struct hop_cqe *cqe, int max)
{
	int n = prov->nranks, ret, f;

	if ((f = prov->ctx->failed(prov->ctx)))
		return f;
	if ((ret = tcp_lazy_progress(prov, 0)))
		return ret;
	if (prov->sq_busy) {
		for (int r = 0; r < n; r++) {
			struct tcp_peer *p = &prov->peers[r];

			if (p->sq_count && p->fd >= 0 &&
			    (ret = tcp_tx_progress(prov, p)))
				return ret;
		}
	}
	if (prov->epfd < 0) {
		uint32_t start = prov->rr++ % (uint32_t)n;

		for (int i = 0; i < n; i++) {
			struct tcp_peer *p =
				&prov->peers[(start + (uint32_t)i) % (uint32_t)n];

			if (p->fd >= 0 && (ret = tcp_rx_progress(prov, p)))
				return ret;
		}
	} else {
		struct epoll_event ev[64];
		int k = epoll_wait(prov->epfd, ev, 64, 0);

		for (int i = 0; i < k; i++) {
			struct tcp_peer *p;

			if (ev[i].data.u32 == TCP_EV_LISTEN) {
				if ((ret = tcp_lazy_progress(prov, 1)))
					return ret;
				continue;
			}
			p = &prov->peers[ev[i].data.u32];
			if (p->fd >= 0 && (ret = tcp_rx_progress(prov, p)))
				return ret;
		}
		/* peers held back by a full CQ have bytes staged already */
		for (int r = 0; r < n; r++) {
			struct tcp_peer *p = &prov->peers[r];

			if (p->fd >= 0 && tcp_rx_staged(p) &&
			    (ret = tcp_rx_progress(prov, p)))
				return ret;
		}
	}
	return hop_cqring_pop(&prov->cq, cqe, max);
}

void tcp_wait(struct hop_prov *prov, int timeout_us)
{
	struct timespec ts;
	int np = 0;

	if (prov->cq.count ||
	    prov->ctx->failed(prov->ctx))
		return;
	for (int r = 0; r < prov->nranks; r++) {
		struct tcp_peer *p = &prov->peers[r];

		if (p->fd < 0)
			continue;
		if (tcp_rx_staged(p))
			return; /* staged bytes are ready */
		prov->pfd[np].fd = p->fd;
		prov->pfd[np].events = POLLIN;
		if (p->sq_count)
			prov->pfd[np].events |= POLLOUT;
		prov->pfd[np].revents = 0;
		np++;
	}
	np += tcp_lazy_pollfds(prov, prov->pfd + np, &timeout_us);
	if (timeout_us <= 0)
		return;
	ts.tv_sec = timeout_us / 1000000;
	ts.tv_nsec = (long)(timeout_us % 1000000) * 1000;
	ppoll(prov->pfd, (nfds_t)np, &ts, NULL);
}
