/*
 * offered_late.c - a write into memory a failed rank had offered must not
 * be refused and blamed on that rank: the rank that failed it is the
 * cause. One process per rank, started by a launcher such as
 * scripts/softroce-cluster (hop_comm_init_env()), 3 ranks or more, on
 * verbs (a failed rank serves no writes on tcp or shm: its progress stops):
 *
 *   offered_late --dir DIR [--timeout S]
 *
 * rank 0 (refuser) registers a region, gives rank 1 its key, deregisters
 *        it, and stays until the end (DIR/done).
 * rank 1 (holder) posts a 1 MiB receive from rank 2, which advertises its
 *        buffer to rank 2, then puts through rank 0's dead key: rank 0
 *        refuses the write and rank 1's communicator fails with
 *        HOP_ERR_OUT_OF_BOUNDS naming rank 0. It creates DIR/failed and
 *        stays, without progress, until DIR/done.
 * rank 2 (writer) never spoke to rank 0. After DIR/failed it sends the
 *        1 MiB message, which the advert lets it write straight into
 *        rank 1's offered buffer, and creates DIR/done; rank 1 then
 *        checks that every byte landed.
 *
 * The writer's send must succeed: rank 1 failed because of a peer, so it
 * keeps the key it offered (docs/p2p.md). Withdrawing it would make the
 * writer's RDMA write fail with a remote access error, reported as
 * HOP_ERR_OUT_OF_BOUNDS naming rank 1 - the cascade that names a survivor
 * instead of the cause after a peer's death (peer_death --env).
 * Prints "OL rank R: ..." lines; exits 0 when this rank's part held.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rel.h"

#define BIG (1u << 20)
#define FILL 0x5a        /* the writer's bytes */

enum { TAG_HELLO = 1, TAG_READY = 2, TAG_KEY = 3, TAG_GONE = 4, TAG_BIG = 9 };

struct ol {
	hop_comm_t *c;
	int rank;
	const char *dir;
	int wait_s;
};

static void mark(const struct ol *o, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	if ((f = fopen(path, "w")))
		fclose(f);
}

/* Wait for DIR/@name (another VM creates it); 0 when it appeared. */
static int await(const struct ol *o, const char *name)
{
	uint64_t end = rel_now_ms() + (uint64_t)o->wait_s * 1000;
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	while (rel_now_ms() < end) {
		if (stat(path, &st) == 0)
			return 0;
		usleep(20000);
	}
	printf("OL rank %d: %s did not appear within %d s\n", o->rank, path,
	       o->wait_s);
	return -1;
}

/* One small message each way between this rank and @peer. */
static int hello(const struct ol *o, int peer)
{
	int in = 0, out = o->rank;
	int ret = o->rank < peer ?
			  hop_send(o->c, &out, sizeof(out), peer, TAG_HELLO) :
			  hop_recv(o->c, &in, sizeof(in), peer, TAG_HELLO, NULL);

	if (!ret)
		ret = o->rank < peer ?
			      hop_recv(o->c, &in, sizeof(in), peer, TAG_HELLO, NULL) :
			      hop_send(o->c, &out, sizeof(out), peer, TAG_HELLO);
	if (ret)
		printf("OL rank %d: hello with rank %d: %s\n", o->rank, peer,
		       hop_comm_last_error(o->c));
	return ret;
}

/* Every byte of the holder's buffer is the writer's fill? Else prints
 * the first that is not. */
static int landed(const struct ol *o, const uint8_t *buf)
{
	for (size_t i = 0; i < BIG; i++) {
		if (buf[i] != FILL) {
			printf("OL rank %d (holder): byte %zu of the offered "
			       "buffer is 0x%02x, not the writer's 0x%02x\n",
			       o->rank, i, buf[i], FILL);
			return 0;
		}
	}
	return 1;
}

static int holder(const struct ol *o)
{
	uint8_t *buf = calloc(1, BIG), src[64] = { 0 };
	hop_request_t *big = NULL;
	hop_rkey_t key;
	int ready = 1, ret, ok = 0;

	if (!buf || hello(o, 0) || hello(o, 2))
		goto out;
	if (hop_recv(o->c, &key, sizeof(key), 0, TAG_KEY, NULL) ||
	    hop_send(o->c, &ready, sizeof(ready), 0, TAG_KEY))
		goto out;
	if (hop_irecv(o->c, buf, BIG, 2, TAG_BIG, &big)) {
		printf("OL rank 1: irecv: %s\n", hop_comm_last_error(o->c));
		goto out;
	}
	/* after the advert on the same connection: rank 2 has it when this
	 * arrives */
	if (hop_send(o->c, &ready, sizeof(ready), 2, TAG_READY) ||
	    hop_recv(o->c, &ready, sizeof(ready), 0, TAG_GONE, NULL))
		goto out;
	/* the refusal may come after the put returned (a small put's source
	 * is free once posted): the big receive's wait meets it */
	ret = hop_put(o->c, NULL, src, sizeof(src), &key, 0, 7);
	if (!ret)
		ret = hop_wait(&big, NULL);
	ok = ret == HOP_ERR_OUT_OF_BOUNDS &&
	     rel_names_rank(hop_comm_last_error(o->c), 0);
	printf("OL rank 1 (holder): put through rank 0's dead key: %s, names "
	       "rank 0: %s (%s)\n", hop_err_name(ret), ok ? "yes" : "NO",
	       hop_comm_last_error(o->c));
	mark(o, "failed");
	/* stay, without progress, until the writer's send ended: the late
	 * write must land in the failed receive's buffer (docs/p2p.md) */
	ok = !await(o, "done") && landed(o, buf) && ok;
out:
	if (big)
		hop_wait(&big, NULL);
	free(buf);
	return ok ? 0 : 1;
}

static int refuser(const struct ol *o)
{
	uint8_t *win = calloc(1, 4096);
	hop_mr_t *mr = NULL;
	hop_rkey_t key;
	int x, rc = 1;

	if (!win || hello(o, 1))
		goto out;
	if (hop_mem_register(o->c, win, 4096, HOP_ACCESS_REMOTE_WRITE, &mr) ||
	    hop_mr_rkey(mr, &key) ||
	    hop_send(o->c, &key, sizeof(key), 1, TAG_KEY) ||
	    hop_recv(o->c, &x, sizeof(x), 1, TAG_KEY, NULL) ||
	    hop_mem_deregister(o->c, mr) ||
	    hop_send(o->c, &x, sizeof(x), 1, TAG_GONE)) {
		printf("OL rank 0: %s\n", hop_comm_last_error(o->c));
		goto out;
	}
	rc = await(o, "done");
out:
	free(win);
	return rc;
}

static int writer(const struct ol *o)
{
	uint8_t *buf = malloc(BIG);
	int ready = 0, ret;

	if (!buf || hello(o, 1))
		return 1;
	memset(buf, FILL, BIG);
	if (hop_recv(o->c, &ready, sizeof(ready), 1, TAG_READY, NULL) ||
	    await(o, "failed")) {
		free(buf);
		return 1;
	}
	ret = hop_send(o->c, buf, BIG, 1, TAG_BIG);
	printf("OL rank 2 (writer): send into rank 1's offered buffer: %s%s%s\n",
	       hop_err_name(ret), ret ? ": " : "",
	       ret ? hop_comm_last_error(o->c) : "");
	mark(o, "done");
	free(buf);
	return ret ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dir", 1, NULL, 'd' }, { "timeout", 1, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct ol o = { .wait_s = 30 };
	int c, rc, timeout_s = 10;
	char tbuf[32];

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dir = optarg; break;
		case 'T': timeout_s = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: offered_late --dir DIR [--timeout S]\n");
			return 2;
		}
	}
	if (!o.dir || timeout_s < 1) {
		fprintf(stderr, "usage: offered_late --dir DIR [--timeout S]\n");
		return 2;
	}
	snprintf(tbuf, sizeof(tbuf), "%d", timeout_s);
	setenv("HOP_TIMEOUT", tbuf, 1);
	setenv("HOP_CONNECT", "lazy", 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (hop_comm_init_env(&o.c)) {
		printf("OL: init: %s\n", hop_last_init_error());
		return 1;
	}
	o.rank = hop_comm_rank(o.c);
	if (hop_comm_size(o.c) < 3) {
		printf("OL: needs 3 ranks or more\n");
		hop_comm_destroy(o.c);
		return 2;
	}
	rc = o.rank == 0 ? refuser(&o) : o.rank == 1 ? holder(&o) :
	     o.rank == 2 ? writer(&o) : 0;
	printf("OL rank %d: %s\n", o.rank, rc ? "FAIL" : "ok");
	hop_comm_destroy(o.c);
	return rc;
}
