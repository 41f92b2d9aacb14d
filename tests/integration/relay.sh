#!/bin/bash
# hop_relay() through hop-run on tcp and shm (RELAY_TRANSPORTS overrides):
# explicit paths with 4 ranks; paths routed over a HOP_TOPO file, with the
# model's k and with HOP_PIPELINE_CHUNKS; a mismatched plan with 3 ranks
# (every rank must return an error, none may hang). Fails if any run fails.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/relay_test
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# chain 0-1-2-3, the middle link slower; a shortcut 0-3 far slower still
cat > "$tmp/chain.topo" <<'TOPO'
hop-topo 1
ranks 4
link 0 1 2 1.0
link 1 2 3 0.5
link 2 3 2 1.0
link 0 3 500 0.01
TOPO
fail=0
# check NAME WANT_PASSED_LINES ENV... -- ARGS...: one hop-run job
check() {
	local name=$1 want=$2 n=$3
	shift 3
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	out=$(env "${envs[@]}" "$run" -n "$n" --timeout 300 -- "$prog" "$@" 2>&1)
	rc=$?
	got=$(grep -c "relay_test: rank . passed" <<< "$out")
	if [ $rc = 0 ] && [ "$got" = "$want" ]; then
		echo "PASS: relay $name"
	else
		echo "FAIL: relay $name (exit $rc, $got of $want ranks passed)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		fail=1
	fi
}
for t in ${RELAY_TRANSPORTS:-tcp shm}; do
	check "$t paths" 4 4 HOP_TRANSPORT=$t -- 
	check "$t topo" 4 4 HOP_TRANSPORT=$t HOP_TOPO="$tmp/chain.topo" -- --topo
	check "$t topo HOP_PIPELINE_CHUNKS=5" 4 4 HOP_TRANSPORT=$t \
		HOP_TOPO="$tmp/chain.topo" HOP_PIPELINE_CHUNKS=5 -- --topo
	check "$t mismatch" 3 3 HOP_TRANSPORT=$t HOP_TIMEOUT=5 -- --mismatch
done
exit $fail
