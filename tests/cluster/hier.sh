#!/bin/bash
# tests/cluster/hier.sh [--long] [BUILD] - hierarchical collectives on the
# emulated cluster, as root: one cluster of 3 hosts, and in it the
# correctness matrix (coll_matrix --forced) with HOP_ALGO forcing hier for
# every collective that has it, over tcp, on the placements 2x2, 3x2, 2x3
# and 3+1+2, each in blocks and interleaved: results against the
# reference and bitwise identical on every rank, nonblocking ones in
# flight together; the flat rings and the recursive AllReduces (run in
# host order) on cyclic and mirrored placements; the hierarchical
# AllReduce in pieces (8 MiB), and by the rails and by the leaders at
# every count (HOP_HIER_FORM; ranks that set it differently fail with
# HOP_ERR_MISMATCH); then coll_order (a late rank: nobody leaves a barrier
# or collective before the inputs it needs were given) on 3+1+2.
# Default: counts up to 65543 (about 26 s); --long: the full matrix
# (--full: every dtype x op, 1000003 and 16 MiB counts; hours on
# 1 Gbit/s). One "PASS: ..." or "FAIL: ..." line per check; exit 1 on a
# FAIL.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
long=0
[ "${1:-}" = --long ] && { long=1; shift; }
build=$(cd "${1:-$top/build}" && pwd) || exit 2
[ "$(id -u)" = 0 ] || { echo "FAIL: tests/cluster/hier.sh must run as root (it makes namespaces)"; exit 1; }
for p in tools/hop-run tests/integration/coll_matrix tests/integration/coll_order; do
	[ -x "$build/$p" ] || { echo "FAIL: $build/$p is not built (make, make check)"; exit 1; }
done
export HOP_BUILD=$build HIER_LONG=$long

# inside the cluster (hop-cluster --exec): one hop-run per placement
if [ -n "${CLUSTER_PIDS:-}" ]; then
	hier=allreduce:hier,broadcast:hier,reduce:hier,allgather:hier,reducescatter:hier,barrier:hier
	args="--forced --big-count 65543" limit=600
	[ "$HIER_LONG" = 1 ] && args="--forced --full" limit=36000
	map=$(mktemp) && trap 'rm -f "$map"' EXIT || exit 2
	fail=0
	# name, hosts of ranks 0..n-1 (host numbers by lowest rank); HOP_ALGO
	# from $algo
	algo=$hier form=auto
	place() {
		local name=$1 n h pids start out rc
		shift
		n=$# h=$(printf '%s\n' "$@" | sort -n | tail -1)
		h=$((h + 1))
		printf '%s\n' "$@" > "$map"
		pids=$(cut -d, -f1-"$h" <<< "$CLUSTER_PIDS")
		start=$(date +%s)
		out=$(HOP_TRANSPORT=tcp HOP_ALGO=$algo HOP_HIER_FORM=$form "$build/tools/hop-run" --hosts "$h" --host-pids "$pids" \
			--map "$map" --timeout $limit -- "$build/tests/integration/coll_matrix" $args 2>&1)
		rc=$?
		if [ $rc = 0 ] && [ "$(grep -c "coll_matrix: rank [0-9]* passed" <<< "$out")" = "$n" ]; then
			echo "PASS: hier $name ($(grep -m1 -o 'passed [0-9]* cases' <<< "$out"), $(( $(date +%s) - start ))s)"
		else
			echo "FAIL: hier $name (exit $rc)"
			printf '%s\n' "$out" | grep -v passed | head -n 30 | sed 's/^/    /'
			fail=1
		fi
	}
	place "2x2 block" 0 0 1 1
	place "2x2 cyclic" 0 1 0 1
	place "3x2 block" 0 0 1 1 2 2
	place "3x2 cyclic" 0 1 2 0 1 2
	place "2x3 block" 0 0 0 1 1 1
	place "2x3 cyclic" 0 1 0 1 0 1
	place "3+1+2 block" 0 0 0 1 2 2
	place "3+1+2 interleaved" 0 1 2 0 2 0
	# flat rings in host order: a cyclic placement gives the same results
	algo=allreduce:ring,allgather:ring,reducescatter:ring
	place "3x2 cyclic, flat rings" 0 1 2 0 1 2
	# the recursive AllReduces pair positions in host order too, with
	# the fold on 6 ranks
	algo=allreduce:rd
	place "3x2 cyclic, recursive doubling" 0 1 2 0 1 2
	place "2x2 mirrored, recursive doubling" 0 1 1 0
	algo=allreduce:rabenseifner
	place "3x2 cyclic, Rabenseifner" 0 1 2 0 1 2
	place "2x2 mirrored, Rabenseifner" 0 1 1 0
	# the rail-parallel AllReduce in 4 pieces (8 MiB of int32 on 2 ranks
	# a host), its pieces' phases overlapping on real links
	algo=allreduce:hier args="--forced --only allreduce --big-count 2097155"
	place "2x2 mirrored, AllReduce in pieces" 0 1 1 0
	# the hierarchical AllReduce's two forms on uniform placements, each
	# forced (HOP_HIER_FORM) at every count
	algo=allreduce:hier args="--forced --only allreduce --big-count 65543"
	form=rails
	place "2x3 cyclic, AllReduce by the rails" 0 1 0 1 0 1
	form=leaders
	place "3x2 block, AllReduce by the leaders" 0 0 1 1 2 2
	place "2x2 mirrored, AllReduce by the leaders" 0 1 1 0
	form=auto
	# ranks that set HOP_HIER_FORM differently: the form is part of the
	# collective's signature, so the first AllReduce fails with
	# HOP_ERR_MISMATCH, at once, rather than running two schedules
	printf '%s\n' 0 0 1 1 > "$map"
	start=$(date +%s)
	out=$(HOP_TRANSPORT=tcp HOP_ALGO=allreduce:hier HOP_TIMEOUT=30 "$build/tools/hop-run" --hosts 2 \
		--host-pids "$(cut -d, -f1-2 <<< "$CLUSTER_PIDS")" --map "$map" --timeout 120 -- \
		bash -c '[ "$HOP_RANK" = 0 ] && export HOP_HIER_FORM=rails || export HOP_HIER_FORM=leaders
			exec "$0" --forced --only allreduce' "$build/tests/integration/coll_matrix" 2>&1)
	rc=$? took=$(( $(date +%s) - start ))
	if [ $rc != 0 ] && grep -q "HOP_ERR_MISMATCH" <<< "$out" && [ $took -lt 30 ]; then
		echo "PASS: hier HOP_HIER_FORM rails on rank 0, leaders on the others: HOP_ERR_MISMATCH (${took}s)"
	else
		echo "FAIL: hier HOP_HIER_FORM differing between ranks (exit $rc, ${took}s, no HOP_ERR_MISMATCH before HOP_TIMEOUT)"
		printf '%s\n' "$out" | head -n 30 | sed 's/^/    /'
		fail=1
	fi
	# a late rank, each in turn, on the uneven placement
	printf '%s\n' 0 1 2 0 2 0 > "$map"
	out=$(HOP_TRANSPORT=tcp HOP_ALGO=$hier "$build/tools/hop-run" --hosts 3 --host-pids "$CLUSTER_PIDS" \
		--map "$map" --timeout 300 -- "$build/tests/integration/coll_order" --no-v 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ "$(grep -c "coll_order: rank [0-9]* passed" <<< "$out")" = 6 ]; then
		echo "PASS: hier coll_order 3+1+2 interleaved (a late rank)"
	else
		echo "FAIL: hier coll_order 3+1+2 interleaved (exit $rc)"
		printf '%s\n' "$out" | grep -v passed | head -n 30 | sed 's/^/    /'
		fail=1
	fi
	exit $fail
fi

out=$("$top/scripts/hop-cluster" --hosts 3 --link 1gbit --exec -- "$0" "$build" 2>&1)
rc=$?
grep -E '^(PASS|FAIL|    )' <<< "$out"
[ $rc = 0 ] || { echo "FAIL: hier.sh in a 3-host cluster (exit $rc):"; grep -vE '^(PASS|FAIL|    )' <<< "$out" | tail -20; exit 1; }
