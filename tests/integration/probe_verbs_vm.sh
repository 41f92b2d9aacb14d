#!/bin/bash
# hop-probe on verbs in two SoftRoCE VMs, with perftest's ib_write_lat run
# in the same VMs first so its t_typical prints beside hop-probe's half
# round trip. Slow (qemu TCG: minutes), so not in `make check`; run it from
# a build directory:
#
#   ../tests/integration/probe_verbs_vm.sh [hop-probe options]
#
# Host side: boots the VMs through scripts/softroce-cluster and runs this
# script inside them (guest side: SOFTROCE_NODE is set). Exit status 0 when
# both ranks succeeded and the profile reads back with the model's reader.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
B=${top_builddir:-$(pwd -P)}

if [ -z "${SOFTROCE_NODE:-}" ]; then
	for x in "$B/tools/hop-probe" "$B/tests/integration/probe_check"; do
		[ -x "$x" ] || { echo "SKIP: $x not built (run from a build directory)"; exit 77; }
	done
	command -v qemu-system-x86_64 > /dev/null ||
		{ echo "SKIP: qemu-system-x86_64 not installed (scripts/setup)"; exit 77; }
	out=$(mktemp -d /tmp/hop-probe-vm.XXXXXX)
	"$HERE/../../scripts/softroce-cluster" -n 2 --timeout 900 -- \
		bash "$HERE/probe_verbs_vm.sh" "$B" "$@" > "$out/run.log" 2>&1
	rc=$?
	grep -v '^\[n0 r0\] @@' "$out/run.log"
	# the guests' files stay in their VMs: rank 0 printed them, marked
	for f in json csv svg; do
		sed -n "s/^\[n0 r0\] @@$f //p" "$out/run.log" > "$out/verbs.$f"
	done
	if [ $rc = 0 ]; then
		"$B/tests/integration/probe_check" "$out/verbs.json" verbs 1 || rc=1
	fi
	echo "log, profile, CSV and SVG in $out"
	exit $rc
fi

# ---- guest: one rank per VM ----
B=$1
shift
R=${HOP_RANK:?}
HOST=${HOP_ADDR%:*}
GIDX=${SOFTROCE_GID_INDEX:-1}
lat=n/a
if command -v ib_write_lat > /dev/null; then
	args=(-d rxe0 -x "$GIDX" -u 18 -s 8 -n 1000 -p 18601)
	if [ "$R" = 0 ]; then
		timeout 120 ib_write_lat "${args[@]}" > /tmp/lat.$$ 2>&1
	else
		tries=0
		until timeout 120 ib_write_lat "${args[@]}" "$HOST" > /tmp/lat.$$ 2>&1; do
			tries=$((tries + 1))
			[ $tries -ge 100 ] && break
			sleep 0.3
		done
	fi
	# columns: #bytes #iterations t_min t_max t_typical ...
	lat=$(awk '/#bytes/{h=1; next} h && $1==8 {print $5; exit}' /tmp/lat.$$)
	[ -n "$lat" ] || { echo "ib_write_lat failed:"; cat /tmp/lat.$$; lat=n/a; }
fi
json=/tmp/verbs.$$.json
"$B/tools/hop-probe" --sizes 1:1M --iters 200 --warmup 20 --budget 16 \
	--json "$json" --csv /tmp/verbs.$$.csv --svg /tmp/verbs.$$.svg "$@" | tee /tmp/probe.$$
rc=${PIPESTATUS[0]}
if [ "$R" = 0 ] && [ $rc = 0 ]; then
	sed 's/^/@@json /' "$json"
	sed 's/^/@@csv /' /tmp/verbs.$$.csv
	sed 's/^/@@svg /' /tmp/verbs.$$.svg
	half=$(awk '$1=="=" && $2=="sum" {print $(NF)}' /tmp/probe.$$)
	echo "ib_write_lat 8 B t_typical: $lat us (half round trip) | hop-probe tiny write + immediate one-way: $half us"
fi
exit $rc
