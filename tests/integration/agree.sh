#!/bin/bash
# Agreement of the per-process inputs of the cost model and the eager size
# (agree_test): rank 0 runs on one CPU with a small memlock limit, the
# others on every CPU; every rank must hold the same model and eager size
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
exit $fail
