#!/bin/bash
# tests/reliability/vm/run.sh - peer death on real verbs (SoftRoCE VMs).
#
# usage: tests/reliability/vm/run.sh [--nodes N] [--kill-runs K] [--link-runs L]
#                                    [--timeout S] [BUILD_DIR]
#
# Boots N VMs (default 3, one rank each) with scripts/softroce-cluster and
# runs tests/reliability/vm/peer_death_vm.sh in them: K runs (default 10)
# where a random rank is SIGKILLed at a random moment of a loop of
# collectives and p2p, then L runs (default 5, one boot each) where one
# VM's link is cut (ip link set eth0 down inside it). Every survivor must
# name the victim within HOP_TIMEOUT: PD_TIMEOUT (default 10 s) for kills,
# PD_LINK_TIMEOUT (default 20 s) for cuts, which the liveness probe names
# after HOP_IB_LIVENESS_MS + 8 x HOP_IB_TIMEOUT's 1.07 s = 9.6 s of silence
# (docs/verbs.md). Prints the counts (runs, survivors that named the victim,
# hangs, wrong messages) and exits non-zero on any failure; 77 (skip)
# without the verbs provider. BUILD_DIR (default $top_builddir, else .) is
# a build configured with verbs.
# Logs: BUILD_DIR/test-logs/vm/peer_death-{kill,link}.log.
set -u
S=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
NODES=3; KILL=10; LINK=5; TIMEOUT=1500
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) NODES=${2:-}; shift 2;;
	--kill-runs) KILL=${2:-}; shift 2;;
	--link-runs) LINK=${2:-}; shift 2;;
	--timeout) TIMEOUT=${2:-}; shift 2;;
	-h|--help) sed -n '3,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2;;
	*) break;;
	esac
done
B=$(cd "${1:-${top_builddir:-.}}" && pwd) || exit 2
if ! grep -q '^#define HOP_HAVE_VERBS 1' "$B/hop_autoconf.h" 2>/dev/null; then
	echo "SKIP: $B has no verbs provider"
	exit 77
fi
[ -x "$B/tests/reliability/peer_death" ] || make -C "$B" tests/reliability/peer_death > /dev/null ||
	{ echo "FAIL: could not build tests/reliability/peer_death"; exit 1; }
LOGS=$B/test-logs/vm
mkdir -p "$LOGS"
RC=0
SEED=${PD_SEED:-$(( $(date +%s) % 100000 ))}

# one cluster boot: mode, runs, log, seed
boot() {
	local t=${PD_TIMEOUT:-10}

	# a cut link is only named once the probe's retries ran out (~9.6 s)
	[ "$1" = link ] && t=${PD_LINK_TIMEOUT:-20}
	(cd "$B" && "$S/scripts/softroce-cluster" -n "$NODES" -r 1 --timeout "$TIMEOUT" \
		-e PD_SEED="$4" -e PD_TIMEOUT="$t" -- \
		"$S/tests/reliability/vm/peer_death_vm.sh" "$1" "$2") > "$3" 2>&1
	local rc=$?
	# a fault of the VMs (softroce-cluster ran the job again): say so
	grep '^softroce-cluster: VMFAULT' "$3" | sed 's/^softroce-cluster: /  /'
	return $rc
}

# kill: every run in one boot; link: one boot per run (after a cut and a
# restore, rdma_cm cannot connect the VM again in the same boot)
run_mode() { # mode runs
	local mode=$1 runs=$2 log=$LOGS/peer_death-$1.log rc=0 j
	[ "$runs" -gt 0 ] || return 0
	echo "== peer death on verbs, $mode: $NODES VMs x 1 rank, $runs runs (seed $SEED) =="
	if [ "$mode" = kill ]; then
		boot kill "$runs" "$log" "$SEED" || rc=1
	else
		: > "$log"
		for j in $(seq 1 "$runs"); do
			boot link 1 "$log.$j" $((SEED + j)) || rc=1
			sed "s/PDRUN link 0 /PDRUN link $((j - 1)) /" "$log.$j" >> "$log"
			rm -f "$log.$j"
		done
	fi
	# survivors print "PD rank R victim V: CODE after T ms, names rank V: yes|NO (...)"
	awk -v mode="$mode" -v runs="$runs" '
		/PD rank [0-9]+ victim [0-9]+: / {
			surv++
			if ($0 ~ /HUNG/) hung++
			else if ($0 ~ /names rank [0-9]+: yes/) named++
			else wrong++
		}
		/PDRUN [a-z]+ [0-9]+ rank/ {
			for (i = 1; i <= NF; i++) if ($i == "PDRUN") break
			done[$(i + 2)] = 1
		}
		END {
			n = 0; for (k in done) n++
			printf "  %s: runs %d of %d, survivors %d, named the victim %d, wrong messages %d, hangs %d\n",
				mode, n, runs, surv, named, wrong, hung
		}' "$log"
	grep -E 'PD rank [0-9]+ (victim|\(victim)' "$log" | sed 's/^/    /' | head -n 60
	if [ $rc != 0 ] || grep -qE 'PDRUN .* rc [1-9]|NO \(|HUNG' "$log"; then
		RC=1
		echo "  -- $mode failed; details in $log"
	fi
}
run_mode kill "$KILL"
run_mode link "$LINK"
exit $RC
