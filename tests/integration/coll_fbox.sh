#!/bin/bash
# The fast boxes (coll_fbox) on shm: 2, 3 and 4 ranks through hop-run
# (every dtype, op, root and size 0..1 KiB bit for bit, slot reuse with
# late ranks, an i-collective in flight), the plan with HOP_FBOX=0,
# mismatched counts, and a rank that dies: launched without hop-run
# (which would stop the others), the survivors must fail within
# HOP_TIMEOUT, and nothing of the job may stay in /dev/shm; a rank waiting
# on a rank that failed because of the death names the dead one; ranks that
# disagree on a small Broadcast's root all fail, some with a mismatch.
# AllGather, AllToAll and ReduceScatter (coll_fbox's gathers, and in the
# wide form): every dtype, counts 0 to one past a full slot, in place or
# not, each rank late in turn; mismatched AllToAll counts (both in the
# slots, and across 1 KiB).
# Above 1 KiB (coll_fbox large): the CMA form at 2 and 4 ranks, and the
# scheduled path it falls back to with HOP_SHM_CMA=0 on one rank of 3;
# the wide form (coll_fbox wide) at 2 and 4 ranks. Ranks moved onto one
# CPU after init (coll_fbox one-cpu) at 2 ranks: no waiter, in the
# fast boxes or in p2p's loop, spins against the peer it waits on.
# FBOX_LONG=1 adds the mismatch at 3 ranks, the dead rank at 2, the CMA
# form at 3, HOP_SHM_CMA=0 on every rank and CMA refused by the kernel
# (nocma: a rank not dumpable, no rank with CAP_SYS_PTRACE).
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/coll_fbox
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() { # name expected-lines pattern output rc
	if [ "$5" = 0 ] && [ "$(grep -c "$3" <<< "$4")" = "$2" ]; then
		echo "PASS: coll_fbox $1"
	else
		echo "FAIL: coll_fbox $1 (exit $5)"
		printf '%s\n' "$4" | grep -v "$3" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
}

for n in 2 3 4; do
	out=$(HOP_TRANSPORT=shm "$run" -n $n --timeout 60 -- "$prog" 2>&1)
	check "$n ranks" $n "coll_fbox: rank [0-9]* passed" "$out" $?
	[ $n = 3 ] && [ -z "${FBOX_LONG:-}" ] && continue
	out=$(HOP_TRANSPORT=shm HOP_TIMEOUT=10 "$run" -n $n --timeout 60 -- "$prog" mismatch 2>&1)
	check "mismatch $n ranks" $n "mismatch detected: HOP_ERR_MISMATCH" "$out" $?
done
# the reference of 600 KiB vectors takes seconds per call under ASan: a
# longer guard than the other runs'
for n in 2 ${FBOX_LONG:+3} 4; do
	out=$(HOP_TRANSPORT=shm "$run" -n $n --timeout 180 -- "$prog" large 1 2>&1)
	check "CMA form, $n ranks" $n "coll_fbox: rank [0-9]* passed" "$out" $?
done
for n in 2 ${FBOX_LONG:+3} 4; do
	out=$(HOP_UNEXPECTED_MAX=4M HOP_TRANSPORT=shm "$run" -n $n --timeout 60 -- "$prog" wide 2>&1)
	check "wide form, $n ranks" $n "coll_fbox: rank [0-9]* passed" "$out" $?
done
# ranks on one CPU after init yield to each other (2 ranks: more would
# outnumber CI's cores, where the comm never spins)
out=$(HOP_TRANSPORT=shm "$run" -n 2 --timeout 60 -- "$prog" one-cpu 2>&1)
check "one CPU, 2 ranks" 2 "coll_fbox: rank [0-9]* \(passed\|skipped\)" "$out" $?
if [ -n "${FBOX_LONG:-}" ]; then
	out=$(HOP_SHM_CMA=0 HOP_TRANSPORT=shm "$run" -n 2 --timeout 60 -- "$prog" large 0 2>&1)
	check "HOP_SHM_CMA=0, 2 ranks" 2 "coll_fbox: rank [0-9]* passed" "$out" $?
	out=$(HOP_TRANSPORT=shm "$run" -n 2 --timeout 60 -- "$prog" nocma 2>&1)
	check "CMA refused, 2 ranks" 2 "coll_fbox: rank [0-9]* passed" "$out" $?
fi
# one rank without CMA turns the form off on all
out=$(HOP_TRANSPORT=shm "$run" -n 3 --timeout 60 -- sh -c \
	'[ "$HOP_RANK" = 1 ] && export HOP_SHM_CMA=0; exec "$0" large 0' "$prog" 2>&1)
check "HOP_SHM_CMA=0 on rank 1 of 3" 3 "coll_fbox: rank [0-9]* passed" "$out" $?
# ranks 0 and 1 both take themselves for a small Broadcast's root (late:
# rank 1 comes late, the reader checking it does so at its next call)
for late in "" late; do
	out=$(HOP_TRANSPORT=shm HOP_TIMEOUT=10 "$run" -n 3 --timeout 60 -- "$prog" root-mismatch $late 2>&1)
	rc=$?
	grep -q "root mismatch: HOP_ERR_MISMATCH" <<< "$out" || rc=1
	check "root mismatch, 3 ranks${late:+, rank 1 late}" 3 "root mismatch: HOP_ERR_" "$out" $rc
done
out=$(HOP_TRANSPORT=shm HOP_TIMEOUT=10 "$run" -n 2 --timeout 60 -- "$prog" mismatch-across 2>&1)
check "mismatch across 1 KiB, 2 ranks" 2 "mismatch detected: HOP_ERR_MISMATCH" "$out" $?
# (across on 2 ranks, as above: with 3, the third rank may meet rank 0's
# close before the mismatch reaches it)
for m in "a2a-mismatch 3" "a2a-mismatch-across 2"; do
	set -- $m
	out=$(HOP_TRANSPORT=shm HOP_TIMEOUT=10 "$run" -n $2 --timeout 60 -- "$prog" $1 2>&1)
	check "AllToAll ${1#a2a-}, $2 ranks" $2 "mismatch detected: HOP_ERR_MISMATCH" "$out" $?
done
out=$(HOP_TRANSPORT=shm HOP_TIMEOUT=3 "$run" -n 3 --timeout 60 -- "$prog" late 2>&1)
check "late rank, 3 ranks" 3 "late peer: HOP_ERR" "$out" $?
# the scheduled path: the plan says so; 2 ranks reduce in the one order
out=$(HOP_FBOX=0 HOP_TRANSPORT=shm "$run" -n 2 --timeout 60 -- "$prog" --expect 0 2>&1)
check "HOP_FBOX=0" 2 "coll_fbox: rank [0-9]* passed" "$out" $?

# a dead rank: ranks started here, rank 0 listening on a loopback port
# (a port another process holds, as tests running beside this one may,
# makes rank 0's listen fail: that launch is repeated on another port).
# Sets out, rc (failed ranks), secs and left (the job's /dev/shm entries).
dead_job() { # ranks mode
	local n=$1 mode=$2 attempt port secret pids p r start
	for attempt in 1 2 3; do
		port=$((20000 + RANDOM % 30000))
		secret=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
		pids=
		rm -f "$tmp"/out.*
		start=$(date +%s)
		for r in $(seq 0 $((n - 1))); do
			HOP_RANK=$r HOP_SIZE=$n HOP_ADDR=127.0.0.1:$port \
			HOP_SECRET=$secret HOP_TIMEOUT=10 HOP_TRANSPORT=shm \
				"$prog" "$mode" > "$tmp/out.$r" 2>&1 &
			pids="$pids $!"
		done
		rc=0
		for p in $pids; do wait "$p" 2>/dev/null || rc=$((rc + 1)); done
		secs=$(($(date +%s) - start))
		grep -q "cannot listen on .*Address already in use" "$tmp/out.0" ||
			break
	done
	out=$(cat "$tmp"/out.*)
	left=
	for p in $pids; do left="$left$(ls /dev/shm 2>/dev/null | grep "^hop-$p-")"; done
}
# the dead rank's exit is the one failure; survivors well inside
# HOP_TIMEOUT (10 s): the provider's liveness check, not the deadline
for n in ${FBOX_LONG:+2} 3; do
	dead_job $n kill
	if [ $rc = 1 ] && [ $secs -lt 8 ] && [ -z "$left" ]; then rc=0; fi
	check "dead rank, $n ranks (${secs}s${left:+, left in /dev/shm: $left})" \
		$((n - 1)) "survived a dead peer" "$out" $rc
done
# a rank that failed because of the death, without naming it, is not
# named by the rank waiting on it: the dead one is
dead_job 3 kill-cause
if [ $rc = 1 ] && [ $secs -lt 8 ] && [ -z "$left" ]; then rc=0; fi
check "the dead rank named through a failed one (${secs}s${left:+, left in /dev/shm: $left})" \
	2 "named the dead rank 2" "$out" $rc
exit $fail
