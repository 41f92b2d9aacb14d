#!/bin/bash
# p2p_test through hop-run on each provider with 2, 3, 4 and 8 ranks, then
# the internal-API and failure cases of p2p_internal with 2 ranks, then
# p2p_test with memory-polled eager messages forced on (HOP_EAGER_POLL=1,
# the verbs default) with 3 ranks, which must have sent some that way, and
# with 2, where blocking receives must have taken some straight from the
# slot.
# P2P_TRANSPORTS overrides the list (e.g. "verbs" in the SoftRoCE VMs);
# P2P_RANKS the rank counts; P2P_BIG the ring test's bytes on every run
# (scripts/test's sanitizer run: 4 MiB, still several rendezvous chunks).
# Fails if any rank of any run fails.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/p2p_test
internal=$b/tests/integration/p2p_internal
fail=0
# report OK PASSED FAILED: one line, "PASS: p2p PASSED" when OK is 1, else
# "FAIL: p2p FAILED" and the end of $out (without info lines)
report() {
	if [ "$1" = 1 ]; then
		echo "PASS: p2p $2"
		return
	fi
	echo "FAIL: p2p $3"
	printf '%s\n' "$out" | grep -v "info:" | tail -n 30 | sed 's/^/    /'
	fail=1
}
for t in ${P2P_TRANSPORTS:-tcp shm}; do
	for n in ${P2P_RANKS:-2 3 4 8}; do
		args=
		# 64 MiB around the ring on every run but the 8-rank ones
		# (there 4 MiB keeps the memory of the test modest)
		[ "$n" -ge 8 ] && args="--big 4194304"
		[ -z "${P2P_BIG:-}" ] || args="--big $P2P_BIG"
		out=$(HOP_TRANSPORT=$t "$run" -n "$n" --timeout 300 -- "$prog" $args 2>&1)
		rc=$? ok=0
		[ $rc = 0 ] && grep -q "all checks passed" <<< "$out" && ok=1
		report $ok "$t $n ranks" "$t $n ranks (exit $rc)"
	done
	for c in cb mismatch-eager mismatch-rndv timeout abort peer-exit direct; do
		to=10 poll=-1
		[ $c = timeout ] && to=1
		[ $c = direct ] && poll=1
		out=$(HOP_EAGER_POLL=$poll HOP_TIMEOUT=$to HOP_TRANSPORT=$t "$run" -n 2 --timeout 60 -- "$internal" $c 2>&1)
		rc=$? ok=0
		[ $rc = 0 ] && [ "$(grep -c "p2p_internal $c: rank . passed" <<< "$out")" = 2 ] && ok=1
		report $ok "$t $c" "$t $c (exit $rc)"
	done
	[ -n "${P2P_RANKS:-}" ] && continue
	out=$(HOP_EAGER_POLL=1 HOP_DEBUG=info HOP_TRANSPORT=$t "$run" -n 3 --timeout 300 -- "$prog" --big 4194304 2>&1)
	rc=$?
	ll=$(grep -c "memory-polled eager messages: [1-9][0-9]* sent, [1-9][0-9]* received" <<< "$out") ok=0
	[ $rc = 0 ] && grep -q "all checks passed" <<< "$out" && [ "$ll" = 3 ] && ok=1
	report $ok "$t 3 ranks, HOP_EAGER_POLL=1 ($(grep -o "memory-polled eager messages: [0-9]* sent" <<< "$out" | head -1))" \
		"$t 3 ranks, HOP_EAGER_POLL=1 (exit $rc; $ll of 3 ranks sent and received memory-polled messages)"
	# 2 ranks with a core each spin, so blocking receives from a peer
	# that answers memory-polled take the message straight from its slot
	# (eager_direct.c); with fewer cores they yield and take it the
	# general way. A rank descheduled beyond the spin phase also takes it
	# the general way, so the count is over both ranks.
	[ "$(nproc)" -ge 2 ] || continue
	out=$(HOP_EAGER_POLL=1 HOP_DEBUG=info HOP_TRANSPORT=$t "$run" -n 2 --timeout 300 -- "$prog" --big 4194304 2>&1)
	rc=$?
	ll=$(grep -o "[0-9]* straight into hop_recv's buffer" <<< "$out" | awk '{n += $1} END {print n + 0}') ok=0
	[ $rc = 0 ] && grep -q "all checks passed" <<< "$out" && [ "$ll" -gt 0 ] && ok=1
	report $ok "$t 2 ranks, HOP_EAGER_POLL=1 ($ll received straight into hop_recv's buffer)" \
		"$t 2 ranks, HOP_EAGER_POLL=1 (exit $rc; $ll received straight into hop_recv's buffer)"
done
exit $fail
