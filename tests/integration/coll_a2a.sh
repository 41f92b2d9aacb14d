#!/bin/bash
# AllToAll and AllToAllv (coll_a2a) through hop-run on shm and tcp with
# 1, 2, 3, 5 and 7 ranks, then ranks that disagree on a count: rank 0
# must fail naming what differs (HOP_ERR_MISMATCH for alltoall's count,
# HOP_ERR_TRUNCATED naming rank 1 for an alltoallv block one element
# longer or shorter than rank 1 sends, eager or rendezvous), and no rank
# may hang.
# The 7-rank run leaves out the large counts (--max-count 1000), which
# the 5-rank run covers, to keep the script short.
# A2A_TRANSPORTS and A2A_RANKS override the lists.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/coll_a2a
fail=0
for t in ${A2A_TRANSPORTS:-shm tcp}; do
	for n in ${A2A_RANKS:-1 2 3 5 7}; do
		start=$(date +%s) small=
		[ "$n" -ge 7 ] && small="--max-count 1000"
		out=$(HOP_TRANSPORT=$t "$run" -n "$n" --timeout 300 -- "$prog" $small 2>&1)
		rc=$?
		secs=$(( $(date +%s) - start ))
		if [ $rc = 0 ] && [ "$(grep -c "coll_a2a: rank [0-9]* passed" <<< "$out")" = "$n" ]; then
			echo "PASS: coll_a2a $t $n ranks ($(grep -m1 -o 'passed [0-9]* cases' <<< "$out"), ${secs}s)"
		else
			echo "FAIL: coll_a2a $t $n ranks (exit $rc, ${secs}s)"
			printf '%s\n' "$out" | grep -v "passed" | head -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
	for kind in alltoall short long short-rndv long-rndv; do
		# alltoallv: rank 2, whose counts agree, completes its part
		want="HOP_ERR_TRUNCATED: .*rank 1 " bystander="rank 2 got HOP_SUCCESS"
		[ $kind = alltoall ] && want="HOP_ERR_MISMATCH: .*rank [12] " bystander="rank 2 got"
		out=$(HOP_TIMEOUT=10 HOP_TRANSPORT=$t "$run" -n 3 --timeout 60 -- "$prog" --mismatch $kind 2>&1)
		rc=$?
		if [ "$(grep -c "coll_a2a mismatch: rank [0-9]* got " <<< "$out")" = 3 ] &&
		   grep -q "rank 0 got $want" <<< "$out" && grep -q "$bystander" <<< "$out"; then
			echo "PASS: coll_a2a $t mismatch $kind"
		else
			echo "FAIL: coll_a2a $t mismatch $kind (exit $rc)"
			printf '%s\n' "$out" | head -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
done
exit $fail
