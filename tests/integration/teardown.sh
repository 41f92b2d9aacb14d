#!/bin/bash
# teardown_test through hop-run: collectives, a last barrier, destroy, on
# tcp and shm with 3 and 5 ranks, 8 jobs each (TEARDOWN_RUNS overrides),
# with HOP_EAGER_SLOTS=2 so that every barrier message makes a credit
# return due, racing the peer's close. Fails if any rank of any job fails.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/teardown_test
fail=0
for t in ${TEARDOWN_TRANSPORTS:-tcp shm}; do
	for n in 3 5; do
		bad=0
		for i in $(seq 1 "${TEARDOWN_RUNS:-8}"); do
			out=$(HOP_EAGER_SLOTS=2 HOP_TIMEOUT=20 HOP_TRANSPORT=$t \
				"$run" -n "$n" --timeout 60 -- "$prog" "$i" 2>&1)
			rc=$?
			got=$(grep -c "teardown_test: rank [0-9]* passed" <<< "$out")
			if [ $rc != 0 ] || [ "$got" != "$n" ]; then
				bad=$((bad + 1))
				echo "  job $i (exit $rc, $got of $n ranks passed):"
				printf '%s\n' "$out" | tail -n 10 | sed 's/^/    /'
			fi
		done
		if [ $bad = 0 ]; then
			echo "PASS: teardown $t $n ranks, ${TEARDOWN_RUNS:-8} jobs"
		else
			echo "FAIL: teardown $t $n ranks: $bad of ${TEARDOWN_RUNS:-8} jobs failed"
			fail=1
		fi
	done
done
exit $fail
