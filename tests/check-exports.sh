#!/bin/bash
# libhop.so must export exactly the functions the public headers declare:
# nothing internal leaks, nothing declared is missing; and it must not hold
# the simulators or the JSON code at all.
set -eu
lib="$top_builddir/.libs/libhop.so"
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {sub(/@.*/, "", $3); print $3}' | sort -u)
# declarations start a line with HOP_EXPORT and name the function before "("
declared=$(awk '/^HOP_EXPORT / { decl = 1; text = "" }
	decl { text = text " " $0; if (index(text, "(")) { sub(/\(.*/, "", text); n = split(text, w, /[ *]+/); print w[n]; decl = 0 } }' \
	"$top_srcdir"/include/hop/*.h | sort -u)
bad=$(printf '%s\n' "$exported" | grep -v '^hop_' || true)
[ -z "$bad" ] || { echo "FAIL: non-hop symbols exported: $bad"; exit 1; }
extra=$(comm -23 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared") 2>/dev/null || true)
missing=$(comm -13 <(printf '%s\n' "$exported") <(printf '%s\n' "$declared"))
[ -z "$extra" ] || { echo "FAIL: exported but not declared in include/hop: $extra"; exit 1; }
[ -z "$missing" ] || { echo "FAIL: declared but not exported (or not implemented): $missing"; exit 1; }
# The simulators (src/sim) and the JSON code (tools/probe) are for hop-model,
# hop-probe and the tests: not one symbol of them, exported or local.
for opt in -D ""; do
	# shellcheck disable=SC2086
	leak=$(nm $opt "$lib" | awk '{print $NF}' | grep -iE 'sim|json' || true)
	[ -z "$leak" ] || { echo "FAIL: nm $opt libhop.so has simulator or JSON symbols:" $leak; exit 1; }
done
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
case "$soname" in libhop.so.[0-9]*) ;; *) echo "FAIL: SONAME is '$soname'"; exit 1 ;; esac
echo "PASS: $(printf '%s\n' "$exported" | wc -l) hop_* symbols exported, all declared; SONAME $soname"
