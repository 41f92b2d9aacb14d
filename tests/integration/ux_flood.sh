#!/bin/bash
# Unexpected messages within HOP_UNEXPECTED_MAX (docs/flow-control.md), 2
# ranks on shm and tcp unless said otherwise:
#  - ux_flood: what fits is held and delivered bit for bit, a flood past it
#    fails the receiver with HOP_ERR_NO_MEMORY naming the sender, and a
#    rendezvous send to a rank that closes fails naming the close;
#  - coll_runahead (RUNAHEAD_RANKS, default 2 and 4; RUNAHEAD_TRANSPORTS,
#    default tcp and shm): loops of rooted collectives with slow receivers
#    stay within it through the closing barriers, results bit for bit;
#    with HOP_ROOTED_SYNC=0 the same Reduce loop fails the root with
#    HOP_ERR_NO_MEMORY.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
fail=0

# job NAME PROG MODE RANKS [VAR=VALUE...]: passes when every rank passed;
# in a flood or unbounded MODE a receiver must overflow HOP_UNEXPECTED_MAX
# (its warning), and the others must learn it from its close within a
# HOP_TIMEOUT kept short (hop-run exits 1 then).
job() {
	local name=$1 prog=$2 mode=$3 n=$4 rc out tmo=60 ending=0
	shift 4
	case $mode in
	flood|unbounded) ending=1 tmo=5 ;;
	unclaimed) tmo=5 ;;
	esac
	out=$(env HOP_DEBUG=warn HOP_UNEXPECTED_MAX=4M HOP_TIMEOUT=$tmo "$@" \
		"$run" -n "$n" --timeout 180 -- "$b/tests/integration/$prog" "$mode" 2>&1)
	rc=$?
	if [ "$(grep -c "$prog: rank [0-9] passed" <<< "$out")" = "$n" ] &&
	   { [ $ending = 1 ] || [ $rc = 0 ]; } &&
	   { [ $ending = 0 ] || grep -q "would pass HOP_UNEXPECTED_MAX" <<< "$out"; }; then
		echo "PASS: $name"
	else
		echo "FAIL: $name (exit $rc)"
		printf '%s\n' "$out" | grep -v "passed" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
}

for t in ${UX_TRANSPORTS:-shm tcp}; do
	for mode in fits flood unclaimed; do
		job "ux_flood $mode $t" ux_flood $mode 2 HOP_TRANSPORT=$t \
			HOP_EAGER_SIZE=8K
	done
done
for t in ${RUNAHEAD_TRANSPORTS:-tcp shm}; do
	for n in ${RUNAHEAD_RANKS:-2 4}; do
		job "coll_runahead bounded $t $n ranks" coll_runahead bounded $n \
			HOP_TRANSPORT=$t HOP_FBOX=0
		job "coll_runahead unbounded $t $n ranks" coll_runahead \
			unbounded $n HOP_TRANSPORT=$t HOP_FBOX=0 HOP_ROOTED_SYNC=0
	done
done
exit $fail
