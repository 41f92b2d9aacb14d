/*
 * shm_mr.c - memory regions of the shm provider.
 *
 * Two copies of the region table, kept in step: a private one, which this
 * rank checks every write it applies from its rings against, and a
 * published one in the segment, which writers check before copying into
 * this rank by process_vm_writev (CMA). Peers map the published table
 * read-only; a peer that makes its mapping writable anyway can fool only
 * its own checks, never this rank's (docs/providers.md).
 *
 * Deregistration fences CMA: a writer announces the key it is about to
 * copy through in its ring of this rank's segment, then checks the
 * published table, then copies, then clears the announcement. Retiring
 * the key, then waiting until no ring announces it, means a write either
 * saw the key gone (and was refused) or finished before dereg returns.
 */
#include <sched.h>
#include <stdlib.h>

#include "transport/shm/shm.h"

int shm_mr_init(struct hop_prov *prov, void *published, uint32_t nslots)
{
	void *priv = malloc(hop_mrtab_size(nslots));

	if (!priv)
		return HOP_ERR_NO_MEMORY;
	if (hop_mrtab_init(&prov->mrs, priv, nslots)) {
		free(priv);
		return HOP_ERR_NO_MEMORY;
	}
	if (hop_mrtab_init(&prov->pub, published, nslots)) {
		shm_mr_fini(prov);
		return HOP_ERR_NO_MEMORY;
	}
	return 0;
}

void shm_mr_fini(struct hop_prov *prov)
{
	hop_emu_mr_free_all(&prov->mrs_live);
	free(prov->mrs.tab);
	hop_mrtab_fini(&prov->mrs);
	hop_mrtab_fini(&prov->pub);
}

static struct hop_emu_mr_set shm_mr_set(struct hop_prov *prov)
{
	return (struct hop_emu_mr_set){ prov->ctx, "shm", SHM_MR_MAGIC,
					&prov->mrs, &prov->mrs_live };
}

int shm_mr_reg(struct hop_prov *prov, void *addr, size_t len, unsigned access,
	       struct hop_prov_mr **out)
{
	struct hop_emu_mr_set set;
	uint64_t key;
	int ret;

	if (!prov)
		return HOP_ERR_INVALID_ARG;
	set = shm_mr_set(prov);
	if ((ret = hop_emu_mr_reg(&set, addr, len, access, out)))
		return ret;
	/* both tables take the same steps, so they hand out the same key */
	if (hop_mrtab_add(&prov->pub, addr, len, access, &key) ||
	    key != (*out)->key) {
		hop_emu_mr_dereg(&set, *out);
		*out = NULL;
		return prov->ctx->error(prov->ctx, HOP_ERR_INTERNAL,
				     "shm: mr_reg: the published region "
				     "table is out of step with the private "
				     "one");
	}
	return 0;
}

/* Wait until no writer announces @key (0: any key) in its ring of our
 * segment. */
static int shm_mr_fence(struct hop_prov *prov, uint64_t key)
{
	uint64_t deadline = 0;
	int ret;

	/* pairs with the writer's fence between announcing and checking */
	atomic_thread_fence(memory_order_seq_cst);
	/* a writer announces only after linking: link it to see its ring */
	if ((ret = shm_lazy_accept(prov)))
		return ret;
	for (int i = 0; i < prov->nact; i++) {
		int r = prov->act[i];
		struct shm_ring *ring = shm_seg_ring(prov->seg, r);
		unsigned spins = 0;
		uint64_t busy;

		while ((busy = atomic_load_explicit(&ring->cma_key,
						    memory_order_acquire)) &&
		       (!key || busy == key)) {
			if (++spins % 256) {
				sched_yield();
				continue;
			}
			/* a dead writer copies nothing more */
			if (r != prov->rank && shm_dead(&prov->peers[r]))
				break;
			if (!deadline)
				deadline = hop_prov_deadline(prov->ctx);
			if (hop_deadline_passed(deadline))
				return prov->ctx->fail_comm(
					prov->ctx, HOP_ERR_TIMEOUT,
					"shm: deregistering key 0x%llx: rank "
					"%d is still copying into it after "
					"%d ms", (unsigned long long)busy, r,
					prov->ctx->timeout_ms);
		}
	}
	return 0;
}

int shm_mr_dereg(struct hop_prov *prov, struct hop_prov_mr *pub)
{
	struct hop_emu_mr_set set;
	uint64_t key;
	int ret;

	if (!prov || !pub)
		return HOP_ERR_INVALID_ARG;
	key = pub->key;
	set = shm_mr_set(prov);
	if ((ret = hop_emu_mr_dereg(&set, pub)))
		return ret;
	hop_mrtab_remove(&prov->pub, key);
	return shm_mr_fence(prov, key);
}

void shm_mr_retire_all(struct hop_prov *prov)
{
	for (struct hop_emu_mr *mr = prov->mrs_live; mr; mr = mr->next)
		hop_mrtab_remove(&prov->pub, mr->pub.key);
	shm_mr_fence(prov, 0);
}
