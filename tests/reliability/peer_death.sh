#!/bin/bash
# peer_death.sh - peer death on shm and tcp: 4 ranks loop over collectives
# and point-to-point exchanges, a driver SIGKILLs a random rank at a random
# moment, every survivor must return an error naming the dead rank within
# HOP_TIMEOUT (5 s) and none may hang (tests/reliability/peer_death.c).
#
# Runs per transport: HOP_PD_RUNS (default 30, which keeps make check
# short on 2 cores; the full count is HOP_PD_RUNS=100, about
# 75 s per transport). HOP_PD_TRANSPORTS (default "shm tcp").
set -u
: "${top_builddir:?}"
runs=${HOP_PD_RUNS:-30}
rc=0
for t in ${HOP_PD_TRANSPORTS:-shm tcp}; do
	"$top_builddir/tests/reliability/peer_death" -n 4 -r "$runs" -t "$t" \
		--timeout 5 || rc=1
done
exit $rc
