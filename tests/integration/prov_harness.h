/*
 * prov_harness.h - multi-process harness for the provider tests: fork N
 * ranks joined by the real bootstrap (hop_get_unique_id in the parent),
 * open a provider directly on a bare communicator, and drive it (post with
 * retry on HOP_PROV_AGAIN, collect completions, wait for events), every
 * wait under a deadline.
 */
#ifndef HOP_TESTS_PROV_HARNESS_H
#define HOP_TESTS_PROV_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "core/bootstrap.h"
#include "core/core.h"
#include "transport/provider.h"

struct ph {
	int rank, n;
	const char *prov_name;
	hop_unique_id_t id;             /* the bootstrap's unique id */
	struct hop_comm *comm;
	struct hop_bootstrap *bs;
	const struct hop_prov_ops *ops;
	struct hop_prov *prov;
	int wait_ms;                    /* deadline of each ph_* wait */
	int idle;                       /* empty polls in a row */
	int spin;                       /* empty polls before wait() (HOP_SPIN) */
	/* remote events (RECV, RECV_IMM) not consumed yet, oldest first */
	struct hop_cqe *ev;
	size_t evn, evcap;
	/* local completions: done[wr_id] */
	uint8_t *done;
	size_t done_cap;
	uint64_t nlocal;
};

#define PH_CHECK(ph, cond, ...)                                               \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "[rank %d] %s:%d: check failed: %s: ", \
				(ph)->rank, __FILE__, __LINE__, #cond);        \
			fprintf(stderr, __VA_ARGS__);                          \
			fprintf(stderr, "\n");                                 \
			return -1;                                             \
		}                                                             \
	} while (0)

typedef int (*ph_fn)(struct ph *ph, void *arg);

/*
 * ph_run() - Fork @n ranks; each opens the bootstrap and calls @fn (which
 * opens the provider with ph_open() as often as it likes). A rank exits 0
 * when @fn returns 0. @killed: a rank expected to die by SIGKILL, or -1.
 * Return: 0 when every rank passed.
 */
int ph_run(const char *prov, int n, ph_fn fn, void *arg, int killed,
	   int timeout_s);

int ph_open(struct ph *ph);     /* fresh comm state + ops->open */
/* What the last failed call said: the comm's failure when it failed, else
 * the error the core or provider set without failing it (a failed
 * exchange during open, for one). */
const char *ph_error(const struct ph *ph);
void ph_close(struct ph *ph);
int ph_barrier(struct ph *ph);
int ph_allgather(struct ph *ph, const void *mine, void *all, size_t len);

/* One poll; returns completions handled or a negative code. */
int ph_pump(struct ph *ph);
/* Post, polling and retrying while the provider says HOP_PROV_AGAIN. */
int ph_write(struct ph *ph, int peer, struct hop_prov_mr *lmr,
	     const void *src, size_t len, uint64_t raddr, uint64_t rkey,
	     uint32_t imm, unsigned flags, uint64_t wr_id);
int ph_send(struct ph *ph, int peer, const void *buf, size_t len,
	    unsigned flags, uint64_t wr_id);
/* Wait for the local completion of @wr_id. */
int ph_wait_local(struct ph *ph, uint64_t wr_id);
/* The oldest remote event from @peer with @op (0: any op). */
int ph_next_event(struct ph *ph, int peer, int op, struct hop_cqe *out);
/* Poll until the comm fails; returns its code (0 if it did not fail
 * within @ms). */
int ph_wait_failure(struct ph *ph, int ms);

/* Deterministic test bytes. */
static inline uint8_t ph_byte(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u +
		     (uint32_t)(i >> 13);

	return (uint8_t)(x ^ (x >> 11));
}
void ph_fill(void *buf, size_t len, uint32_t seed);
/* Index of the first byte differing from the pattern, or -1. */
long ph_verify(const void *buf, size_t len, uint32_t seed);

#endif /* HOP_TESTS_PROV_HARNESS_H */
