#!/bin/bash
# peer_death_vm.sh - peer death on verbs, one rank per SoftRoCE VM. Run by
# tests/reliability/vm/run.sh through scripts/softroce-cluster, once per
# rank, in the build directory:
#
#   peer_death_vm.sh offer|kill|link RUNS [offer|kill|link RUNS]...
#
# The groups run in order in one boot; a link group comes last and has one
# run (rdma_cm cannot connect a VM again in the boot whose link was cut).
# Each group starts with a line "PDMODE <mode>" (run.sh sorts the lines of
# a shared boot by it).
# offer: tests/reliability/offered_late (3 ranks or more): a rank failed by
#       a peer's refusal keeps the buffer it offered, so a third rank's
#       write into it is not refused and blamed on it. RUNS is ignored.
# kill: per run, a victim rank (the same on every rank, from PD_SEED and the
#       run number) is SIGKILLed by its own driver after a random delay of
#       looping over collectives and p2p (tests/reliability/peer_death --env).
# link: instead, the victim's VM runs "ip link set eth0 down" (its rxe0
#       loses the link); afterwards it brings eth0 back and waits until its
#       RoCE port is ACTIVE again.
# Every survivor must return an error naming the victim within HOP_TIMEOUT:
# PD_TIMEOUT (default 10 s) for kill runs, PD_LINK_TIMEOUT (default 20 s) for
# link runs, as the liveness probe names a cut link only after ~10 s; plus
# grace. Each run starts together on every
# rank (a barrier through files in the job folder all VMs share) and uses
# its own bootstrap port. Prints per run and rank:
#   PDRUN <mode> <run> rank <r> victim <v> rc <rc>   (rc 0: named in time)
# plus peer_death's own "PD ..." line; exits non-zero when any run failed.
set -u
[ $# -ge 2 ] && [ $(($# % 2)) = 0 ] || { echo "usage: peer_death_vm.sh offer|kill|link RUNS [offer|kill|link RUNS]..."; exit 2; }
B=$(pwd)
R=${HOP_RANK:?}
N=${HOP_SIZE:?}
HOST=${HOP_ADDR%:*}
BASE=${HOP_ADDR##*:}
SEED=${PD_SEED:-4242}
SYNC=${SOFTROCE_RUN:-/tmp}/pd-sync
PROG=$B/tests/reliability/peer_death
[ -x "$PROG" ] || { echo "PDRUN $1 - rank $R: $PROG not built"; exit 1; }
[ "$N" -ge 2 ] || { echo "PDRUN $1 - rank $R: needs 2 ranks or more"; exit 1; }
mkdir -p "$SYNC"
fails=0

barrier() { # name: every rank touches a file, then waits for all of them
	local name=$1 t=0
	touch "$SYNC/$name.$R"
	while [ "$(ls "$SYNC" | grep -c "^$name\.")" -lt "$N" ]; do
		sleep 0.2
		t=$((t + 1))
		if [ $t -gt 900 ]; then
			echo "PDRUN $MODE - rank $R: barrier $name timed out"
			return 1
		fi
	done
	return 0
}

link_back() { # bring eth0 up and wait until the RoCE port is ACTIVE again
	local t st
	ip link set eth0 up
	for t in $(seq 1 60); do
		st=$(cat /sys/class/infiniband/*/ports/1/state 2>/dev/null | head -1)
		case $st in *ACTIVE*)
			sleep 2   # the peers' ARP entries and the GID settle
			echo "PD rank $R: link back after ${t}s ($st)"
			return 0;;
		esac
		sleep 1
	done
	echo "PD rank $R: link did not come back (port state: ${st:-none})"
	return 1
}

# HOP_TIMEOUT of a run: the liveness probe names a cut link only after
# ~10 s of silence, so link runs get longer (docs/security.md)
timeout_of() { if [ "$1" = link ]; then echo "${PD_LINK_TIMEOUT:-20}"; else echo "${PD_TIMEOUT:-10}"; fi; }

# one group of runs: mode, runs; PORT counts the bootstrap ports used so
# far, GROUP the groups (barrier names stay unique when a mode repeats)
PORT=0 GROUP=0
group() {
	local MODE=$1 RUNS=$2 i victim lk delay rc t
	t=$(timeout_of "$MODE")
	GROUP=$((GROUP + 1))
	echo "PDMODE $MODE"
	for i in $(seq 0 $((RUNS - 1))); do
		if [ "$MODE" = link ]; then
			victim=$(( 1 + (SEED + i) % (N - 1) ))   # not rank 0: its VM holds the next rendezvous
			lk=(--link "ip link set eth0 down")
		else
			victim=$(( (SEED * 7 + i * 5) % N ))
			lk=()
		fi
		delay=$(( (SEED * 31 + i * 977) % 1500 + 300 ))
		barrier "$GROUP.$MODE.$i" || { fails=$((fails + 1)); return 1; }
		PORT=$((PORT + 1))
		HOP_ADDR=$HOST:$((BASE + PORT)) timeout -k 5 $((t + 60)) "$PROG" --env \
			--victim "$victim" --delay "$delay" --seed $((SEED * 1000 + i + 1)) \
			--timeout "$t" "${lk[@]}"
		rc=$?
		echo "PDRUN $MODE $i rank $R victim $victim rc $rc"
		[ $rc = 0 ] || fails=$((fails + 1))
		if [ "$MODE" = link ] && [ "$R" = "$victim" ]; then
			link_back || { fails=$((fails + 1)); return 1; }
		fi
		barrier "$GROUP.$MODE.$i.done" || { fails=$((fails + 1)); return 1; }
	done
}

# the offer check: one run of offered_late on every rank
offer() {
	local MODE=offer dir rc
	GROUP=$((GROUP + 1))
	dir=$SYNC/offer.$GROUP
	echo "PDMODE offer"
	mkdir -p "$dir"
	barrier "$GROUP.offer" || { fails=$((fails + 1)); return 1; }
	PORT=$((PORT + 1))
	HOP_ADDR=$HOST:$((BASE + PORT)) timeout -k 5 $(($(timeout_of offer) + 60)) \
		"$B/tests/reliability/offered_late" --dir "$dir" --timeout "$(timeout_of offer)"
	rc=$?
	echo "PDRUN offer 0 rank $R rc $rc"
	[ $rc = 0 ] || fails=$((fails + 1))
	barrier "$GROUP.offer.done" || { fails=$((fails + 1)); return 1; }
}

while [ $# -ge 2 ]; do
	case $1 in kill|link|offer) ;; *) echo "PDRUN $1 - rank $R: unknown mode"; exit 2;; esac
	if [ "$1" = offer ]; then offer || break; shift 2; continue; fi
	group "$1" "$2" || break
	shift 2
done
[ $fails = 0 ]
