#!/bin/bash
# tests/vm/ab-latency.sh - an interleaved A/B of hop-p2p-bench builds beside
# ib_write_lat in one boot (docs/verbs.md, "Performance beside perftest"): the host drifts by
# +-25 % between runs, so only runs close in time can be compared.
#
# usage: scripts/softroce-cluster -n 2 --timeout 1200 -- \
#            tests/vm/ab-latency.sh [-r ROUNDS] [-s BYTES] BUILD[|VAR=VAL,...]...
#        tests/vm/ab-latency.sh --summary LOG
#
# Each round runs ib_write_lat and hop-p2p-bench from every BUILD (a build
# folder with the verbs provider; "|VAR=VAL,..." adds environment for that
# arm), 1000 ping-pongs of BYTES (default 2) each, in an order that rotates
# per round (default 20 rounds). Rank 0 prints "AB round arm median_us"
# (arm 0 is ib_write_lat). --summary reads softroce-cluster's output: per
# arm the median of the medians, and the median over rounds of each arm's
# ratio to arm 0 and to arm 1. A measurement, not a test.
set -u
if [ "${1:-}" = --summary ]; then
	[ -r "${2:-}" ] || { echo "ab-latency: --summary needs a log file" >&2; exit 2; }
	grep -o 'AB [0-9]* [0-9]* [0-9.]*$' "$2" | awk '
	function med(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ v[$2, $3] = $4; if ($3 > arms) arms = $3; if ($2 > rounds) rounds = $2 }
	END {
		for (k = 0; k <= arms; k++) {
			n = 0; delete a; delete b; delete c; nb = 0; nc = 0
			for (r = 1; r <= rounds; r++) {
				if (!((r, k) in v)) continue
				a[++n] = v[r, k]
				if ((r, 0) in v) b[++nb] = v[r, k] / v[r, 0]
				if ((r, 1) in v) c[++nc] = v[r, k] / v[r, 1]
			}
			if (!n) continue
			printf "arm %d: median %.1f us over %d rounds", k, med(a, n), n
			if (k > 0 && nb) printf ", / ib_write_lat %.3f", med(b, nb)
			if (k > 1 && nc) printf ", / arm 1 %.3f", med(c, nc)
			printf "\n"
		}
	}'
	exit
fi
ROUNDS=20 SIZE=2
while getopts r:s: o; do
	case $o in r) ROUNDS=$OPTARG;; s) SIZE=$OPTARG;; *) exit 2;; esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '6,8p' "$0" | sed 's/^# //' >&2; exit 2; }
R=${HOP_RANK:?run under scripts/softroce-cluster}
GIDX=${SOFTROCE_GID_INDEX:-1}
BASE=${HOP_ADDR##*:} HOST=${HOP_ADDR%:*}
export HOP_TIMEOUT=60
ARMS=(ib_write_lat "$@")
STEP=0
run_perftest() {
	local args=(-d rxe0 -x "$GIDX" -u 18 -s "$SIZE" -n 1000 -p $((18515 + STEP))) t0
	if [ "$R" = 0 ]; then
		timeout 60 ib_write_lat "${args[@]}" > /tmp/ab-pt.$$ 2>&1
	else    # the server may not listen yet
		t0=$(date +%s)
		until timeout 60 ib_write_lat "${args[@]}" "$HOST" > /tmp/ab-pt.$$ 2>&1; do
			[ $(( $(date +%s) - t0 )) -ge 30 ] && break
			sleep 0.3
		done
	fi
	awk -v s="$SIZE" '/#bytes/ {h = 1; next} h && $1 == s {print $5; exit}' /tmp/ab-pt.$$
}
run_hop() { # BUILD[|VAR=VAL,...]
	local dir=${1%%|*} envs=()
	[ "$dir" != "$1" ] && IFS=, read -ra envs <<< "${1#*|}"
	env "${envs[@]}" HOP_ADDR="$HOST:$((BASE + STEP))" timeout 60 \
		"$dir/tools/hop-p2p-bench" --min "$SIZE" --max "$SIZE" --no-bw \
		--iters 1000 --warmup 20 > /tmp/ab-hop.$$ 2>&1
	awk '/^ *[0-9]/ {print $3}' /tmp/ab-hop.$$
}
for r in $(seq 1 "$ROUNDS"); do
	for j in $(seq 0 $((${#ARMS[@]} - 1))); do
		k=$(( (j + r) % ${#ARMS[@]} ))
		STEP=$((STEP + 1))
		if [ "$k" = 0 ]; then v=$(run_perftest); else v=$(run_hop "${ARMS[$k]}"); fi
		[ "$R" = 0 ] && echo "AB $r $k ${v:-nan}"
	done
done
rm -f /tmp/ab-pt.$$ /tmp/ab-hop.$$
exit 0
