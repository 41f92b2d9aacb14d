/*
 * shm_seg.c - the shm provider's instance: create this rank's segment,
 * exchange names, map every peer's segment, unlink (so a crash leaks
 * nothing once open() has returned), close; and its ops table. Names a
 * rank killed during set-up left behind are removed by the next open().
 * With HOP_CONNECT=lazy the segment is a memfd with no name at all, and
 * peers are mapped on first use (shm_lazy.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "transport/shm/shm.h"

#define SHM_MR_SLOTS 16384
/* The system's page: peers protect the MR table page by page. */
static uint64_t round_page(uint64_t v)
{
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t pg = ps > 0 ? (uint64_t)ps : 4096;

	return (v + pg - 1) & ~(pg - 1);
}

/* Ring bytes per sender: large for few ranks, smaller as they multiply. */
static uint64_t shm_ring_size_for(int nranks)
{
	if (nranks <= 8)
		return 256u << 10;
	if (nranks <= 32)
		return 128u << 10;
	if (nranks <= 128)
		return 64u << 10;
	return 32u << 10;
}

int shm_usable(const struct hop_prov_ctx *ctx, char *why, size_t whylen)
{
	(void)ctx;
	if (access("/dev/shm", W_OK) != 0) {
		snprintf(why, whylen, "/dev/shm is not writable: %s",
			 strerror(errno));
		return 0;
	}
	return 1;
}

static void shm_free(struct hop_prov *prov)
{
	shm_lazy_close(prov);
	if (prov->peers) {
		for (int r = 0; r < prov->nranks; r++) {
			struct shm_peer *p = &prov->peers[r];

			if (p->seg && p->seg != prov->seg)
				munmap(p->seg, p->map_len);
			if (p->pidfd >= 0)
				close(p->pidfd);
			free(p->sq);
		}
	}
	shm_mr_fini(prov);
	if (prov->seg)
		munmap(prov->seg, prov->seg->seg_size);
	hop_cqring_fini(&prov->cq);
	free(prov->act);
	free(prov->peers);
	free(prov);
}

/* Our pid namespace: a pid in a segment name means a process only there.
 * 0 when unknown (no /proc). */
static unsigned long long shm_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0
					      : (unsigned long long)st.st_ino;
}

/*
 * Remove the segments of ranks killed during set-up. A name lives from
 * its creation until every rank has mapped it; a rank killed in between
 * leaves ~1.4 MiB in /dev/shm that nobody else knows about. A name whose
 * creator is gone (same pid namespace and user) belongs to no live job.
 */
static void shm_reap(const struct hop_prov_ctx *ctx)
{
	unsigned long long ns = shm_pidns(), sns, rnd;
	char name[NAME_MAX + 2];
	struct dirent *de;
	struct stat st;
	int pid, rank, end, n = 0;
	DIR *d;

	if (!ns || !(d = opendir("/dev/shm")))
		return;
	while ((de = readdir(d))) {
		end = 0;
		if (sscanf(de->d_name, "hop-%d-r%d-%16llx-n%llu%n", &pid,
			   &rank, &rnd, &sns, &end) != 4 ||
		    de->d_name[end] || sns != ns || pid <= 0)
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		snprintf(name, sizeof(name), "/%s", de->d_name);
		n += shm_unlink(name) == 0;
	}
	closedir(d);
	if (n)
		HOP_PROV_INFO(ctx, "removed %d segment(s) that ranks killed during "
			 "set-up left in /dev/shm", n);
}

/*
 * The segment's file: a name in /dev/shm (eager: unlinked once every peer
 * mapped it) or, with @lazy, a memfd that peers open through
 * /proc/PID/fd/N for as long as we hold it: a rank that dies leaves
 * nothing behind, whenever that is.
 */
static int shm_file(struct hop_prov *prov, struct shm_info *info, int lazy,
		    uint64_t rnd)
{
	int fd;

	info->pid = (int32_t)getpid();
	info->cookie = rnd;
	if (lazy) {
		fd = memfd_create("hop-shm", MFD_CLOEXEC);
		if (fd < 0)
			return prov->ctx->fail_comm(prov->ctx, HOP_ERR_SYSTEM,
						    "shm: memfd_create: %s",
						    strerror(errno));
		snprintf(info->name, sizeof(info->name), "/proc/%d/fd/%d",
			 (int)getpid(), fd);
		return fd;
	}
	/* shm_reap() reads the pid and namespace back */
	snprintf(info->name, sizeof(info->name), "/hop-%d-r%d-%016llx-n%llu",
		 (int)getpid(), prov->rank, (unsigned long long)rnd,
		 shm_pidns());
	fd = shm_open(info->name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_SYSTEM,
					    "shm: shm_open(%s): %s", info->name,
					    strerror(errno));
	return fd;
}

/* Give up the name of an eager segment (a memfd has none). */
static void shm_unname(const struct shm_info *info, int lazy)
{
	if (!lazy)
		shm_unlink(info->name);
}

/*
 * Create and initialise this rank's segment. Eager reserves all of it
 * now (a full /dev/shm fails here, not as SIGBUS); lazy only the header
 * and MR table, and each ring when its pair links (shm_lazy.c). With
 * @lazy the file stays open in @*lazy_fd.
 */
static int shm_create(struct hop_prov *prov, struct shm_info *info, int lazy,
		      int *lazy_fd)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	uint64_t ring = shm_ring_size_for(prov->nranks);
	uint64_t hdr = round_page(sizeof(struct shm_seg) +
				  2 * shm_map_words(prov->nranks) *
					  sizeof(uint64_t));
	uint64_t mrt = round_page(hop_mrtab_size(SHM_MR_SLOTS));
	uint64_t stride = round_page(SHM_RING_HDR + ring);
	uint64_t size = hdr + mrt + (uint64_t)prov->nranks * stride;
	uint64_t rnd = 0;
	struct shm_seg *seg;
	int fd, err;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = hop_now_ns() ^ ((uint64_t)getpid() << 32);
	info->seg_size = size;
	if ((fd = shm_file(prov, info, lazy, rnd)) < 0)
		return fd;
	err = lazy && ftruncate(fd, (off_t)size) ? errno : 0;
	if (!err)
		err = posix_fallocate(fd, 0, (off_t)(lazy ? hdr + mrt : size));
	if (err) {
		close(fd);
		shm_unname(info, lazy);
		return ctx->fail_comm(ctx, HOP_ERR_SYSTEM,
				     "shm: cannot reserve %llu bytes in "
				     "/dev/shm for %s: %s",
				     (unsigned long long)size, info->name,
				     strerror(err));
	}
	seg = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = errno;
	if (seg == MAP_FAILED || !lazy)
		close(fd);
	if (seg == MAP_FAILED) {
		shm_unname(info, lazy);
		return ctx->fail_comm(ctx, HOP_ERR_SYSTEM,
				     "shm: mmap of %llu bytes: %s",
				     (unsigned long long)size, strerror(err));
	}
	if (lazy)
		*lazy_fd = fd;
	seg->version = SHM_VERSION;
	seg->nranks = (uint32_t)prov->nranks;
	seg->rank = prov->rank;
	seg->pid = info->pid;
	seg->mr_slots = SHM_MR_SLOTS;
	seg->cookie = rnd;
	seg->ring_size = ring;
	seg->ring_stride = stride;
	seg->mrtab_off = hdr;
	seg->rings_off = hdr + mrt;
	seg->seg_size = size;
	prov->seg = seg;
	if (shm_mr_init(prov, (uint8_t *)seg + hdr, SHM_MR_SLOTS)) {
		shm_unname(info, lazy);
		return ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY,
				     "shm: out of memory");
	}
	/* a lazy segment is all zeroes, and its rings are not reserved yet */
	for (int r = 0; r < prov->nranks && !lazy; r++)
		shm_ring_init(shm_seg_ring(seg, r));
	atomic_thread_fence(memory_order_release);
	seg->magic = SHM_MAGIC;
	return 0;
}

/* Map rank @r's eager segment described by @in. */
static int shm_attach(struct hop_prov *prov, int r, const struct shm_info *in)
{
	char name[SHM_NAME_LEN];
	int fd, ret;

	memcpy(name, in->name, sizeof(name));
	name[sizeof(name) - 1] = '\0';
	fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_TRANSPORT,
				     "shm: cannot open rank %d's segment %s: "
				     "%s (is rank %d on another host?)",
				     r, name, strerror(errno), r);
	ret = shm_map_peer(prov, r, in, fd);
	close(fd);
	return ret;
}

int shm_map_peer(struct hop_prov *prov, int r, const struct shm_info *in,
		 int fd)
{
	const struct hop_prov_ctx *ctx = prov->ctx;
	const char *name = in->name;
	struct shm_seg *seg;
	struct stat st;
	int err;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != in->seg_size ||
	    in->seg_size != prov->seg->seg_size) {
		return ctx->fail_comm(ctx, HOP_ERR_TRANSPORT,
				     "shm: rank %d's segment %s has %lld "
				     "bytes, expected %llu",
				     r, name, (long long)st.st_size,
				     (unsigned long long)prov->seg->seg_size);
	}
	seg = mmap(NULL, in->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   0);
	err = errno;
	if (seg == MAP_FAILED)
		return ctx->fail_comm(ctx, HOP_ERR_SYSTEM,
				     "shm: mmap of rank %d's segment: %s", r,
				     strerror(err));
	prov->peers[r].seg = seg;
	prov->peers[r].map_len = in->seg_size;
	if (seg->magic != SHM_MAGIC || seg->version != SHM_VERSION ||
	    seg->rank != r || seg->nranks != (uint32_t)prov->nranks ||
	    seg->pid != in->pid || seg->cookie != in->cookie ||
	    seg->ring_size != prov->seg->ring_size ||
	    seg->ring_stride != prov->seg->ring_stride ||
	    seg->rings_off != prov->seg->rings_off ||
	    seg->mrtab_off != prov->seg->mrtab_off)
		return ctx->fail_comm(ctx, HOP_ERR_TRANSPORT,
				     "shm: rank %d's segment %s is not a "
				     "matching hop segment (rank %d, %u ranks)",
				     r, name, seg->rank, seg->nranks);
	/* only the owner writes its region table: a stray or hostile store
	 * through this mapping faults instead of widening a region */
	if (mprotect((uint8_t *)seg + prov->seg->mrtab_off,
		     prov->seg->rings_off - prov->seg->mrtab_off, PROT_READ))
		return ctx->fail_comm(ctx, HOP_ERR_SYSTEM,
				     "shm: cannot map rank %d's region table "
				     "read-only: %s", r, strerror(errno));
	return 0;
}

/*
 * Map a ring's pages into this process now. Each page's first touch is a
 * page fault on the message path: one per 4 KiB of ring for the first
 * 256 KiB of traffic, which made the first few thousand small messages
 * 2-20x slower than the rest (8 B AllReduce, 2 ranks: 1.8 us over 500
 * calls, 0.9 us over 20000). MADV_POPULATE_WRITE changes no data, so a
 * peer may already be using the ring; kernels before 5.14 fault lazily.
 */
static void shm_prefault(void *ring, uint64_t len)
{
#ifdef MADV_POPULATE_WRITE
	(void)madvise(ring, len, MADV_POPULATE_WRITE);
#else
	(void)ring;
	(void)len;
#endif
}

int shm_peer_setup(struct hop_prov *prov, int r, pid_t pid)
{
	struct shm_peer *p = &prov->peers[r];
	uint64_t ring = prov->seg->ring_size;

	if (!(p->sq = malloc(SHM_SQ_DEPTH * sizeof(*p->sq))))
		return prov->ctx->fail_comm(prov->ctx, HOP_ERR_NO_MEMORY,
					    "shm: out of memory for the send "
					    "queue to rank %d", r);
	p->rank = r;
	p->pid = pid;
	p->cma = prov->use_cma;
	p->live_next = shm_coarse_ns() + SHM_POST_LIVE_NS;
	if (r == prov->rank)
		p->seg = prov->seg;
	/* no segment: it closed before we linked; we only drain its ring */
	if (p->seg) {
		p->mrtab = (const struct hop_mrtab *)((uint8_t *)p->seg +
						      p->seg->mrtab_off);
		shm_prod_init(&p->out, shm_seg_ring(p->seg, prov->rank), ring);
		shm_prefault(shm_seg_ring(p->seg, prov->rank),
			     prov->seg->ring_stride);
	}
	shm_cons_init(&p->in, shm_seg_ring(prov->seg, r), ring);
	shm_prefault(shm_seg_ring(prov->seg, r), prov->seg->ring_stride);
#ifdef SYS_pidfd_open
	if (r != prov->rank)
		p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	p->linked = 1;
	prov->act[prov->nact++] = r;
	return 0;
}

/*
 * The largest write that goes inline through the ring. One
 * process_vm_writev is cheaper than the two copies through the ring from
 * about 4 KiB (hop-probe, one way: 8 KiB 1.70 -> 1.11 us, 16 KiB 2.89 ->
 * 1.33 us), but the p2p layer's eager messages (HOP_EAGER_SIZE plus a
 * header) stay in the ring: by CMA its 4 and 8 KiB ping-pongs went from
 * 1.15 to 1.8 and from 1.8 to 2.6 us (not traced; a CMA write waits for
 * the inline data posted before it, contract 1). Rendezvous data just
 * above the eager size goes by CMA: a 16 KiB p2p ping-pong 3.4 -> 2.1 us.
 * At most a sixteenth of the ring, so that an entry always fits.
 */
static size_t shm_inline_max(uint64_t ring_size, size_t eager_size)
{
	size_t ring_max = ring_size / 16 > 4096 ? (size_t)(ring_size / 16)
						: 4096;
	size_t want = eager_size + SHM_LINE > 4096 ? eager_size + SHM_LINE
						   : 4096;

	return want < ring_max ? want : ring_max;
}

int shm_open_prov(const struct hop_prov_ctx *ctx, struct hop_prov **out)
{
	struct shm_info mine, *all = NULL;
	int32_t ok, *oks = NULL;
	struct hop_prov *prov;
	int ret, create_ret, n = ctx->nranks, lazy = shm_lazy_want(ctx), fd = -1;

	prov = calloc(1, sizeof(*prov));
	if (!prov)
		return ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY,
				     "shm: out of memory");
	prov->ctx = ctx;
	prov->rank = ctx->rank;
	prov->nranks = n;
	prov->use_cma = hop_prov_setting_int(ctx, "HOP_SHM_CMA", 1) != 0;
	prov->peers = calloc((size_t)n, sizeof(*prov->peers));
	prov->act = calloc((size_t)n, sizeof(*prov->act));
	all = calloc((size_t)n, sizeof(*all));
	oks = calloc((size_t)n, sizeof(*oks));
	if (!prov->peers || !prov->act || !all || !oks ||
	    hop_cqring_init(&prov->cq, 1024)) {
		ret = ctx->fail_comm(ctx, HOP_ERR_NO_MEMORY,
				    "shm: out of memory");
		goto err_free;
	}
	for (int r = 0; r < n; r++)
		prov->peers[r].pidfd = -1;
	shm_reap(ctx);
	memset(&mine, 0, sizeof(mine));
	/* on failure, still take part in the exchanges below (with an empty
	 * name) so every rank fails promptly instead of timing out */
	create_ret = shm_create(prov, &mine, lazy, &fd);
	if (create_ret)
		memset(mine.name, 0, sizeof(mine.name));
	/* a failed exchange is described by hop already */
	ret = ctx->allgather(ctx, &mine, all, sizeof(mine));
	if (ret)
		goto err_unlink;
	ok = !create_ret;
	for (int r = 0; r < n && ok; r++) {
		if (r == ctx->rank || (lazy && all[r].name[0]))
			continue;
		if (!all[r].name[0])
			ok = 0; /* reported by rank r itself */
		else if (shm_attach(prov, r, &all[r]))
			ok = 0;
	}
	/* everyone has mapped (or failed): the names can go */
	ret = ctx->allgather(ctx, &ok, oks, sizeof(ok));
	if (!create_ret)
		shm_unname(&mine, lazy);
	if (create_ret) {
		ret = create_ret;
		goto err_free;
	}
	if (ret)
		goto err_free;
	for (int r = 0; r < n; r++)
		if (!oks[r]) {
			if (ctx->failed(ctx))
				ret = ctx->failed(ctx);
			else if (!all[r].name[0])
				ret = ctx->fail_comm(ctx, HOP_ERR_TRANSPORT,
						    "shm: rank %d could not "
						    "create its segment", r);
			else
				ret = ctx->fail_comm(ctx, HOP_ERR_TRANSPORT,
						    "shm: rank %d could not "
						    "map its peers' segments",
						    r);
			goto err_free;
		}
	for (int r = 0; r < n; r++)
		if ((!lazy || r == ctx->rank) &&
		    (ret = shm_peer_setup(prov, r, (pid_t)all[r].pid)))
			goto err_free;
	if (lazy) {
		ret = shm_lazy_open(prov, fd, all); /* takes the fd */
		fd = -1;
		if (ret)
			goto err_free;
	}
	prov->inline_max = shm_inline_max(prov->seg->ring_size,
					  (size_t)hop_prov_setting_int(
						  ctx, "HOP_EAGER_SIZE", 0));
	prov->chunk = (size_t)(prov->seg->ring_size / 4) - SHM_ENT_HDR;
	prov->next_live = hop_now_ns() + SHM_LIVENESS_NS;
	HOP_PROV_INFO(ctx, "mapped %d segment(s) of %llu KiB (ring %llu KiB, "
		 "inline <= %zu B, CMA %s)%s",
		 prov->nact, (unsigned long long)(prov->seg->seg_size >> 10),
		 (unsigned long long)(prov->seg->ring_size >> 10),
		 prov->inline_max, prov->use_cma ? "on" : "off (HOP_SHM_CMA=0)",
		 lazy ? ", the others on first use (HOP_CONNECT=lazy)" : "");
	free(all);
	free(oks);
	*out = prov;
	return 0;

err_unlink:
	if (!create_ret)
		shm_unname(&mine, lazy);
err_free:
	if (fd >= 0)
		close(fd);
	free(all);
	free(oks);
	shm_free(prov);
	return ret;
}

void shm_close(struct hop_prov *prov)
{
	if (!prov)
		return;
	/* peers now treat our exit as orderly and refuse new posts to us;
	 * set before the keys go, so a peer whose queued write finds its key
	 * retired also finds why (shm_check_key()) */
	atomic_store_explicit(&prov->seg->closed, 1, memory_order_release);
	/* retire every key, so a peer's check fails from now on */
	shm_mr_retire_all(prov);
	/* a peer blocked waiting on us learns it now (HOP_PROV_CAP_WAKES) */
	for (int i = 0; i < prov->nact; i++) {
		struct shm_peer *p = &prov->peers[prov->act[i]];

		if (p->seg && p->seg != prov->seg)
			shm_ring_bell(p->seg);
	}
	shm_free(prov);
}

/* The peer's own close() sets its flag; from then on a post to it fails. */
static int shm_peer_closed(struct hop_prov *prov, int peer)
{
	return peer >= 0 && peer < prov->nranks && peer != prov->rank &&
	       shm_peer_left(prov, &prov->peers[peer]);
}

/*
 * Emulated: a write is a memcpy (or process_vm_writev) of the writer,
 * which may move a word in pieces. Link: 0.9 us one-way flag handoff
 * between two processes, 8.9 GB/s single-core memcpy (16 MiB) less
 * copy-engine overheads, two concurrent copies 1.2x slower. A larger
 * eager size leaves the ring for process_vm_writev and was slower
 * (docs/providers.md).
 */
/*
 * A receive from @peer is posted: link it now (lazy) so its process is
 * watched. A peer whose bit is already in our header linked us first: the
 * link back takes its "left" bit into account, so an orderly exit after
 * it sent stays orderly.
 */
static int shm_connect(struct hop_prov *prov, int peer)
{
	if (!prov->lazy || peer < 0 || peer >= prov->nranks ||
	    peer == prov->rank || prov->peers[peer].linked)
		return 0;
	return shm_lazy_link(prov, peer);
}

static const struct hop_prov_caps shm_caps = {
	.size = sizeof(struct hop_prov_caps),
	.flags = HOP_PROV_CAP_HOST_MEMORY | HOP_PROV_CAP_WAKES,
	.eager_size = 8192,
	.alpha = 1.0e-6,
	.beta = 6.0e9,
	.duplex = 1.2,
	.min_chunk = 4096,
};

const struct hop_prov_ops hop_prov_shm = {
	.size = sizeof(struct hop_prov_ops),
	.name = "shm",
	.usable = shm_usable,
	.open = shm_open_prov,
	.close = shm_close,
	.mr_reg = shm_mr_reg,
	.mr_dereg = shm_mr_dereg,
	.post_write = shm_post_write,
	.post_send = shm_post_send,
	.poll = shm_poll,
	.wait = shm_wait,
	.max_inline = shm_max_inline,
	.peer_closed = shm_peer_closed,
	.caps = &shm_caps,
	.connect = shm_connect,
};
