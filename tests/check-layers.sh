#!/bin/bash
# The include graph runs one way (docs/layers.md): a file may
# include headers of its own layer and of the layers its allow-list names,
# never of a layer above it. Fails on any include outside the allow-list
# that the KNOWN list below does not name; then proves it can fail by
# checking a small tree with an upward include planted in it.
#
# usage: check-layers.sh [ROOT]   (default: $top_srcdir, else the parent
#                                  of this script's directory)
set -eu

# Layer of a source file (its folder), or "" when the file is not checked.
layer_of_file() {
	case "$1" in
	include/hop/*) echo hop ;;
	src/core/*) echo core ;;
	src/model/*) echo model ;;
	src/transport/*) echo transport ;;
	src/p2p/*) echo p2p ;;
	src/coll/*) echo coll ;;
	src/relay/*) echo relay ;;
	src/api/*) echo api ;;
	src/sim/*) echo sim ;;
	*) echo "" ;;
	esac
}

# What each layer may include besides itself. hop (include/hop) is the
# public API every layer may use; the model is pure formulas over core;
# coll and relay (multi-hop transfers) drive p2p and ask the model; api
# composes them all; sim is linked by hop-model and the tests, never by libhop,
# so no library layer may include it (tools/ and tests/ are not checked).
allowed() {
	case "$1" in
	hop) echo "hop" ;;
	core) echo "hop" ;;
	model) echo "hop core" ;;
	transport) echo "hop core" ;;
	p2p) echo "hop core transport" ;;
	coll) echo "hop core transport p2p model" ;;
	relay) echo "hop core transport p2p model" ;;
	api) echo "hop core transport p2p model coll relay" ;;
	sim) echo "hop core transport p2p model coll relay api" ;;
	esac
}

# Single headers a layer may include from a layer above: "layer header".
# coll/kinds.h holds only the enums of collective kinds and algorithms,
# the vocabulary the model prices and coll builds; it includes nothing.
HEADERS="
model coll/kinds.h
"

# A provider (src/transport/<name>/, and the pieces the software providers
# share: emu*, mrtab.c, cqring.c, prov_common.h) sees hop only through the provider ABI
# (hop/provider.h, docs/providers.md), as a plugin does: none of the
# headers that give the communicator (struct hop_comm, its config and
# bootstrap) or hop's side of the ABI. Pattern per line, matched against
# the include path.
PROV_DENY="
core/core.h
core/core_int.h
core/config.h
core/bootstrap.h
core/bs_int.h
core/comm_*
transport/provider.h
"

# Upward includes that exist today, each with the reason it remains
# (see docs/layers.md). Format: "file included-layer". An entry here lets
# that one file keep including that one layer; any other upward include
# fails. Delete the line when the include goes.
KNOWN="
"
# (none today; an entry is "file included-layer" with a comment saying why)

root="${1:-${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}}"

# Prints one "file layer header" line per upward include under $1: one
# awk over every file (a process per include is slow on a busy machine).
violations() {
	local dir="$1" layers="" l
	for l in hop core model transport p2p coll relay api sim; do
		layers="$layers$l=$(allowed $l);"
	done
	(cd "$dir" && find include/hop src -name '*.[ch]' 2>/dev/null | LC_ALL=C sort |
	xargs -r awk -v layers="$layers" -v headers="$HEADERS" '
	BEGIN {
		n = split(layers, ent, ";")
		for (i = 1; i <= n; i++) {
			if (split(ent[i], kv, "=") < 2) continue
			ok[kv[1] " " kv[1]] = 1
			m = split(kv[2], al, " ")
			for (j = 1; j <= m; j++) ok[kv[1] " " al[j]] = 1
		}
		n = split(headers, hl, "\n")
		for (i = 1; i <= n; i++) if (hl[i] != "") okh[hl[i]] = 1
	}
	FNR == 1 {
		layer = ""
		if (FILENAME ~ /^include\/hop\//) layer = "hop"
		else if (split(FILENAME, p, "/") >= 3 && p[1] == "src") layer = p[2]
	}
	layer != "" && /^[ \t]*#[ \t]*include[ \t]*("[^"]*\/|<hop\/)/ {
		inc = $0
		sub(/^[ \t]*#[ \t]*include[ \t]*["<]/, "", inc)
		sub(/[">].*/, "", inc)
		target = inc
		sub(/\/.*/, "", target)
		if (!((layer " " target) in ok) && !((layer " " inc) in okh))
			print FILENAME, target, inc
	}')
	prov_violations "$dir"
}

# Prints "file provider header" for each include a provider may not make.
prov_violations() {
	local dir="$1"
	(cd "$dir" && find src/transport -name '*.[ch]' \( -path 'src/transport/*/*' \
		-o -name 'emu*' -o -name mrtab.c -o -name cqring.c \
		-o -name prov_common.h \) 2>/dev/null |
	LC_ALL=C sort | xargs -r awk -v deny="$PROV_DENY" '
	BEGIN { n = split(deny, d, "\n") }
	/^[ \t]*#[ \t]*include[ \t]*"/ {
		inc = $0
		sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", inc)
		sub(/".*/, "", inc)
		for (i = 1; i <= n; i++) {
			if (d[i] == "") continue
			pat = d[i]
			gsub(/\./, "\\.", pat)
			gsub(/\*/, ".*", pat)
			if (inc ~ ("^" pat "$")) { print FILENAME, "provider", inc; break }
		}
	}')
}

# Fails (prints the offenders) when $1 has an upward include not in KNOWN.
check_tree() {
	local dir="$1" bad=0 f target inc
	while read -r f target inc; do
		[ -n "$f" ] || continue
		if printf '%s\n' "$KNOWN" | grep -qx "$f $target"; then
			continue
		fi
		if [ "$target" = provider ]; then
			echo "FAIL: $f includes \"$inc\": a provider sees hop only through hop/provider.h (struct hop_prov_ctx)"
			bad=1
			continue
		fi
		echo "FAIL: $f includes \"$inc\": layer '$(layer_of_file "$f")' may include only: $(allowed "$(layer_of_file "$f")")"
		bad=1
	done < <(violations "$dir")
	return $bad
}

check_tree "$root" || exit 1

# Entries of KNOWN that no longer match an include: say so, so the list
# shrinks as the layering work lands (not an error: the graph improved).
found=$(violations "$root" | awk '{print $1, $2}' | sort -u)
for k in $(printf '%s\n' "$KNOWN" | grep -v '^#' | tr ' ' ':'); do
	printf '%s\n' "$found" | grep -qx "${k/:/ }" ||
		echo "NOTE: known violation '${k/:/ }' is gone: delete it from $0"
done

# The check must be able to fail: a tree where core includes p2p, the
# public API includes core, the model includes the simulator and a coll
# header other than kinds.h.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/core" "$tmp/src/model" "$tmp/include/hop"
printf '#include "p2p/p2p.h"\n' >"$tmp/src/core/upward.c"
printf '#include <hop/common.h>\n#include "core/core.h"\n' >"$tmp/include/hop/upward.h"
printf '  #  include "sim/simnet.h" /* spaces */\n#include "coll/kinds.h"\n#include "coll/sched.h"\n' >"$tmp/src/model/upward.c"
out=$(check_tree "$tmp" 2>&1) && { echo "FAIL: the check passed a tree with upward includes"; exit 1; }
[ "$(printf '%s\n' "$out" | grep -c FAIL)" = 4 ] ||
	{ echo "FAIL: self-test: expected 4 reports"; printf '%s\n' "$out"; exit 1; }
for want in "src/core/upward.c includes \"p2p/p2p.h\"" \
	"include/hop/upward.h includes \"core/core.h\"" \
	"src/model/upward.c includes \"sim/simnet.h\"" \
	"src/model/upward.c includes \"coll/sched.h\""; do
	printf '%s\n' "$out" | grep -qF "$want" ||
		{ echo "FAIL: self-test missed: $want"; printf '%s\n' "$out"; exit 1; }
done
# a provider that reaches the communicator
mkdir -p "$tmp/src/transport/tcp"
printf '#include "core/core.h"\n#include "core/timer.h"\n#include "transport/provider.h"\n' >"$tmp/src/transport/tcp/inner.c"
printf '#include "core/comm_agree.h"\n' >"$tmp/src/transport/tcp/inner.h"
out=$(check_tree "$tmp" 2>&1) && { echo "FAIL: the check passed a provider including core/core.h"; exit 1; }
[ "$(printf '%s\n' "$out" | grep -c 'a provider sees hop only')" = 3 ] ||
	{ echo "FAIL: self-test: expected 3 provider reports"; printf '%s\n' "$out"; exit 1; }
rm -r "$tmp/src/transport"
# and a known violation passes only for the file it names
mkdir -p "$tmp/src/p2p"
printf '#include "model/topo.h"\n' >"$tmp/src/p2p/known.c"
printf '#include "model/topo.h"\n' >"$tmp/src/p2p/other.c"
rm "$tmp/src/core/upward.c" "$tmp/include/hop/upward.h" "$tmp/src/model/upward.c"
out=$(KNOWN="src/p2p/known.c model" check_tree "$tmp" 2>&1) || true
[ "$out" = "FAIL: src/p2p/other.c includes \"model/topo.h\": layer 'p2p' may include only: $(allowed p2p)" ] ||
	{ echo "FAIL: self-test: a known violation must pass for its file only:"; printf '%s\n' "$out"; exit 1; }
echo "PASS: no include from a layer above (known violations: $(printf '%s\n' "$KNOWN" | grep -v '^#' | grep -c . || true))"
