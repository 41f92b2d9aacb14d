#!/bin/bash
# The examples and hop-bench --check, end to end through hop-run on shm and
# tcp: each program verifies what it received and exits non-zero otherwise;
# this script also checks they printed their result lines. EXAMPLES_TRANSPORTS
# overrides the transports ("shm tcp").
set -u
b=$top_builddir
run=$b/tools/hop-run
fail=0
check() { # name, expected output pattern, command...
	local name=$1 pat=$2 out rc; shift 2
	out=$("$@" 2>&1); rc=$?
	if [ $rc = 0 ] && grep -qE "$pat" <<< "$out"; then
		echo "PASS: $name"
	else
		echo "FAIL: $name (exit $rc)"; printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
		fail=1
	fi
}
for t in ${EXAMPLES_TRANSPORTS:-shm tcp}; do
	check "dp_allreduce $t 4 ranks" 'dp_allreduce: 4 ranks' \
		env HOP_TRANSPORT=$t "$run" -n 4 --timeout 120 -- "$b/examples/dp_allreduce" --params 100003 --steps 3
	check "pp_activations $t 3 stages" 'pp_activations: 3 stages' \
		env HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$b/examples/pp_activations" --batch 2 --seq 64 --hidden 257 --microbatches 4
	check "kv_migration $t" 'kv_migration: .*verified' \
		env HOP_TRANSPORT=$t "$run" -n 2 --timeout 120 -- "$b/examples/kv_migration" --layers 4 --heads 2 --seq 100 --head-dim 64 --repeat 2
	check "moe_alltoall $t 3 ranks" 'moe_alltoall: 3 ranks.*verified' \
		env HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$b/examples/moe_alltoall" --tokens 301 --hidden 97 --experts 3 --topk 2 --steps 2
	check "hop-bench alltoall $t 3 ranks --check" 'Out of bounds values : 0 OK' \
		env HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$b/tools/hop-bench" alltoall -b 4 -e 1M -f 16 --check --iters 2 --warmup 1
	for c in allreduce broadcast reduce allgather reducescatter \
		 gather scatter allgatherv reducescatterv; do
		check "hop-bench $c $t 3 ranks --check" 'Out of bounds values : 0 OK' \
			env HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$b/tools/hop-bench" $c -b 4 -e 1M -f 16 --check --root 2 --iters 2 --warmup 1
	done
	check "hop-bench allreduce in place bf16 avg $t" 'Out of bounds values : 0 OK' \
		env HOP_TRANSPORT=$t "$run" -n 4 --timeout 120 -- "$b/tools/hop-bench" allreduce -b 2 -e 64K -f 32 -t bfloat16 -o avg --inplace --check --iters 2 --warmup 1
	for c in gather scatter allgatherv; do
		check "hop-bench $c in place $t" 'Out of bounds values : 0 OK' \
			env HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$b/tools/hop-bench" $c -b 4 -e 64K -f 32 --inplace --check --root 1 --iters 2 --warmup 1
	done
done
# the bench must notice wrong results: a wrong root on one side is a mismatch, not a silent pass
check "hop-bench rejects bad arguments" 'unknown collective' \
	bash -c "! '$b/tools/hop-bench' allsum 2>&1"
exit $fail
