#!/bin/bash
# The NCCL net plugin through its harness (tests/nccl-net/nccl_net_test).
# The plugin exports ncclNetPlugin_v6 to _v12 and nothing else. Per
# transport (tcp and shm; NCCL_NET_TRANSPORTS overrides), on the newest
# table: two processes with 2 connections each way, 400 messages of
# 0 B..4 MiB per connection and direction (300 untested first: the send
# comm must take 256), argument checks; 8 connections each way; a peer that
# dies mid-traffic. Then every older table with its own struct layouts,
# on one connection (320 messages on the first transport, 60 on the
# others; NCCL_NET_OLD_TABLES=first: on the first only, as the sanitizer
# stages run it). Once: connect and accept with no peer fail after HOP_TIMEOUT
# (2 s here), also under valgrind when it is installed; with
# HOP_TIMEOUT at 30 s, closeListen of an unconnected listen and an
# abandoned connect let the process end at once.
# No run may print hop's own log lines: they go through NCCL's logger,
# and each run that connects checks that some arrived there.
set -u
b=${top_builddir:?run through make check or set top_builddir}
prog=$b/tests/nccl-net/nccl_net_test
plugin=$b/plugins/nccl/.libs/libnccl-net-hop.so
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
[ -f "$plugin" ] || { echo "FAIL: $plugin not built"; exit 1; }
# the plugin links libhop.so, not installed yet
export LD_LIBRARY_PATH=$b/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export HOP_SOCKET_IFNAME=${HOP_SOCKET_IFNAME:-lo}
unset HOP_DEBUG
fail=0
versions="6 7 8 9 10 11 12"

want=$(for v in $versions; do echo "ncclNetPlugin_v$v"; done | sort)
have=$(nm -D --defined-only "$plugin" | awk '{print $3}' | grep -v '^_' | sort)
if [ "$have" = "$want" ]; then
	echo "PASS: nccl-net exports $(echo $have)"
else
	echo "FAIL: nccl-net exports '$(echo $have)', want '$(echo $want)'"
	fail=1
fi

run() { # name passes-wanted transport args...
	local name=$1 want=$2 t=$3 out rc
	shift 3
	out=$(HOP_TRANSPORT=$t timeout -k 5 300 ${wrap:-} "$prog" "$plugin" "$@" 2>&1)
	rc=$?
	if grep -q '^\[hop ' <<< "$out"; then
		echo "FAIL: nccl-net $name: hop logged past NCCL's logger:"
		grep '^\[hop ' <<< "$out" | head -n 5 | sed 's/^/    /'
		fail=1
	elif [ $rc = 0 ] && [ "$(grep -c 'PASSED$' <<< "$out")" = "$want" ]; then
		echo "PASS: nccl-net $name"
		grep -E '^nccl_net_test.*(verified|in flight|died mid|failed after|truncated|returned after|selection accepts)' <<< "$out" |
			sort -u | sed 's/^/    /'
	else
		echo "FAIL: nccl-net $name (exit $rc)"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		fail=1
	fi
}

transports=${NCCL_NET_TRANSPORTS:-tcp shm}
first=${transports%% *}
for t in $transports; do
	run "$t v12" 2 "$t" --msgs 400 --timeout 240
	# 8 connections: a sender's last small messages sit in the
	# provider's queue after their requests completed; only the plugin's
	# progress thread delivers them (net_drain.c)
	run "$t v12 8 conns" 2 "$t" --conns 8 --msgs 330 --seed 777 --timeout 240
	run "$t v12 peer-death" 1 "$t" --conns 1 --msgs 400 --die-after 350 --timeout 120
	# every older table on every transport, with its own layouts; the
	# first transport at length
	msgs=320
	if [ "$t" != "$first" ]; then
		[ "${NCCL_NET_OLD_TABLES:-all}" = first ] && continue
		msgs=60
	fi
	for v in $versions; do
		[ "$v" = 12 ] && continue
		run "$t v$v" 2 "$t" --net-version "$v" --conns 1 --msgs $msgs \
			--max-size 262144 --timeout 120
	done
done
# the device hop's default configuration describes (an RDMA port, or the
# first interface): properties only, no traffic
for v in $versions; do
	HOP_SOCKET_IFNAME= run "auto v$v device" 1 auto --selection 1 --net-version "$v"
done
# with a link profile, each device's latency is the profile's alpha (the
# largest over its pairs)
prof=$(mktemp)
trap 'rm -f "$prof"' EXIT
printf 'hop-link-profile 1\nprovider tcp\nnranks 3\npair 0 1 tcp 9 1.2 - -\npair 1 2 tcp 12.5 1.1 - -\nend\n' > "$prof"
HOP_PROFILE=$prof NCCL_NET_TEST_LATENCY=12.5 run "tcp v12 device, profile" 1 tcp --selection 1
HOP_TIMEOUT=2 run "no peer" 1 tcp --timeouts 1 --timeout 120
# the same under valgrind: a closeListen that completes the set-up itself
# must destroy both ends (not in a sanitizer build: valgrind cannot run
# it; gcc links the runtimes as libraries, clang into the program)
sanitized() {
	ldd "$prog" "$plugin" 2> /dev/null | grep -qE 'lib(a|t|ub)san' ||
		nm "$prog" 2> /dev/null | grep -qE '__(a|t)san_init'
}
if command -v valgrind > /dev/null && ! sanitized; then
	HOP_TIMEOUT=2 wrap="valgrind -q --leak-check=full --error-exitcode=9 --errors-for-leak-kinds=definite,possible" \
		run "no peer, valgrind" 1 tcp --timeouts 1 --timeout 200
fi
start=$(date +%s)
HOP_TIMEOUT=30 run "teardown" 1 tcp --teardown 1 --timeout 120
took=$(($(date +%s) - start))
if [ "$took" -ge 15 ]; then
	echo "FAIL: nccl-net teardown: the process took ${took} s to end (HOP_TIMEOUT=30)"
	fail=1
else
	echo "PASS: nccl-net teardown: the process ended after ${took} s (HOP_TIMEOUT=30)"
fi
exit $fail
