#!/bin/bash
# The NCCL net plugin through its harness, over tcp and shm: two processes,
# 2 connections each way, 200 messages of 0 B..4 MiB per connection and
# direction, argument checks. NCCL_NET_TRANSPORTS overrides the list.
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
for t in ${NCCL_NET_TRANSPORTS:-tcp shm}; do
	out=$(HOP_TRANSPORT=$t timeout -k 5 300 "$prog" "$plugin" --msgs 200 --timeout 240 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ "$(grep -c 'PASSED$' <<< "$out")" = 2 ]; then
		echo "PASS: nccl-net $t"
		grep -E 'verified|in flight' <<< "$out" | sed 's/^/    /'
	else
		echo "FAIL: nccl-net $t (exit $rc)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		fail=1
	fi
done
exit $fail
