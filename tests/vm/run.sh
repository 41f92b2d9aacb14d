#!/bin/bash
# tests/vm/run.sh - hop on real verbs: SoftRoCE (rdma_rxe) in qemu VMs.
#
# usage: tests/vm/run.sh [--no-perf] [--perf-rounds N] [--only loopback|quad|pair|lazy4]
#                        [--long] [--timeout S] [BUILD_DIR]
#
# Boots, with scripts/softroce-cluster,
#   quad:     2 VMs with 2 ranks each (rxe0 loops back between the two
#             ranks of a VM), the collectives' matrix and the
#             multi-hop relay test on 4 ranks, and HOP_TRANSPORT=auto
#             carrying each VM's pair on shm and the rest on verbs, then
#   pair:     2 VMs with 1 rank each and two NICs each (softroce-cluster
#             --nics 2: rxe0 on eth0, rxe1 on eth1, one qemu dgram link
#             over AF_UNIX per rail; the steps but the NCCL plugin's use
#             rxe0, the plugin runs a connection on each rail),
# (--only loopback: 1 VM running 2 ranks, the pair's checks over rxe0's
# loopback alone; the default run covers that path in the quad; --long
# adds, and --only lazy4 runs alone, lazy4: 4 VMs x 1 rank running the
# HOP_CONNECT=lazy steps, which the quad also runs on its 4 ranks)
# and runs tests/vm/guest-suite.sh on every rank with HOP_TRANSPORT=verbs: the
# provider test on both connection managers (writes 0 B..16 MiB byte for
# byte, sends, ordering, selective signalling, out-of-bounds), the p2p
# integration test, the collective smoke test when built, and in the pair
# the NCCL net plugin over both rails, a vanished peer and the perftest
# comparison (ib_write_lat / ib_write_bw beside
# hop-p2p-bench, same VMs, same run; --no-perf skips it).
# Prints one line per step and configuration, the perftest table, and exits
# non-zero when a step failed or a VM did not finish. BUILD_DIR (default
# $top_builddir, else the current directory) is a configured build with the
# verbs provider; the test programs are built there when missing.
# --perf-rounds N (default 3): rounds of the perftest comparison (one pair
# of runs per size, LAT2_PAIRS (default 3) at 2 B; the latencies without
# a target, 8-512 B, only in the first PERF_OTHER_ROUNDS (default 2) rounds); the
# table shows medians over the pairs.
# SUITE_ONLY=perf,... in the environment runs only those groups of
# tests/vm/guest-suite.sh (debugging, measuring); HOP_EAGER_POLL=0|1 is
# passed to the guests (an A/B of memory-polled eager messages).
# Logs: BUILD_DIR/test-logs/vm/. Exit 77 (skip) without the verbs provider.
set -u
S=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PERF=1; ONLY=; TIMEOUT=1200; ROUNDS=3; LONG=0
while [ $# -gt 0 ]; do
	case $1 in
	--no-perf) PERF=0; shift;;
	--only) ONLY=${2:-}; shift 2;;
	--long) LONG=1; shift;;
	--timeout) TIMEOUT=${2:-}; shift 2;;
	--perf-rounds) ROUNDS=${2:-}; shift 2;;
	-h|--help) awk 'NR > 2 && /^#/ { sub(/^# ?/, ""); print; next } NR > 2 { exit }' "$0"; exit 0;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2;;
	*) break;;
	esac
done
B=$(cd "${1:-${top_builddir:-.}}" && pwd) || exit 2
if ! grep -q '^#define HOP_HAVE_VERBS 1' "$B/hop_autoconf.h" 2>/dev/null; then
	echo "SKIP: $B has no verbs provider (configure found no libibverbs/librdmacm)"
	exit 77
fi
PROGS="tests/vm/verbs_prov_test tests/vm/verbs_lazy_test tests/integration/p2p_test tests/integration/p2p_advert tools/hop-p2p-bench tools/hop-probe tests/integration/probe_check"
[ -f "$S/tests/nccl-net/nccl_net_test.c" ] && PROGS="$PROGS tests/nccl-net/nccl_net_test"
[ -f "$S/tests/integration/coll_matrix.c" ] && PROGS="$PROGS tests/integration/coll_matrix"
[ -f "$S/tests/integration/relay_test.c" ] && PROGS="$PROGS tests/integration/relay_test"
missing=
for p in $PROGS; do [ -x "$B/$p" ] || missing="$missing $p"; done
if [ -n "$missing" ]; then
	echo "run.sh: building$missing"
	make -C "$B" -j2 $missing > /dev/null || { echo "FAIL: could not build$missing"; exit 1; }
fi
LOGS=$B/test-logs/vm
mkdir -p "$LOGS"
T0=$(date +%s)
RC=0

run_cfg() { # name nodes ranks_per_node nics suite-args...
	local name=$1 n=$2 r=$3 nics=$4 log=$LOGS/$1.log
	shift 4
	echo "== $name: $n VM(s) x $r rank(s), $nics NIC(s) each =="
	(cd "$B" && "$S/scripts/softroce-cluster" -n "$n" -r "$r" --nics "$nics" --timeout "$TIMEOUT" \
		-e PERF_ROUNDS="$ROUNDS" ${SUITE_ONLY:+-e SUITE_ONLY="$SUITE_ONLY"} \
		${LAT2_PAIRS:+-e LAT2_PAIRS="$LAT2_PAIRS"} \
		${PERF_OTHER_ROUNDS:+-e PERF_OTHER_ROUNDS="$PERF_OTHER_ROUNDS"} \
		${HOP_EAGER_POLL:+-e HOP_EAGER_POLL="$HOP_EAGER_POLL"} -- \
		"$S/tests/vm/guest-suite.sh" "$@") > "$log" 2>&1
	local rc=$? nranks=$((n * r))
	# one line per step: PASS only when every rank passed it
	awk -v cfg="$name" -v nr=$nranks '
		/STEP [^ ]+ (PASS|FAIL|SKIP)/ {
			for (i = 1; i <= NF; i++) if ($i == "STEP") break
			s = $(i + 1); st = $(i + 2)
			if (!(s in seen)) { order[++k] = s; seen[s] = 1 }
			cnt[s, st]++; t = $(i + 3); if (t ~ /s$/) time[s] = t
			if (st == "SKIP") { why[s] = $0; sub(/.*SKIP /, "", why[s]) }
		}
		END {
			for (j = 1; j <= k; j++) {
				s = order[j]
				if (cnt[s, "SKIP"]) st = "SKIP " why[s]
				else if (!cnt[s, "FAIL"] && cnt[s, "PASS"] >= nr) st = "PASS " time[s]
				else st = "FAIL (" cnt[s, "FAIL"] + 0 " failure(s), " cnt[s, "PASS"] + 0 " pass(es) over " nr " ranks)"
				printf "  %-4s %-14s %s\n", substr(st, 1, 4), s, substr(st, 6)
			}
		}' "$log"
	grep -E '^softroce-cluster: (node|PASS|FAIL|VMFAULT)' "$log" | sed 's/^/  /'
	if [ $rc != 0 ] || grep -qE 'STEP [^ ]+ FAIL' "$log"; then
		RC=1
		echo "  -- $name failed; last lines of $log:"
		grep -vE '^\[n[0-9]+ r[0-9]+\] PERF' "$log" | tail -n 25 | sed 's/^/     /'
	fi
}

# The PERF lines of rank 0 (tests/vm/guest-suite.sh): per size and pair
# (one per round; LAT2_PAIRS per round at 2 B), perftest and hop measured
# back to back with the same counts. Per size the table shows the median
# over the pairs of each tool's figure, and the ratio hop / perftest as the
# median over the pairs of each pair's own ratio (the two runs of a pair saw
# the same host load), with its range; n = the number of pairs.
perf_table() { # log
	local d
	d=$(grep -E '^\[n0 r0\] PERF ' "$1" | sed 's/.*PERF //')
	[ -n "$d" ] || { echo "  (no perftest/hop measurements)"; return; }
	awk '
		function med(a, n,   i, j, t) {   # median of a[1..n], sorts a
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
					t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
				}
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		# hop_put beside ib_write_bw of the same pairs (PERF hop put):
		# its median and the median, range of the pair ratios
		function putcols(s, n, rs,   r, nu, nq, p, u, q, lo, hi) {
			nu = nq = 0; lo = hi = ""
			for (r = 1; r <= n; r++) {
				p = v["perftest", "bw", s, rs[r]]; u = v["hop", "put", s, rs[r]]
				if (u != "") ua[++nu] = u
				if (p > 0 && u > 0) {
					q = u / p; pq[++nq] = q
					if (lo == "" || q < lo) lo = q
					if (hi == "" || q > hi) hi = q
				}
			}
			if (!nu) return ""
			pratio[s] = nq ? med(pq, nq) : ""
			if (nq && s >= 4096 && (putmin == "" || pratio[s] < putmin)) { putmin = pratio[s]; putmins = s }
			return sprintf(" %11.1f %7s %13s", med(ua, nu),
				nq ? sprintf("%.2f", pratio[s]) : "-",
				nq ? sprintf("%.2f..%.2f", lo, hi) : "-")
		}
		function row(k, s,   r, n, np, nh, nr, p, h, q, lo, hi, mp, mh) {
			n = split(rounds[k, s], rs, " ")
			np = nh = nr = 0; lo = hi = ""
			for (r = 1; r <= n; r++) {
				p = v["perftest", k, s, rs[r]]; h = v["hop", k, s, rs[r]]
				if (p != "") pa[++np] = p
				if (h != "") ha[++nh] = h
				if (p > 0 && h > 0) {
					q = h / p; qa[++nr] = q
					if (lo == "" || q < lo) lo = q
					if (hi == "" || q > hi) hi = q
				}
				if (k == "lat") {
					p = m["perftest", s, rs[r]]; h = m["hop", s, rs[r]]
					if (p != "" && (!(s in pmin) || p < pmin[s])) pmin[s] = p
					if (h != "" && (!(s in hmin) || h < hmin[s])) hmin[s] = h
				}
			}
			mp = np ? sprintf("%.1f", med(pa, np)) : "-"
			mh = nh ? sprintf("%.1f", med(ha, nh)) : "-"
			ratio[k, s] = nr ? med(qa, nr) : ""
			if (k == "lat")
				printf "  %9s %11s %9s %11s %9s %7s %13s %3d\n", s, mp,
					(s in pmin) ? pmin[s] : "-", mh, (s in hmin) ? hmin[s] : "-",
					nr ? sprintf("%.2f", ratio[k, s]) : "-",
					nr ? sprintf("%.2f..%.2f", lo, hi) : "-", nr
			else
				printf "  %9s %11s %11s %7s %13s %3d%s\n", s, mp, mh,
					nr ? sprintf("%.2f", ratio[k, s]) : "-",
					nr ? sprintf("%.2f..%.2f", lo, hi) : "-", nr,
					putcols(s, n, rs)
		}
		$1 == "provider" { prov = sprintf("median %s, min %s (%s B write+imm, busy poll)", $4, $5, $3); next }
		{
			k = $2; s = $3; r = $(k == "lat" ? 6 : 5)
			if (r == "") r = 1
			v[$1, k, s, r] = $4
			if (k == "lat") m[$1, s, r] = $5
			if (!((k, s) in seen)) { seen[k, s] = 1; sizes[k] = sizes[k] " " s }
			if (!((k, s, r) in seenr)) { seenr[k, s, r] = 1; rounds[k, s] = rounds[k, s] " " r }
		}
		END {
			print "  latency, half round trip (us): ib_write_lat t_typical (median of its"
			print "  iterations) beside hop-p2p-bench median, each the median over n pairs;"
			print "  min = lowest single iteration of any pair; hop/pt = median over the pairs"
			print "  of the pair ratio (both tools back to back, same counts), range = its spread"
			printf "  %9s %11s %9s %11s %9s %7s %13s %3s\n", "bytes", "pt_typical", "pt_min",
				"hop_median", "hop_min", "hop/pt", "range", "n"
			ns = split(sizes["lat"], ls, " ")
			for (i = 1; i <= ns; i++) row("lat", ls[i])
			if (prov != "")
				print "  hop provider alone (tests/vm/verbs_prov_test lat): " prov
			print "  bandwidth (MB/s = 1e6 B/s): ib_write_bw average beside hop-p2p-bench"
			print "  streaming, same message count and window; medians over the pairs as above;"
			print "  hop_put = hop-p2p-bench --put (hop_iput()s into a registered region, same"
			print "  run as hop), put/pt its ratio to ib_write_bw of the same pair"
			printf "  %9s %11s %11s %7s %13s %3s %11s %7s %13s\n", "bytes", "ib_write_bw", "hop",
				"hop/pt", "range", "n", "hop_put", "put/pt", "range"
			ns = split(sizes["bw"], bs, " ")
			for (i = 1; i <= ns; i++) row("bw", bs[i])
			if (ratio["lat", 2] != "")
				printf "  target: hop 2 B latency <= 1.10 x ib_write_lat: %.2f x (%s)\n",
					ratio["lat", 2], (ratio["lat", 2] <= 1.10) ? "met" : "missed"
			if (ratio["bw", 1048576] != "")
				printf "  target: hop 1 MiB bandwidth >= 0.90 x ib_write_bw: %.2f x (%s)\n",
					ratio["bw", 1048576], (ratio["bw", 1048576] >= 0.90) ? "met" : "missed"
			if (putmin != "")
				printf "  target: hop_put >= 0.95 x ib_write_bw at every size >= 4 KiB: lowest %.2f x at %s B (%s)\n",
					putmin, putmins, (putmin >= 0.95) ? "met" : "missed"
		}' <<< "$d"
}

[ "$ONLY" = loopback ] && run_cfg loopback 1 2 1 loopback
[ -z "$ONLY" ] || [ "$ONLY" = quad ] && run_cfg quad 2 2 1 quad
{ [ -z "$ONLY" ] && [ $LONG = 1 ]; } || [ "$ONLY" = lazy4 ] && run_cfg lazy4 4 1 1 lazy4
if [ -z "$ONLY" ] || [ "$ONLY" = pair ]; then
	if [ $PERF = 1 ]; then run_cfg pair 2 1 2 pair; else run_cfg pair 2 1 2 pair --no-perf; fi
	if [ $PERF = 1 ]; then
		echo "== perftest comparison (2 VMs, same run; TCG: compare ratios, not absolute numbers) =="
		perf_table "$LOGS/pair.log"
		sed -n 's/^\[n[01] r[01]\] \(PERFINFO\|LAT provider\) /  /p' "$LOGS/pair.log"
	fi
	if grep -qE '^\[n0 r0\] PROBE ' "$LOGS/pair.log"; then
		echo "== hop-probe over verbs (2 VMs; TCG: the split, not the absolute times) =="
		sed -n 's/^\[n0 r0\] PROBE /  /p' "$LOGS/pair.log"
	fi
	# the step passes only when every port's counters rose by its
	# connections' messages: show by how much
	if grep -qE '^\[n[01] r[01]\] nccl_net_test r[01]: rail ' "$LOGS/pair.log"; then
		echo "== NCCL net plugin rails over verbs (packets each port counted during the traffic) =="
		sed -n 's/^\[n[01] r[01]\] nccl_net_test \(r[01]: rail \)/  \1/p' "$LOGS/pair.log"
	fi
fi
echo "== verbs VM tests: $([ $RC = 0 ] && echo PASS || echo FAIL) in $(( $(date +%s) - T0 )) s (logs: $LOGS) =="
exit $RC
