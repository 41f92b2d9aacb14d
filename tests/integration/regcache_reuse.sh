#!/bin/bash
# A buffer freed, unmapped or emptied and given new pages at the same
# address is transferred again (regcache_reuse.c): on shm and tcp, 2 ranks,
# with the unmapping monitor, and without caching (HOP_REG_CACHE=0). Then
# once with the monitor off (HOP_REG_MONITOR=none), where the check must
# fail: it proves the test sees a stale registration.
# REGCACHE_TRANSPORTS overrides the transports (the VM suite passes verbs).
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/regcache_reuse
modes="free munmap dontneed"
fail=0

# run NAME WANT(pass|fail) ENV... : one 2-rank job over every mode
case_() {
	local name=$1 want=$2 out rc n
	shift 2
	out=$(env "$@" HOP_TIMEOUT=30 "$run" -n 2 --timeout 60 -- "$prog" $modes 2>&1)
	rc=$?
	n=$(grep -c "regcache_reuse: rank [01] passed" <<< "$out")
	if [ "$want" = pass ] && [ $rc = 0 ] && [ "$n" = 6 ]; then
		echo "PASS: regcache_reuse $name"
		grep "rank 1 passed" <<< "$out" | sed 's/^/    /'
	elif [ "$want" = fail ] && [ $rc != 0 ] &&
	     grep -q "reused the registration\|registration of the old pages" <<< "$out"; then
		echo "PASS: regcache_reuse $name (the stale registration is caught)"
		grep -m1 "FAIL" <<< "$out" | sed 's/^/    /'
	else
		echo "FAIL: regcache_reuse $name (exit $rc, $n of 6 passed, wanted $want)"
		printf '%s\n' "$out" | head -n 20 | sed 's/^/    /'
		fail=1
	fi
}

for t in ${REGCACHE_TRANSPORTS:-shm tcp}; do
	case_ "$t monitored" pass HOP_TRANSPORT=$t
	case_ "$t uncached" pass HOP_TRANSPORT=$t HOP_REG_CACHE=0
	case_ "$t unmonitored" fail HOP_TRANSPORT=$t HOP_REG_MONITOR=none
done
exit $fail
