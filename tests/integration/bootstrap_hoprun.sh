#!/bin/bash
# hop-run end to end: output prefixes (stdout and stderr kept apart, partial
# and long lines), the environment each rank gets, failure propagation
# (exit status, signals, SIGKILL escalation), --timeout (124), usage errors,
# and the bootstrap through hop-run's inherited listener (HOP_BOOTSTRAP_FD)
# and through HOP_ADDR + HOP_SECRET without hop-run.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
rank=$b/tests/integration/bootstrap_rank
tmp=$(mktemp -d /tmp/hop-run-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
unset HOP_TIMEOUT HOP_TRANSPORT HOP_SOCKET_IFNAME HOP_BOOTSTRAP_FD HOP_RANK \
	HOP_SIZE HOP_UNIQUE_ID HOP_ADDR HOP_SECRET

ok() { echo "PASS: $1"; }
bad() {
	echo "FAIL: $1"
	for f in "$tmp"/out "$tmp"/err; do
		[ -s "$f" ] && head -n 20 "$f" | sed "s|^|    $(basename "$f"): |"
	done
	fail=1
}
# go NAME EXPECTED_STATUS hop-run-args...: run, keep stdout/stderr/time
go() {
	local name=$1 want=$2 t0 t1
	shift 2
	t0=$(date +%s%N)
	"$run" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	if [ "$rc" != "$want" ]; then
		bad "$name: exit $rc, expected $want"
		return 1
	fi
	return 0
}
has() { grep -qF -- "$2" "$tmp/$1"; }

# 1. prefixes, streams kept apart, partial last lines
if go prefixes 0 -n 3 -- sh -c 'echo out-$HOP_RANK; echo err-$HOP_RANK >&2; printf partial-$HOP_RANK'; then
	r=ok
	for i in 0 1 2; do
		has out "[$i] out-$i" && has out "[$i] partial-$i" && has err "[$i] err-$i" || r=
	done
	has out "err-" && r=
	has err "out-" && r=
	[ "$(grep -cv '^\[[0-2]\] ' "$tmp/out")" = 0 ] || r=
	[ -n "$r" ] && ok "prefixes" || bad "prefixes"
fi

# 2. what every rank gets; the listener only for rank 0
if go environment 0 -n 3 -- sh -c 'echo "size=$HOP_SIZE fd=${HOP_BOOTSTRAP_FD:-none} id=${#HOP_UNIQUE_ID}"'; then
	if has out "[1] size=3 fd=none id=256" && has out "[2] size=3 fd=none id=256" &&
	   grep -q '^\[0\] size=3 fd=[0-9][0-9]* id=256$' "$tmp/out"; then
		ok "environment"
	else
		bad "environment"
	fi
fi
if go transport-timeout 0 -n 1 --transport shm --timeout 30 -- sh -c 'echo "$HOP_TRANSPORT $HOP_TIMEOUT"' &&
   has out "[0] shm 30"; then
	ok "--transport and --timeout exported"
else
	bad "--transport and --timeout exported"
fi
if HOP_TIMEOUT=7 go keep-user-timeout 0 -n 1 --timeout 30 -- sh -c 'echo "t=$HOP_TIMEOUT"' &&
   has out "[0] t=7"; then
	ok "a HOP_TIMEOUT already set is kept"
else
	bad "a HOP_TIMEOUT already set is kept"
fi

# 3. many lines, and a line longer than hop-run's 64 KiB line buffer
if go volume 0 -n 2 -- sh -c 'seq 1 20000; head -c 100000 /dev/zero | tr "\0" x; echo'; then
	r=ok
	for i in 0 1; do
		[ "$(grep -c "^\[$i\] [0-9]*$" "$tmp/out")" = 20000 ] || r=
		grep "^\[$i\] [0-9]*$" "$tmp/out" | sed 's/^.* //' | cmp -s - <(seq 1 20000) || r=
		[ "$(grep "^\[$i\] x" "$tmp/out" | sed 's/^.* //' | tr -d '\n' | wc -c)" = 100000 ] || r=
	done
	[ -n "$r" ] && ok "20000 lines and a 100 KB line per rank, in order" || bad "volume"
fi

# 4. the first failure takes the job down, with its status
if go exit-status 7 -n 4 -- sh -c 'if [ $HOP_RANK = 2 ]; then sleep 0.2; exit 7; fi; exec sleep 30'; then
	if has err "hop-run: rank 2 exited with status 7" && [ "$ms" -lt 10000 ]; then
		ok "rank 2 exits 7: hop-run exits 7 in ${ms} ms"
	else
		bad "exit-status (${ms} ms)"
	fi
fi
if go signal 139 -n 3 -- sh -c 'if [ $HOP_RANK = 1 ]; then kill -SEGV $$; fi; exec sleep 30'; then
	has err "rank 1 was killed by signal 11" && ok "rank killed by SIGSEGV: 139" || bad "signal message"
fi
# a rank that ignores SIGTERM is killed 2 s later
if go escalation 3 -n 2 -- sh -c 'trap "" TERM; if [ $HOP_RANK = 0 ]; then sleep 0.2; exit 3; fi; sleep 30'; then
	if has err "sending SIGKILL" && [ "$ms" -ge 2000 ] && [ "$ms" -lt 10000 ]; then
		ok "SIGTERM ignored: SIGKILL after 2 s (${ms} ms)"
	else
		bad "escalation (${ms} ms)"
	fi
fi

# 5. --timeout
if go timeout 124 -n 2 --timeout 1 -- sleep 30; then
	if has err "job timed out after 1 s" && [ "$ms" -lt 6000 ]; then
		ok "--timeout 1: exit 124 in ${ms} ms"
	else
		bad "timeout message or time (${ms} ms)"
	fi
fi
if go fractional-timeout 124 -n 1 --timeout 0.3 -- sleep 30 && [ "$ms" -lt 3000 ]; then
	ok "--timeout 0.3"
else
	bad "--timeout 0.3 (${ms:-?} ms)"
fi
# A SIGTERM that reaches a rank between fork and exec must end it, not
# leave it to the SIGKILL escalation (it did in about 1 of 3 runs).
r=ok
for i in 1 2 3 4 5 6 7 8 9 10; do
	go "timeout at spawn $i" 124 -n 4 --timeout 0.001 -- sleep 30 || { r=; break; }
	if has err "sending SIGKILL"; then
		bad "SIGTERM at spawn, run $i: a rank needed SIGKILL (${ms} ms)"
		r=
		break
	fi
done
[ -n "$r" ] && ok "SIGTERM right after spawn ends every rank, 10 runs"

# 6. a program that cannot run; usage errors
if go exec-failure 127 -n 2 -- /nonexistent/prog; then
	grep -q "^\[[01]\] hop-run: cannot run '/nonexistent/prog'" "$tmp/err" && ok "missing program: 127" ||
		bad "exec failure message"
fi
for args in "" "-n 0 true" "-n 65537 true" "-n 2" "-n x true" "-n 2 --transport ib/x true" \
	    "-n 2 --timeout abc true" "-n 2 --timeout 0 true" "-n 2 --bogus true"; do
	# shellcheck disable=SC2086
	if go "usage '$args'" 125 $args; then
		ok "usage error '$args': 125"
	fi
done
if go help 0 --help && has out "usage: hop-run -n N" && has out "Exit status"; then
	ok "--help"
fi

# 7. the bootstrap through hop-run (rank 0 takes HOP_BOOTSTRAP_FD)
for n in 1 4 7; do
	if go "bootstrap $n" 0 -n $n --timeout 60 -- "$rank" 100000 &&
	   [ "$(grep -c 'bootstrap ok (100000 bytes' "$tmp/out")" = $n ]; then
		ok "bootstrap allgather through hop-run, $n ranks"
	else
		bad "bootstrap $n ranks"
	fi
done
# rank 1 exits 3 after the rendezvous; rank 0 then fails naming it, and
# either exit may be reaped first
HOP_TIMEOUT=10 "$run" -n 3 --timeout 60 -- "$rank" 100 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" = 3 ] || { [ "$rc" = 1 ] && has err "rank 1 (127.0.0.1:"; }; then
	ok "a rank leaving after the rendezvous fails the job (exit $rc)"
else
	bad "rank leaves: exit $rc"
fi

# 8. HOP_ADDR + HOP_SECRET, no hop-run: rank 0 binds the address itself
secret=00112233445566778899aabbccddeeff
for attempt in 1 2 3; do
	port=$(( 20000 + (RANDOM % 30000) ))
	pids=
	for r in 2 1 0; do
		HOP_RANK=$r HOP_SIZE=3 HOP_ADDR=127.0.0.1:$port HOP_SECRET=$secret HOP_TIMEOUT=20 \
			timeout 60 "$rank" 5000 >"$tmp/addr$r" 2>&1 &
		pids="$pids $!"
	done
	st=0
	for p in $pids; do wait "$p" || st=1; done
	grep -q "Address already in use" "$tmp"/addr0 || break
done
if [ $st = 0 ] && cat "$tmp"/addr0 "$tmp"/addr1 "$tmp"/addr2 | grep -c "bootstrap ok" | grep -qx 3; then
	ok "HOP_ADDR + HOP_SECRET, 3 ranks without hop-run"
else
	bad "HOP_ADDR mode"
	cat "$tmp"/addr0 "$tmp"/addr1 "$tmp"/addr2 | sed 's/^/    /'
fi
# a wrong secret at one rank: it is rejected with HOP_ERR_AUTH
HOP_RANK=0 HOP_SIZE=2 HOP_ADDR=127.0.0.1:$port HOP_SECRET=$secret HOP_TIMEOUT=3 \
	timeout 60 "$rank" 10 >"$tmp/addr0" 2>&1 &
p0=$!
HOP_RANK=1 HOP_SIZE=2 HOP_ADDR=127.0.0.1:$port HOP_SECRET=ffffffffffffffffffffffffffffffff \
	HOP_TIMEOUT=3 timeout 60 "$rank" 10 >"$tmp/addr1" 2>&1
wait $p0
if grep -q "HOP_ERR_AUTH.*rejected us: wrong secret" "$tmp/addr1" &&
   grep -q "claiming rank 1: wrong secret" "$tmp/addr0" &&
   grep -q "rank 1 never arrived within 3 s" "$tmp/addr0"; then
	ok "wrong HOP_SECRET rejected and named; rank 0 times out naming rank 1"
else
	bad "wrong secret in HOP_ADDR mode"
	cat "$tmp"/addr0 "$tmp"/addr1 | sed 's/^/    /'
fi
exit $fail
