#!/bin/bash
# The cost model drives real collectives: on 4 shm ranks every rank logs
# (HOP_DEBUG=info) the same AllReduce choice, which is hop-model's pick for
# the same link; HOP_ALGO overrides it; a missing or malformed HOP_PROFILE
# fails the communicator's init with the file named.
set -u
b=${top_builddir:?run through make check or set top_builddir}
run=$b/tools/hop-run
bench=$b/tools/hop-bench
model=$b/tools/hop-model
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # name, condition...
	local name=$1; shift
	if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi
}
bench4() { # env..., then the benchmark on 4 shm ranks, 1 MiB
	env "$@" "$run" -n 4 --transport shm --timeout 120 -- "$bench" allreduce \
		-b 1M -e 1M --iters 2 --warmup 1 --check >"$tmp/out" 2>&1
}
pat='allreduce 1048576 B N=4: [a-z]+ chunk=[0-9]+ predicted [0-9.]+ us'

bench4 HOP_DEBUG=info
check "auto: runs" [ $? = 0 ]
check "auto: every rank logs its choice" [ "$(grep -cE "$pat\$" "$tmp/out")" = 4 ]
check "auto: every rank chose alike" [ "$(grep -oE "$pat" "$tmp/out" | sort -u | wc -l)" = 1 ]
pick=$(grep -oE "$pat" "$tmp/out" | head -1 | awk '{print $5}')
want=$("$model" predict --csv --nranks 4 --sizes 1M --provider shm |
	awk -F, '$8 == 1 {print $4}')
check "auto: the pick is hop-model's ($want)" [ -n "$want" ] && [ "$pick" = "$want" ]
check "auto: data right" grep -q "Out of bounds values : 0 OK" "$tmp/out"

forced=tree
[ "$want" = tree ] && forced=ring
bench4 HOP_DEBUG=info HOP_ALGO=allreduce:$forced
check "HOP_ALGO: runs" [ $? = 0 ]
check "HOP_ALGO: $forced on every rank" [ "$(grep -cE "allreduce 1048576 B N=4: $forced chunk=[0-9]+ predicted [0-9.]+ us \(forced by HOP_ALGO\)" "$tmp/out")" = 4 ]

bench4 HOP_PROFILE="$tmp/missing.json"
check "missing profile: fails" [ $? != 0 ]
check "missing profile: named" grep -q "HOP_PROFILE: .*$tmp/missing.json" "$tmp/out"

printf 'hop-link-profile 1\nprovider tcp\nnranks 2\npair 0 1 tcp 10 1' >"$tmp/bad.prof"
bench4 HOP_PROFILE="$tmp/bad.prof"
check "truncated profile: fails" [ $? != 0 ]
check "truncated profile: file named" grep -q "HOP_PROFILE: .*$tmp/bad.prof" "$tmp/out"
check "truncated profile: line named" grep -q "bad.prof: line 4: pair: expected 7 or 8 fields" "$tmp/out"
[ $fail = 0 ] || { echo "--- last output:"; head -n 20 "$tmp/out"; }
exit $fail
