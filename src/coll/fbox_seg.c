/*
 * fbox_seg.c - the fast boxes' region: rank 0 creates it in /dev/shm,
 * every rank maps it, and rank 0 removes the name once every rank has
 * mapped it, so nothing is left behind once init returns. The name
 * follows the shm provider's pattern (hop-PID-rRANK-RANDOM-nPIDNS): a
 * name left by a rank 0 killed during set-up is removed by the next shm
 * provider that opens on this host (shm_seg.c, shm_reap()).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "coll/fbox_int.h"
#include "core/bootstrap.h"

#define FBOX_MAGIC 0x31786f6266706f68ull /* "hopfbox1" */

struct fbox_info {
	char name[64];          /* rank 0's region, "" when it made none */
	int32_t want;           /* this rank would use fast boxes */
	int32_t ok;             /* second exchange: this rank mapped it */
	int32_t pid;
	int32_t cma;            /* second exchange: it read every peer */
	uint64_t probe;         /* where its peers read fbox_probe */
};

/* What a peer reads to learn whether process_vm_readv reaches this
 * process (HOP_SHM_CMA, ptrace_scope, user namespaces, dumpable). */
static const uint64_t fbox_probe = FBOX_MAGIC;

/* Can this rank read every peer's memory? */
static int fbox_cma_probe(const struct hop_comm *comm,
			  const struct fbox_info *all)
{
	for (int r = 0; r < comm->nranks; r++) {
		uint64_t v = 0;
		struct iovec l = { &v, sizeof(v) };
		struct iovec rm = { (void *)(uintptr_t)all[r].probe, sizeof(v) };

		if (r == comm->rank)
			continue;
		if (process_vm_readv(all[r].pid, &l, 1, &rm, 1, 0) !=
			    (ssize_t)sizeof(v) || v != FBOX_MAGIC) {
			HOP_INFO("rank %d: fast boxes: rank %d's memory not "
				 "readable by CMA (%s): calls above %d B take "
				 "the scheduled path", comm->rank, r,
				 strerror(errno), HOP_FBOX_MAX);
			return 0;
		}
	}
	return 1;
}

static size_t fbox_page(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (size_t)ps : 4096;
}

/* Where the wide areas start: after every rank's slots, on a page */
static size_t fbox_wide_off(int nranks)
{
	size_t pg = fbox_page();

	return (HOP_FBOX_LINE + (size_t)nranks * HOP_FBOX_STRIDE + pg - 1) &
	       ~(pg - 1);
}

static size_t fbox_len(int nranks)
{
	return fbox_wide_off(nranks) + (size_t)nranks * HOP_FBOX_WIDE_RING;
}

/* Its pages now: a first touch in a collective is a page fault. */
static void fbox_prefault(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	(void)madvise(p, len, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

static void *fbox_map(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	fbox_prefault(p, len);
	return p;
}

/* Rank 0: create and map the region as @name. NULL with @why set. */
static void *fbox_create(char *name, size_t namelen, size_t len, char *why,
			 size_t whylen)
{
	unsigned long long rnd = 0, ns = 0;
	struct stat st;
	void *p;
	int fd, err;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = hop_now_ns() ^ ((uint64_t)getpid() << 32);
	if (!stat("/proc/self/ns/pid", &st))
		ns = (unsigned long long)st.st_ino;
	snprintf(name, namelen, "/hop-%d-r0-%016llx-n%llu", (int)getpid(),
		 rnd, ns);
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, whylen, "shm_open(%s): %s", name,
			 strerror(errno));
		return NULL;
	}
	/* reserve the memory: a full /dev/shm fails here, not as SIGBUS */
	if ((err = posix_fallocate(fd, 0, (off_t)len)) ||
	    !(p = fbox_map(fd, len))) {
		if (err)
			close(fd);
		snprintf(why, whylen, "%zu B for %s: %s", len, name,
			 strerror(err ? err : errno));
		shm_unlink(name);
		return NULL;
	}
	*(uint64_t *)p = FBOX_MAGIC;
	return p;
}

/* Ranks 1..: map rank 0's region @name of @len bytes. */
static void *fbox_attach(const char *name, size_t len, char *why,
			 size_t whylen)
{
	struct stat st;
	void *p;
	int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);

	if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size != len) {
		snprintf(why, whylen, "cannot open %s (%zu B): %s", name, len,
			 fd < 0 ? strerror(errno) : "wrong size");
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (!(p = fbox_map(fd, len))) {
		snprintf(why, whylen, "mmap of %s: %s", name, strerror(errno));
		return NULL;
	}
	if (*(const uint64_t *)p != FBOX_MAGIC) {
		munmap(p, len);
		snprintf(why, whylen, "%s is not a hop fast-box region", name);
		return NULL;
	}
	return p;
}

/* Would this rank use fast boxes on @comm? The same answer on every rank
 * except for HOP_FBOX and the transport, which the exchange reconciles. */
static int fbox_wanted(const struct hop_comm *comm)
{
	const struct hop_prov_ops *ops = hop_comm_class_ops(comm, HOP_LINK_INTRA);

	return comm->cfg.fbox && hop_prov_has(ops, HOP_PROV_CAP_HOST_MEMORY);
}

/* The two exchanges; *@base the mapped region or NULL (not used);
 * *@cma: every rank read every other by CMA. */
static int fbox_agree(struct hop_comm *comm, size_t len, void **base,
		      int *cma)
{
	int n = comm->nranks, all_want = 1, all_ok = 1;
	uint64_t deadline = hop_comm_deadline(comm);
	struct fbox_info mine, *all;
	char why[HOP_MSG_LEN] = "";
	int ret;

	*base = NULL;
	if (!(all = calloc((size_t)n, sizeof(*all))))
		return hop_set_error(comm, HOP_ERR_NO_MEMORY, "fast boxes: "
				     "out of memory for %d ranks", n);
	memset(&mine, 0, sizeof(mine));
	mine.want = fbox_wanted(comm);
	mine.pid = (int32_t)getpid();
	mine.probe = (uintptr_t)&fbox_probe;
	if (mine.want && comm->rank == 0)
		*base = fbox_create(mine.name, sizeof(mine.name), len, why,
				    sizeof(why));
	if ((ret = hop_bootstrap_allgather(comm->bs, &mine, all, sizeof(mine),
					   deadline)))
		goto err_bs;
	for (int r = 0; r < n; r++)
		all_want &= all[r].want;
	if (all_want && comm->rank && all[0].name[0]) {
		all[0].name[sizeof(all[0].name) - 1] = '\0';
		*base = fbox_attach(all[0].name, len, why, sizeof(why));
	}
	mine.ok = *base != NULL;
	mine.cma = mine.ok && comm->cfg.shm_cma && fbox_cma_probe(comm, all);
	ret = hop_bootstrap_allgather(comm->bs, &mine, all, sizeof(mine),
				      deadline);
	if (comm->rank == 0 && mine.name[0])
		shm_unlink(mine.name); /* mapped by all, or never will be */
	if (ret)
		goto err_bs;
	*cma = 1;
	for (int r = 0; r < n; r++) {
		all_ok &= all[r].ok;
		*cma &= all[r].cma;
	}
	if (!all_ok && *base) {
		munmap(*base, len);
		*base = NULL;
	}
	if (why[0])
		HOP_INFO("rank %d: fast boxes: %s", comm->rank, why);
	free(all);
	return 0;

err_bs:
	if (*base)
		munmap(*base, len);
	*base = NULL;
	if (comm->rank == 0 && mine.name[0])
		shm_unlink(mine.name);
	free(all);
	return hop_set_error(comm, ret, "fast boxes: exchange among %d ranks: "
			     "%s", n, hop_bootstrap_error(comm->bs));
}

/* The comm failed outside the fast boxes (a provider found a dead peer,
 * a deadline, an abort): ranks waiting on this one's slots see it. */
static void fbox_on_fail(struct hop_comm *comm, int code)
{
	if (comm->coll && comm->coll->fbox)
		hop_fbox_failed(comm->coll->fbox, code);
}

static int fbox_cpu_shared(struct hop_comm *comm)
{
	return comm->coll && comm->coll->fbox &&
	       hop_fbox_cpu_shared(comm->coll->fbox);
}

int hop_fbox_init(struct hop_comm *comm)
{
	struct hop_coll *c = comm->coll;
	size_t len = fbox_len(comm->nranks);
	struct hop_fbox *fb;
	void *base;
	int ret, cma;

	/* equal on every rank: who takes part in the exchanges */
	if (comm->nranks < 2 || comm->nranks > HOP_FBOX_RANKS || c->hosts ||
	    hop_comm_derived(comm) || !comm->bs)
		return 0;
	if ((ret = fbox_agree(comm, len, &base, &cma)) || !base)
		return ret;
	if (!(fb = calloc(1, sizeof(*fb))) ||
	    (cma && !(fb->chunk = malloc(3 * HOP_FBOX_CMA_CHUNK)))) {
		free(fb);
		munmap(base, len);
		return hop_set_error(comm, HOP_ERR_NO_MEMORY, "fast boxes: "
				     "out of memory");
	}
	fb->base = base;
	fb->len = len;
	fb->rank = comm->rank;
	fb->nranks = comm->nranks;
	fb->seq = c->seq;
	fb->cma = cma;
	fb->wide_off = fbox_wide_off(comm->nranks);
	hop_fbox_ctrl(fb, fb->rank)->pid = (int32_t)getpid();
	hop_fbox_ctrl(fb, fb->rank)->cause_peer = -1;
	atomic_store_explicit(&hop_fbox_ctrl(fb, fb->rank)->cpu,
			      (int32_t)sched_getcpu(), memory_order_relaxed);
	c->fbox = fb;
	comm->on_fail = fbox_on_fail;
	comm->cpu_shared = fbox_cpu_shared;
	HOP_INFO("rank %d: fast boxes on: blocking AllReduce, Broadcast, "
		 "Reduce, AllGather, AllToAll and ReduceScatter up to %d B "
		 "among %d ranks, in the wide area up to %u B (AllReduce: "
		 "%zu B) (HOP_FBOX=0: off)", comm->rank, HOP_FBOX_MAX,
		 comm->nranks, HOP_FBOX_WIDE_MAX,
		 hop_fbox_wide_max(HOP_COLL_ALLREDUCE, comm->nranks));
	if (cma)
		HOP_INFO("rank %d: fast boxes by CMA above %d B (HOP_SHM_CMA=0: "
			 "off)", comm->rank, HOP_FBOX_MAX);
	return 0;
}

void hop_fbox_fini(struct hop_comm *comm)
{
	struct hop_fbox *fb = comm && comm->coll ? comm->coll->fbox : NULL;

	if (!fb)
		return;
	comm->on_fail = NULL;
	comm->cpu_shared = NULL;
	munmap(fb->base, fb->len);
	free(fb->chunk);
	free(fb->copy);
	free(fb);
	comm->coll->fbox = NULL;
}
