#!/bin/bash
# tests/cluster/suite.sh BUILD - the checks inside one emulated cluster of
# 3 hosts (run by tests/cluster/run.sh through scripts/hop-cluster --exec,
# which sets CLUSTER_*): the hostnames ranks see, shm that does not cross
# hosts, the collectives' correctness over tcp with 2 ranks per host, a
# provider per pair (auto: shm inside a host, tcp across; per class; a
# host with one rank), the shaped bandwidth, and hop-run's failure and
# timeout handling across hosts, and which pairs advertise posted
# receives. One "PASS: ..." or "FAIL: ..." line per check; exit 1 on a FAIL.
set -u
build=${1:?usage: suite.sh BUILD}
: "${CLUSTER_PIDS:?run through scripts/hop-cluster --exec}"
run() { "$build/tools/hop-run" --hosts 3 --host-pids "$CLUSTER_PIDS" "$@"; }
fail=0
check() { # name, then a command whose status decides; output on FAIL
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		echo "PASS: $name"
		grep '^note: ' <<< "$out" | sed 's/^note: /    /'
	else
		echo "FAIL: $name"
		printf '%s\n' "$out" | tail -n 30 | sed 's/^/    /'
		fail=1
	fi
}
host() { echo "hc-$CLUSTER_ID-h$1"; }

# rank r of 3 hosts x 2 (block) is on host r/2 and sees that hostname
hostnames() {
	local out r
	out=$(run --ppn 2 --timeout 60 -- sh -c 'echo "host $(hostname)"') || return 1
	for r in 0 1 2 3 4 5; do
		grep -qx "\[$r\] host $(host $((r / 2)))" <<< "$out" ||
			{ echo "rank $r did not see hostname $(host $((r / 2))):"; echo "$out"; return 1; }
	done
}

# every rank makes a segment in its /dev/shm; once all made theirs, each
# must see exactly the two of its own host
shm_private() {
	local sync out r
	sync=$(mktemp -d) || return 1
	out=$(run --ppn 2 --timeout 60 -- sh -c '
		: > /dev/shm/hcseg-$2-$HOP_RANK && : > $1/made.$HOP_RANK || exit 1
		for i in $(seq 1000); do [ $(ls $1 | wc -l) = 6 ] && break; sleep 0.01; done
		echo seen $(cd /dev/shm && ls hcseg-$2-* | sed "s/.*-//" | sort -n)' sh "$sync" "$CLUSTER_ID")
	local rc=$?
	rm -rf "$sync"
	[ $rc = 0 ] || { echo "$out"; return 1; }
	for r in 0 1 2 3 4 5; do
		grep -qx "\[$r\] seen $((r / 2 * 2)) $((r / 2 * 2 + 1))" <<< "$out" ||
			{ echo "rank $r saw other hosts' segments (or not its host's):"; echo "$out"; return 1; }
	done
}

# hop's shm provider between two hosts: it cannot open the peer's segment
# (named /dev/shm segments, mapped at open: HOP_CONNECT=eager; a pair
# linked on first use finds the peer by /proc/<pid>, which the emulated
# hosts share, and its cookie check is what refuses a wrong process)
shm_across_fails() {
	local out
	out=$(HOP_CONNECT=eager HOP_TRANSPORT=shm run --map cyclic -n 2 --timeout 60 -- "$build/tests/integration/coll_order" 2>&1) &&
		{ echo "shm across hosts worked:"; echo "$out"; return 1; }
	grep -q "cannot open rank [0-9]*'s segment.*No such file" <<< "$out" ||
		{ echo "shm across hosts failed, but not on the segment:"; echo "$out"; return 1; }
}

# shm between the two ranks of one host still works
shm_same_host() {
	local map
	map=$(mktemp) && printf '1\n1\n' > "$map" || return 1
	HOP_TRANSPORT=shm run --map "$map" --timeout 120 -- "$build/tests/integration/coll_order"
	local rc=$?
	rm -f "$map"
	return $rc
}

# hop itself sees several hosts: auto takes tcp, and says why
auto_sees_hosts() {
	local out
	out=$(HOP_DEBUG=info run --map cyclic -n 2 --timeout 60 -- "$build/tools/hop-p2p-bench" \
		--min 8 --max 8 --iters 10 --warmup 2 2>&1) || { echo "$out"; return 1; }
	[ "$(grep -c "auto chose tcp.*ranks on several hosts" <<< "$out")" = 2 ] || { echo "$out"; return 1; }
}

collectives() { # "placement options" prog args: every rank must pass
	local out
	out=$(HOP_TRANSPORT=tcp run $1 --timeout 300 -- "${@:2}") || { echo "$out"; return 1; }
	[ "$(grep -c ": rank [0-9]* passed" <<< "$out")" = 6 ] || { echo "$out"; return 1; }
}

# streaming bandwidth between hosts 0 and 1 at >= 1 MiB: at least half
# of the link's rate (tcp/IP headers and this 2-core machine take the rest)
# hop_comm_split_host() with cyclic placement: each rank's host
# communicator holds the 2 ranks of its host, none of another
split_host() {
	local out r
	out=$(HOP_TRANSPORT=tcp run --map cyclic -n 6 --timeout 60 -- \
		"$build/tests/integration/split_test" host 2>&1) || { echo "$out"; return 1; }
	for r in 0 1 2 3 4 5; do
		grep -qx "\[$r\] split_test: rank $r: 2 ranks on host $(host $((r % 3)))" <<< "$out" ||
			{ echo "rank $r:"; echo "$out"; return 1; }
	done
}

# a --map file placing rank r on host $r-th argument
mapfile() { local f; f=$(mktemp) && printf '%s\n' "$@" > "$f" && echo "$f"; }

# auto with several ranks per host: every rank says shm inside, tcp across
# (the info line), p2p_test passes, and each rank's mux counted posts on
# shm to its host's ranks and on tcp to the others (none on shm when it
# is alone on its host). $1: the host of each rank; $2: the ranks alone.
mux_auto() {
	local map out r n=0 alone=" $2 "
	map=$(mapfile $1) || return 1
	out=$(HOP_DEBUG=info run --map "$map" --timeout 60 -- "$build/tests/integration/p2p_test" --big 2097152 2>&1)
	local rc=$?
	rm -f "$map"
	[ $rc = 0 ] && grep -q "p2p_test: .* on shm+tcp: all checks passed" <<< "$out" || { echo "$out"; return 1; }
	for r in $1; do n=$((n + 1)); done
	for ((r = 0; r < n; r++)); do
		grep -q "^\[$r\] .*transport: auto chose shm inside hosts, tcp across" <<< "$out" ||
			{ echo "rank $r did not say shm inside, tcp across:"; echo "$out"; return 1; }
		if [[ $alone == *" $r "* ]]; then
			grep -Eq "^\[$r\] .*rank $r sent 0 posts \(0 B\) to ranks of its host on shm, [1-9][0-9]* posts .* on tcp" <<< "$out"
		else
			grep -Eq "^\[$r\] .*rank $r sent [1-9][0-9]* posts .* on shm, [1-9][0-9]* posts .* on tcp" <<< "$out"
		fi || { echo "rank $r's posts are not on the providers of its peers:"; grep "sent" <<< "$out"; return 1; }
	done
	echo "note: $(grep -m1 "^\[0\] .*rank 0 sent" <<< "$out" | sed 's/.*info: //')"
}

# the collectives on a provider per pair: every rank passes (bitwise
# checks against the reference inside coll_matrix/coll_order)
mux_colls() { # host of each rank, then the program and its arguments
	local map=$(mapfile $1) out n=0 r
	out=$(run --map "$map" --timeout 300 -- "${@:2}" 2>&1)
	local rc=$?
	rm -f "$map"
	for r in $1; do n=$((n + 1)); done
	[ $rc = 0 ] && [ "$(grep -c ": rank [0-9]* passed" <<< "$out")" = $n ] || { echo "$out"; return 1; }
}

# HOP_TRANSPORT per class: forced shm inside and tcp across with cyclic
# placement; tcp for both classes is plain tcp (no mux); a malformed one
# fails init naming its bad part
mux_forced() {
	local out map rc
	out=$(HOP_DEBUG=info HOP_TRANSPORT=intra:shm,inter:tcp run --map cyclic -n 6 --timeout 60 -- \
		"$build/tests/integration/p2p_test" --big 2097152 2>&1) || { echo "$out"; return 1; }
	[ "$(grep -c "transport: shm inside hosts, tcp across (HOP_TRANSPORT=intra:shm,inter:tcp; 3 hosts, ranks per host 2,2,2)" <<< "$out")" = 6 ] &&
		grep -q "6 ranks on shm+tcp: all checks passed" <<< "$out" || { echo "$out"; return 1; }
	map=$(mapfile 0 0 1 1) || return 1
	out=$(HOP_DEBUG=info HOP_TRANSPORT=intra:tcp,inter:auto run --map "$map" --timeout 60 -- \
		"$build/tests/integration/p2p_test" --big 2097152 2>&1)
	rc=$?
	[ $rc = 0 ] || { rm -f "$map"; echo "$out"; return 1; }
	grep -q "4 ranks on tcp: all checks passed" <<< "$out" && ! grep -q "shm+tcp" <<< "$out" || { echo "$out"; return 1; }
	out=$(HOP_TRANSPORT=intra:shm,inter:bogus run --map "$map" --timeout 60 -- \
		"$build/tests/integration/p2p_test" --big 2097152 2>&1)
	rc=$?
	rm -f "$map"
	[ $rc != 0 ] || { echo "a bad HOP_TRANSPORT passed:"; echo "$out"; return 1; }
	[ "$(grep -c "HOP_TRANSPORT=intra:shm,inter:bogus: 'inter:bogus' names no built-in provider" <<< "$out")" -ge 1 ] ||
		{ echo "$out"; return 1; }
}

# a child provider that fails to open on one host fails every rank, with
# that rank's own message in the child's numbering mapped back (host 1's
# /dev/shm is shrunk to 64 KiB for it, so shm cannot reserve a segment
# there); nobody waits for the ranks that failed
mux_open_fails() {
	local map out rc n
	map=$(mapfile 0 0 1 1) || return 1
	"$CLUSTER_AGENT" "$(host 1)" mount -o remount,size=64k /dev/shm || { rm -f "$map"; return 1; }
	# each rank reports its own exit, so hop-run stops none of them early;
	# HOP_CONNECT=eager: segments reserved at open, where this fails
	out=$(HOP_CONNECT=eager run --map "$map" --timeout 60 -- sh -c '"$1" --quick; echo "p2p_test exit $?"' \
		sh "$build/tests/integration/p2p_test" 2>&1)
	rc=$?
	"$CLUSTER_AGENT" "$(host 1)" mount -o remount,size=50% /dev/shm
	rm -f "$map"
	[ $rc = 0 ] && [ "$(grep -c "^\[[0-3]\] p2p_test exit 1$" <<< "$out")" = 4 ] ||
		{ echo "not every rank failed on its own:"; echo "$out"; return 1; }
	n=$(grep -c "p2p_test: hop_comm_init_env: .*shm: cannot reserve .* (shm's ranks 0..1 are ranks 2,3)" <<< "$out")
	[ "$n" = 4 ] || { echo "$n of 4 ranks gave the failing rank's cause:"; echo "$out"; return 1; }
	n=$(grep -c "^\[[01]\] p2p_test: hop_comm_init_env: .*on rank [23]: shm: cannot reserve" <<< "$out")
	[ "$n" = 2 ] || { echo "ranks 0 and 1 did not name the rank that failed:"; echo "$out"; return 1; }
}

bandwidth() {
	local out bw floor
	out=$(HOP_TRANSPORT=tcp run --map cyclic -n 2 --timeout 120 -- "$build/tools/hop-p2p-bench" \
		--min 1M --max 4M --iters 5 --warmup 2) || { echo "$out"; return 1; }
	bw=$(awk '$1 == "[0]" && $2 == 4194304 { print $NF }' <<< "$out")
	floor=$(awk -v r="$CLUSTER_LINK" 'BEGIN { sub(/gbit/, "e9", r); sub(/mbit/, "e6", r); print r / 8 / 1e6 / 2 }')
	echo "note: bandwidth host 0 -> host 1: ${bw:-?} MB/s; floor $floor MB/s (half of $CLUSTER_LINK)"
	awk -v b="${bw:-0}" -v f="$floor" 'BEGIN { exit !(b >= f) }'
}

fails_fast() { # a rank on host 2 exits 3: hop-run exits 3, names it
	local out rc
	out=$(run --ppn 2 --timeout 60 -- sh -c '[ $HOP_RANK = 5 ] && exit 3; sleep 30' 2>&1)
	rc=$?
	[ $rc = 3 ] && grep -q "rank 5 exited with status 3" <<< "$out" || { echo "exit $rc:"; echo "$out"; return 1; }
}

times_out() {
	local out rc
	out=$(run --ppn 2 --timeout 1 -- sleep 30 2>&1)
	rc=$?
	[ $rc = 124 ] || { echo "exit $rc:"; echo "$out"; return 1; }
}

# receives posted first over tcp (p2p_advert posted): between two ranks
# of one host they advertise and rank 0 writes some messages straight in;
# between hosts they never advertise (docs/p2p.md, "Receives posted
# first"), and both ranks still pass
adverts_by_class() {
	local map out rc where
	for where in "0 0" "0 1"; do
		map=$(mapfile $where) || return 1
		out=$(HOP_DEBUG=info HOP_TRANSPORT=tcp run --map "$map" --timeout 60 -- \
			"$build/tests/integration/p2p_advert" posted 2>&1)
		rc=$?
		rm -f "$map"
		[ $rc = 0 ] && [ "$(grep -c "p2p_advert posted: rank . passed" <<< "$out")" = 2 ] ||
			{ echo "ranks on hosts $where:"; echo "$out"; return 1; }
		if [ "$where" = "0 0" ]; then
			grep -q "r0\] info: p2p: [0-9]* sends written straight" <<< "$out" ||
				{ echo "one host: no message went into an advertised receive:"; echo "$out"; return 1; }
		else
			! grep "sends written straight" <<< "$out" ||
				{ echo "two hosts: messages went into advertised receives over tcp"; return 1; }
		fi
	done
}

check "hostnames: rank r sees host r/2's" hostnames
check "/dev/shm is private to each host" shm_private
check "hop's shm cannot open a segment on another host" shm_across_fails
check "hop's shm between two ranks of one host" shm_same_host
check "hop's auto transport sees several hosts (tcp)" auto_sees_hosts
check "coll_matrix, 3 hosts x 2 ranks, tcp" collectives "--ppn 2" \
	"$build/tests/integration/coll_matrix" --max-count 70000
check "coll_order, 3 hosts x 2 ranks cyclic, tcp" collectives "--map cyclic -n 6" \
	"$build/tests/integration/coll_order"
check "hop_comm_split_host, 3 hosts x 2 ranks cyclic, tcp" split_host
check "auto, 2 hosts x 2 ranks: shm inside, tcp across" mux_auto "0 0 1 1" ""
check "auto, a host with one rank (3+1): shm inside, tcp across" mux_auto "0 0 0 1" "3"
check "coll_matrix, 2 hosts x 2 ranks, auto (shm+tcp)" mux_colls "0 0 1 1" \
	"$build/tests/integration/coll_matrix" --max-count 70000
check "coll_order, 3+1 ranks, auto (shm+tcp)" mux_colls "0 0 0 1" \
	"$build/tests/integration/coll_order"
check "HOP_TRANSPORT per class (intra:shm,inter:tcp; intra:tcp; malformed)" mux_forced
check "a child provider failing on one host fails every rank with its cause" mux_open_fails
check "shaped bandwidth >= half the link" bandwidth
check "a failing rank on host 2 fails the job" fails_fast
check "--timeout across hosts" times_out
check "receives posted first over tcp advertise inside a host, not across" adverts_by_class
exit $fail
