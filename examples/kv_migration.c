/*
 * kv_migration - moving an inference request's KV cache between ranks
 * (e.g. prefill on one server, decode on another) with one-sided puts:
 * M = 2 (K and V) x layers x heads x seq_len x head_dim x dtype size.
 * The destination registers a region and sends its key; the source puts
 * the cache layer by layer, the last put's immediate says "complete".
 *
 *   hop-run -n 2 examples/kv_migration [--layers 32] [--heads 8]
 *           [--seq 1024] [--head-dim 128] [--repeat 5]
 */
#include <stdint.h>

#include "example_util.h"

#define KEY_TAG 100
#define DONE_IMM 0x4b56u /* "KV" */

static uint16_t kv_value(size_t i)
{
	return (uint16_t)(i * 2654435761u >> 7);
}

int main(int argc, char **argv)
{
	size_t layers = (size_t)ex_arg(argc, argv, "--layers", 32);
	size_t heads = (size_t)ex_arg(argc, argv, "--heads", 8);
	size_t seq = (size_t)ex_arg(argc, argv, "--seq", 1024);
	size_t hd = (size_t)ex_arg(argc, argv, "--head-dim", 128);
	long repeat = ex_arg(argc, argv, "--repeat", 5);
	hop_comm_t *comm = ex_join();
	int rank = hop_comm_rank(comm), n = hop_comm_size(comm);
	size_t per_layer = 2 * heads * seq * hd * sizeof(uint16_t);
	size_t bytes = layers * per_layer;

	if (n < 2) {
		fprintf(stderr, "kv_migration needs 2 ranks (source 0, destination 1)\n");
		hop_comm_destroy(comm);
		return 2;
	}
	uint16_t *kv = malloc(bytes);
	hop_mr_t *mr = NULL;
	hop_rkey_t key;
	if (!kv) {
		fprintf(stderr, "rank %d: no memory for a %zu B KV cache\n", rank, bytes);
		return 1;
	}
	if (rank == 1) { /* destination: expose the cache region */
		ex_check(comm, hop_mem_register(comm, kv, bytes, HOP_ACCESS_REMOTE_WRITE, &mr),
			 "hop_mem_register");
		ex_check(comm, hop_mr_rkey(mr, &key), "hop_mr_rkey");
		ex_check(comm, hop_send(comm, &key, sizeof(key), 0, KEY_TAG), "hop_send key");
	} else if (rank == 0) { /* source: the prefilled cache */
		for (size_t i = 0; i < bytes / 2; i++)
			kv[i] = kv_value(i);
		ex_check(comm, hop_mem_register(comm, kv, bytes, HOP_ACCESS_LOCAL, &mr),
			 "hop_mem_register");
		ex_check(comm, hop_recv(comm, &key, sizeof(key), 1, KEY_TAG, NULL), "hop_recv key");
	}
	double t_total = 0;
	for (long r = 0; r < repeat; r++) {
		ex_check(comm, hop_barrier(comm), "hop_barrier");
		double t0 = ex_now();
		if (rank == 0) {
			for (size_t l = 0; l < layers; l++)
				ex_check(comm, hop_put(comm, mr, (char *)kv + l * per_layer, per_layer,
						       &key, l * per_layer,
						       l + 1 == layers ? DONE_IMM : (uint32_t)l),
					 "hop_put");
		} else if (rank == 1) {
			uint32_t imm = 0;
			size_t got = 0;
			for (size_t l = 0; l < layers; l++)
				ex_check(comm, hop_wait_imm(comm, 0, &imm, NULL, &got), "hop_wait_imm");
			if (imm != DONE_IMM || got != per_layer) {
				fprintf(stderr, "destination: last immediate 0x%x (%zu B), expected 0x%x\n",
					imm, got, DONE_IMM);
				return 1;
			}
		}
		t_total += ex_now() - t0;
		if (rank == 1) {
			for (size_t i = 0; i < bytes / 2; i++)
				if (kv[i] != kv_value(i)) {
					fprintf(stderr, "destination: KV element %zu wrong\n", i);
					return 1;
				}
			memset(kv, 0, bytes);
		}
	}
	if (rank == 1)
		printf("kv_migration: on %s, M = 2 x %zu layers x %zu heads x %zu tokens x %zu dims "
		       "x 2 B = %.2f MiB, %ld migrations: %.3f ms each, %.2f GB/s, verified\n",
		       hop_comm_transport(comm), layers, heads, seq, hd, bytes / 1048576.0,
		       repeat, t_total / repeat * 1e3, bytes * repeat / t_total / 1e9);
	ex_check(comm, hop_mem_deregister(comm, mr), "hop_mem_deregister");
	free(kv);
	hop_comm_destroy(comm);
	return 0;
}
