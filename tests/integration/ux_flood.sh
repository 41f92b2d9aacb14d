#!/bin/bash
# Unexpected messages within HOP_UNEXPECTED_MAX (ux_flood): what fits is
# held and delivered bit for bit, a flood past it fails the receiver with
# HOP_ERR_NO_MEMORY naming the sender. On shm and tcp, 2 ranks.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/ux_flood
fail=0
for t in ${UX_TRANSPORTS:-shm tcp}; do
	for mode in fits flood; do
		# flood: rank 1 then waits on a rank that left, until HOP_TIMEOUT
		tmo=60
		[ $mode = flood ] && tmo=5
		out=$(HOP_TRANSPORT=$t HOP_UNEXPECTED_MAX=4M HOP_EAGER_SIZE=8K \
			HOP_TIMEOUT=$tmo "$run" -n 2 --timeout 120 -- "$prog" "$mode" 2>&1)
		rc=$?
		want=2
		[ $mode = flood ] && want=1 # rank 1 may end either way
		if [ "$(grep -c "ux_flood: rank [0-9] passed" <<< "$out")" -ge $want ] &&
		   { [ $mode = flood ] || [ $rc = 0 ]; } &&
		   grep -q "ux_flood: rank 0 passed" <<< "$out"; then
			echo "PASS: ux_flood $mode $t"
		else
			echo "FAIL: ux_flood $mode $t (exit $rc)"
			printf '%s\n' "$out" | grep -v "passed" | head -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
done
exit $fail
