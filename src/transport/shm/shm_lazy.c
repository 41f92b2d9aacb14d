/*
 * shm_lazy.c - HOP_CONNECT=lazy for shm: a pair of ranks is linked (each
 * maps the other's segment, sets up the two rings between them and
 * watches the other's process) when the first post between them needs it,
 * so a rank's mappings, pidfds and ring memory grow with the peers it
 * talks to, not with the job.
 *
 * open() creates the segment as a memfd and allgathers "/proc/PID/fd/N"
 * through the bootstrap, as the eager path does its names, and maps no
 * peer. The first post to rank B (shm_lazy_link()) opens B's memfd
 * through /proc, checks and maps it, reserves the two rings of the pair
 * (fallocate: a full /dev/shm fails the post, not a later store with
 * SIGBUS), sets our bit in B's links[], bumps B's joins and rings its
 * bell. B's next poll or wait sees joins move and links every new bit
 * back (shm_lazy_accept()). No rank waits for another: two ranks linking
 * at the same moment each map the other and each finds the other already
 * linked when it reads its bits. Post order holds: one ring per
 * direction, and what A wrote before B noticed waits in it.
 *
 * Gone before linked: the memfd of a rank that exited or closed its
 * communicator can no longer be opened, so a post to it fails at once
 * with HOP_ERR_PEER_FAILED naming it (well within HOP_TIMEOUT). A rank
 * that linked, sent and closed before its peer linked back has set its
 * bit in the peer's second bitmap ("left"): the peer drains the ring and
 * treats the exit as orderly. A memfd has no name, so a rank killed at any
 * moment leaves nothing in /dev/shm.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "transport/shm/shm.h"

struct shm_lazy {
	int fd;                 /* our segment */
	struct shm_info *all;   /* every rank's, from open() */
};

enum { SHM_LINKS = 0, SHM_LEFT = 1 };

static _Atomic uint64_t *shm_bitmap(struct shm_seg *s, int which)
{
	return s->links + (size_t)which * shm_map_words((int)s->nranks);
}

static void shm_bit_set(struct shm_seg *s, int which, int r)
{
	atomic_fetch_or_explicit(&shm_bitmap(s, which)[r / 64],
				 1ull << (r % 64), memory_order_seq_cst);
}

static int shm_bit_get(struct shm_seg *s, int which, int r)
{
	return (atomic_load_explicit(&shm_bitmap(s, which)[r / 64],
				     memory_order_acquire) >> (r % 64)) & 1;
}

int shm_lazy_want(const struct hop_prov_ctx *ctx)
{
	char mode[16] = "";

	return !strcmp(hop_prov_setting_str(ctx, "HOP_CONNECT", mode,
					    sizeof(mode), "eager"), "lazy");
}

int shm_lazy_open(struct hop_prov *prov, int fd, const struct shm_info *all)
{
	size_t len = (size_t)prov->nranks * sizeof(*all);
	struct shm_lazy *L = calloc(1, sizeof(*L));

	if (!L || !(L->all = malloc(len))) {
		free(L);
		close(fd);
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
					    "shm: out of memory for %d ranks' "
					    "segment names", prov->nranks);
	}
	memcpy(L->all, all, len);
	L->fd = fd;
	prov->lazy = L;
	return 0;
}

void shm_lazy_close(struct hop_prov *prov)
{
	struct shm_lazy *L = prov->lazy;

	if (!L)
		return;
	/* before the memfd goes: a peer that cannot open it any more then
	 * knows the exit was orderly */
	for (int i = 0; i < prov->nact; i++) {
		struct shm_peer *p = &prov->peers[prov->act[i]];

		if (p->seg && p->seg != prov->seg) {
			shm_bit_set(p->seg, SHM_LEFT, prov->rank);
			shm_ring_bell(p->seg); /* a waiter on us learns it */
		}
	}
	close(L->fd);
	free(L->all);
	free(L);
	prov->lazy = NULL;
}

int shm_peer_left(const struct hop_prov *prov, const struct shm_peer *p)
{
	if (p->seg && atomic_load_explicit(&p->seg->closed,
					   memory_order_acquire))
		return 1;
	return prov->lazy && shm_bit_get(prov->seg, SHM_LEFT, p->rank);
}

/* Rank @peer's memfd could not be opened (@err): say why, naming it. */
static int shm_lazy_gone(struct hop_prov *prov, int peer, int err)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	const struct shm_info *in = &prov->lazy->all[peer];
	struct shm_peer probe = { .pid = in->pid, .pidfd = -1 };

	if (err != ENOENT)
		return ctx->fail_comm(ctx, HOP_ERR_TRANSPORT, "shm: cannot open "
				      "rank %d's segment %s: %s (lazy links "
				      "open a peer's segment through /proc; "
				      "HOP_CONNECT=eager does not)", peer,
				      in->name, strerror(err));
	if (shm_dead(&probe))
		return ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, "shm: rank %d "
				      "(pid %d) exited before rank %d first "
				      "reached it", peer, (int)in->pid,
				      prov->rank);
	return ctx->fail_comm(ctx, HOP_ERR_PEER_FAILED, "shm: rank %d (pid "
			      "%d) closed its communicator before rank %d "
			      "first reached it", peer, (int)in->pid,
			      prov->rank);
}

/* Reserve the ring at @idx of the segment file @fd. */
static int shm_reserve(struct hop_prov *prov, int fd, int idx, int owner)
{
	const struct shm_seg *s = prov->seg;
	off_t off = (off_t)(s->rings_off + (uint64_t)idx * s->ring_stride);
	int err = posix_fallocate(fd, off, (off_t)s->ring_stride);

	if (!err)
		return 0;
	return prov->ctx->fail_comm(prov->ctx, HOP_ERR_SYSTEM, "shm: cannot "
				    "reserve %llu bytes in rank %d's segment "
				    "for the ring from rank %d: %s",
				    (unsigned long long)s->ring_stride, owner,
				    idx, strerror(err));
}

/* Open, check and map @peer's segment; reserve both rings of the pair. */
static int shm_lazy_map(struct hop_prov *prov, int peer)
{
	struct shm_lazy *L = prov->lazy;
	const struct shm_info *in = &L->all[peer];
	int fd, ret;

	fd = open(in->name, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int err = errno;

		/* it linked to us, sent, and closed before we linked back */
		if (err == ENOENT && shm_bit_get(prov->seg, SHM_LEFT, peer)) {
			prov->peers[peer].gone = 1;
			return 0;
		}
		return shm_lazy_gone(prov, peer, err);
	}
	ret = shm_map_peer(prov, peer, in, fd);
	if (!ret)
		ret = shm_reserve(prov, fd, prov->rank, peer);
	close(fd);
	if (!ret)
		ret = shm_reserve(prov, L->fd, peer, prov->rank);
	return ret;
}

int shm_lazy_link(struct hop_prov *prov, int peer)
{
	struct shm_peer *p = &prov->peers[peer];
	int ret;

	if (p->linked)
		return 0;
	HOP_PROV_TRACE(prov->ctx, "shm: linking rank %d on first use", peer);
	if ((ret = shm_lazy_map(prov, peer)) ||
	    (ret = shm_peer_setup(prov, peer, (pid_t)prov->lazy->all[peer].pid)))
		return ret;
	if (p->seg) {
		shm_bit_set(p->seg, SHM_LINKS, prov->rank);
		atomic_fetch_add_explicit(&p->seg->joins, 1,
					  memory_order_release);
		shm_ring_bell(p->seg);
	}
	return 0;
}

int shm_lazy_accept(struct hop_prov *prov)
{
	size_t words = shm_map_words(prov->nranks);
	int ret;

	if (!shm_lazy_joined(prov))
		return 0;
	/* joins first: a bit set after this read bumps joins again */
	prov->joins_seen = atomic_load_explicit(&prov->seg->joins,
						memory_order_acquire);
	for (size_t w = 0; w < words; w++) {
		uint64_t bits = atomic_load_explicit(&prov->seg->links[w],
						     memory_order_acquire);

		while (bits) {
			int r = (int)(w * 64) + __builtin_ctzll(bits);

			bits &= bits - 1;
			if ((ret = shm_lazy_link(prov, r)))
				return ret;
		}
	}
	return 0;
}
