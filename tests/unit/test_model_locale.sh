#!/bin/bash
# test_model_locale under a decimal-comma locale: de_DE.UTF-8 generated
# with localedef into a private LOCPATH (nothing system-wide changes), so
# the test runs wherever glibc's locale sources are installed (Debian:
# the locales package, in scripts/setup). Skips (77) only when they are not.
set -u
b=${top_builddir:?run through make check or set top_builddir}
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
name=de_DE.UTF-8
if ! localedef -i de_DE -f UTF-8 "$dir/$name" >"$dir/log" 2>&1 ||
   [ ! -e "$dir/$name/LC_NUMERIC" ]; then
	echo "SKIP: localedef cannot build $name (install the locales package):"
	sed 's/^/    /' "$dir/log" | head -n 5
	exit 77
fi
LOCPATH=$dir HOP_TEST_LOCALE=$name "$b/tests/unit/test_model_locale"
