/*
 * connect.c - connection set-up as NCCL's proxy does it: listen on every
 * connection, ship the handles to the peer, then call connect() and
 * accept() in rounds until every comm is non-NULL, interleaved over all
 * connections. The plugin starts each connection in the background, so
 * the first connect() of a handle must come back at once with a NULL comm
 * (it would be non-NULL only if the call had waited for the connection).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

int connect_all(struct harness *h)
{
	uint8_t mine[MAX_CONNS][NCCL_NET_HANDLE_MAXSIZE];
	uint8_t theirs[MAX_CONNS][NCCL_NET_HANDLE_MAXSIZE];
	void *lcomm[MAX_CONNS];
	const char *want = getenv("HOP_TRANSPORT");
	char transport[H_TRANSPORT_LEN];
	int n = h->o.nconns, left = 2 * n, rounds = 0;

	memset(mine, 0, sizeof(mine));
	for (int k = 0; k < n; k++) {
		lcomm[k] = NULL;
		CHECK_RES(h->net->listen(k % h->ndev, mine[k], &lcomm[k]));
		if (!lcomm[k])
			FAIL("listen %d: success but a NULL listen comm", k);
	}
	if (xsend(h, mine, sizeof(mine[0]) * (size_t)n) ||
	    xrecv(h, theirs, sizeof(theirs[0]) * (size_t)n))
		return -1;
	while (left) {
		if (deadline_passed(h))
			FAIL("%d of %d comms still unconnected after %d rounds",
			     left, 2 * n, rounds);
		for (int k = 0; k < n; k++) {
			ncclNetDeviceHandle_v8_t *dev = NULL;

			if (!h->send[k]) {
				CHECK_RES(h->net->connect(k % h->ndev, theirs[k],
							  &h->send[k], &dev));
				if (rounds == 0 && h->send[k])
					FAIL("the first connect() of connection "
					     "%d returned a comm: it waited", k);
				left -= h->send[k] != NULL;
			}
			if (!h->recv[k]) {
				CHECK_RES(h->net->accept(lcomm[k], &h->recv[k],
							 &dev));
				left -= h->recv[k] != NULL;
			}
		}
		rounds++;
		usleep(1000);
	}
	for (int k = 0; k < n; k++) {
		void *again = (void *)1;
		ncclResult_t r;

		/* one connection per listen comm, as NCCL uses them */
		h_quiet = 1;
		r = h->net->accept(lcomm[k], &again, NULL);
		h_quiet = 0;
		if (r == ncclSuccess || again)
			FAIL("a second accept on listen comm %d: result %d, "
			     "comm %p (want an error and NULL)", k, (int)r, again);
		CHECK_RES(h->net->closeListen(lcomm[k]));
	}
	/* a named transport must be the one the connections run on */
	h_last_transport(transport);
	if (want && *want && strcmp(want, "auto") && strcmp(want, transport))
		FAIL("HOP_TRANSPORT=%s, but the plugin connected over '%s'",
		     want, transport);
	printf("nccl_net_test r%d: %d connection(s) each way up over %s after "
	       "%d connect/accept rounds\n", h->o.rank, n, transport,
	       rounds);
	return 0;
}

int close_all(struct harness *h, int failed)
{
	char token = 'c';
	int rc = 0;

	/*
	 * As NCCL, close only once both sides are done: the peer may still
	 * be receiving on the connection this process sends on. After a
	 * failure, close at once: the peer then fails fast on its comms.
	 */
	if (!failed && (xsend(h, &token, 1) || xrecv(h, &token, 1)))
		rc = -1;
	for (int k = 0; k < h->o.nconns; k++) {
		if (h->send[k] && h->net->closeSend(h->send[k]) != ncclSuccess)
			rc = -1;
		if (h->recv[k] && h->net->closeRecv(h->recv[k]) != ncclSuccess)
			rc = -1;
		h->send[k] = h->recv[k] = NULL;
	}
	return rc;
}
