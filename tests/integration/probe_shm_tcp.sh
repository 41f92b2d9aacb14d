#!/bin/bash
# hop-probe end to end through hop-run on shm and tcp, small and fast: the
# table is printed, the JSON profile reads back with hop-probe's strict
# reader with sane values (alpha > 0, beta > 0, parts summing up), the link
# profile (--save-profile) with libhop's, the CSV has one row per size, the
# SVG is one well-formed document, and a truncated profile of either kind
# is refused with a message saying so.
set -u
b=${top_builddir:-.}
run=$b/tools/hop-run
probe=$b/tools/hop-probe
check=$b/tests/integration/probe_check
for x in "$run" "$probe" "$check"; do
	[ -x "$x" ] || { echo "SKIP: $x not built"; exit 77; }
done
tmp=$(mktemp -d /tmp/hop-probe-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail=0
say() { echo "$1: $2"; [ "$1" = FAIL ] && fail=1; return 0; }

probe_run() { # transport ranks
	local t=$1 n=$2 d=$tmp/$1-$2 out rc
	mkdir -p "$d"
	out=$(env HOP_TRANSPORT=$t "$run" -n "$n" --timeout 60 -- "$probe" \
		--sizes 1:256K --iters 60 --warmup 5 --budget 4 \
		--json "$d/p.json" --csv "$d/p.csv" --svg "$d/p.svg" \
		--save-profile "$d/link.prof" 2>&1); rc=$?
	if [ $rc != 0 ]; then
		say FAIL "hop-probe $t -n $n exit $rc"
		printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
		return
	fi
	for pat in 'alpha_sw' 'alpha_wire' 'fit T\(m\) = alpha \+ m/beta' \
		'consistency: alpha_sw \+ alpha_dma \+ alpha_sync \+ alpha_wire' \
		'duplex:' 'store-and-forward' 'concurrent links'; do
		grep -qE "$pat" <<< "$out" || { say FAIL "$t -n $n: no '$pat' in the table"; return; }
	done
	local pairs=$((n - 1))
	"$check" "$d/p.json" "$t" $pairs || { say FAIL "$t -n $n: JSON profile"; return; }
	"$check" "$d/link.prof" "$t" $pairs >/dev/null || { say FAIL "$t -n $n: --save-profile"; return; }
	# 19 sizes (1 .. 256K) per pair plus the header
	local rows; rows=$(wc -l < "$d/p.csv")
	[ "$rows" = $((19 * pairs + 1)) ] || { say FAIL "$t -n $n: CSV has $rows lines"; return; }
	grep -q '^a,b,provider,size_bytes,median_us,p99_us,fit_us,bandwidth_GBps$' "$d/p.csv" ||
		{ say FAIL "$t -n $n: CSV header"; return; }
	if command -v xmllint >/dev/null; then
		xmllint --noout "$d/p.svg" || { say FAIL "$t -n $n: SVG not well-formed"; return; }
	fi
	[ "$(grep -c '</svg>' "$d/p.svg")" = 1 ] || { say FAIL "$t -n $n: SVG"; return; }
	# the reader refuses a truncated profile and says so
	head -c 700 "$d/p.json" > "$d/cut.json"
	out=$("$check" "$d/cut.json" "$t" $pairs 2>&1) &&
		{ say FAIL "$t: truncated profile accepted"; return; }
	grep -q 'truncated file?' <<< "$out" || { say FAIL "$t: truncated: $out"; return; }
	head -n 4 "$d/link.prof" > "$d/cut.prof"
	out=$("$check" "$d/cut.prof" "$t" $pairs 2>&1) &&
		{ say FAIL "$t: truncated link profile accepted"; return; }
	grep -q 'truncated file?' <<< "$out" || { say FAIL "$t: truncated link: $out"; return; }
	say PASS "hop-probe $t -n $n"
}

probe_run shm 2
probe_run tcp 2
probe_run shm 3
# bad options fail fast with a message, before any rank joins
out=$("$probe" --sizes 64:8 2>&1) && say FAIL "--sizes 64:8 accepted"
grep -q 'MAX must be at least 2 x MIN' <<< "$out" && say PASS "hop-probe rejects bad --sizes" ||
	say FAIL "hop-probe --sizes message: $out"
exit $fail
