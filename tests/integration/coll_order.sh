#!/bin/bash
# Ordering of every collective (coll_order): with each rank in turn late,
# no rank leaves a Barrier, AllReduce, AllGather(v) or ReduceScatter(v)
# before every rank entered, a Broadcast or Scatter before the root
# entered, or the root a Reduce or Gather before every rank entered.
# Runs 1..16 ranks on shm and tcp: every collective up to ORDER_ALL_MAX
# ranks (default 8; Gather, Scatter and the v-variants up to ORDER_V_MAX,
# default 4), the barrier alone above
# (ORDER_RANKS and ORDER_TRANSPORTS override the lists). Fails when
# any rank of any run fails.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/coll_order
fail=0
for t in ${ORDER_TRANSPORTS:-shm tcp}; do
	for n in ${ORDER_RANKS:-$(seq 1 16)}; do
		only=
		[ "$n" -gt "${ORDER_ALL_MAX:-8}" ] && only="--only barrier"
		[ -z "$only" ] && [ "$n" -gt "${ORDER_V_MAX:-4}" ] && only="--no-v"
		out=$(HOP_TRANSPORT=$t "$run" -n "$n" --timeout 300 -- "$prog" $only 2>&1)
		rc=$?
		if [ $rc = 0 ] && [ "$(grep -c "coll_order: rank [0-9]* passed" <<< "$out")" = "$n" ]; then
			echo "PASS: coll_order $t $n ranks ${only:+($only) }($(grep -m1 -o 'passed [0-9]* cases' <<< "$out"))"
		else
			echo "FAIL: coll_order $t $n ranks (exit $rc)"
			printf '%s\n' "$out" | grep -v "passed" | head -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
done
exit $fail
