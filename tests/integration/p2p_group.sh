#!/bin/bash
# p2p_group through hop-run on each provider: grouped sends and receives
# in random orders between random pairs (self included), hop_waitall /
# hop_testany / hop_waitany with an error among the requests, wildcard
# receives with racing senders, and the argument errors. 1, 2 and 4 ranks,
# a different seed per run; then a group that times out, with 2 ranks. P2P_GROUP_TRANSPORTS overrides the providers,
# P2P_GROUP_RANKS the rank counts, P2P_GROUP_ROUNDS the group rounds
# (default 20; more for a longer random sweep).
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/p2p_group
rounds=${P2P_GROUP_ROUNDS:-20}
fail=0
# report RC PATTERN WHAT: PASS when the run exited 0 and printed PATTERN,
# else FAIL with the end of $out (without info lines)
report() {
	if [ "$1" = 0 ] && grep -q "$2" <<< "$out"; then
		echo "PASS: p2p_group $3"
		return
	fi
	echo "FAIL: p2p_group $3 (exit $1)"
	printf '%s\n' "$out" | grep -v "info:" | tail -n 30 | sed 's/^/    /'
	fail=1
}
for t in ${P2P_GROUP_TRANSPORTS:-shm tcp}; do
	for n in ${P2P_GROUP_RANKS:-1 2 4}; do
		seed=$((n * 7919 + ${#t}))
		start=$(date +%s.%N)
		out=$(HOP_TIMEOUT=20 HOP_TRANSPORT=$t "$run" -n "$n" --timeout 120 -- "$prog" --seed $seed --rounds "$rounds" 2>&1)
		rc=$?
		secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
		report $rc "all checks passed" "$t $n ranks, seed $seed, $rounds rounds (${secs} s)"
	done
	# a group waiting for a message nobody sends times out, named
	out=$(HOP_TIMEOUT=1 HOP_TRANSPORT=$t "$run" -n 2 --timeout 60 -- "$prog" --timeout-case 2>&1)
	report $? "timeout checks passed" "$t 2 ranks, hop_group_end at HOP_TIMEOUT"
done
exit $fail
