#!/bin/bash
# Receives posted before their messages (p2p_advert, docs/p2p.md "Receives
# posted first") on each provider, 2 ranks: every case must pass on both
# ranks, and where rank 1 posts first (posted, mixed) rank 0 must have
# written some messages straight into advertised receives (HOP_DEBUG=info
# count), but none within the eager size on tcp and shm (eagersize); the
# timed-out receive's buffer must not change after it returned.
# P2P_TRANSPORTS overrides the list ("verbs" in the SoftRoCE VMs).
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/p2p_advert
fail=0
for t in ${P2P_TRANSPORTS:-tcp shm}; do
	# the timeout case on shm: there a write lands without the target's
	# help (process_vm_writev), so a live key would let it through
	cases="posted sendfirst mixed trunc eagersize"
	[ $t = shm ] && cases="$cases timeout"
	for c in $cases; do
		to=20
		[ $c = timeout ] && to=1
		out=$(HOP_RNDV_ADVERT=${HOP_RNDV_ADVERT:-4K} HOP_DEBUG=info HOP_TIMEOUT=$to HOP_TRANSPORT=$t "$run" -n 2 --timeout 60 -- "$prog" $c 2>&1)
		rc=$? ok=0 note=
		[ $c = timeout ] && rc=0 # rank 0's late send may fail the run
		[ $rc = 0 ] && [ "$(grep -c "p2p_advert $c: rank . passed" <<< "$out")" = 2 ] && ok=1
		[ $c = timeout ] && [ "$(grep -c "p2p_advert $c: rank 1 passed" <<< "$out")" = 1 ] && ok=1
		if [ $c = posted ] || [ $c = mixed ]; then
			note=$(grep -o "r0\] info: p2p: [0-9]* sends written straight" <<< "$out" | grep -o "[0-9]* sends")
			[ -n "$note" ] || { ok=0; note="no sends written into advertised receives"; }
		fi
		if [ $c = eagersize ] && [ $t != verbs ]; then
			note=$(grep -o "r0\] info: p2p: [0-9]* sends written straight" <<< "$out" | grep -o "[0-9]* sends")
			[ -z "$note" ] || { ok=0; note="$note written into advertised receives within the eager size"; }
		fi
		if [ $ok = 1 ]; then
			echo "PASS: p2p_advert $t $c${note:+ ($note)}"
		else
			echo "FAIL: p2p_advert $t $c (exit $rc${note:+; $note})"
			printf '%s\n' "$out" | grep -v "info:" | tail -n 20 | sed 's/^/    /'
			fail=1
		fi
	done
done
exit $fail
