#!/bin/bash
# Derived communicators (split_test) on shm and tcp, 4 ranks: split
# semantics, collectives and p2p on parents and children in flight
# together, an abort local to a child, parents destroyed first, errors;
# a peer of an aborted child timing out alone (HOP_TIMEOUT=3: init, under
# a sanitizer on a loaded machine, runs under it too); and
# hop_coll_plan() equal to the choice the collective logs at
# HOP_DEBUG=info, with the model's choice and with HOP_ALGO.
# SPLIT_TRANSPORTS and SPLIT_RANKS override the lists.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/split_test
fail=0

check() { # name n out rc
	if [ "$4" = 0 ] && [ "$(grep -c "split_test: rank [0-9]* passed" <<< "$3")" = "$2" ]; then
		echo "PASS: $1"
	else
		echo "FAIL: $1 (exit $4)"
		grep -v "passed" <<< "$3" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
}

# every PLAN line of each rank is a line that rank logged for the run
plan_check() { # name out
	# every "[r] PLAN x" line needs a line holding "[hop rR] info: x"; one
	# awk pass, as a grep per PLAN line (some 270 forks on a loaded
	# machine) took longer than the runs it checks
	awk '
		match($0, /^\[[0-9]+\] PLAN /) {
			r = substr($0, 2, index($0, "]") - 2)
			rank[++n] = r; text[n] = substr($0, RLENGTH + 1)
			next
		}
		{ line[++m] = $0 }
		END {
			bad = 0
			for (i = 1; i <= n; i++) {
				want = "[hop r" rank[i] "] info: " text[i]
				for (j = 1; j <= m && !index(line[j], want); j++)
					;
				if (j > m) { print "    rank " rank[i] " planned, not run: " text[i]; bad = 1 }
			}
			if (n < 20) { print "    too few PLAN lines"; bad = 1 }
			exit bad
		}' <<< "$2"
}

for t in ${SPLIT_TRANSPORTS:-shm tcp}; do
	for n in ${SPLIT_RANKS:-4}; do
		out=$(HOP_TRANSPORT=$t "$run" -n "$n" --timeout 60 -- "$prog" 2>&1)
		check "split $t $n ranks" "$n" "$out" $?
	done
	out=$(HOP_TIMEOUT=3 HOP_TRANSPORT=$t "$run" -n 3 --timeout 60 -- "$prog" peer-abort 2>&1)
	check "split $t: peers of an aborted child time out alone" 3 "$out" $?
	for algo in "" "allreduce:ring,broadcast:tree"; do
		out=$(env ${algo:+HOP_ALGO=$algo} HOP_DEBUG=info HOP_TRANSPORT=$t "$run" -n 4 --timeout 60 -- "$prog" plan 2>&1)
		rc=$?
		plan_check "$t" "$out" || rc=1
		check "hop_coll_plan $t ${algo:-model} equals the run" 4 "$out" $rc
	done
done
exit $fail
