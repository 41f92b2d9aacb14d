#!/bin/sh
# The shm provider across 2, 3 and 4 processes: writes 0 B..64 MiB, sends,
# ordering, rejected out-of-bounds/stale/no-access writes, a killed peer.
# Pairs link on first use (the default); 4 processes run everything once
# more with HOP_CONNECT=eager (every pair linked at open).
prog="${top_builddir:-.}/tests/integration/prov_test"
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
rc=0
for n in 2 3 4; do
	"$prog" shm $n || rc=1
done
HOP_CONNECT=eager "$prog" shm 4 || rc=1
exit $rc
