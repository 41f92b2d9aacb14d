#!/bin/bash
# A built-in provider is a plugin like any other: libhop-provider-tcpplug.so
# is the tcp provider built from libhop's own sources (tcp_plugin.c adds
# only the descriptor). This script
#  1. checks that the plugin needs no hop symbol (every undefined dynamic
#     symbol comes from libc) and exports only its descriptor;
#  2. runs hop's integration tests over it with HOP_TRANSPORT=tcpplug:
#     p2p_test on 2 ranks, the p2p failure cases of p2p_internal (callback,
#     abort, peer exit), and the collectives' matrix on 3 ranks, each
#     checking its data bit for bit, and that the plugin carried them.
# Needs nm (binutils); skips (77) without it.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
lib=$b/tests/plugin/.libs/libhop-provider-tcpplug.so
command -v nm >/dev/null || { echo "SKIP: nm not found"; exit 77; }
[ -f "$lib" ] || { echo "FAIL: $lib not built (make check builds it)"; exit 1; }
fail=0
report() { # ok what output
	if [ "$1" = 1 ]; then
		echo "PASS: $2"
	else
		echo "FAIL: $2"
		printf '%s\n' "$3" | grep -v ' info: ' | tail -n 20 | sed 's/^/    /'
		fail=1
	fi
}

# 1. what the plugin takes from and gives to the process
und=$(nm -D --undefined-only "$lib" | awk '{print $NF}' | grep '^hop_')
report "$([ -z "$und" ] && echo 1)" "the tcp plugin needs no hop symbol" \
	"undefined: $und"
def=$(nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v '^_' | tr '\n' ' ')
report "$([ "$def" = "hop_provider_plugin " ] && echo 1)" \
	"the tcp plugin exports only hop_provider_plugin" "exports: $def"

export HOP_PLUGIN_PATH=$b/tests/plugin/.libs HOP_TRANSPORT=tcpplug

# 2. p2p (1 MiB around the ring), logging which provider set up the
# pairs (at open, or on first use under the default HOP_CONNECT=lazy)
out=$(HOP_DEBUG=info "$run" -n 2 --timeout 60 -- \
	"$b/tests/integration/p2p_test" --big 1048576 2>&1)
rc=$? ok=0
[ $rc = 0 ] && grep -q "all checks passed" <<< "$out" &&
	[ "$(grep -cE 'tcpplug: (connected to 1 peer\(s\)|listening; 1 peer\(s\) are connected on first use)' <<< "$out")" = 2 ] && ok=1
report $ok "p2p_test on the tcp plugin, 2 ranks (exit $rc)" "$out"
for c in cb abort peer-exit; do
	out=$(HOP_TIMEOUT=10 "$run" -n 2 --timeout 60 -- \
		"$b/tests/integration/p2p_internal" $c 2>&1)
	rc=$? ok=0
	[ $rc = 0 ] && [ "$(grep -c "p2p_internal $c: rank . passed" <<< "$out")" = 2 ] && ok=1
	report $ok "p2p_internal $c on the tcp plugin (exit $rc)" "$out"
done

# collectives: every kind, dtype and op of the default matrix
out=$("$run" -n 3 --timeout 60 -- "$b/tests/integration/coll_matrix" \
	--max-count 4096 2>&1)
rc=$? ok=0
[ $rc = 0 ] && [ "$(grep -c "coll_matrix: rank [0-9] passed [0-9]* cases on tcpplug" <<< "$out")" = 3 ] && ok=1
report $ok "coll_matrix on the tcp plugin, 3 ranks ($(grep -m1 -o 'passed [0-9]* cases' <<< "$out"); exit $rc)" "$out"
exit $fail
