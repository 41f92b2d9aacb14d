/*
 * measure_lat.c - the latency half of a pair: post-call times (alpha_sw),
 * post-to-completion and inline/non-inline one-way times (alpha_dma),
 * completion vs memory-polling notification and the rendezvous
 * clear-to-send handshake (alpha_sync), and the decomposition. Rank a
 * initiates and keeps the results; rank b mirrors every step.
 */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "transport/provider.h"

#define PROBE_WR_TAG 0x7072620000000000ull

int probe_pair_sync(struct probe_ctx *c, int peer)
{
	uint32_t tok = 0x53594e43u, got = 0; /* "SYNC" */
	int ret;

	if ((ret = probe_send_msg(c, peer, &tok, sizeof(tok))))
		return ret;
	return probe_wait_msg(c, peer, &got, sizeof(got));
}

/*
 * Ping-pong of @len-byte writes between a and b: a records n half round
 * trips in @out. PP_IMM: writes with immediate, noticed by a RECV_IMM
 * completion; PP_MEM: plain writes whose last byte changes every round,
 * noticed by spinning on that byte of the target buffer.
 */
int probe_pingpong(struct probe_ctx *c, int a, int b, size_t len, int inl,
		   int mode, size_t n, size_t warm, double *out)
{
	int me_a = c->rank == a, peer = me_a ? b : a;
	int ret;

	if (mode == PP_MEM) {
		c->dst[len - 1] = 0;
		if ((ret = probe_pair_sync(c, peer)))
			return ret;
	}
	for (size_t i = 0; i < warm + n; i++) {
		uint8_t v = (uint8_t)(i % 255 + 1);
		uint32_t imm = (uint32_t)i;
		unsigned fl = mode == PP_IMM ? HOP_WR_IMM : 0;
		uint64_t t0 = hop_now_ns();

		if (!me_a) {
			ret = mode == PP_IMM
				      ? probe_next_imm(c, peer, "a ping")
				      : probe_wait_byte(c, len - 1, v, peer);
			if (ret)
				return ret;
		}
		c->src[len - 1] = v;
		if ((ret = probe_write(c, peer, !inl, 0, len, 0, imm, fl)))
			return ret;
		if (me_a) {
			ret = mode == PP_IMM
				      ? probe_next_imm(c, peer, "a pong")
				      : probe_wait_byte(c, len - 1, v, peer);
			if (ret)
				return ret;
			if (i >= warm)
				out[i - warm] = probe_elapsed_us(c, t0, hop_now_ns()) / 2;
		}
	}
	return 0;
}

/* a: duration of each post_write call, unsignalled but every 64th */
static int post_times(struct probe_ctx *c, int a, int b, int inl, size_t len,
		      size_t n, size_t warm, double *out)
{
	uint32_t done = 0;
	int ret;

	if (c->rank != a)
		return probe_wait_msg(c, a, &done, sizeof(done));
	for (size_t i = 0; i < warm + n;) {
		unsigned fl = (i % 64 == 63) ? HOP_WR_SIGNALED : 0;
		uint64_t t0 = hop_now_ns();

		ret = c->ops->post_write(c->prov, b, inl ? NULL : c->src_mr,
					 c->src, len, c->rem[b].addr,
					 c->rem[b].key, 0, fl,
					 PROBE_WR_TAG | ++c->wr_seq);
		uint64_t t1 = hop_now_ns();

		if (ret < 0)
			return ret;
		if (ret == 0) {
			c->dirty[b] = 1;
			if (fl)
				c->sig_posted++;
			if (i >= warm)
				out[i - warm] = probe_elapsed_us(c, t0, t1);
			i++;
		}
		if ((ret == HOP_PROV_AGAIN || i % 16 == 0) &&
		    (ret = probe_poll(c)) < 0)
			return ret;
	}
	return probe_send_msg(c, b, &done, sizeof(done));
}

/* a: post of a tiny signalled write until its local completion */
static int post_to_completion(struct probe_ctx *c, int a, int b, size_t len,
			      int inl, size_t n, size_t warm, double *out)
{
	uint32_t done = 0;
	int ret;

	if (c->rank != a)
		return probe_wait_msg(c, a, &done, sizeof(done));
	for (size_t i = 0; i < warm + n; i++) {
		uint64_t t0 = hop_now_ns();

		if ((ret = probe_write(c, b, !inl, 0, len, 0, 0, HOP_WR_SIGNALED)) ||
		    (ret = probe_wait_writes(c, c->sig_posted)))
			return ret;
		if (i >= warm)
			out[i - warm] = probe_elapsed_us(c, t0, hop_now_ns());
	}
	return probe_send_msg(c, b, &done, sizeof(done));
}

/*
 * Rendezvous as p2p runs it: the receiver b sends a clear-to-send (24
 * bytes: address, key, size), the sender a answers with the data written
 * with an immediate. b times CTS post -> data noticed and sends a its
 * median and p99.
 */
static int cts_handshake(struct probe_ctx *c, int a, int b, size_t len,
			 int inl, size_t n, size_t warm, double res[2])
{
	uint8_t cts[24] = { 0 };
	struct hop_stats st;
	int ret;

	for (size_t i = 0; i < warm + n; i++) {
		if (c->rank == a) {
			if ((ret = probe_wait_msg(c, b, cts, sizeof(cts))) ||
			    (ret = probe_write(c, b, !inl, 0, len, 0, (uint32_t)i,
					       HOP_WR_IMM)))
				return ret;
			continue;
		}
		uint64_t t0 = hop_now_ns();

		memcpy(cts, &i, sizeof(i));
		if ((ret = probe_send_msg(c, a, cts, sizeof(cts))) ||
		    (ret = probe_next_imm(c, a, "rendezvous data")))
			return ret;
		if (i >= warm)
			c->samples[i - warm] = probe_elapsed_us(c, t0, hop_now_ns());
	}
	if (c->rank == a)
		return probe_wait_msg(c, b, res, 2 * sizeof(double));
	hop_stats_compute(c->samples, n, &st);
	res[0] = st.median;
	res[1] = st.p99;
	return probe_send_msg(c, a, res, 2 * sizeof(double));
}

enum { S_POST_IN, S_POST_NI, S_P2C, S_IMM, S_MEM, S_OW_IN, S_OW_NI, S_N };

static void stat_of(double *s, size_t n, struct hop_pstat *dst)
{
	struct hop_stats st;

	if (s && n && !hop_stats_compute(s, n, &st))
		probe_stat_set(dst, &st);
}

int probe_pair_latency(struct probe_ctx *c, int a, int b,
		       struct hop_profile_pair *q)
{
	size_t n = (size_t)c->opt->iters, warm = (size_t)c->opt->warmup;
	size_t l_in = probe_inline_len(c);
	size_t l_ni = c->inline_ok ? l_in + 1 : 8;
	size_t tiny = c->inline_ok && l_in < 8 ? l_in : 8;
	int inl = c->inline_ok;
	double *s[S_N] = { NULL }, cts[2] = { NAN, NAN };
	int ret = HOP_ERR_NO_MEMORY;

	for (int i = 0; i < S_N; i++)
		if (!(s[i] = calloc(n, sizeof(double))))
			goto out;
	if ((inl && (ret = post_times(c, a, b, 1, l_in, n, warm, s[S_POST_IN]))) ||
	    (ret = post_times(c, a, b, 0, l_ni, n, warm, s[S_POST_NI])) ||
	    (ret = post_to_completion(c, a, b, tiny, inl, n, warm, s[S_P2C])) ||
	    (ret = probe_pingpong(c, a, b, tiny, inl, PP_IMM, n, warm, s[S_IMM])) ||
	    (ret = probe_pingpong(c, a, b, tiny, inl, PP_MEM, n, warm, s[S_MEM])) ||
	    (inl && (ret = probe_pingpong(c, a, b, l_in, 1, PP_IMM, n, warm,
					  s[S_OW_IN]))) ||
	    (ret = probe_pingpong(c, a, b, l_ni, 0, PP_IMM, n, warm, s[S_OW_NI])) ||
	    (ret = cts_handshake(c, a, b, tiny, inl, n, warm, cts)))
		goto out;
	if (c->rank != a)
		goto out;
	stat_of(inl ? s[S_POST_IN] : NULL, n, &q->post_inline);
	stat_of(s[S_POST_NI], n, &q->post_noninline);
	stat_of(s[S_P2C], n, &q->post_to_completion);
	stat_of(inl ? s[S_OW_IN] : NULL, n, &q->oneway_inline);
	stat_of(s[S_OW_NI], n, &q->oneway_noninline);
	stat_of(s[S_MEM], n, &q->oneway_mem);
	q->timer_overhead_us = c->timer_us;

	int verbs = !strcmp(c->ops->name, "verbs") && inl;
	struct hop_alpha_input in = {
		.post = inl ? s[S_POST_IN] : s[S_POST_NI], .n_post = n,
		.oneway_imm = s[S_IMM], .n_imm = n,
		.oneway_mem = s[S_MEM], .n_mem = n,
		.dma_method = verbs ? HOP_DMA_INLINE_DIFF : HOP_DMA_POST_TO_COMPLETION,
		.dma_a = verbs ? s[S_OW_NI] : s[S_P2C], .n_dma_a = n,
		.dma_b = verbs ? s[S_OW_IN] : NULL, .n_dma_b = verbs ? n : 0,
	};
	struct hop_alpha_parts p;

	if ((ret = hop_alpha_decompose(&in, &p)))
		goto out;
	q->sw = (struct hop_pstat){ p.sw, p.sw_p99 };
	q->dma = (struct hop_pstat){ p.dma, p.dma_p99 };
	q->sync = (struct hop_pstat){ p.sync, p.sync_p99 };
	q->wire = (struct hop_pstat){ p.wire, p.wire_p99 };
	q->alpha_sum_us = hop_alpha_sum(&p);
	q->sync_cts.median_us = fmax(0, cts[0] - p.half_rtt);
	q->sync_cts.p99_us = fmax(0, cts[1] - p.half_rtt);
out:
	for (int i = 0; i < S_N; i++)
		free(s[i]);
	return ret;
}
