#!/bin/bash
# tcp_lazy.sh's cases on shm (HOP_CONNECT=lazy links a pair's segments on
# first use), then: none of these jobs left a segment in /dev/shm (a name
# whose creator is gone; other jobs' live set-ups are not counted).
set -u
before=$(ls /dev/shm 2>/dev/null | grep '^hop-')
LAZY_TRANSPORT=shm "$(dirname "$0")/tcp_lazy.sh"
rc=$?
for name in $(ls /dev/shm 2>/dev/null | grep '^hop-'); do
	grep -qxF "$name" <<< "$before" && continue
	pid=${name#hop-}
	pid=${pid%%-*}
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "FAIL: /dev/shm/$name was left behind (pid $pid is gone)"
		rc=1
	fi
done
exit $rc
