#!/bin/bash
# tests/cluster/validate.sh [BUILD] - the short forms of the model's two
# validations on emulated hosts, as root (scripts/test's cluster stage):
# scripts/validate-model --cluster with one size per collective on 2 hosts
# x 2 ranks, and scripts/validate-multihop --cluster with one size on the
# 3-hop path across a slower uplink. Each must run to
# its end, print its score and move every byte right; the scores
# themselves are measured by the long forms (docs/cluster.md), not here.
# One "PASS: ..." or "FAIL: ..." line per check; exit 1 on a FAIL.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 2
[ "$(id -u)" = 0 ] || { echo "FAIL: tests/cluster/validate.sh must run as root (it makes namespaces)"; exit 1; }
for p in tools/hop-run tools/hop-bench tools/hop-model tools/hop-relay-bench; do
	[ -x "$build/$p" ] || { echo "FAIL: $build/$p is not built (make)"; exit 1; }
done
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT || exit 2
fail=0

start=$(date +%s)
out=$(timeout 600 python3 "$top/scripts/validate-model" --cluster --build "$build" --place 2x2 \
	--sizes 65536 --no-probe --budget-ms 10 --max-iters 10 --out "$tmp/vm" 2>&1)
rc=$?
score=$(grep -m1 '^# SCORE:' <<< "$out")
if [ $rc = 0 ] && [ -n "$score" ] && grep -q '^# wrong elements over every run: 0$' <<< "$out" &&
	[ "$(grep -c '^#   ' <<< "$out")" = 5 ]; then
	echo "PASS: validate-model --cluster, short form (${score#\# }; $(( $(date +%s) - start ))s)"
else
	echo "FAIL: validate-model --cluster, short form (exit $rc)"
	tail -n 30 <<< "$out" | sed 's/^/    /'
	fail=1
fi

start=$(date +%s)
out=$(timeout 600 "$top/scripts/validate-multihop" --cluster --build "$build" --hops none -- \
	--sizes 1M --ks 1,4 --iters 2 --warmup 1 --fit-from 256K 2>&1)
rc=$?
rows=$(awk '$2 == "saf" || $2 == "pipe"' <<< "$out")
if [ $rc = 0 ] && grep -q '^pipelined rows >= 1 MiB' <<< "$out" &&
	grep -q '^uplink path, store-and-forward' <<< "$out" &&
	[ "$(wc -l <<< "$rows")" -ge 3 ] && [ -z "$(awk '$11 != 0' <<< "$rows")" ]; then
	echo "PASS: validate-multihop --cluster, short form ($(grep -m1 '^uplink path' <<< "$out"); $(( $(date +%s) - start ))s)"
else
	echo "FAIL: validate-multihop --cluster, short form (exit $rc)"
	tail -n 30 <<< "$out" | sed 's/^/    /'
	fail=1
fi
exit $fail
