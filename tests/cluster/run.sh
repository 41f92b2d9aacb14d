#!/bin/bash
# tests/cluster/run.sh [BUILD] - the emulated cluster end to end, as root
# (scripts/test's cluster stage): tests/cluster/suite.sh inside a cluster
# of 3 hosts x 2 ranks on 1 Gbit/s links; hop-cluster running a job itself
# (with racks); the model validations' short forms (validate.sh); its
# clean-up on a job's failure and on Ctrl-C; its error when not root; and
# that nothing is left behind: no namespace, veth, bridge, state folder or
# /dev/shm entry of these clusters.
# One "PASS: ..." or "FAIL: ..." line per check; exit 1 on a FAIL.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd) || exit 2
cluster=$top/scripts/hop-cluster
export HOP_BUILD=$build
[ "$(id -u)" = 0 ] || { echo "FAIL: tests/cluster must run as root (it makes namespaces)"; exit 1; }
for p in tools/hop-run tools/hop-p2p-bench tests/integration/coll_matrix tests/integration/coll_order tests/integration/split_test; do
	[ -x "$build/$p" ] || { echo "FAIL: $build/$p is not built (make, make check)"; exit 1; }
done
fail=0 tag=ct$$ ids=""
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT || exit 2
pass() { echo "PASS: $*"; }
failed() { echo "FAIL: $*"; fail=1; }
newid() { id=$tag$1; ids="$ids $id"; }

# the machine's own veths, bridges and /dev/shm: they must not change
# because of these clusters (the clusters' own live in their namespaces)
links() { ip -o link show type "$1" | awk -F': ' '{ print $2 }' | sort; }
veth0=$(links veth) bridge0=$(links bridge)

newid s
out=$("$cluster" --hosts 3 --link 1gbit --id "$id" --exec -- "$top/tests/cluster/suite.sh" "$build" 2>&1)
rc=$?
grep -E '^(PASS|FAIL|    )' <<< "$out"
[ $rc = 0 ] || failed "suite in a 3-host cluster (exit $rc):" $'\n'"$(grep -vE '^(PASS|FAIL|    )' <<< "$out" | tail -20)"
"$top/tests/cluster/hier.sh" "$build" || fail=1 # hierarchical collectives, own cluster
"$top/tests/cluster/duplex.sh" "$build" || fail=1 # both directions of a link at once, own cluster
"$top/tests/cluster/validate.sh" "$build" || fail=1 # the model's validations, short forms, own clusters

# hop-cluster runs the job itself: 4 hosts in 2 racks, cyclic, each rank
# on its host
newid r
out=$("$cluster" --hosts 4 --link 1gbit --racks 2 --uplink 500mbit --id "$id" --map cyclic -n 8 \
	--timeout 60 -- sh -c 'echo "on $(hostname)"' 2>&1)
rc=$?
ok=1
for r in 0 1 2 3 4 5 6 7; do grep -qx "\[$r\] on hc-$id-h$((r % 4))" <<< "$out" || ok=0; done
[ $rc = 0 ] && [ $ok = 1 ] && pass "hop-cluster runs a job, 4 hosts in 2 racks, --map cyclic" ||
	failed "hop-cluster running a job (exit $rc): $out"

# a failed job: hop-cluster exits with its status and cleans up
newid f
"$cluster" --hosts 2 --id "$id" --ppn 1 --timeout 60 -- sh -c 'exit 7' > /dev/null 2>&1
rc=$?
[ $rc = 7 ] && pass "a failed job's status comes through (7)" || failed "a failed job: exit $rc, not 7"

# Ctrl-C (SIGINT) while the job runs: exit 130, nothing left
newid i
# (a background job of a script starts with SIGINT ignored, which no
# trap can undo: give it the default back, as a terminal's job has)
env --default-signal=INT "$cluster" --hosts 2 --id "$id" --ppn 1 -- sleep 60 > /dev/null 2>&1 &
pid=$!
for i in $(seq 200); do [ -e /run/hop-cluster/$id/agent ] && break; sleep 0.05; done
sleep 0.5
kill -INT $pid
for i in $(seq 100); do kill -0 $pid 2> /dev/null || break; sleep 0.1; done
if kill -0 $pid 2> /dev/null; then
	failed "hop-cluster still runs 10 s after SIGINT"
	kill -KILL $pid
	"$cluster" --remove "$id"
fi
wait $pid
rc=$?
[ $rc = 130 ] && pass "SIGINT ends the cluster (exit 130)" || failed "SIGINT: exit $rc, not 130"

# two clusters at once; a second one with the same name is refused and
# does not harm the first
newid a
"$cluster" --hosts 2 --id "$id" --exec -- sh -c 'sleep 4; ip netns pids "$CLUSTER_SWITCH" > /dev/null &&
	[ -x "$CLUSTER_AGENT" ] && "$CLUSTER_AGENT" "${CLUSTER_HOSTS%% *}" hostname' > "$tmp/a.out" 2>&1 &
pid=$!
newid b
out=$("$cluster" --hosts 2 --id "$id" --exec -- sh -c 'echo "second: $CLUSTER_SUBNET"' 2>&1)
rc=$?
for i in $(seq 200); do [ -e /run/hop-cluster/${tag}a/agent ] && break; sleep 0.05; done
out2=$("$cluster" --hosts 1 --id "${tag}a" --exec -- true 2>&1)
rc2=$?
wait $pid
rc3=$?
[ $rc = 0 ] && grep -q second <<< "$out" && [ $rc2 = 3 ] && grep -q "exists" <<< "$out2" &&
	[ $rc3 = 0 ] && grep -qx "hc-${tag}a-h0" "$tmp/a.out" && pass "two clusters at once; a taken name is refused" ||
	failed "two clusters: second exit $rc ($out); same name exit $rc2 ($out2); first exit $rc3 ($(cat "$tmp/a.out"))"

# SIGKILL leaves the cluster; --remove takes it away
newid k
"$cluster" --hosts 2 --id "$id" --ppn 1 -- sleep 60 > /dev/null 2>&1 &
pid=$!
for i in $(seq 200); do [ -e /run/hop-cluster/$id/agent ] && break; sleep 0.05; done
kill -KILL $pid
wait $pid 2> /dev/null
"$cluster" --remove "$id" && pass "--remove after SIGKILL" || failed "--remove after SIGKILL: exit $?"

out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$cluster" --hosts 2 --exec -- true 2>&1)
rc=$?
[ $rc = 3 ] && grep -q "must run as root" <<< "$out" && pass "not root: a clear error" ||
	failed "not root: exit $rc: $out"

# nothing left behind
left=""
for id in $ids; do
	ip netns list | grep -q "^hc-$id-" && left="$left namespaces of $id;"
	[ -e /run/hop-cluster/$id ] && left="$left /run/hop-cluster/$id;"
	ls /dev/shm | grep -q -- "$id" && left="$left /dev/shm entries of $id;"
done
[ "$(links veth)" = "$veth0" ] || left="$left veths: $(diff <(echo "$veth0") <(links veth) | grep '^>');"
[ "$(links bridge)" = "$bridge0" ] || left="$left bridges: $(diff <(echo "$bridge0") <(links bridge) | grep '^>');"
[ -z "$left" ] && pass "nothing left behind" || failed "left behind:$left"
exit $fail
