#!/bin/bash
# Nonblocking puts (put_stream.c: a stream of hop_iput()s checked bit for
# bit with every immediate in order, puts to self, bad arguments) on each
# provider, 2 ranks; every case must pass on both ranks. HOP_RNDV_CHUNK=1M
# splits the largest puts into two writes. P2P_TRANSPORTS overrides the
# list ("verbs" in the SoftRoCE VMs).
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/put_stream
fail=0
for t in ${P2P_TRANSPORTS:-tcp shm}; do
	for c in stream self badargs; do
		out=$(HOP_RNDV_CHUNK=1M HOP_TIMEOUT=30 HOP_TRANSPORT=$t "$run" -n 2 --timeout 60 -- "$prog" $c 2>&1)
		rc=$?
		if [ $rc = 0 ] && [ "$(grep -c "put_stream $c: rank . passed" <<< "$out")" = 2 ]; then
			echo "PASS: put_stream $t $c"
		else
			echo "FAIL: put_stream $t $c (exit $rc)"
			printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
done
exit $fail
