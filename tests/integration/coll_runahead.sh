#!/bin/bash
# Loops of rooted collectives with slow receivers (coll_runahead): the
# senders are held back by the closing barriers (HOP_ROOTED_SYNC), so
# HOP_UNEXPECTED_MAX=4M holds 4096 calls of 4 KiB, results bit for bit;
# with HOP_ROOTED_SYNC=0 the same Reduce loop fails the root with
# HOP_ERR_NO_MEMORY. On tcp, and shm without the fast boxes; 2 and 4 ranks.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
prog=$b/tests/integration/coll_runahead
fail=0
for t in ${RUNAHEAD_TRANSPORTS:-tcp shm}; do
	for n in 2 4; do
		for mode in bounded unbounded; do
			sync=
			tmo=60
			# unbounded: the senders then wait on a root that left
			[ $mode = unbounded ] && sync=0 tmo=5
			out=$(HOP_TRANSPORT=$t HOP_FBOX=0 HOP_UNEXPECTED_MAX=4M \
				HOP_ROOTED_SYNC=${sync:-64} HOP_TIMEOUT=$tmo \
				"$run" -n $n --timeout 180 -- "$prog" $mode 2>&1)
			rc=$?
			want=$n
			[ $mode = unbounded ] && want=1
			if [ "$(grep -c "coll_runahead: rank [0-9] passed" <<< "$out")" -ge $want ] &&
			   { [ $mode = unbounded ] || [ $rc = 0 ]; } &&
			   grep -q "coll_runahead: rank 0 passed" <<< "$out"; then
				echo "PASS: coll_runahead $mode $t $n ranks"
			else
				echo "FAIL: coll_runahead $mode $t $n ranks (exit $rc)"
				printf '%s\n' "$out" | grep -v "passed" | head -n 20 | sed 's/^/    /'
				fail=1
			fi
		done
	done
done
exit $fail
