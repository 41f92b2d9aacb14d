#!/bin/sh
# The tcp provider across 2, 3 and 4 processes: writes 0 B..64 MiB, sends,
# ordering, rejected out-of-bounds/stale/no-access writes, a killed peer.
prog="${top_builddir:-.}/tests/integration/prov_test"
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
rc=0
for n in 2 3 4; do
	"$prog" tcp $n || rc=1
done
exit $rc
