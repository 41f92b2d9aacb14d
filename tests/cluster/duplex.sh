#!/bin/bash
# tests/cluster/duplex.sh [BUILD] - full duplex between two hosts, as
# root: a cluster of 2 hosts x 1 rank on shaped links, and in it
# duplex_xchg over tcp: 16 MiB from rank 0 to rank 1 alone, and 16 MiB
# each way at once with rank 1 a little late (its clear-to-send reaches
# rank 0 before its own request to send). Each direction of a link has
# its own rate, so both ways must take about the time of one way: the
# check wants at least 80 % of the full-duplex rate (both ways <= 1.25 x
# one way, medians of the same run, so the machine's load cancels). A
# half-duplex exchange takes 2 x. About 8 s.
# One "PASS: ..." or "FAIL: ..." line; exit 1 on a FAIL.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 2
[ "$(id -u)" = 0 ] || { echo "FAIL: tests/cluster/duplex.sh must run as root (it makes namespaces)"; exit 1; }
for p in tools/hop-run tests/cluster/duplex_xchg; do
	[ -x "$build/$p" ] || { echo "FAIL: $build/$p is not built (make, make check)"; exit 1; }
done

# inside the cluster (hop-cluster --exec)
if [ -n "${CLUSTER_PIDS:-}" ]; then
	out=$(HOP_TRANSPORT=tcp "$build/tools/hop-run" --hosts 2 --host-pids "$CLUSTER_PIDS" --ppn 1 \
		--timeout 60 -- "$build/tests/cluster/duplex_xchg" 16 5 2>&1)
	rc=$?
	line=$(grep -o 'duplex: one way [0-9.]* ms, both ways [0-9.]* ms' <<< "$out")
	if [ $rc != 0 ] || [ -z "$line" ]; then
		echo "FAIL: duplex exchange between 2 hosts (exit $rc)"
		printf '%s\n' "$out" | head -n 30 | sed 's/^/    /'
		exit 1
	fi
	read -r one both < <(awk '{ print $4, $8 }' <<< "$line")
	pct=$(awk -v o="$one" -v b="$both" 'BEGIN { printf "%d", 100 * o / b }')
	if awk -v o="$one" -v b="$both" 'BEGIN { exit !(b <= 1.25 * o) }'; then
		echo "PASS: 16 MiB each way between 2 hosts at once: $both ms, one way $one ms ($pct % of full duplex)"
	else
		echo "FAIL: 16 MiB each way between 2 hosts at once: $both ms, one way $one ms ($pct % of full duplex, want >= 80 %)"
		exit 1
	fi
	exit 0
fi

out=$("$top/scripts/hop-cluster" --hosts 2 --link "${DUPLEX_LINK:-500mbit}" --exec -- "$0" "$build" 2>&1)
rc=$?
grep -E '^(PASS|FAIL|    )' <<< "$out"
[ $rc = 0 ] || { grep -qE '^FAIL' <<< "$out" ||
	{ echo "FAIL: duplex.sh in a 2-host cluster (exit $rc):"; tail -20 <<< "$out"; }; exit 1; }
