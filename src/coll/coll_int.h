/*
 * coll_int.h - private state of the collectives layer: the per-comm pool
 * of ops (each keeps its schedule, request array and scratch buffer, so
 * a repeated collective allocates nothing) and the algorithm selection.
 */
#ifndef HOP_COLL_COLL_INT_H
#define HOP_COLL_COLL_INT_H

#include "coll/coll.h"
#include "coll/sched.h"
#include "core/core.h"
#include "model/model.h"
#include "p2p/p2p.h"

/* One public collective call's arguments (coll_api.c checks them; the
 * fast boxes, fbox.c, run them as they are). */
struct hop_coll_call {
	const char *fn;
	int kind;               /* HOP_COLL_* */
	size_t count;
	hop_dtype_t dtype;
	hop_op_t op;
	int root;
	const void *sendbuf;
	void *recvbuf;
};

struct hop_coll_op {
	struct hop_comm *comm;
	struct hop_sched sched;
	struct hop_p2p_req *reqs;       /* one per step */
	uint8_t *posted;                /* step handed to p2p, not completed */
	int reqs_cap;
	void *scratch;                  /* grows, kept */
	size_t scratch_cap;
	uint32_t seq, sig;
	int status;                     /* first error, 0 */
	int deferred;                   /* a size disagreement: the error
					 * once every step ran (coll_op.c) */
	int outstanding;                /* p2p requests in flight */
	int state;                      /* OP_FREE / OP_ACTIVE / OP_ZOMBIE */
	struct hop_coll_args dargs;     /* what the caller asked, for desc */
	char desc[160];                 /* op_desc(): formatted only for a
					 * message, not on every call */
	char why[HOP_MSG_LEN];          /* a failed step's own message */
	struct hop_coll_op *next;
};

struct hop_coll_choice {
	int algo;
	int sub_algo[2];                /* HOP_ALGO_HIER: per link class */
	int leaders;                    /* HOP_ALGO_HIER: its leaders' form */
	size_t chunk_bytes;
	int depth;
	double predicted;               /* seconds, by the cost model */
};

/* A remembered choice (select.c): the model costs microseconds per call. */
struct hop_coll_memo {
	int kind, nranks;               /* kind + 1; 0 = empty slot */
	size_t bytes;
	int forced, depth;              /* the tuning it was chosen under */
	size_t chunk_size;
	struct hop_coll_choice choice;
};
#define HOP_COLL_MEMO 64

/* Tuning inputs of the selection. */
struct hop_coll_tune {
	int forced[HOP_COLL_KIND_COUNT]; /* HOP_ALGO, HOP_ALGO_AUTO = none */
	size_t chunk_size;              /* HOP_CHUNK_SIZE, 0 = auto */
	int depth;                      /* HOP_PIPELINE_DEPTH, 0 = auto */
	int hier_form;                  /* HOP_HIER_FORM: HOP_MODEL_FORM_* */
	/* cost model: the link every choice is predicted on (HOP_PROFILE or
	 * the provider's defaults, hop_coll_tune_model()); without it
	 * (have_link 0) select.c uses the built-in tcp link */
	struct hop_model_link link;
	int have_link;
	char link_src[192];             /* where the link's numbers came from */
	/* the agreed link of each class and the comm's placement on hosts
	 * (select.c, on the first choice): 1 loaded, -1 none (the one link
	 * above prices every choice), 0 not yet */
	struct hop_model_link cls[2];
	struct hop_model_place place;
	int have_cls;
	struct hop_coll_memo memo[HOP_COLL_MEMO];
};

struct hop_coll {
	uint32_t seq;                   /* collectives started on this comm */
	/* rooted collectives run as schedules since the last closing
	 * barrier, and the bytes they may have left unexpected at a rank
	 * (hop_coll_launch()) */
	int rooted_calls;
	uint64_t rooted_bytes;
	/* the placement every schedule is built for (hop_coll_args.hosts):
	 * the host of each rank, hosts renumbered 0.. by their lowest rank
	 * in this comm; NULL when all ranks share one host */
	int *hosts;
	uint64_t hsig;
	struct hop_coll_tune tune;
	struct hop_coll_op *free;       /* ready for reuse */
	struct hop_coll_op *active;     /* started, not released */
	struct hop_coll_op *zombies;    /* released with requests in flight */
	struct hop_fbox *fbox;          /* fast boxes (fbox.h), or NULL */
};

/*
 * hop_coll_select() - The one place that picks an algorithm, chunk size
 * and pipeline depth for a collective of @kind moving @bytes per rank
 * (the per-rank contribution for allgather/reducescatter) among @nranks.
 * HOP_ALGO wins; otherwise the algorithm and chunk count of least time
 * predicted by the cost model (select.c). Remembers recent choices in
 * @tune->memo, so @tune is not const.
 */
void hop_coll_select(int kind, size_t bytes, int nranks,
		     struct hop_coll_tune *tune,
		     struct hop_coll_choice *out);

/*
 * hop_coll_choose_bytes() - The choice for a call of @kind pricing @bytes
 * on @comm: what every collective runs (hop_coll_launch()) and, through
 * hop_coll_choose(), what hop_coll_plan() reports.
 * hop_coll_choose() - The same for @count elements of @dtype, priced as
 * hop_coll_call_bytes(): count times the element size (the largest block
 * for the v-variants), 0 for a barrier and for alltoallv.
 */
void hop_coll_choose_bytes(struct hop_comm *comm, int kind, size_t bytes,
			   struct hop_coll_choice *out);
void hop_coll_choose(struct hop_comm *comm, int kind, size_t count,
		     hop_dtype_t dtype, struct hop_coll_choice *out);
size_t hop_coll_call_bytes(int kind, size_t count, hop_dtype_t dtype);

/* Load the cost model's link into @tune: the HOP_PROFILE file @profile
 * (NULL/"" = none) else the built-in link in the @caps of @provider.
 * HOP_ERR_PARSE / HOP_ERR_SYSTEM / ... with @err naming the file and
 * field. */
int hop_coll_tune_model(struct hop_coll_tune *tune, const char *profile,
			const char *provider, const struct hop_prov_caps *caps,
			char *err, size_t errlen);

/* Parse HOP_ALGO into @forced; HOP_ERR_CONFIG naming the bad part. */
int hop_coll_parse_algo(const char *spec, int forced[HOP_COLL_KIND_COUNT],
			char *err, size_t errlen);

const char *hop_coll_kind_name(int kind);
const char *hop_coll_algo_name(int algo);

/* The algorithm number the fast boxes' calls sign with (fbox.c): no
 * schedule has it, so a rank that scheduled the same call mismatches. */
#define HOP_COLL_ALGO_FBOX 1000

/* The signature ranks compare to detect mismatched collectives. */
uint32_t hop_coll_signature(const struct hop_coll_args *a);

/* Ops: get one for @a (prefers one whose cached schedule matches). */
struct hop_coll_op *hop_coll_op_get(struct hop_comm *comm,
				    const struct hop_coll_args *a);
/* Build, post the first steps; on failure the op is released. */
int hop_coll_op_start(struct hop_coll_op *op, const struct hop_coll_args *a,
		      const void *sendbuf, void *recvbuf);

/*
 * The largest buffer of a collective, 2^56 B (64 PiB): more than any
 * address space holds (x86-64 with 5-level paging maps 2^56 B for user
 * space), and small enough that the schedule's arithmetic (chunks rounded
 * up, scratch of a few buffers, offsets) cannot wrap a 64-bit size_t.
 */
#define HOP_COLL_MAX_BYTES ((uint64_t)1 << 56)

/* 1 when [a, a + alen) and [b, b + blen) share a byte. */
static inline int hop_coll_overlap(const void *a, size_t alen, const void *b,
				   size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return alen && blen && x < y + blen && y < x + alen;
}

/* One collective call, checked: what hop_coll_launch() runs. */
struct hop_coll_launch {
	const char *fn;                 /* public name, for messages */
	struct hop_coll_args a;         /* kind, root, count, dtype, op,
					 * inplace (and a v-variant's blocks);
					 * the launch fills the rest */
	size_t bytes;                   /* the size the model prices */
	const void *sendbuf;
	void *recvbuf;
	const size_t *v[4];             /* alltoallv: struct hop_sched.v */
};

/* Choose the algorithm, start the schedule; with @reqp, return its
 * request, else wait for it. On a claimed comm with collectives. */
int hop_coll_launch(struct hop_comm *comm, struct hop_coll_launch *l,
		    hop_request_t **reqp);

typedef int (*hop_coll_run_fn)(struct hop_comm *comm, void *ctx,
			       hop_request_t **reqp);

/* Claim @comm (hop_comm_enter()), check @reqp of an i-form (@icall) and
 * that the comm has collectives, call @run, release. */
int hop_coll_enter_run(struct hop_comm *comm, const char *fn,
		       hop_request_t **reqp, int icall, hop_coll_run_fn run,
		       void *ctx);

#endif /* HOP_COLL_COLL_INT_H */
