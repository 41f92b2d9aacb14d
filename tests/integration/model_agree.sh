#!/bin/bash
# Ranks whose HOP_PROFILE files differ still choose alike: the cost model's
# links are agreed at init (src/core/comm_agree.c), so every rank prices
# with the slowest link any rank gave. Rank 0 reads a profile of a slow,
# high-latency link, the others one of a fast link; alone, they would pick
# different AllReduce algorithms (hop-model says which). Every rank must
# log one choice, the same, and the data must check.
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
prof() { # file alpha_us beta_GBps
	printf 'hop-link-profile 1\nprovider shm\nnranks 4\npair 0 1 shm %s %s - -\nend\n' \
		"$2" "$3" >"$1"
}
prof "$tmp/slow.prof" 2000 0.05
prof "$tmp/fast.prof" 0.5 20
cat >"$tmp/per-rank" <<EOS
#!/bin/sh
if [ "\$HOP_RANK" = 0 ]; then HOP_PROFILE=$tmp/slow.prof; else HOP_PROFILE=$tmp/fast.prof; fi
export HOP_PROFILE
exec "\$@"
EOS
chmod +x "$tmp/per-rank"

# the premise: alone, the two profiles choose differently at this size
pick() { "$model" predict --csv --nranks 4 --sizes 64K --profile "$1" |
	awk -F, '$8 == 1 {print $4}'; }
check "premise: the profiles alone choose differently" \
	[ "$(pick "$tmp/slow.prof")" != "$(pick "$tmp/fast.prof")" ]

pat='allreduce 65536 B N=4: [a-z]+ chunk=[0-9]+ predicted [0-9.]+ us'
HOP_DEBUG=info "$run" -n 4 --transport shm --timeout 60 -- "$tmp/per-rank" \
	"$bench" allreduce -b 64K -e 64K --iters 2 --warmup 1 --check >"$tmp/out" 2>&1
check "runs" [ $? = 0 ]
check "every rank logs its choice" [ "$(grep -cE "$pat\$" "$tmp/out")" = 4 ]
check "every rank chose alike" [ "$(grep -oE "$pat" "$tmp/out" | sort -u | wc -l)" = 1 ]
check "every rank prices the slow link" \
	[ "$(grep -c "cost model: agreed links .*: intra alpha 2000.00 us beta 0.050 GB/s" "$tmp/out")" = 4 ]
check "data right" grep -q "Out of bounds values : 0 OK" "$tmp/out"
[ $fail = 0 ] || { echo "--- output:"; grep -v "^#" "$tmp/out" | head -n 30; }
exit $fail
