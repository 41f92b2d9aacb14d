/*
 * dp_allreduce - data-parallel training's gradient exchange: every rank
 * computes gradients for the same model on its own data, then AllReduce
 * averages them so every replica takes the same step.
 *
 *   hop-run -n 4 examples/dp_allreduce [--params 4194304] [--steps 10]
 */
#include "example_util.h"

int main(int argc, char **argv)
{
	size_t params = (size_t)ex_arg(argc, argv, "--params", 4 << 20);
	long steps = ex_arg(argc, argv, "--steps", 10);
	hop_comm_t *comm = ex_join();
	int rank = hop_comm_rank(comm), n = hop_comm_size(comm);
	float *grad = malloc(params * sizeof(float));

	if (!grad) {
		fprintf(stderr, "rank %d: no memory for %zu gradients\n", rank, params);
		return 1;
	}
	double t_total = 0;
	for (long step = 0; step < steps; step++) {
		/* "backward pass": gradients that differ per rank and step,
		 * small integers so that the average is exact to check */
		for (size_t i = 0; i < params; i++)
			grad[i] = (float)((rank + i + (size_t)step) % 8);
		ex_check(comm, hop_barrier(comm), "hop_barrier");
		double t0 = ex_now();
		ex_check(comm, hop_allreduce(comm, grad, grad, params, HOP_FLOAT32, HOP_SUM),
			 "hop_allreduce");
		t_total += ex_now() - t0;
		/* the optimizer would now apply grad / n; check the sum */
		for (size_t i = 0; i < params; i += 4099) {
			float want = 0;
			for (int r = 0; r < n; r++)
				want += (float)((r + i + (size_t)step) % 8);
			if (grad[i] != want) {
				fprintf(stderr, "rank %d: step %ld: gradient %zu is %g, expected %g\n",
					rank, step, i, grad[i], want);
				return 1;
			}
		}
	}
	double bytes = (double)params * sizeof(float), per_step = t_total / steps;
	if (rank == 0)
		printf("dp_allreduce: %d ranks on %s, %zu float gradients (%.1f MiB) per step, "
		       "%ld steps: %.3f ms per AllReduce, algbw %.2f GB/s, busbw %.2f GB/s\n",
		       n, hop_comm_transport(comm), params, bytes / (1 << 20), steps,
		       per_step * 1e3, bytes / per_step / 1e9,
		       bytes / per_step / 1e9 * 2.0 * (n - 1) / n);
	free(grad);
	hop_comm_destroy(comm);
	return 0;
}
