#!/bin/bash
# The provider plugin ABI end to end, as someone outside hop meets it:
#  1. `make install` hop into a temporary DESTDIR;
#  2. build examples/provider against the installed headers only, through
#     `pkg-config --cflags --libs hop`, as libhop-provider-example.so;
#  3. run hop's p2p integration tests (tests/integration/p2p.sh: p2p_test on
#     2 and 4 ranks, then the callback, truncation, timeout, abort and
#     peer-exit cases) with HOP_TRANSPORT=example HOP_PLUGIN_PATH=<dir>,
#     and once more with small fragments (the plugin's own setting), and an
#     AllReduce (examples/dp_allreduce checks its sums);
#  4. check that what hop must refuse is refused, rc != 0, with a message
#     naming why: the example built for another ABI version, a missing
#     plugin, a file that is not a shared object, one without the
#     descriptor, a bad plugin setting, a bad name.
# Skips (77) without a C compiler or pkg-config, naming which.
set -u
b=${top_builddir:?run through make check or set top_builddir}
s=${top_srcdir:?run through make check or set top_srcdir}
cc=${CC:-cc}
for tool in "$cc" pkg-config make; do
	command -v "$tool" >/dev/null ||
		{ echo "SKIP: $tool not found (needed to build a plugin)"; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hop-plugin-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# 1. install; MAKEFLAGS of an enclosing `make check` would hand this make
# a jobserver it cannot reach
if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -C "$b" install \
	DESTDIR="$tmp/root" >"$tmp/install.log" 2>&1; then
	echo "FAIL: make install DESTDIR=$tmp/root"
	tail -n 20 "$tmp/install.log" | sed 's/^/    /'
	exit 1
fi
pc=$(find "$tmp/root" -path '*/pkgconfig/hop.pc' | head -n 1)
[ -n "$pc" ] || { echo "FAIL: hop.pc was not installed"; exit 1; }
# the .pc names the real prefix; the sysroot maps it into DESTDIR
export PKG_CONFIG_PATH=${pc%/hop.pc} PKG_CONFIG_SYSROOT_DIR=$tmp/root
flags=$(pkg-config --cflags --libs hop) || { echo "FAIL: pkg-config hop"; exit 1; }
inc=$(pkg-config --cflags-only-I hop | sed 's/^-I//; s/ *$//')
[ -f "$inc/hop/provider.h" ] ||
	{ echo "FAIL: hop/provider.h not installed in $inc"; exit 1; }
echo "PASS: installed; pkg-config hop: $flags"

# 2. build; --as-needed: the example uses only its context, so the plugin
# does not pull a second libhop into programs linked with hop statically
ex=$s/examples/provider
build() { # out-dir extra-cflags...
	local out=$1
	shift
	mkdir -p "$out"
	"$cc" -std=c11 -Wall -Wextra -Werror -fPIC -shared -fvisibility=hidden \
		"$@" -o "$out/libhop-provider-example.so" \
		"$ex/example_conn.c" "$ex/example_data.c" -Wl,--as-needed $flags
}
if build "$tmp/plug" 2>"$tmp/cc.log"; then
	echo "PASS: built libhop-provider-example.so out of tree"
else
	echo "FAIL: building the example provider"
	sed 's/^/    /' "$tmp/cc.log" | tail -n 30
	exit 1
fi

# 3. p2p over the plugin; an empty first folder checks the path search
mkdir -p "$tmp/empty"
export HOP_PLUGIN_PATH=$tmp/empty:$tmp/plug
out=$(HOP_TRANSPORT=example "$b/tools/hop-run" -n 2 --timeout 120 -- \
	"$b/tests/integration/p2p_test" 2>&1)
if grep -q "2 ranks on example: all checks passed" <<< "$out"; then
	echo "PASS: p2p_test ran on the plugin (transport example)"
else
	echo "FAIL: p2p_test did not run on the plugin"
	printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
	fail=1
fi
P2P_TRANSPORTS=example P2P_RANKS="2 4" bash "$s/tests/integration/p2p.sh" || fail=1
# the plugin's own setting through ctx->config(): 1000-byte fragments, so
# every rendezvous write crosses many messages
out=$(HOP_PROV_EXAMPLE_FRAG=1000 HOP_TRANSPORT=example "$b/tools/hop-run" \
	-n 3 --timeout 120 -- "$b/tests/integration/p2p_test" --big 1048576 2>&1)
if grep -q "3 ranks on example: all checks passed" <<< "$out"; then
	echo "PASS: p2p_test on the plugin with HOP_PROV_EXAMPLE_FRAG=1000"
else
	echo "FAIL: p2p_test with HOP_PROV_EXAMPLE_FRAG=1000"
	printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
	fail=1
fi

# collectives run on the same provider ops: an AllReduce that checks its sums
out=$(HOP_TRANSPORT=example "$b/tools/hop-run" -n 3 --timeout 120 -- \
	"$b/examples/dp_allreduce" --params 65536 2>&1)
if [ $? = 0 ] && grep -q "3 ranks on example" <<< "$out"; then
	echo "PASS: dp_allreduce (checked sums) on the plugin, 3 ranks"
else
	echo "FAIL: dp_allreduce on the plugin"
	printf '%s\n' "$out" | tail -n 20 | sed 's/^/    /'
	fail=1
fi

# 4. refusals: rc != 0 and the message says why
refused() { # what dir transport expected-code expected-text...
	local what=$1 dir=$2 t=$3 code=$4 rc
	shift 4
	out=$(HOP_PLUGIN_PATH=$dir HOP_TRANSPORT=$t "$b/tools/hop-run" -n 2 \
		--timeout 60 -- "$b/tests/integration/p2p_test" 2>&1)
	rc=$?
	local ok=1
	[ $rc != 0 ] || ok=0
	for want in "$code" "$@"; do
		grep -qF -- "$want" <<< "$out" || ok=0
	done
	if [ $ok = 1 ]; then
		echo "PASS: $what refused (exit $rc): $(grep -m1 -oF -- "$1" <<< "$out")"
	else
		echo "FAIL: $what: exit $rc, expected $code and: $*"
		# a sanitizer's report first (its legend fills the tail)
		grep -E 'ERROR: |SUMMARY: |#[0-9]+ 0x|runtime error' <<< "$out" |
			head -n 30 | sed 's/^/    /'
		printf '%s\n' "$out" | tail -n 10 | sed 's/^/    /'
		fail=1
	fi
}
abi=$(sed -n 's/^#define HOP_PROV_ABI_VERSION \([0-9]*\)$/\1/p' "$inc/hop/provider.h")
bad=$((abi + 1))
if build "$tmp/old" -DEX_ABI_VERSION=$bad 2>"$tmp/cc.log"; then
	refused "ABI version $bad" "$tmp/old" example HOP_ERR_NOT_SUPPORTED \
		"$tmp/old/libhop-provider-example.so: provider ABI version $bad" \
		"expects version $abi"
else
	echo "FAIL: building the example with ABI version $bad"
	fail=1
fi
refused "missing plugin" "$tmp/plug" nosuch HOP_ERR_CONFIG \
	"no libhop-provider-nosuch.so" "looked in $tmp/plug"
mkdir -p "$tmp/junk"
echo "not a shared object" >"$tmp/junk/libhop-provider-junk.so"
refused "non-ELF plugin" "$tmp/junk" junk HOP_ERR_SYSTEM \
	"$tmp/junk/libhop-provider-junk.so: dlopen failed"
echo 'int hop_not_a_provider = 1;' >"$tmp/nodesc.c"
"$cc" -shared -fPIC -o "$tmp/junk/libhop-provider-nodesc.so" "$tmp/nodesc.c"
refused "plugin without descriptor" "$tmp/junk" nodesc HOP_ERR_PROTOCOL \
	"no symbol hop_provider_plugin"
# descriptors made with the installed HOP_PROV_PLUGIN(): one whose table
# lacks the required functions, one that names another provider
for d in "half half" "named other"; do
	set -- $d
	printf '#include <hop/provider.h>\nstatic const struct hop_prov_ops ops = { .size = sizeof(ops), .name = "%s" };\nHOP_PROV_PLUGIN("%s", &ops);\n' "$2" "$2" >"$tmp/$1.c"
	"$cc" -std=c11 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
		$(pkg-config --cflags hop) -o "$tmp/junk/libhop-provider-$1.so" "$tmp/$1.c" ||
		{ echo "FAIL: building $1.c with HOP_PROV_PLUGIN()"; fail=1; }
done
refused "ops table without functions" "$tmp/junk" half HOP_ERR_PROTOCOL \
	"lacks a required function"
refused "descriptor of another name" "$tmp/junk" named HOP_ERR_PROTOCOL \
	"descriptor names provider 'other'"
HOP_PROV_EXAMPLE_FRAG=0 refused "plugin setting out of range" "$tmp/plug" \
	example HOP_ERR_CONFIG "HOP_PROV_EXAMPLE_FRAG='0': not a number"
refused "bad plugin name" "$tmp/plug" "../x" HOP_ERR_CONFIG \
	"nor a plugin name"
exit $fail
