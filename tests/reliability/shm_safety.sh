#!/bin/sh
# shm_safety.sh - the shm provider against misuse and hostile peers: writes
# after deregistration, a tampered region table, a send to a dead peer, a
# wrapping registration (tests/reliability/shm_safety.c).
prog="${top_builddir:-.}/tests/reliability/shm_safety"
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
[ -w /dev/shm ] || { echo "SKIP: /dev/shm is not writable"; exit 77; }
unset HOP_SHM_CMA
# pairs linked on first use (the default), then every pair linked at open
rc=0
for mode in lazy eager; do
	HOP_CONNECT=$mode "$prog" dereg-queued dereg-inflight table-tamper \
		table-forge dead-send wrap-register || rc=1
done
exit $rc
