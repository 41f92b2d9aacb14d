#!/bin/bash
# tests/reliability/vm/run.sh - peer death on real verbs (SoftRoCE VMs).
#
# usage: tests/reliability/vm/run.sh [--nodes N] [--kill-runs K] [--link-runs L]
#                                    [--timeout S] [BUILD_DIR]
#
# Boots N VMs (default 3, one rank each) with scripts/softroce-cluster and
# runs tests/reliability/vm/peer_death_vm.sh in them: K runs (default 10)
# where a random rank is SIGKILLed at a random moment of a loop of
# collectives and p2p, then L runs (default 5) where one VM's link is cut
# (ip link set eth0 down inside it): the first in the same boot after the
# kills, every further one in a boot of its own. Every survivor must
# name the victim within HOP_TIMEOUT: PD_TIMEOUT (default 10 s) for kills,
# PD_LINK_TIMEOUT (default 20 s) for cuts, which the liveness probe names
# after HOP_IB_LIVENESS_MS + 8 x HOP_IB_TIMEOUT's 1.07 s = 9.6 s of silence
# (docs/verbs.md). The first boot starts with tests/reliability/offered_late
# (a rank failed by a peer keeps the memory it offered to a third, whose
# write into it must land). Prints the counts (runs, survivors that named
# the victim, hangs, wrong messages) and exits non-zero on any failure; 77 (skip)
# without the verbs provider. BUILD_DIR (default $top_builddir, else .) is
# a build configured with verbs.
# Logs: BUILD_DIR/test-logs/vm/peer_death-{offer,kill,link}.log.
set -u
S=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
NODES=3; KILL=10; LINK=5; TIMEOUT=1500
while [ $# -gt 0 ]; do
	case $1 in
	--nodes) NODES=${2:-}; shift 2;;
	--kill-runs) KILL=${2:-}; shift 2;;
	--link-runs) LINK=${2:-}; shift 2;;
	--timeout) TIMEOUT=${2:-}; shift 2;;
	-h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2;;
	*) break;;
	esac
done
B=$(cd "${1:-${top_builddir:-.}}" && pwd) || exit 2
if ! grep -q '^#define HOP_HAVE_VERBS 1' "$B/hop_autoconf.h" 2>/dev/null; then
	echo "SKIP: $B has no verbs provider"
	exit 77
fi
for p in peer_death offered_late; do
	[ -x "$B/tests/reliability/$p" ] || make -C "$B" "tests/reliability/$p" > /dev/null ||
		{ echo "FAIL: could not build tests/reliability/$p"; exit 1; }
done
LOGS=$B/test-logs/vm
mkdir -p "$LOGS"
RC=0
SEED=${PD_SEED:-$(( $(date +%s) % 100000 ))}

# one cluster boot: log, seed, then peer_death_vm.sh's groups (mode runs ...)
boot() {
	local log=$1 seed=$2
	shift 2
	(cd "$B" && "$S/scripts/softroce-cluster" -n "$NODES" -r 1 --timeout "$TIMEOUT" \
		-e PD_SEED="$seed" -e PD_TIMEOUT="${PD_TIMEOUT:-10}" \
		-e PD_LINK_TIMEOUT="${PD_LINK_TIMEOUT:-20}" -- \
		"$S/tests/reliability/vm/peer_death_vm.sh" "$@") > "$log" 2>&1
	local rc=$?
	# a fault of the VMs (softroce-cluster ran the job again): say so
	grep '^softroce-cluster: VMFAULT' "$log" | sed 's/^softroce-cluster: /  /'
	return $rc
}

# the lines of one mode from a boot's log: each rank's lines carry its
# "[nN rR] " prefix, and "PDMODE <mode>" starts a group of runs; lines
# without a prefix (softroce-cluster's) belong to every mode
of_mode() { # mode log
	awk -v m="$1" '
		match($0, /^\[n[0-9]+ r[0-9]+\] /) {
			p = substr($0, 1, RLENGTH)
			if ($0 ~ /\] PDMODE /) { cur[p] = $NF; next }
			if (cur[p] == m) print
			next
		}
		{ print }' "$2"
}

# The kill runs and the first link run share one boot (the link run last:
# after a cut and a restore rdma_cm cannot connect the VM again in the same
# boot); every further link run boots its own cluster. Boot j gets seed
# SEED + j.
KLOG=$LOGS/peer_death-kill.log LLOG=$LOGS/peer_death-link.log
OLOG=$LOGS/peer_death-offer.log
KRC=0 LRC=0
: > "$KLOG"; : > "$LLOG"; : > "$OLOG"
first=(offer 1)
[ "$KILL" -gt 0 ] && first+=(kill "$KILL")
[ "$LINK" -gt 0 ] && first+=(link 1)
echo "== peer death on verbs: $NODES VMs x 1 rank, $KILL kill runs, $LINK link runs, $(( LINK > 1 ? LINK : 1 )) boot(s) (seed $SEED) =="
boot "$LOGS/peer_death-boot1.log" $((SEED + 1)) "${first[@]}" || { KRC=1; LRC=1; }
of_mode offer "$LOGS/peer_death-boot1.log" > "$OLOG"
of_mode kill "$LOGS/peer_death-boot1.log" > "$KLOG"
of_mode link "$LOGS/peer_death-boot1.log" > "$LLOG"
rm -f "$LOGS/peer_death-boot1.log"
# a failed boot counts against a mode only when that mode did not finish
# (each mode's own lines say whether it passed: summary below)
[ $KRC = 0 ] || [ "$KILL" = 0 ] || grep -q "PDRUN kill $((KILL - 1)) rank" "$KLOG" && KRC=0
[ $LRC = 0 ] || [ "$LINK" = 0 ] || grep -q "PDRUN link 0 rank" "$LLOG" && LRC=0
for j in $(seq 2 "$LINK"); do
	boot "$LLOG.$j" $((SEED + j)) link 1 || LRC=1
	of_mode link "$LLOG.$j" | sed "s/PDRUN link 0 /PDRUN link $((j - 1)) /" >> "$LLOG"
	rm -f "$LLOG.$j"
done

# the counts of one mode: runs, survivors that named the victim, hangs
summary() { # mode runs log rc
	local mode=$1 runs=$2 log=$3 rc=$4
	[ "$runs" -gt 0 ] || return 0
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
# offer: every rank printed "PDRUN offer 0 rank R rc 0"
ok=$(grep -c 'PDRUN offer 0 rank [0-9]* rc 0' "$OLOG")
echo "  offer: $ok of $NODES ranks passed (a write into memory a failed rank offered)"
grep -E 'OL rank [0-9]+ \(' "$OLOG" | sed 's/^/    /'
if [ "$ok" != "$NODES" ]; then
	RC=1
	echo "  -- offer failed; details in $OLOG"
fi
summary kill "$KILL" "$KLOG" $KRC
summary link "$LINK" "$LLOG" $LRC
exit $RC
