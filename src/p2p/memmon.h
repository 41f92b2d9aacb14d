/*
 * memmon.h - the process-wide unmapping monitor of the registration cache
 * (docs/regcache.md).
 *
 * Every range the cache keeps is registered with one userfaultfd opened in
 * user-mode-only mode (no privilege needed, vm.unprivileged_userfaultfd
 * may stay 0) in write-protect mode without any page write-protected, so
 * no page fault is ever trapped; the kernel only reports, for registered
 * ranges, munmap (also free() of a large block and brk trims), mremap
 * moves and madvise(MADV_DONTNEED/REMOVE/FREE) page drops. The kernel
 * blocks the unmapping thread until the event is read, so a thread reads
 * them, and appends them to a log every cache catches up with before each
 * lookup.
 *
 * When the userfaultfd cannot be had (seccomp, valgrind, an old kernel) or
 * HOP_REG_MONITOR names no monitor, the caches do not keep user buffers'
 * registrations past their transfer (see hop_memmon_attach()).
 */
#ifndef HOP_P2P_MEMMON_H
#define HOP_P2P_MEMMON_H

#include "p2p/regcache.h"

struct hop_config;

/*
 * hop_memmon_attach() - Set @rc's budget from @cfg (HOP_REG_CACHE,
 * HOP_REG_CACHE_BYTES) and its monitor from HOP_REG_MONITOR: "uffd" (the
 * default) starts the process-wide monitor, or, when it cannot, turns
 * caching off (one info line per process); "none" caches without watching,
 * on the application's word that it never unmaps memory it passed to hop
 * while the registration may be cached.
 */
void hop_memmon_attach(struct hop_regcache *rc, const struct hop_config *cfg);

/* Events read so far (tests). */
unsigned long long hop_memmon_events(void);

#endif /* HOP_P2P_MEMMON_H */
