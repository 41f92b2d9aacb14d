#!/bin/sh
# Stage 2 of a softroce-cluster VM: PID 1 on an overlay (tmpfs upper) of the HOST's root
# file system. Kernel command line: hop_run=<run dir> hop_node=<node index>.
# The run dir (a host folder, exported read-write over a second virtio-9p share, mounted at
# the same path) holds job.env (written by softroce-cluster) and job.sh (the command); this
# script brings up rxe0 on eth0 (10.0.0.<node+1>/24), and with SR_NICS=2 in job.env rxe1 on
# eth1 (10.0.1.<node+1>/24), waits for the RoCE v2 GIDs and for the other nodes, runs job.sh
# once per local rank with the HOP_* job environment, writes out.r<rank> / rc.r<rank> /
# node<N>.status into the run dir and powers the VM off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm

RUN=; NODE=0
for a in $(cat /proc/cmdline); do
	case $a in hop_run=*) RUN=${a#*=};; hop_node=*) NODE=${a#*=};; esac
done
up() { cut -d' ' -f1 /proc/uptime; }
log() { echo "[node$NODE $(up)s] $*"; [ -n "$STATUS_OK" ] && echo "[node$NODE $(up)s] $*" >> "$RUN/node$NODE.log"; }
STATUS_OK=
finish() { # $1 = PASS|FAIL, $2 = reason
	# the guest's clock sources, for softroce-cluster's clock check
	dmesg 2>/dev/null | grep -iE 'clocksource|tsc' | tail -8 | while read -r l; do log "kernel: $l"; done
	log "HOP_NODE_STATUS=$1 $2"
	[ -n "$STATUS_OK" ] && echo "$1 $2" > "$RUN/node$NODE.status"
	sync
	busybox poweroff -f
	echo o > /proc/sysrq-trigger
	while :; do sleep 1; done
}
[ -n "$RUN" ] || finish FAIL "no hop_run= on the kernel command line"
mkdir -p "$RUN"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none hopjob "$RUN" ||
	finish FAIL "9p mount of the run dir failed"
STATUS_OK=1
[ -f "$RUN/job.env" ] || finish FAIL "no $RUN/job.env"
. "$RUN/job.env"
log "stage2 kernel=$(uname -r) cpus=$(nproc) mem=$(awk '/MemTotal/{print int($2/1024)}' /proc/meminfo)M"

# the guest kernel's modules live in the unpacked .deb on the host
mkdir -p /lib/modules && mount --bind "$SR_KDIR/lib/modules" /lib/modules ||
	finish FAIL "cannot bind-mount $SR_KDIR/lib/modules"
for m in rdma_rxe ib_uverbs rdma_ucm; do
	modprobe $m || finish FAIL "modprobe $m failed"
done

ip link set lo up
# rail $1: eth$1 at 10.0.$1.<node+1>/24 with rxe$1 on it; its RoCE v2
# IPv4-mapped GID's index (1 on this kernel; 0 is fe80::) into GIDX
rail_up() {
	ip addr add 10.0.$1.$((NODE + 1))/24 dev eth$1 || finish FAIL "ip addr add 10.0.$1.$((NODE + 1)) on eth$1 failed"
	ip link set eth$1 mtu "$SR_MTU" up || finish FAIL "eth$1 up (mtu $SR_MTU) failed"
	rdma link add rxe$1 type rxe netdev eth$1 || finish FAIL "rdma link add rxe$1 failed"
	G=/sys/class/infiniband/rxe$1/ports/1
	GIDX=
	for t in $(seq 1 100); do
		for i in 0 1 2 3 4 5 6 7; do
			case $(cat $G/gids/$i 2>/dev/null) in
			0000:0000:0000:0000:0000:ffff:*)
				[ "$(cat $G/gid_attrs/types/$i 2>/dev/null)" = "RoCE v2" ] && GIDX=$i;;
			esac
		done
		[ -n "$GIDX" ] && grep -q ACTIVE $G/state && break
		sleep 0.1
	done
	[ -n "$GIDX" ] || finish FAIL "rxe$1 has no RoCE v2 IPv4 GID after 10 s"
	log "rxe$1 $(cat $G/state) gid[$GIDX]=$(cat $G/gids/$GIDX) mtu=$SR_MTU"
}
# every other node answers on rail $1 (ARP resolved, link up)
rail_peers() {
	i=0
	while [ $i -lt "$SR_NODES" ]; do
		if [ $i != "$NODE" ]; then
			n=0
			until busybox ping -c1 -W1 10.0.$1.$((i + 1)) >/dev/null 2>&1; do
				n=$((n + 1)); sleep 0.2
				[ $n -ge "$SR_PEER_WAIT" ] && finish FAIL "node$i (10.0.$1.$((i + 1))) unreachable for ${SR_PEER_WAIT}s"
			done
		fi
		i=$((i + 1))
	done
}
NICS=${SR_NICS:-1}
MYIP=10.0.0.$((NODE + 1))
# rxe0 first: libibverbs lists devices in the order they were made, and the
# provider's default device and error texts then start with rxe0's; the
# job's SOFTROCE_GID_INDEX is rxe0's
rail_up 0
GIDX0=$GIDX
[ "$NICS" = 2 ] && rail_up 1
GIDX=$GIDX0

# every other node answers before the job starts
if [ "$SR_NODES" -gt 1 ]; then
	rail_peers 0
	[ "$NICS" = 2 ] && rail_peers 1
	log "all $SR_NODES nodes reachable"
fi

# the job: once per local rank, bounded by what is left of the job's time budget
LEFT=$(awk -v t="$SR_TIMEOUT" -v u="$(up)" 'BEGIN{l=int(t-u-5); print (l<10?10:l)}')
log "READY; running $SR_RPN rank(s) for at most ${LEFT}s"
export SOFTROCE_NODE=$NODE SOFTROCE_NODES=$SR_NODES SOFTROCE_RPN=$SR_RPN SOFTROCE_NICS=$NICS
export SOFTROCE_GID_INDEX=$GIDX SOFTROCE_IP=$MYIP SOFTROCE_RUN=$RUN
PIDS=
i=0
while [ $i -lt "$SR_RPN" ]; do
	R=$((NODE * SR_RPN + i))
	( cd "$SR_CWD" && HOP_RANK=$R SOFTROCE_LOCAL_RANK=$i timeout -k 5 "$LEFT" /bin/bash "$RUN/job.sh" \
		> "$RUN/out.r$R" 2>&1 < /dev/null
	  echo $? > "$RUN/rc.r$R" ) &
	PIDS="$PIDS $!"
	i=$((i + 1))
done
wait $PIDS
FAILS=
i=0
while [ $i -lt "$SR_RPN" ]; do
	R=$((NODE * SR_RPN + i))
	rc=$(cat "$RUN/rc.r$R" 2>/dev/null || echo missing)
	log "rank $R exit $rc"
	[ "$rc" = 0 ] || FAILS="$FAILS r$R=$rc"
	i=$((i + 1))
done
[ -z "$FAILS" ] && finish PASS "" || finish FAIL "ranks failed:$FAILS"
