#!/bin/sh
# The tcp provider across 2, 3 and 4 processes: writes 0 B..64 MiB, sends,
# ordering, rejected out-of-bounds/stale/no-access writes, impostors during
# connect, a killed peer; and 6 processes, where poll() finds readable
# peers through epoll (more than 4 peers). Pairs connect on first use
# (the default); 4 processes run everything once more with
# HOP_CONNECT=eager (every pair connected at open).
prog="${top_builddir:-.}/tests/integration/prov_test"
[ -x "$prog" ] || { echo "SKIP: $prog not built"; exit 77; }
rc=0
for n in 2 3 4; do
	"$prog" tcp $n || rc=1
done
"$prog" tcp 6 sends order impostor kill || rc=1
HOP_CONNECT=eager "$prog" tcp 4 || rc=1
exit $rc
