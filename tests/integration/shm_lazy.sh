#!/bin/bash
# tcp_lazy.sh's cases on shm (HOP_CONNECT=lazy links a pair's segments on
# first use), then: nothing of these jobs is left in /dev/shm.
set -u
before=$(ls /dev/shm 2>/dev/null | grep -c '^hop-')
LAZY_TRANSPORT=shm "$(dirname "$0")/tcp_lazy.sh"
rc=$?
after=$(ls /dev/shm 2>/dev/null | grep -c '^hop-')
if [ "$after" -gt "$before" ]; then
	echo "FAIL: $((after - before)) hop segment(s) left in /dev/shm"
	ls /dev/shm | grep '^hop-' | sed 's/^/    /'
	rc=1
fi
exit $rc
