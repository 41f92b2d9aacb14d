#!/bin/bash
# The collectives' correctness matrix (coll_matrix) through hop-run on shm
# and tcp with 1, 2, 3, 5 and 8 ranks (2 and 8 are powers of two; 4 runs in
# scripts/test's sanitizer stage, COLL_RANKS there), then the mismatch case and a
# communicator destroyed with collectives in flight.
# COLL_FULL=1 runs the full matrix (all dtypes x ops, 16 MiB counts,
# 1..9 ranks; hours, not minutes). COLL_TRANSPORTS and COLL_RANKS
# override the lists; COLL_BIG_COUNT replaces the big count 1000003
# (scripts/test's sanitizer run). The 8-rank runs take the big count
# 262147 unless COLL_BIG_COUNT or COLL_FULL say otherwise: with 8 ranks
# oversubscribing 2 cores, 1000003 cost 40 CPU seconds per transport
# against 12.5, and 262147 elements still cross the 1 MiB rendezvous
# chunk and leave every ring segment above the 8 KiB eager size (1..5
# ranks keep 1000003). Fails when any rank of any run fails.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/coll_matrix
full=${COLL_FULL:-0}
args=
ranks="1 2 3 5 8"
if [ "$full" = 1 ]; then
	args=--full
	ranks="1 2 3 4 5 7 8 9"
fi
[ -z "${COLL_BIG_COUNT:-}" ] || args="$args --big-count $COLL_BIG_COUNT"
fail=0
for t in ${COLL_TRANSPORTS:-shm tcp}; do
	for n in ${COLL_RANKS:-$ranks}; do
		start=$(date +%s)
		nargs=$args
		[ "$n" -lt 8 ] || [ "$full" = 1 ] || [ -n "${COLL_BIG_COUNT:-}" ] ||
			nargs="$args --big-count 262147"
		out=$(HOP_TRANSPORT=$t "$run" -n "$n" --timeout 3600 -- "$prog" $nargs 2>&1)
		rc=$?
		secs=$(( $(date +%s) - start ))
		if [ $rc = 0 ] && [ "$(grep -c "coll_matrix: rank [0-9]* passed" <<< "$out")" = "$n" ]; then
			echo "PASS: coll_matrix $t $n ranks $nargs ($(grep -m1 -o 'passed [0-9]* cases' <<< "$out"), ${secs}s)"
		else
			echo "FAIL: coll_matrix $t $n ranks $nargs (exit $rc, ${secs}s)"
			printf '%s\n' "$out" | grep -v "passed" | head -n 40 | sed 's/^/    /'
			fail=1
		fi
	done
	# ranks that disagree on the count: HOP_ERR_MISMATCH, nobody hangs
	out=$(HOP_TIMEOUT=10 HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$prog" --mismatch 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ "$(grep -c "coll_matrix mismatch: rank [0-9]* got HOP_ERR_" <<< "$out")" = 3 ] &&
	   grep -q "got HOP_ERR_MISMATCH" <<< "$out"; then
		echo "PASS: coll_matrix $t mismatch"
	else
		echo "FAIL: coll_matrix $t mismatch (exit $rc)"
		printf '%s\n' "$out" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
	# destroyed with collectives in flight: cancelled, no crash
	out=$(HOP_TIMEOUT=10 HOP_TRANSPORT=$t "$run" -n 3 --timeout 120 -- "$prog" --destroy-in-flight 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ "$(grep -c "coll_matrix destroy: rank [0-9]* started: " <<< "$out")" = 3 ]; then
		echo "PASS: coll_matrix $t destroy in flight"
	else
		echo "FAIL: coll_matrix $t destroy in flight (exit $rc)"
		printf '%s\n' "$out" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
done
exit $fail
