/*
 * fbox_wide.c - the fast boxes' wide form: a blocking Broadcast or Reduce
 * above a slot's HOP_FBOX_MAX and up to HOP_FBOX_WIDE_MAX bytes copies its
 * data into the writer's wide area, a ring of HOP_FBOX_WIDE_RING bytes
 * in the shared region, and its slot carries the offset; the readers
 * (a Broadcast's, a Reduce's root) read it where it lies. A writer runs
 * ahead of its readers until the ring is full, as with the slots, so
 * ranks sharing cores do several calls per time slice, and no eager
 * message is ever held unexpected.
 *
 * The ring: entries follow each other from offset 0; one that would pass
 * the ring's end, or HOP_FBOX_WIDE_AHEAD times its own size (small
 * calls keep to a cached part of the ring), starts at 0 again. An entry
 * is overwritten only once every peer's wread word says it finished the
 * collective that wrote it; the entries not known to be read are kept
 * oldest first, and those a new entry covers are exactly the oldest
 * (those at or past the writing position, in ring order).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll_int.h"
#include "coll/fbox_int.h"

/* The payload of a slot in this form: where the data lies in the
 * writer's ring, or WIDE_NONE (a header only) */
#define WIDE_NONE UINT64_MAX

static uint8_t *wide_area(const struct hop_fbox *fb, int r)
{
	return fb->base + fb->wide_off + (size_t)r * HOP_FBOX_WIDE_RING;
}

/* Every peer's wread at @want or beyond (it finished the collective whose
 * flag is @want). */
static int wait_read(struct hop_comm *comm, struct hop_fbox *fb,
		     const struct hop_coll_call *c, uint64_t want, uint64_t seq)
{
	return hop_fbox_wait_peers(comm, fb, c,
				   offsetof(struct hop_fbox_ctrl, wread), want,
				   seq, "to read this rank's wide data of an "
				   "earlier collective", &fb->wfloor);
}

/* Drop the oldest entry once every peer has read it. */
static int reclaim_oldest(struct hop_comm *comm, struct hop_fbox *fb,
			  const struct hop_coll_call *c, uint64_t seq)
{
	const struct hop_fbox_went *e = &fb->went[fb->whead];
	int ret;

	if (e->flag > fb->wfloor &&
	    (ret = wait_read(comm, fb, c, e->flag, seq)))
		return ret;
	fb->whead = (fb->whead + 1) % HOP_FBOX_WIDE_ENTRIES;
	fb->wcount--;
	return 0;
}

/* Room for @len bytes in this rank's ring: its offset in *@off. */
static int wide_alloc(struct hop_comm *comm, struct hop_fbox *fb,
		      const struct hop_coll_call *c, uint64_t seq, size_t len,
		      size_t *off)
{
	size_t lim = len * HOP_FBOX_WIDE_AHEAD;
	int ret;

	if (lim > HOP_FBOX_WIDE_RING)
		lim = HOP_FBOX_WIDE_RING;
	if (fb->wpos + len > lim) {
		/* start again at 0: the entries at or past here go first */
		while (fb->wcount && fb->went[fb->whead].off >= fb->wpos)
			if ((ret = reclaim_oldest(comm, fb, c, seq)))
				return ret;
		fb->wpos = 0;
	}
	while (fb->wcount && fb->went[fb->whead].off >= fb->wpos &&
	       fb->went[fb->whead].off < fb->wpos + len)
		if ((ret = reclaim_oldest(comm, fb, c, seq)))
			return ret;
	*off = fb->wpos;
	fb->went[(fb->whead + fb->wcount++) % HOP_FBOX_WIDE_ENTRIES] =
		(struct hop_fbox_went){ .off = (uint32_t)fb->wpos,
					.flag = seq + 1 };
	fb->wpos += len;
	return 0;
}

int hop_fbox_wide_publish_except(struct hop_comm *comm, struct hop_fbox *fb,
				 const struct hop_coll_call *c, uint64_t seq,
				 const void *data, size_t bytes, size_t hole,
				 size_t hole_len)
{
	uint64_t at = WIDE_NONE;
	size_t off, len = (bytes + HOP_FBOX_LINE - 1) &
			  ~(size_t)(HOP_FBOX_LINE - 1);
	int ret;

	if (bytes) {
		uint8_t *area;

		if ((ret = wide_alloc(comm, fb, c, seq, len, &off)))
			return ret;
		area = wide_area(fb, fb->rank) + off;
		hop_copy(area, data, hole);
		hop_copy(area + hole + hole_len,
			 (const uint8_t *)data + hole + hole_len,
			 bytes - hole - hole_len);
		at = off;
	}
	/* the flag's release store publishes the ring's bytes too */
	return hop_fbox_publish(comm, fb, c, seq, &at, sizeof(at));
}

const uint8_t *hop_fbox_wide_read(struct hop_comm *comm, struct hop_fbox *fb,
				  const struct hop_coll_call *c, uint64_t seq,
				  int q, size_t bytes, int *ret)
{
	const uint8_t *p = hop_fbox_read_slot(comm, fb, c, seq, q, ret);
	uint64_t at;

	if (!p)
		return NULL;
	memcpy(&at, p, sizeof(at));
	if (at == WIDE_NONE || at > HOP_FBOX_WIDE_RING - bytes) {
		*ret = hop_fbox_failed(fb, hop_comm_fail(comm,
			HOP_ERR_PROTOCOL, "rank %d: %s (fast box, collective "
			"#%llu): rank %d's slot names no %zu B in its wide "
			"area (offset %#llx)", comm->rank, c->fn,
			(unsigned long long)seq, q, bytes,
			(unsigned long long)at));
		return NULL;
	}
	return wide_area(fb, q) + at;
}
