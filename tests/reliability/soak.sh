#!/bin/bash
# soak.sh - random collectives over 4 ranks, each checked against a
# reference, resident memory flat after warm-up (tests/reliability/soak.c),
# then a short run under valgrind memcheck that must be clean.
#
#   HOP_SOAK_COUNT   collectives of the main run (default 5000, which keeps
#                    make check short on 2 cores; the full soak is
#                    HOP_SOAK_COUNT=10000, about 100 s)
#   HOP_SOAK_VG      collectives under valgrind (default 200, 0 skips)
#   HOP_SOAK_TRANSPORT  transport of the main run (default shm)
# The valgrind run uses shm without process_vm_writev (HOP_SHM_CMA=0): bytes
# a peer writes with CMA are invisible to valgrind, which would report the
# receiver's data as uninitialised.
set -u
: "${top_builddir:?}"
B=$top_builddir
count=${HOP_SOAK_COUNT:-5000}
vg=${HOP_SOAK_VG:-200}
rc=0
bounds=()
asan=0
grep -qa __asan_init "$B/tests/reliability/soak" && asan=1
if [ $asan = 1 ]; then
	# ASan's quarantine keeps freed blocks resident and replaces malloc
	# (mallinfo2 sees nothing): neither memory figure means anything, and
	# LeakSanitizer checks for leaks at exit instead
	echo "soak.sh: built with AddressSanitizer: memory bounds not enforced, LeakSanitizer checks leaks"
	bounds=(--rss-bound 100000000 --heap-bound 100000000)
	count=${HOP_SOAK_COUNT:-2000}
fi
HOP_TRANSPORT=${HOP_SOAK_TRANSPORT:-shm} "$B/tools/hop-run" -n 4 --timeout 1200 -- \
	"$B/tests/reliability/soak" --count "$count" "${bounds[@]}" || rc=1
if [ "$vg" -gt 0 ]; then
	if [ $asan = 1 ]; then
		echo "soak.sh: built with AddressSanitizer: the valgrind run is skipped (they do not mix)"
	elif command -v valgrind > /dev/null; then
		HOP_TRANSPORT=shm HOP_SHM_CMA=0 HOP_TIMEOUT=120 "$B/tools/hop-run" -n 4 \
			--timeout 1200 -- valgrind -q --error-exitcode=99 \
			--leak-check=full --errors-for-leak-kinds=definite \
			"$B/tests/reliability/soak" --count "$vg" --max-bytes 262144 \
			--quiet || { echo "soak.sh: valgrind run FAILED"; rc=1; }
		[ $rc = 0 ] && echo "soak.sh: valgrind memcheck clean over $vg collectives"
	else
		echo "soak.sh: valgrind not installed: memcheck run skipped"
	fi
fi
exit $rc
