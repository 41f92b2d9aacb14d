/*
 * coll_api_a2a.c - the public AllToAll and AllToAllv: argument checks
 * (naming the rank, the count or displacement and the peer), algorithm
 * choice, then the schedule of alltoall.c on the p2p executor.
 *
 * In place (sendbuf == recvbuf) the send data is read as described by the
 * send counts and displacements before anything is received over it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll_int.h"

struct a2a_call {
	const char *fn;
	int kind;               /* HOP_COLL_ALLTOALL or HOP_COLL_ALLTOALLV */
	const void *sendbuf;
	void *recvbuf;
	size_t count;           /* alltoall: elements per peer */
	const size_t *v[4];     /* alltoallv: scounts, sdispls, rcounts, rdispls */
	hop_dtype_t dtype;
};

static const char *const v_name[4] = { "sendcounts", "sdispls",
				       "recvcounts", "rdispls" };

__attribute__((format(printf, 4, 5)))
static int a2a_err(struct hop_comm *comm, const struct a2a_call *c, int code,
		   const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c->kind == HOP_COLL_ALLTOALL)
		return hop_set_error(comm, code, "%s(rank %d, count %zu, dtype "
				     "%s): %s", c->fn, comm->rank, c->count,
				     hop_dtype_name(c->dtype), what);
	return hop_set_error(comm, code, "%s(rank %d, dtype %s): %s", c->fn,
			     comm->rank, hop_dtype_name(c->dtype), what);
}

/* One side of an alltoallv (@side 0 send, 1 receive): every block fits
 * in size_t and 2^56 B; *@extent is the end of its last byte. */
static int v_side(struct hop_comm *comm, const struct a2a_call *c, int side,
		  size_t es, size_t *extent)
{
	const size_t *cnt = c->v[2 * side], *dsp = c->v[2 * side + 1];

	*extent = 0;
	for (int p = 0; p < comm->nranks; p++) {
		if (!cnt[p])
			continue;
		if (dsp[p] > SIZE_MAX / es || cnt[p] > SIZE_MAX / es - dsp[p] ||
		    (uint64_t)((dsp[p] + cnt[p]) * es) > HOP_COLL_MAX_BYTES)
			return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "%s[%d] = "
				       "%zu with %s[%d] = %zu: the block ends "
				       "past 2^56 B or overflows size_t",
				       v_name[2 * side], p, cnt[p],
				       v_name[2 * side + 1], p, dsp[p]);
		if ((dsp[p] + cnt[p]) * es > *extent)
			*extent = (dsp[p] + cnt[p]) * es;
	}
	return 0;
}

/* alltoallv: the arrays, each block, the own block's two counts. */
static int check_v(struct hop_comm *comm, const struct a2a_call *c,
		   size_t es, size_t *sext, size_t *rext)
{
	int ret, r = comm->rank;

	for (int i = 0; i < 4; i++)
		if (!c->v[i])
			return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "%s is "
				       "NULL", v_name[i]);
	if ((ret = v_side(comm, c, 0, es, sext)) ||
	    (ret = v_side(comm, c, 1, es, rext)))
		return ret;
	if (c->v[0][r] != c->v[2][r])
		return a2a_err(comm, c, HOP_ERR_MISMATCH, "sendcounts[%d] = %zu "
			       "but recvcounts[%d] = %zu: the block a rank "
			       "sends itself must fit exactly", r, c->v[0][r],
			       r, c->v[2][r]);
	return 0;
}

/* alltoall: count * size * N within size_t and 2^56 B. */
static int check_count(struct hop_comm *comm, const struct a2a_call *c,
		       size_t es, size_t *ext)
{
	int n = comm->nranks;

	if (c->count > SIZE_MAX / es / (size_t)n)
		return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "count %zu of "
			       "%zu B times %d ranks overflows size_t",
			       c->count, es, n);
	*ext = c->count * es * (size_t)n;
	if ((uint64_t)*ext > HOP_COLL_MAX_BYTES)
		return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "count %zu of "
			       "%zu B times %d ranks is %zu B, more than the "
			       "largest collective (2^56 B)", c->count, es, n,
			       *ext);
	return 0;
}

/* Every argument; fills *@inplace. */
static int check_a2a(struct hop_comm *comm, const struct a2a_call *c,
		     int *inplace)
{
	size_t es, sext, rext;
	int ret;

	*inplace = 0;
	if (!(es = hop_dtype_size(c->dtype)))
		return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "invalid dtype %d",
			       (int)c->dtype);
	ret = c->kind == HOP_COLL_ALLTOALLV
		      ? check_v(comm, c, es, &sext, &rext)
		      : check_count(comm, c, es, &sext);
	if (ret)
		return ret;
	if (c->kind == HOP_COLL_ALLTOALL)
		rext = sext;
	if (sext && !c->sendbuf)
		return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf is NULL "
			       "with %zu B to send", sext);
	if (rext && !c->recvbuf)
		return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "recvbuf is NULL "
			       "with %zu B to receive", rext);
	*inplace = c->sendbuf && c->sendbuf == c->recvbuf;
	if (!*inplace && hop_coll_overlap(c->sendbuf, sext, c->recvbuf, rext))
		return a2a_err(comm, c, HOP_ERR_INVALID_ARG, "sendbuf %p (%zu "
			       "B) and recvbuf %p (%zu B) overlap; pass the "
			       "same pointer for in place", c->sendbuf, sext,
			       c->recvbuf, rext);
	return 0;
}

static int a2a_run(struct hop_comm *comm, void *call, hop_request_t **reqp)
{
	const struct a2a_call *c = call;
	struct hop_coll_launch l;
	int ret, inplace;

	if ((ret = check_a2a(comm, c, &inplace)))
		return ret;
	memset(&l, 0, sizeof(l));
	l.fn = c->fn;
	/* alltoallv's blocks differ per rank, and every rank must choose
	 * alike: it is priced at 0 B */
	l.bytes = c->kind == HOP_COLL_ALLTOALL
			  ? c->count * hop_dtype_size(c->dtype) : 0;
	l.sendbuf = c->sendbuf;
	l.recvbuf = c->recvbuf;
	memcpy(l.v, c->v, sizeof(l.v));
	l.a.kind = c->kind;
	l.a.count = c->count;
	l.a.dtype = c->dtype;
	l.a.op = HOP_SUM;
	l.a.inplace = inplace;
	return hop_coll_launch(comm, &l, reqp);
}

static int a2a(hop_comm_t *comm, const char *fn, const void *sendbuf,
	       void *recvbuf, size_t count, hop_dtype_t dtype,
	       hop_request_t **req, int icall)
{
	struct a2a_call c = { fn, HOP_COLL_ALLTOALL, sendbuf, recvbuf, count,
			      { NULL }, dtype };

	return hop_coll_enter_run(comm, fn, req, icall, a2a_run, &c);
}

static int a2av(hop_comm_t *comm, const char *fn, const void *sendbuf,
		const size_t *sendcounts, const size_t *sdispls, void *recvbuf,
		const size_t *recvcounts, const size_t *rdispls,
		hop_dtype_t dtype, hop_request_t **req, int icall)
{
	struct a2a_call c = { fn, HOP_COLL_ALLTOALLV, sendbuf, recvbuf, 0,
			      { sendcounts, sdispls, recvcounts, rdispls },
			      dtype };

	return hop_coll_enter_run(comm, fn, req, icall, a2a_run, &c);
}

int hop_alltoall(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		 size_t count, hop_dtype_t dtype)
{
	return a2a(comm, "hop_alltoall", sendbuf, recvbuf, count, dtype, NULL,
		   0);
}

int hop_ialltoall(hop_comm_t *comm, const void *sendbuf, void *recvbuf,
		  size_t count, hop_dtype_t dtype, hop_request_t **req)
{
	return a2a(comm, "hop_ialltoall", sendbuf, recvbuf, count, dtype, req,
		   1);
}

int hop_alltoallv(hop_comm_t *comm, const void *sendbuf,
		  const size_t *sendcounts, const size_t *sdispls,
		  void *recvbuf, const size_t *recvcounts,
		  const size_t *rdispls, hop_dtype_t dtype)
{
	return a2av(comm, "hop_alltoallv", sendbuf, sendcounts, sdispls,
		    recvbuf, recvcounts, rdispls, dtype, NULL, 0);
}

int hop_ialltoallv(hop_comm_t *comm, const void *sendbuf,
		   const size_t *sendcounts, const size_t *sdispls,
		   void *recvbuf, const size_t *recvcounts,
		   const size_t *rdispls, hop_dtype_t dtype,
		   hop_request_t **req)
{
	return a2av(comm, "hop_ialltoallv", sendbuf, sendcounts, sdispls,
		    recvbuf, recvcounts, rdispls, dtype, req, 1);
}
