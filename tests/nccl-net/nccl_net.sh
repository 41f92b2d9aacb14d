#!/bin/bash
# The NCCL net plugin through its harness (tests/nccl-net/nccl_net_test):
# per transport (tcp and shm; NCCL_NET_TRANSPORTS overrides), two processes
# with 2 connections each way, 200 messages of 0 B..4 MiB per connection and
# direction, argument checks; 8 connections each way; then a peer that
# dies mid-traffic. Once:
# connect and accept with no peer fail after HOP_TIMEOUT (2 s here).
set -u
b=${top_builddir:?run through make check or set top_builddir}
prog=$b/tests/nccl-net/nccl_net_test
plugin=$b/plugins/nccl/.libs/libnccl-net-hop.so
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
[ -f "$plugin" ] || { echo "FAIL: $plugin not built"; exit 1; }
# the plugin links libhop.so, not installed yet
export LD_LIBRARY_PATH=$b/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HOP_SOCKET_IFNAME=${HOP_SOCKET_IFNAME:-lo}
fail=0

run() { # name passes-wanted transport args...
	local name=$1 want=$2 t=$3 out rc
	shift 3
	out=$(HOP_TRANSPORT=$t timeout -k 5 300 "$prog" "$plugin" "$@" 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ "$(grep -c 'PASSED$' <<< "$out")" = "$want" ]; then
		echo "PASS: nccl-net $name"
		grep -E '^nccl_net_test.*(verified|in flight|died mid|failed after)' <<< "$out" | sed 's/^/    /'
	else
		echo "FAIL: nccl-net $name (exit $rc)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		fail=1
	fi
}

for t in ${NCCL_NET_TRANSPORTS:-tcp shm}; do
	run "$t" 2 "$t" --msgs 200 --timeout 240
	# 8 connections: with this seed a sender's last small messages sit in
	# the provider's queue after their requests completed; only the
	# plugin's progress thread delivers them (net_drain.c)
	run "$t 8 conns" 2 "$t" --conns 8 --msgs 110 --seed 777 --timeout 240
	run "$t peer-death" 1 "$t" --conns 1 --msgs 300 --die-after 150 --timeout 120
done
HOP_TIMEOUT=2 run "no peer" 1 tcp --timeouts 1 --timeout 120
exit $fail
