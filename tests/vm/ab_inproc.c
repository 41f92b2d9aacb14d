/*
 * ab_inproc.c - an A/B of libhop builds inside one process, beside a raw
 * verbs ping-pong (docs/results/2026-12-05-verbs-eager-direct.md): runs of separate programs
 * drift by +-25 % under TCG, so only passes a fraction of a second apart
 * can be compared.
 *
 * usage: scripts/softroce-cluster -n 2 -- \
 *            tests/vm/ab_inproc [-p PASSES] [-i ITERS] [-s BYTES] ARM...
 *
 * ARM is a libhop.so (each loaded with dlmopen() into a link map of its
 * own, with its own communicator; "LIB|VAR=VAL,..." sets HOP_* variables
 * for that one), or "raw": ib_write_lat's loop on a QP of its own (a
 * signalled inline RDMA write of BYTES, its completion polled, then a spin
 * on the buffer's last byte). The first ARM must be a library: its
 * communicator carries the others' set-up. Each pass (default 60) runs
 * ITERS (default 200) ping-pongs of every arm, in an order that rotates
 * per pass. Rank 0 prints "AB pass arm median_us" per pass, then per arm
 * the median of its medians and the median over passes of its ratio to
 * arm 0 (with the geometric mean). Two ranks, one per VM. A measurement,
 * not a test.
 */
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hop/hop.h>

#define MAX_ARMS 8
#define MAX_VARS 8
#define RAW_BUF 4096
#define TAG_SETUP 99
#define TAG_PING 1
#define RAW_WAIT_S 10.0          /* a raw wait longer than this: the peer is gone */

struct raw_addr {
	uint32_t qpn, psn, rkey, pad;
	uint64_t addr;
	union ibv_gid gid;
};

struct raw {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	volatile char *buf;      /* [0, 2048) is written by the peer */
	struct raw_addr peer;
	unsigned sent, seen;
};

struct arm {
	const char *spec;
	void *lib;               /* NULL: the raw arm */
	struct raw *raw;
	hop_comm_t *comm;
	int (*send)(hop_comm_t *, const void *, size_t, int, int);
	int (*recv)(hop_comm_t *, void *, size_t, int, int, hop_status_t *);
	int (*destroy)(hop_comm_t *);
	double *med;             /* per pass */
};

static int rank, peer;

static void die(const char *what)
{
	fprintf(stderr, "ab_inproc: rank %d: %s\n", rank, what);
	exit(1);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Called every 2^20 polls of a raw wait: give up after RAW_WAIT_S. */
static void raw_deadline(double *start, unsigned long polls, const char *what)
{
	if (polls & ((1ul << 20) - 1))
		return;
	if (*start == 0)
		*start = now_us();
	else if (now_us() - *start > RAW_WAIT_S * 1e6)
		die(what);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void *sym(void *lib, const char *name)
{
	void *f = dlsym(lib, name);

	if (!f)
		die(name);
	return f;
}

/* Swap @len bytes with the peer over arm 0's communicator. */
static void exchange(struct arm *a0, const void *mine, void *theirs,
		     size_t len)
{
	int ok = rank == 0 ?
		!a0->send(a0->comm, mine, len, peer, TAG_SETUP) &&
		!a0->recv(a0->comm, theirs, len, peer, TAG_SETUP, NULL) :
		!a0->recv(a0->comm, theirs, len, peer, TAG_SETUP, NULL) &&
		!a0->send(a0->comm, mine, len, peer, TAG_SETUP);

	if (!ok)
		die("exchange over arm 0 failed");
}

static void raw_connect(struct raw *r, int gidx)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("raw: QP to INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = r->peer.qpn;
	a.rq_psn = r->peer.psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = r->peer.gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_AV |
				     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER))
		die("raw: QP to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 18;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 1000u + (unsigned)rank;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(r->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("raw: QP to RTS");
}

static struct raw *raw_open(struct arm *a0)
{
	const char *g = getenv("SOFTROCE_GID_INDEX");
	int gidx = g ? atoi(g) : 1;
	struct raw *r = calloc(1, sizeof(*r));
	struct ibv_device **devs = ibv_get_device_list(NULL);
	struct raw_addr me = { 0 };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 220 },
	};
	void *buf;

	if (!r || !devs || !devs[0] || !(r->ctx = ibv_open_device(devs[0])))
		die("raw: no RDMA device");
	ibv_free_device_list(devs);
	if (!(r->pd = ibv_alloc_pd(r->ctx)) ||
	    !(r->cq = ibv_create_cq(r->ctx, 64, NULL, NULL, 0)))
		die("raw: PD or CQ");
	if (posix_memalign(&buf, RAW_BUF, RAW_BUF))
		die("raw: out of memory");
	memset(buf, 0, RAW_BUF);
	r->buf = buf;
	if (!(r->mr = ibv_reg_mr(r->pd, buf, RAW_BUF, IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE)))
		die("raw: registration");
	qa.send_cq = qa.recv_cq = r->cq;
	if (!(r->qp = ibv_create_qp(r->pd, &qa)))
		die("raw: QP");
	me.qpn = r->qp->qp_num;
	me.psn = 1000u + (unsigned)rank;
	me.rkey = r->mr->rkey;
	me.addr = (uintptr_t)buf;
	if (ibv_query_gid(r->ctx, 1, gidx, &me.gid))
		die("raw: GID (set SOFTROCE_GID_INDEX)");
	exchange(a0, &me, &r->peer, sizeof(me));
	raw_connect(r, gidx);
	return r;
}

/* ib_write_lat's step: write, wait for its completion. */
static void raw_post(struct raw *r, size_t n)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->buf + RAW_BUF / 2,
			       .length = (uint32_t)n, .lkey = r->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED |
						IBV_SEND_INLINE }, *bad;
	struct ibv_wc wc;
	unsigned long polls = 0;
	double start = 0;
	int got;

	r->buf[RAW_BUF / 2 + n - 1] = (char)++r->sent;
	wr.wr.rdma.remote_addr = r->peer.addr;
	wr.wr.rdma.rkey = r->peer.rkey;
	if (ibv_post_send(r->qp, &wr, &bad))
		die("raw: ibv_post_send");
	while (!(got = ibv_poll_cq(r->cq, 1, &wc)))
		raw_deadline(&start, ++polls, "raw: no completion of a write "
			     "within 10 s");
	if (got < 0 || wc.status != IBV_WC_SUCCESS)
		die("raw: write failed");
}

static void raw_wait(struct raw *r, size_t n)
{
	char want = (char)++r->seen;
	unsigned long polls = 0;
	double start = 0;

	while (r->buf[n - 1] != want)
		raw_deadline(&start, ++polls, "raw: the peer's write did not "
			     "come within 10 s");
}

static void raw_close(struct raw *r)
{
	ibv_destroy_qp(r->qp);
	ibv_dereg_mr(r->mr);
	ibv_destroy_cq(r->cq);
	ibv_dealloc_pd(r->pd);
	ibv_close_device(r->ctx);
	free((void *)r->buf);
	free(r);
}

/* Set "VAR=VAL,..." (modified in place) before a library's communicator
 * starts; returns how many, their names in @names for unsetenv(). */
static int set_vars(char *list, char *names[MAX_VARS])
{
	int n = 0;

	for (char *v = strtok(list, ","); v && n < MAX_VARS;
	     v = strtok(NULL, ",")) {
		char *eq = strchr(v, '=');

		if (!eq)
			die("arm variables must be VAR=VAL");
		*eq = 0;
		setenv(v, eq + 1, 1);
		names[n++] = v;
	}
	return n;
}

static void arm_open(struct arm *a, struct arm *a0)
{
	char spec[512], *bar, *names[MAX_VARS];
	int nv = 0;

	snprintf(spec, sizeof(spec), "%s", a->spec);
	if ((bar = strchr(spec, '|'))) {
		*bar = 0;
		nv = set_vars(bar + 1, names);
	}
	if (!strcmp(spec, "raw")) {
		if (!a0)
			die("the first arm must be a library");
		a->raw = raw_open(a0);
	} else {
		/* a link map of its own: the builds' symbols do not mix, and
		 * its libc starts from the environment set just now */
		if (!(a->lib = dlmopen(LM_ID_NEWLM, spec, RTLD_NOW | RTLD_LOCAL)))
			die(dlerror());
		*(void **)&a->send = sym(a->lib, "hop_send");
		*(void **)&a->recv = sym(a->lib, "hop_recv");
		*(void **)&a->destroy = sym(a->lib, "hop_comm_destroy");
		if (!a0) {
			int (*init_env)(hop_comm_t **) =
				(int (*)(hop_comm_t **))sym(a->lib,
							    "hop_comm_init_env");

			if (init_env(&a->comm))
				die("hop_comm_init_env failed");
		} else {
			int (*get_id)(hop_unique_id_t *) =
				(int (*)(hop_unique_id_t *))sym(a->lib,
								"hop_get_unique_id");
			int (*init)(hop_comm_t **, int, hop_unique_id_t, int) =
				(int (*)(hop_comm_t **, int, hop_unique_id_t,
					 int))sym(a->lib, "hop_comm_init_rank");
			hop_unique_id_t id, theirs;

			if (rank == 0 && get_id(&id))
				die("hop_get_unique_id failed");
			exchange(a0, &id, &theirs, sizeof(id));
			if (init(&a->comm, 2, rank == 0 ? id : theirs, rank))
				die("hop_comm_init_rank failed");
		}
	}
	for (int i = 0; i < nv; i++)
		unsetenv(names[i]);
}

static void pingpong(struct arm *a, void *sbuf, void *rbuf, size_t n)
{
	if (a->raw && rank == 0) {
		raw_post(a->raw, n);
		raw_wait(a->raw, n);
	} else if (a->raw) {
		raw_wait(a->raw, n);
		raw_post(a->raw, n);
	} else if (rank == 0) {
		if (a->send(a->comm, sbuf, n, peer, TAG_PING) ||
		    a->recv(a->comm, rbuf, n, peer, TAG_PING, NULL))
			die("ping-pong failed");
	} else if (a->recv(a->comm, rbuf, n, peer, TAG_PING, NULL) ||
		   a->send(a->comm, sbuf, n, peer, TAG_PING)) {
		die("ping-pong failed");
	}
}

static void report(struct arm *arms, int narms, int passes)
{
	double *v = malloc(sizeof(*v) * (size_t)passes);

	if (!v)
		die("out of memory");
	for (int k = 0; k < narms; k++) {
		double lg = 0;

		for (int p = 0; p < passes; p++)
			v[p] = arms[k].med[p];
		printf("arm %d (%s): median %.1f us over %d passes", k,
		       arms[k].spec, median(v, passes), passes);
		if (k) {
			for (int p = 0; p < passes; p++) {
				v[p] = arms[k].med[p] / arms[0].med[p];
				lg += log(v[p]);
			}
			printf(", / arm 0: median %.4f, geometric mean %.4f",
			       median(v, passes), exp(lg / passes));
		}
		printf("\n");
	}
	free(v);
}

int main(int argc, char **argv)
{
	int passes = 60, iters = 200, narms, o;
	size_t n = 2;
	struct arm arms[MAX_ARMS] = { { 0 } };
	static char sbuf[RAW_BUF / 2], rbuf[RAW_BUF / 2];
	double *t;

	while ((o = getopt(argc, argv, "p:i:s:")) != -1) {
		if (o == 'p')
			passes = atoi(optarg);
		else if (o == 'i')
			iters = atoi(optarg);
		else if (o == 's')
			n = (size_t)atol(optarg);
		else
			return 2;
	}
	narms = argc - optind;
	if (narms < 1 || narms > MAX_ARMS || passes < 1 || iters < 1 || n < 1 ||
	    n > sizeof(sbuf) || !getenv("HOP_RANK")) {
		fprintf(stderr, "usage: (under scripts/softroce-cluster -n 2) "
			"ab_inproc [-p PASSES] [-i ITERS] [-s 1..%zu] ARM... "
			"(1..%d arms, the first a libhop.so)\n", sizeof(sbuf),
			MAX_ARMS);
		return 2;
	}
	rank = atoi(getenv("HOP_RANK"));
	peer = 1 - rank;
	memset(sbuf, 7, sizeof(sbuf));
	if (!(t = malloc(sizeof(*t) * (size_t)iters)))
		die("out of memory");
	for (int k = 0; k < narms; k++) {
		arms[k].spec = argv[optind + k];
		if (!(arms[k].med = calloc((size_t)passes, sizeof(double))))
			die("out of memory");
		arm_open(&arms[k], k ? &arms[0] : NULL);
	}
	for (int p = 0; p < passes; p++) {
		for (int j = 0; j < narms; j++) {
			struct arm *a = &arms[(j + p) % narms];

			for (int i = -5; i < iters; i++) {
				double t0 = now_us();

				pingpong(a, sbuf, rbuf, n);
				if (i >= 0)
					t[i] = (now_us() - t0) / 2;
			}
			a->med[p] = median(t, iters);
			if (rank == 0)
				printf("AB %d %d %.2f\n", p + 1,
				       (j + p) % narms, a->med[p]);
		}
	}
	if (rank == 0)
		report(arms, narms, passes);
	for (int k = narms - 1; k >= 0; k--) {
		if (arms[k].raw)
			raw_close(arms[k].raw);
		else
			arms[k].destroy(arms[k].comm);
		free(arms[k].med);
	}
	free(t);
	return 0;
}
