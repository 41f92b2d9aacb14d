#!/bin/bash
# guest-suite.sh - the verbs tests of one rank inside a softroce-cluster VM.
# Run by tests/vm/run.sh through scripts/softroce-cluster, once per rank, in
# the build directory:  guest-suite.sh pair|loopback|quad [--no-perf]
# (quad: 2 VMs x 2 ranks, the collectives only)
# PERF lines: "PERF <perftest|hop|provider> lat <bytes> <median us> <min us>" and
# "PERF <perftest|hop> bw <bytes> <MB/s, 1e6 B>".
# Every step gets its own bootstrap port (HOP_ADDR) and a time limit, and
# prints "STEP <name> PASS|FAIL|SKIP <seconds>"; perf lines start "PERF ".
# The exit status is non-zero when any step failed.
set -u
MODE=${1:?pair|loopback|quad}
PERF=1; [ "${2:-}" = --no-perf ] && PERF=0
B=$(pwd)
S=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
R=${HOP_RANK:?}
GIDX=${SOFTROCE_GID_INDEX:-1}
BASE=${HOP_ADDR##*:}
HOST=${HOP_ADDR%:*}
export HOP_TIMEOUT=${HOP_TIMEOUT:-60}
FAILS=0
STEPNO=0

step() { # name timeout command...
	local name=$1 t=$2 t0 rc
	shift 2
	STEPNO=$((STEPNO + 1))
	t0=$(date +%s.%N)
	HOP_ADDR=$HOST:$((BASE + STEPNO)) timeout -k 5 "$t" "$@"
	rc=$?
	local dt
	dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}')
	if [ $rc = 0 ]; then
		echo "STEP $name PASS ${dt}s"
	else
		echo "STEP $name FAIL ${dt}s (exit $rc)"
		FAILS=$((FAILS + 1))
	fi
}
skip() { echo "STEP $1 SKIP ($2)"; }
# SUITE_ONLY=prov,p2p,coll,perf,probe,nccl,kill runs only those groups (debugging)
want() { [ -z "${SUITE_ONLY:-}" ] || [[ ",$SUITE_ONLY," == *",$1,"* ]]; }
[ "$MODE" = quad ] && SUITE_ONLY=${SUITE_ONLY:-coll}

# 1. the provider itself, both connection managers
if want prov; then
	step prov-rdmacm 150 env HOP_IB_CM=rdmacm "$B/tests/vm/verbs_prov_test" writes sends order signal oob
	step prov-oob 120 env HOP_IB_CM=oob "$B/tests/vm/verbs_prov_test" writes signal
fi

# 2. p2p end to end on verbs (0 B .. 16 MiB ring, put + immediates, errors)
if ! want p2p; then
	:
elif [ -x "$B/tests/integration/p2p_test" ]; then
	step p2p 200 "$B/tests/integration/p2p_test" --big 16777216
else
	skip p2p "tests/integration/p2p_test not built"
fi

# 3. the collectives' default matrix: 2 ranks in the loopback VM (every
# algorithm), and 4 ranks over 2 VMs (quad: ranks on one host and across
# the link in one ring; counts up to 64 Ki elements, to keep the stage short)
if ! want coll || [ "$MODE" = pair ]; then
	:
elif [ -x "$B/tests/integration/coll_matrix" ]; then
	if [ "$MODE" = quad ]; then
		step coll-4 420 "$B/tests/integration/coll_matrix" --max-count 65536
	else
		step coll 300 "$B/tests/integration/coll_matrix"
	fi
else
	skip coll "tests/integration/coll_matrix not built"
fi

# 4. perftest beside hop, same VMs (pair only: rank 0 serves, rank 1
# connects). The host is shared and TCG timing is noisy, so the tools take
# turns, PERF_ROUNDS times (default 2); the table keeps each one's best.
LAT_SIZES="2 8 64 512 4096 16384 65536"
BW_SIZES="65536 262144 1048576 4194304"
perftest() { # lat|bw size
	local tool=ib_write_lat n=500 out=/tmp/pt.$$ tries=0
	[ "$1" = bw ] && { tool=ib_write_bw; n=$(( (64 << 20) / $2 )); [ $n -gt 1000 ] && n=1000; }
	local args=(-d rxe0 -x "$GIDX" -u 18 -s "$2" -n "$n" -p $((18515 + STEPNO)))
	if [ "$R" = 0 ]; then
		timeout 120 "$tool" "${args[@]}" > $out 2>&1
	else
		until timeout 120 "$tool" "${args[@]}" "$HOST" > $out 2>&1; do
			tries=$((tries + 1))
			[ $tries -ge 100 ] && { cat $out; return 1; }
			sleep 0.3
		done
	fi
	# the data line follows the "#bytes" header; perftest's MB is 2^20 B
	if [ "$1" = lat ]; then
		awk -v s="$2" '/#bytes/{h=1; next} h && $1==s {print "PERF perftest lat", s, $5, $3; exit}' $out
	else
		awk -v s="$2" '/#bytes/{h=1; next} h && $1==s {printf "PERF perftest bw %s %.1f\n", s, $4 * 1.048576; exit}' $out
	fi
	grep -q "^ *$2 " $out || { cat $out; return 1; }
}
perftest_all() { # lat|bw
	local s rc=0 sizes=$LAT_SIZES t0
	[ "$1" = bw ] && sizes=$BW_SIZES
	t0=$(date +%s)
	for s in $sizes; do STEPNO=$((STEPNO + 1)); perftest "$1" "$s" || rc=1; done
	if [ $rc = 0 ]; then
		echo "STEP perftest-$1 PASS $(( $(date +%s) - t0 ))s"
	else
		echo "STEP perftest-$1 FAIL $(( $(date +%s) - t0 ))s"
		FAILS=$((FAILS + 1))
	fi
}
hop_bench() { # lat|bw args...: rank 0 turns the table into PERF lines
	local kind=$1 out=/tmp/hb.$$
	shift
	step hop-$kind 300 bash -c '"$0" "$@" > '$out' 2>&1; rc=$?; cat '$out'; exit $rc' \
		"$B/tools/hop-p2p-bench" "$@"
	[ "$R" = 0 ] || return 0
	if [ "$kind" = lat ]; then
		awk '/^ *[0-9]/{print "PERF hop lat", $1, $3, $2}' $out
	else
		awk '/^ *[0-9]/{print "PERF hop bw", $1, $2}' $out
	fi
}
if [ "$MODE" = pair ] && [ $PERF = 1 ] && want perf; then
	havept=1; havehop=1
	command -v ib_write_lat > /dev/null || { havept=0; skip perftest "perftest not installed"; }
	[ -x "$B/tools/hop-p2p-bench" ] || { havehop=0; skip hop-bench "tools/hop-p2p-bench not built"; }
	# the provider alone (no p2p layer): where hop's latency goes
	step prov-lat 120 env HOP_IB_CM=rdmacm "$B/tests/vm/verbs_prov_test" lat
	for round in $(seq 1 "${PERF_ROUNDS:-2}"); do
		[ $havept = 1 ] && perftest_all lat
		[ $havehop = 1 ] && hop_bench lat --min 2 --max 65536 --no-bw --iters 300 --warmup 30
		[ $havept = 1 ] && perftest_all bw
		[ $havehop = 1 ] && hop_bench bw --min 65536 --max 4194304 --no-lat --iters 100
	done
fi

# 4a. hop-probe over verbs (issue 5): the alpha decomposition and beta of
# the link between the VMs; rank 0 prints it as PROBE lines (run.sh shows
# them) and reads its JSON profile back with the model's reader
if [ "$MODE" = pair ] && want probe; then
	if [ -x "$B/tools/hop-probe" ] && [ -x "$B/tests/integration/probe_check" ]; then
		step probe 400 bash -c '"$0" --sizes 1:1M --iters 200 --warmup 20 --budget 16 \
			--json /tmp/probe.$$.json > /tmp/probe.$$.out 2>&1; rc=$?
			[ "$HOP_RANK" = 0 ] && sed "s/^/PROBE /" /tmp/probe.$$.out
			[ $rc = 0 ] && [ "$HOP_RANK" = 0 ] && { "$1" /tmp/probe.$$.json verbs 1 || rc=1; }
			exit $rc' "$B/tools/hop-probe" "$B/tests/integration/probe_check"
	else
		skip probe "tools/hop-probe or tests/integration/probe_check not built"
	fi
fi

# 4b. the NCCL net plugin over verbs (tests/nccl-net): its harness on both
# ranks, handles exchanged over TCP at this step's HOP_ADDR; 100 small
# messages then 30 of random size up to 4 MiB per direction; pair only
NCCL_PLUGIN=$B/plugins/nccl/.libs/libnccl-net-hop.so
if ! want nccl || [ "$MODE" != pair ]; then
	:
elif [ -x "$B/tests/nccl-net/nccl_net_test" ] && [ -f "$NCCL_PLUGIN" ]; then
	step nccl-net 300 env LD_LIBRARY_PATH="$B/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		bash -c '"$0" "$1" --rank "$2" --addr "$HOP_ADDR" --conns 1 --msgs 130 --timeout 240' \
		"$B/tests/nccl-net/nccl_net_test" "$NCCL_PLUGIN" "$R"
else
	skip nccl-net "tests/nccl-net/nccl_net_test or the plugin not built"
fi

# 5. last: a rank that vanishes (rdma_cm notices at once); pair only
if [ "$MODE" = pair ] && want kill; then
	step prov-kill 60 env HOP_IB_CM=rdmacm "$B/tests/vm/verbs_prov_test" kill
fi
[ $FAILS = 0 ]
