/*
 * measure_bw.c - the size sweep behind the beta fit, and the seed's other
 * single-link effects: full duplex, d concurrent links against memory
 * bandwidth, 2-hop store-and-forward over unequal links, and the
 * synchronisation cost of one step of an N-rank ring.
 */
#include "probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "transport/provider.h"

#define BIG ((size_t)4 << 20) /* message of the bandwidth experiments */
#define BURST 4               /* writes per repetition */

static size_t big_size(const struct probe_ctx *c)
{
	return c->opt->max_size < BIG ? c->opt->max_size : BIG;
}

static size_t big_reps(const struct probe_ctx *c, size_t bytes)
{
	size_t n = probe_iters(c, bytes);

	return n > 50 ? 50 : n;
}

/* one-way time of the 0-byte acknowledgements the experiments end with:
 * the smaller of the tiny one-way times measured before */
static double ack_us(const struct hop_profile_pair *q)
{
	double a = q->alpha_sum_us;

	if (q->nsizes > 0 && !(a <= q->pt[0].median_us))
		a = q->pt[0].median_us;
	return isfinite(a) && a > 0 ? a : 0;
}

/* a transfer time minus its acknowledgement, never below 1 ns */
static double minus_ack(double t, double ack)
{
	return t - ack > 1e-3 ? t - ack : 1e-3;
}

static double median_of(double *s, size_t n)
{
	struct hop_stats st;

	return hop_stats_compute(s, n, &st) ? NAN : st.median;
}

int probe_sweep(struct probe_ctx *c, int a, int b, struct hop_profile_pair *q)
{
	size_t l_in = probe_inline_len(c);
	int k = 0, ret;

	for (size_t m = c->opt->min_size; m <= c->opt->max_size && k < HOP_PROFILE_MAX_SIZES;) {
		size_t n = probe_iters(c, m);
		size_t warm = (size_t)c->opt->warmup < n ? (size_t)c->opt->warmup : n;
		struct hop_stats st;

		if ((ret = probe_pingpong(c, a, b, m, m <= l_in, PP_IMM, n, warm,
					  c->samples)))
			return ret;
		if (c->rank == a && !hop_stats_compute(c->samples, n, &st)) {
			q->pt[k].size = (double)m;
			q->pt[k].median_us = st.median;
			q->pt[k].p99_us = st.p99;
			q->nsizes = ++k;
		}
		if (m == c->opt->max_size)
			break;
		m = m * 2 > c->opt->max_size ? c->opt->max_size : m * 2;
	}
	return 0;
}

/*
 * Duplex: BURST writes of BIG bytes a -> b alone, then a -> b and b -> a at
 * once; each repetition ends with the far side's 0-byte acknowledgement,
 * whose one-way time (the tiny half round trip) is subtracted.
 */
int probe_duplex(struct probe_ctx *c, int a, int b, struct hop_profile_pair *q)
{
	size_t m = big_size(c), reps = big_reps(c, BURST * m);
	int me_a = c->rank == a, peer = me_a ? b : a;
	double *one = c->samples, *both = c->samples + reps;
	double ack = ack_us(q);
	int ret;

	for (int mode = 0; mode < 2; mode++) {
		for (size_t r = 0; r < reps + 1; r++) {
			uint64_t t0 = hop_now_ns();
			int send = me_a || mode == 1;

			if (!me_a && mode == 1 &&
			    (ret = probe_next_imm(c, a, "duplex start")))
				return ret;
			if (me_a && mode == 1 &&
			    (ret = probe_write(c, b, 0, 0, 0, 0, 0, HOP_WR_IMM)))
				return ret;
			for (int k = 0; send && k < BURST; k++)
				if ((ret = probe_write(c, peer, 1, 0, m, 0, 0,
						       k == BURST - 1 ? HOP_WR_IMM : 0)))
					return ret;
			/* a: (b's data in mode 1 and) b's ack; b: a's data, then ack */
			if ((ret = probe_next_imm(c, peer, "duplex data")) ||
			    (me_a && mode == 1 &&
			     (ret = probe_next_imm(c, peer, "duplex ack"))))
				return ret;
			if (!me_a &&
			    (ret = probe_write(c, a, 0, 0, 0, 0, 0, HOP_WR_IMM)))
				return ret;
			if (me_a && r > 0) /* the first repetition warms up */
				(mode ? both : one)[r - 1] =
					minus_ack(probe_elapsed_us(c, t0, hop_now_ns()), ack);
		}
	}
	if (!me_a)
		return 0;
	q->duplex_size = (double)(BURST * m);
	q->duplex_one_us = median_of(one, reps);
	q->duplex_both_us = median_of(both, reps);
	q->duplex_factor = hop_duplex_factor(q->duplex_one_us, q->duplex_both_us);
	return 0;
}

/* the third rank of a's store-and-forward path a -> b -> dest */
int probe_saf_dest(const struct probe_ctx *c, int a, int b)
{
	if (c->nranks < 3)
		return a;
	int d = (b + 1) % c->nranks;

	return d == a ? (b + 2) % c->nranks : d;
}

/* write @m bytes of this rank's receive buffer to @to at @rate bytes/us
 * (0: unpaced), the last chunk with an immediate */
static int forward(struct probe_ctx *c, int to, size_t m, double rate)
{
	size_t chunk = rate > 0 ? (m / 16 > 4096 ? m / 16 : 4096) : m;
	uint64_t t0 = hop_now_ns(), deadline = hop_comm_deadline(c->comm);
	int ret;

	for (size_t off = 0; off < m; off += chunk) {
		size_t len = m - off < chunk ? m - off : chunk;

		while (rate > 0 && (double)(hop_now_ns() - t0) / 1e3 < (double)off / rate) {
			if ((ret = probe_poll(c)) < 0)
				return ret;
			if (hop_deadline_passed(deadline)) {
				snprintf(c->err, sizeof(c->err), "rank %d: pacing %zu bytes to "
					 "rank %d at %.3g B/us outlasted HOP_TIMEOUT",
					 c->rank, m, to, rate);
				return HOP_ERR_TIMEOUT;
			}
		}
		if ((ret = probe_write_buf(c, to, c->dst_mr, c->dst + off, len, off,
					   0, off + len == m ? HOP_WR_IMM : 0)))
			return ret;
	}
	return 0;
}

/*
 * Store-and-forward a -> b -> d with the second link emulated at half the
 * first one's bandwidth (b paces its forwarding): each link alone, then the
 * whole path, against 1/beta_eff = 1/beta1 + 1/beta2. With 2 ranks d = a.
 */
int probe_store_forward(struct probe_ctx *c, int a, int b,
			struct hop_profile_pair *q)
{
	int d = probe_saf_dest(c, a, b), me = c->rank;
	size_t m = big_size(c), reps = big_reps(c, m);
	double par[2] = { 0, ack_us(q) }, t2[1], *s = c->samples;
	int ret;

	/* 1: a -> b alone, b acks */
	for (size_t r = 0; (me == a || me == b) && r < reps + 1; r++) {
		uint64_t t0 = hop_now_ns();

		if (me == a) {
			if ((ret = probe_write(c, b, 1, 0, m, 0, 0, HOP_WR_IMM)) ||
			    (ret = probe_next_imm(c, b, "hop-1 ack")))
				return ret;
			if (r)
				s[r - 1] = minus_ack(probe_elapsed_us(c, t0, hop_now_ns()), par[1]);
		} else if (me == b) {
			if ((ret = probe_next_imm(c, a, "hop-1 data")) ||
			    (ret = probe_write(c, a, 0, 0, 0, 0, 0, HOP_WR_IMM)))
				return ret;
		}
	}
	/* 2: a tells b the emulated rate of link 2 and the ack time */
	if (me == a) {
		q->saf_beta1_gbps = (double)m / median_of(s, reps) / 1e3;
		par[0] = q->saf_beta1_gbps * 1e3 / 2;
		if ((ret = probe_send_msg(c, b, par, sizeof(par))))
			return ret;
	} else if (me == b && (ret = probe_wait_msg(c, a, par, sizeof(par)))) {
		return ret;
	}
	/* 3: b -> d alone at that rate, d acks; b reports the median to a */
	for (size_t r = 0; (me == b || me == d) && r < reps + 1; r++) {
		uint64_t t0 = hop_now_ns();

		if (me == b) {
			if ((ret = forward(c, d, m, par[0])) ||
			    (ret = probe_next_imm(c, d, "hop-2 ack")))
				return ret;
			if (r)
				s[r - 1] = minus_ack(probe_elapsed_us(c, t0, hop_now_ns()), par[1]);
		} else if ((ret = probe_next_imm(c, b, "hop-2 data")) ||
			   (ret = probe_write(c, b, 0, 0, 0, 0, 0, HOP_WR_IMM))) {
			return ret;
		}
	}
	if (me == b) {
		t2[0] = median_of(s, reps);
		if ((ret = probe_send_msg(c, a, t2, sizeof(t2))))
			return ret;
	} else if (me == a && (ret = probe_wait_msg(c, b, t2, sizeof(t2)))) {
		return ret;
	}
	/* 4: the whole path; d acks a (nothing to ack when d is a) */
	for (size_t r = 0; r < reps + 1; r++) {
		uint64_t t0 = hop_now_ns();

		if (me == a) {
			if ((ret = probe_write(c, b, 1, 0, m, 0, 0, HOP_WR_IMM)))
				return ret;
			ret = d == a ? probe_next_imm(c, b, "forwarded data")
				     : probe_next_imm(c, d, "path ack");
			if (ret)
				return ret;
			if (r)
				s[r - 1] = minus_ack(probe_elapsed_us(c, t0, hop_now_ns()),
						     d == a ? 0 : par[1]);
		} else if (me == b) {
			if ((ret = probe_next_imm(c, a, "path data")) ||
			    (ret = forward(c, d, m, par[0])))
				return ret;
		} else if (me == d) {
			if ((ret = probe_next_imm(c, b, "forwarded data")) ||
			    (ret = probe_write(c, a, 0, 0, 0, 0, 0, HOP_WR_IMM)))
				return ret;
		}
	}
	if (me != a)
		return 0;
	double betas[2] = { q->saf_beta1_gbps, (double)m / t2[0] / 1e3 };

	q->saf_relay = b;
	q->saf_dest = d;
	q->saf_size = (double)m;
	q->saf_beta2_gbps = betas[1];
	q->saf_gbps = (double)m / median_of(s, reps) / 1e3;
	q->saf_harmonic_gbps = hop_harmonic_beta(betas, 2);
	return 0;
}

/*
 * d concurrent links out of rank @src: BURST writes of BIG bytes to each of
 * d peers at once, every peer acking; d = 1 .. nranks-1 (at most
 * HOP_PROFILE_MAX_LINKS). Every rank calls it; @q is filled on @src.
 */
int probe_aggregate(struct probe_ctx *c, int src, struct hop_profile_pair *q)
{
	size_t m = big_size(c);
	int dmax = c->nranks - 1, ret;

	if (dmax > HOP_PROFILE_MAX_LINKS)
		dmax = HOP_PROFILE_MAX_LINKS;
	for (int d = 1; d <= dmax; d++) {
		size_t reps = big_reps(c, BURST * m * (size_t)d);
		int idx = (c->rank - src + c->nranks) % c->nranks; /* 1..d: receivers */

		if ((ret = probe_barrier(c)))
			return ret;
		if (idx > d)
			continue;
		for (size_t r = 0; r < reps + 1; r++) {
			uint64_t t0 = hop_now_ns();

			if (idx) {
				if ((ret = probe_next_imm(c, src, "aggregate data")) ||
				    (ret = probe_write(c, src, 0, 0, 0, 0, 0, HOP_WR_IMM)))
					return ret;
				continue;
			}
			for (int k = 0; k < BURST; k++)
				for (int p = 1; p <= d; p++)
					if ((ret = probe_write(c, (src + p) % c->nranks, 1, 0, m, 0, 0,
							       k == BURST - 1 ? HOP_WR_IMM : 0)))
						return ret;
			for (int p = 1; p <= d; p++)
				if ((ret = probe_next_imm(c, (src + p) % c->nranks,
							  "aggregate ack")))
					return ret;
			if (r)
				c->samples[r - 1] = minus_ack(
					probe_elapsed_us(c, t0, hop_now_ns()), ack_us(q));
		}
		if (idx == 0) {
			double t = median_of(c->samples, reps);

			q->agg[d - 1].links = d;
			q->agg[d - 1].gbps = (double)(BURST * m) * d / t / 1e3;
			q->agg[d - 1].model_gbps = hop_aggregate_beta(d, q->beta_gbps,
								      q->beta_mem_gbps);
			q->nagg = d;
		}
	}
	return 0;
}

/* Every rank writes a tiny message with immediate to its right neighbour
 * and waits for its left one's, step after step; @out: per-step time. */
int probe_ring_step(struct probe_ctx *c, struct hop_pstat *out)
{
	int right = (c->rank + 1) % c->nranks;
	int left = (c->rank + c->nranks - 1) % c->nranks;
	size_t n = (size_t)c->opt->iters, warm = (size_t)c->opt->warmup;
	size_t tiny = c->inline_ok && probe_inline_len(c) < 8 ? probe_inline_len(c) : 8;
	uint64_t prev;
	struct hop_stats st;
	int ret;

	if ((ret = probe_barrier(c)))
		return ret;
	prev = hop_now_ns();
	for (size_t s = 0; s < warm + n; s++) {
		if ((ret = probe_write(c, right, !c->inline_ok, 0, tiny, 0,
				       (uint32_t)s, HOP_WR_IMM)) ||
		    (ret = probe_next_imm(c, left, "a ring step")))
			return ret;
		uint64_t now = hop_now_ns();

		if (s >= warm)
			c->samples[s - warm] = probe_elapsed_us(c, prev, now);
		prev = now;
	}
	if ((ret = hop_stats_compute(c->samples, n, &st)))
		return ret;
	probe_stat_set(out, &st);
	return 0;
}

/*
 * memcpy bandwidth (bytes copied per second, in GB/s): BURST copies of the
 * bandwidth experiments' message size, the working set the links move;
 * the median of 9 repetitions.
 */
double probe_beta_mem(const struct probe_ctx *c)
{
	size_t len = big_size(c);
	char *a = malloc(len), *b = malloc(len);
	double s[9], gbps = NAN;

	if (a && b) {
		memset(a, 1, len);
		memset(b, 2, len);
		for (int i = 0; i < 10; i++) {
			uint64_t t0 = hop_now_ns();

			for (int k = 0; k < BURST; k++)
				memcpy(k % 2 ? a : b, k % 2 ? b : a, len);
			if (i) /* the first one warms up */
				s[i - 1] = (double)(BURST * len) /
					   (double)(hop_now_ns() - t0);
		}
		gbps = median_of(s, 9);
	}
	free(a);
	free(b);
	return gbps;
}
