#!/bin/bash
# The docs promise to list every result code (docs/errors.md) and every tool
# in README.md; check both against the sources so they cannot drift.
set -eu
fail=0
codes=$(grep -o '^	X([A-Z_]*, [0-9]*' "$top_srcdir/include/hop/common.h" | sed 's/^	X(\([A-Z_]*\), \([0-9]*\)/\1 \2/')
[ -n "$codes" ] || { echo "FAIL: no codes parsed from common.h"; exit 1; }
while read -r name val; do
	grep -q "^| \`HOP_ERR_$name\` | -$val |" "$top_srcdir/docs/errors.md" ||
		{ echo "FAIL: docs/errors.md lacks HOP_ERR_$name (-$val)"; fail=1; }
done <<< "$codes"
for tool in hop-run hop-probe hop-bench hop-p2p-bench; do
	grep -q "$tool" "$top_srcdir/README.md" || { echo "FAIL: README.md does not mention $tool"; fail=1; }
done
[ $fail = 0 ] && echo "PASS: $(wc -l <<< "$codes") result codes documented; tools in README"
exit $fail
