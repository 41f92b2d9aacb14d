/*
 * pp_activations - pipeline-parallel training's activation transfer: rank
 * s is pipeline stage s; each micro-batch's activations, M = batch x
 * seq_len x hidden x sizeof(bf16) bytes, go from stage s to stage s+1.
 *
 *   hop-run -n 4 examples/pp_activations [--batch 4] [--seq 512]
 *           [--hidden 1024] [--microbatches 8]
 */
#include <stdint.h>

#include "example_util.h"

/* activation element j of micro-batch @mb after stage @stage (bf16 bits) */
static uint16_t activation(long mb, int stage, size_t j)
{
	return (uint16_t)(0x3f80 + ((size_t)mb * 31 + (size_t)stage * 7 + j) % 97);
}

int main(int argc, char **argv)
{
	size_t batch = (size_t)ex_arg(argc, argv, "--batch", 4);
	size_t seq = (size_t)ex_arg(argc, argv, "--seq", 512);
	size_t hidden = (size_t)ex_arg(argc, argv, "--hidden", 1024);
	long mbs = ex_arg(argc, argv, "--microbatches", 8);
	hop_comm_t *comm = ex_join();
	int stage = hop_comm_rank(comm), n = hop_comm_size(comm);
	size_t elems = batch * seq * hidden, bytes = elems * sizeof(uint16_t);
	uint16_t *act = malloc(bytes);

	if (!act) {
		fprintf(stderr, "stage %d: no memory for %zu B of activations\n", stage, bytes);
		return 1;
	}
	ex_check(comm, hop_barrier(comm), "hop_barrier");
	double t0 = ex_now(), t_recv = 0;
	for (long mb = 0; mb < mbs; mb++) {
		if (stage > 0) {
			double r0 = ex_now();
			hop_status_t st;
			ex_check(comm, hop_recv(comm, act, bytes, stage - 1, (int)mb, &st),
				 "hop_recv");
			t_recv += ex_now() - r0;
			for (size_t j = 0; j < elems; j += 1021)
				if (act[j] != activation(mb, stage - 1, j)) {
					fprintf(stderr, "stage %d: micro-batch %ld element %zu corrupted\n",
						stage, mb, j);
					return 1;
				}
		}
		/* "forward": this stage's output for the next one */
		for (size_t j = 0; j < elems; j++)
			act[j] = activation(mb, stage, j);
		if (stage + 1 < n)
			ex_check(comm, hop_send(comm, act, bytes, stage + 1, (int)mb),
				 "hop_send");
	}
	ex_check(comm, hop_barrier(comm), "hop_barrier");
	double total = ex_now() - t0;
	if (stage == n - 1 && n > 1)
		printf("pp_activations: %d stages on %s, M = %zu x %zu x %zu x 2 B = %.2f MiB per "
		       "micro-batch, %ld micro-batches in %.3f s; last stage received at "
		       "%.2f GB/s (waiting included), pipeline %.2f GB/s\n",
		       n, hop_comm_transport(comm), batch, seq, hidden,
		       bytes / 1048576.0, mbs, total, mbs * (double)bytes / t_recv / 1e9,
		       mbs * (double)bytes / total / 1e9);
	else if (n == 1)
		printf("pp_activations: one stage, nothing to transfer (run with -n 2 or more)\n");
	free(act);
	hop_comm_destroy(comm);
	return 0;
}
