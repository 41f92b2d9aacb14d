#!/bin/bash
# dead_peer_send.sh - a send to a peer that exited without destroying its
# communicator fails naming it, on shm and on tcp (dead_peer_send.c).
set -u
b=${top_builddir:?run through make check or set top_builddir}
fail=0
for t in ${DEAD_SEND_TRANSPORTS:-shm tcp}; do
	out=$(HOP_TIMEOUT=20 HOP_TRANSPORT=$t "$b/tools/hop-run" -n 2 \
		--timeout 60 -- "$b/tests/reliability/dead_peer_send" 2>&1)
	rc=$?
	if [ $rc = 0 ] && grep -q "dead_peer_send: rank 0 passed" <<< "$out"; then
		echo "PASS: dead peer send on $t: $(grep 'sends to' <<< "$out")"
	else
		echo "FAIL: dead peer send on $t (exit $rc):"
		printf '%s\n' "$out" | tail -n 10 | sed 's/^/    /'
		fail=1
	fi
done
exit $fail
