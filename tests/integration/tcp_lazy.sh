#!/bin/bash
# tcp_lazy_test through hop-run on tcp (or $LAZY_TRANSPORT: shm_lazy.sh
# runs it on shm) with HOP_CONNECT=lazy: random peer
# pairs (8 ranks, both ends dialling at once), every rank to every other
# (5), a rendezvous as the first message of each pair (3), a ring
# allreduce that must open only its two neighbours' sockets or segments (8),
# eager slots that take memory only for the peers used (4), a rank
# that sends to every other and closes at once (4: the sends arrive), and a
# rank that exits before anyone connected to it (3: the sender's error
# names it within HOP_TIMEOUT), the same rank waited on by a receive (3)
# and by a ring allreduce (4: failed within half of HOP_TIMEOUT). The ring run on an eager mesh (4) must fail
# its socket check (the check can fail). TCP_LAZY_SEED picks the pairs
# (default: random, printed). Fails if any run does.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/tcp_lazy_test
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
seed=${TCP_LAZY_SEED:-$RANDOM}
tr=${LAZY_TRANSPORT:-tcp}
# lazy N NAME ARGS...: run and expect every rank to pass
lazy() {
	local n=$1 name=$2 out rc got
	shift 2
	rm -f "$tmp"/*
	out=$(TCP_LAZY_DIR=$tmp HOP_TRANSPORT=$tr HOP_CONNECT=lazy "$run" -n "$n" --timeout 60 \
		-- "$prog" "$@" 2>&1)
	rc=$?
	got=$(grep -c "tcp_lazy_test: rank [0-9]* passed" <<< "$out")
	if [ $rc = 0 ] && [ "$got" = "$want" ]; then
		echo "PASS: $tr lazy $name, $n ranks"
		grep "got the error" <<< "$out" | sed 's/^/    /'
	else
		echo "FAIL: $tr lazy $name, $n ranks (exit $rc, $got of $want passed)"
		printf '%s\n' "$out" | grep -v "info:" | tail -n 20 | sed 's/^/    /'
		fail=1
	fi
}
want=8 lazy 8 "pairs (seed $seed)" pairs "$seed"
want=5 lazy 5 "all to all" all
want=3 lazy 3 "rendezvous first" rndv
want=8 HOP_ALGO=allreduce:ring lazy 8 "ring allreduce" ring
want=4 lazy 4 "sends then close at once" last
want=4 HOP_EAGER_SLOTS=1024 lazy 4 "eager slots on first use" rss
# the exited rank prints nothing
want=2 HOP_TIMEOUT=2 lazy 3 "dead peer" dead
# a receive (and a collective) waiting on a rank never connected, that
# exited: named within half of HOP_TIMEOUT, not timed out
want=2 HOP_TIMEOUT=6 lazy 3 "receive from a dead peer" deadrecv
want=3 HOP_TIMEOUT=6 HOP_ALGO=allreduce:ring lazy 4 "allreduce with a dead rank" deadcoll

rm -f "$tmp"/*
out=$(TCP_LAZY_DIR=$tmp HOP_TRANSPORT=$tr HOP_CONNECT=eager HOP_ALGO=allreduce:ring \
	"$run" -n 4 --timeout 60 -- "$prog" ring 2>&1)
if [ $? != 0 ] && grep -q "opened since init" <<< "$out"; then
	echo "PASS: $tr eager ring allreduce fails the lazy link check"
else
	echo "FAIL: $tr eager ring allreduce passed the lazy link check"
	printf '%s\n' "$out" | tail -n 10 | sed 's/^/    /'
	fail=1
fi
exit $fail
