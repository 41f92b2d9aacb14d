#!/bin/bash
# Gather, Scatter, AllGatherv and ReduceScatterv (coll_matrix --v-only)
# through hop-run on shm and tcp with 1, 2, 3, 5 and 7 ranks, then ranks
# that disagree on counts or root: each case must end with an error on
# every rank that receives (HOP_ERR_MISMATCH on some), never a hang.
# The four disagreements are split between the providers (0 and 2 on the
# first, 1 and 3 on the second) and the 7-rank run leaves out the large
# counts (--max-count 1000; the 5-rank run covers them) to keep the run
# short. COLL_TRANSPORTS
# and COLL_RANKS override the lists.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/coll_matrix
fail=0
i=0
for t in ${COLL_TRANSPORTS:-shm tcp}; do
	for n in ${COLL_RANKS:-1 2 3 5 7}; do
		start=$(date +%s) small=
		[ "$n" -ge 7 ] && small="--max-count 1000"
		out=$(HOP_TRANSPORT=$t "$run" -n "$n" --timeout 600 -- "$prog" --v-only $small 2>&1)
		rc=$?
		secs=$(( $(date +%s) - start ))
		if [ $rc = 0 ] && [ "$(grep -c "coll_matrix: rank [0-9]* passed" <<< "$out")" = "$n" ]; then
			echo "PASS: coll_matrix_v $t $n ranks ($(grep -m1 -o 'passed [0-9]* cases' <<< "$out"), ${secs}s)"
		else
			echo "FAIL: coll_matrix_v $t $n ranks (exit $rc, ${secs}s)"
			printf '%s\n' "$out" | grep -v "passed" | head -n 40 | sed 's/^/    /'
			fail=1
		fi
	done
	for w in $i $((i + 2)); do
		out=$(HOP_TIMEOUT=4 HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$prog" --mismatch-v $w 2>&1)
		rc=$?
		if [ $rc = 0 ] && [ "$(grep -c "coll_matrix mismatch: rank [0-9]* got " <<< "$out")" = 3 ] &&
		   grep -q "got HOP_ERR_MISMATCH" <<< "$out"; then
			echo "PASS: coll_matrix_v $t mismatch $w"
		else
			echo "FAIL: coll_matrix_v $t mismatch $w (exit $rc)"
			printf '%s\n' "$out" | head -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
	i=$(( (i + 1) % 2 ))
done
exit $fail
