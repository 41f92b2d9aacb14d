#!/bin/bash
# The NCCL net plugin's devices as rails, over tcp: in a private network
# namespace (unshare -n, gone with the test) with two interfaces, rail0 and
# rail1, the plugin must offer two devices, and 4 connections each way
# spread over them (connection k on device k % 2) must run on both rails'
# addresses, with every message checked. Needs root (network namespaces);
# skipped otherwise. The verbs form (rxe0 and rxe1 in each of two VMs, each
# port's packet counters checked) is step nccl-net-rails of tests/vm/run.sh.
set -u
b=${top_builddir:?run through make check or set top_builddir}
prog=$b/tests/nccl-net/nccl_net_test
plugin=$b/plugins/nccl/.libs/libnccl-net-hop.so
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
if [ "$(id -u)" != 0 ] || ! command -v unshare > /dev/null ||
   ! command -v ip > /dev/null || ! unshare -n true 2> /dev/null; then
	echo "SKIP: needs root, unshare and ip for a private network namespace"
	exit 77
fi
export LD_LIBRARY_PATH=$b/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset HOP_DEBUG HOP_SOCKET_IFNAME HOP_IB_DEVICE HOP_PROFILE
# shellcheck disable=SC2016 # expanded inside the namespace
out=$(HOP_TRANSPORT=tcp NCCL_NET_TEST_RAILS=2 timeout -k 5 200 unshare -n bash -c '
	set -e
	ip link set lo up
	for i in 0 1; do
		ip link add rail$i type veth peer name rail${i}p
		ip addr add 10.77.$i.1/24 dev rail$i
		ip link set rail${i}p up
		ip link set rail$i up
	done
	"$0" "$1" --conns 4 --msgs 120 --max-size 262144 --timeout 150
' "$prog" "$plugin" 2>&1)
rc=$?
if [ $rc = 0 ] && [ "$(grep -c 'PASSED$' <<< "$out")" = 2 ] &&
   grep -q "rail0" <<< "$out" && grep -q "rail1" <<< "$out"; then
	echo "PASS: nccl-net rails: 2 devices, rail0 and rail1, both carrying traffic"
	grep -E 'rails\)|verified' <<< "$out" | sort -u | sed 's/^/    /'
	exit 0
fi
echo "FAIL: nccl-net rails (exit $rc)"
printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
exit 1
