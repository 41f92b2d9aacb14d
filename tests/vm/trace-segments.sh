#!/bin/bash
# tests/vm/trace-segments.sh - where a 2 B ping-pong's half round trip goes
# inside each guest, for the provider's memory-polled ping-pong (latmem) and
# hop-p2p-bench, split with ftrace (docs/results/2026-12-04-verbs-2b-gap.md).
#
# usage: scripts/softroce-cluster -n 2 -- tests/vm/trace-segments.sh [BUILD_DIR] [PASSES]
#
# BUILD_DIR (default build) is a configured build with the verbs provider
# and tests/vm/verbs_prov_test built (tests/vm/run.sh builds it). On every
# rank, per pass and tool, prints the medians (us) of:
#   arrival -> ACK out: the data packet's arrival to its ACK leaving
#                       (guest kernel: rxe's responder and the virtio kick)
#   ACK -> post:        the ACK leaving to the reply's post (user space)
#   post -> reply out:  the post to the reply leaving (rxe and the kick)
# from tracefs events net:netif_receive_skb, net:net_dev_xmit and
# raw_syscalls:sys_enter (write, librxe's doorbell). A measurement, not a
# test: it needs root in the guest, which softroce-cluster gives.
set -u
B=$(cd "${1:-build}" && pwd) || exit 2
PASSES=${2:-3}
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2> /dev/null
[ -w $T/trace ] || { echo "trace-segments: no tracefs at $T" >&2; exit 2; }
echo 65536 > $T/buffer_size_kb
for e in net/net_dev_xmit net/netif_receive_skb raw_syscalls/sys_enter; do
	echo 1 > $T/events/$e/enable
done
echo 'id == 1' > $T/events/raw_syscalls/sys_enter/filter

# ACKs are the shortest frames each way (48 B in, 62 B out); a data packet
# is anything longer
segments() {
	awk -v tag="$1" '
	function len() { match($0, /len=[0-9]+/); return substr($0, RSTART + 4, RLENGTH - 4) + 0 }
	function med(x, n,  i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return n ? x[int((n + 1) / 2)] * 1e6 : 0
	}
	/netif_receive_skb/ { if (len() > 48) { rx = $4 + 0; ack = 0; se = 0 } next }
	/net_dev_xmit/ {
		l = len(); t = $4 + 0
		if (l == 62 && rx && !ack) { a[++na] = t - rx; ack = t }
		else if (l > 62 && se) { c[++nc] = t - se; rx = 0; se = 0 }
		next
	}
	/sys_enter/ { t = $4 + 0; if (ack && !se) { b[++nb] = t - ack; se = t } next }
	END { printf "%-14s arrival->ACK out %4.0f | ACK->post %4.0f | post->reply out %4.0f us (n = %d)\n",
		tag, med(a, na), med(b, nb), med(c, nc), nb }' $T/trace
}

port=29600
traced() { # tag command...
	local tag=$1
	shift
	port=$((port + 1))
	echo > $T/trace
	echo 1 > $T/tracing_on
	HOP_ADDR=${HOP_ADDR%:*}:$port "$@" > /dev/null 2>&1
	local rc=$?
	echo 0 > $T/tracing_on
	[ $rc = 0 ] || { echo "trace-segments: $tag exited $rc" >&2; return 1; }
	segments "$tag"
}
fails=0
for p in $(seq "$PASSES"); do
	traced latmem env HOP_IB_CM=rdmacm "$B/tests/vm/verbs_prov_test" latmem || fails=$((fails + 1))
	traced hop-p2p-bench "$B/tools/hop-p2p-bench" --min 2 --max 2 --no-bw \
		--iters 1500 --warmup 20 || fails=$((fails + 1))
done
echo 0 > $T/events/enable
[ $fails = 0 ]
