#!/bin/bash
# Agreement of the per-process inputs of the cost model and the eager size
# (agree_test): rank 0 runs on its first CPU with a small memlock limit,
# the others on its last CPU; every rank must hold the same model and eager size
# and every collective must succeed. Runs 2, 3 and 4 ranks on shm and tcp
# (AGREE_RANKS and AGREE_TRANSPORTS override; the vm stage adds verbs).
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/agree_test
fail=0
for t in ${AGREE_TRANSPORTS:-shm tcp}; do
	for n in ${AGREE_RANKS:-2 3 4}; do
		out=$(HOP_TRANSPORT=$t "$run" -n "$n" --timeout 300 -- "$prog" 2>&1)
		rc=$?
		if [ $rc = 0 ] && [ "$(grep -c "agree_test: rank [0-9]* passed" <<< "$out")" = "$n" ]; then
			echo "PASS: agree_test $t $n ranks"
		else
			echo "FAIL: agree_test $t $n ranks (exit $rc)"
			printf '%s\n' "$out" | grep -v "passed" | head -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
done
# ranks bound to a core each (mpirun --bind-to core) own their cores: not
# oversubscribed, so they spin (core/cpus.h)
# (the first two CPUs this process may use: they need not be 0 and 1)
cpus=()
if command -v taskset > /dev/null; then
	for part in $(taskset -pc $$ | sed 's/.*: //; s/,/ /g'); do
		for ((c = ${part%-*}; c <= ${part#*-}; c++)); do cpus+=("$c"); done
	done
fi
if [ ${#cpus[@]} -ge 2 ]; then
	out=$(HOP_DEBUG=info HOP_TRANSPORT=shm CPU0=${cpus[0]} CPU1=${cpus[1]} \
		"$run" -n 2 --timeout 60 -- sh -c \
		'if [ "$HOP_RANK" = 0 ]; then c=$CPU0; else c=$CPU1; fi; exec taskset -c "$c" "$@"' sh \
		"$b/tools/hop-bench" allreduce -b 8 -e 8 --iters 10 --warmup 1 2>&1)
	if [ "$(grep -c "sharing this rank's cores on its kernel: 1 on 1 cores: a waiter spins 2000" <<< "$out")" = 2 ]; then
		echo "PASS: ranks bound to a core each are not oversubscribed"
	else
		echo "FAIL: ranks bound to a core each are not oversubscribed"
		grep -i "sharing\|oversub\|error" <<< "$out" | head -n 10 | sed 's/^/    /'
		fail=1
	fi
else
	echo "SKIP: ranks bound to a core each (fewer than 2 CPUs or no taskset)"
fi
exit $fail
