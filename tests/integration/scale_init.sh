#!/bin/bash
# scale_init.sh - a job of many ranks on one host starts and stops: hop-run
# starts $SCALE_INIT_RANKS (default 256) ranks of scale_rank on shm with
# connections made on first use (the default) and the ring AllReduce; each
# joins, runs one 8-byte AllReduce checked bit for bit, counts its open
# descriptors and destroys. Every rank must pass and hold at most 64
# descriptors, rank 0 too (its bootstrap socket per rank closes at the end of
# init). Then the check is shown able to fail: 64 ranks on an eager mesh (a
# liveness descriptor per peer) must break the 64-descriptor bound.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/scale_rank
n=${SCALE_INIT_RANKS:-256}
max_fds=64
fail=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# job N: run N ranks (environment as given), output in $tmp/out; prints
# "ranks_passed worst_fds worst_rank wall_s"
job() {
	local n=$1 t0 t1
	t0=$(date +%s%N)
	HOP_TRANSPORT=shm HOP_ALGO=allreduce:ring HOP_TIMEOUT=100 \
		"$run" -n "$n" --timeout 110 -- "$prog" >"$tmp/out" 2>&1
	echo "exit $?" >>"$tmp/out"
	t1=$(date +%s%N)
	awk -v ms=$(( (t1 - t0) / 1000000 )) '
		$2 == "SCALE" { ok++
			if ($4 > worst) { worst = $4; who = $3 } }
		END { printf "%d %d %d %.1f\n", ok, worst, who, ms / 1000 }' \
		"$tmp/out"
}

read -r ok worst who wall < <(job "$n")
if [ "$ok" != "$n" ] || ! grep -q "^exit 0$" "$tmp/out"; then
	echo "FAIL: $n ranks on shm: $ok of $n passed (${wall} s)"
	grep -v " SCALE " "$tmp/out" | tail -n 20 | sed 's/^/    /'
	fail=1
elif [ "$worst" -gt "$max_fds" ]; then
	echo "FAIL: $n ranks on shm: rank $who holds $worst descriptors (> $max_fds)"
	fail=1
else
	echo "PASS: $n ranks on shm: init, 8-byte ring AllReduce, destroy in" \
		"${wall} s; at most $worst descriptors on a rank"
fi

read -r ok worst who wall < <(HOP_CONNECT=eager job 64)
if [ "$ok" = 64 ] && [ "$worst" -gt "$max_fds" ]; then
	echo "PASS: the descriptor check fails an eager mesh of 64 ranks" \
		"(rank $who holds $worst)"
else
	echo "FAIL: 64 ranks on an eager mesh: $ok passed, at most $worst" \
		"descriptors: the check could not fail"
	fail=1
fi
exit $fail
