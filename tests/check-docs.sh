#!/bin/bash
# The docs promise to list every result code (docs/errors.md) and every tool
# in README.md; check both against the sources so they cannot drift. The
# pages are reference pages, each linked from README.md and short enough to
# read (DOC_MAX_LINES); measurements live in dated records under
# docs/results/, each with the command that reproduces it; no page, record
# or source comment speaks of numbered work periods or issues, which a
# reader cannot look up. Every docs/*.md a file names must exist, and a
# cited section (docs/x.md, "Heading") must be a heading of that page.
set -eu
fail=0
top=$top_srcdir
codes=$(grep -o '^	X([A-Z_]*, [0-9]*' "$top/include/hop/common.h" | sed 's/^	X(\([A-Z_]*\), \([0-9]*\)/\1 \2/')
[ -n "$codes" ] || { echo "FAIL: no codes parsed from common.h"; exit 1; }
while read -r name val; do
	grep -q "^| \`HOP_ERR_$name\` | -$val |" "$top/docs/errors.md" ||
		{ echo "FAIL: docs/errors.md lacks HOP_ERR_$name (-$val)"; fail=1; }
done <<< "$codes"
for tool in hop-run hop-probe hop-bench hop-p2p-bench; do
	grep -q "$tool" "$top/README.md" || { echo "FAIL: README.md does not mention $tool"; fail=1; }
done

max=${DOC_MAX_LINES:-300}
pages=0
for f in "$top"/docs/*.md; do
	pages=$((pages + 1))
	grep -qF "docs/${f##*/}" "$top/README.md" ||
		{ echo "FAIL: README.md does not link docs/${f##*/}"; fail=1; }
	n=$(wc -l < "$f")
	[ "$n" -le "$max" ] ||
		{ echo "FAIL: ${f#"$top"/} has $n lines (at most $max: a reference page; measurements go to docs/results/)"; fail=1; }
done
for f in "$top"/docs/results/*.md; do
	[ -e "$f" ] || continue
	case ${f##*/} in
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-*.md) ;;
	*) echo "FAIL: docs/results/${f##*/} is not named YYYY-MM-DD-topic.md"; fail=1 ;;
	esac
	grep -qiE '^ {4}|reproduce' "$f" ||
		{ echo "FAIL: docs/results/${f##*/} gives no command that reproduces it"; fail=1; }
done

# development history: "session 12", "sessions 14-16", "issue 8", "issue #3", "we tried"
history='\b(work )?sessions? [0-9]|\bissues? #?[0-9]|\bwe tried\b'
dirs=()
for d in docs README.md man src include tools tests scripts plugins examples; do
	[ -e "$top/$d" ] && dirs+=("$top/$d")
done
hits=$(grep -rnIiE "$history" "${dirs[@]}" --exclude=check-docs.sh \
	--exclude-dir=corpus --exclude-dir=.deps --exclude-dir=.libs 2>/dev/null || true)
if [ -n "$hits" ]; then
	echo "FAIL: development history in docs or sources (say what is, and why):"
	sed "s|^$top/|  |" <<< "$hits"
	fail=1
fi

# every docs/... page named anywhere exists; every cited heading is one
refs=$(grep -rnoIE 'docs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md(,? "[^"]+")?' "${dirs[@]}" \
	--exclude=check-docs.sh --exclude-dir=.deps --exclude-dir=.libs 2>/dev/null || true)
while IFS= read -r ref; do
	[ -n "$ref" ] || continue
	where=${ref%%:docs/*}; where=${where#"$top"/}
	cite=docs/${ref#*:docs/}
	page=${cite%%.md*}.md
	[ -f "$top/$page" ] || { echo "FAIL: $where names $page, which does not exist"; fail=1; continue; }
	case $cite in *'"'*) ;; *) continue ;; esac
	heading=${cite#*\"}; heading=${heading%\"}
	grep -qF -- "$heading" <(grep '^#' "$top/$page") ||
		{ echo "FAIL: $where cites $page \"$heading\", not a heading of that page"; fail=1; }
done <<< "$refs"

[ $fail = 0 ] && echo "PASS: $(wc -l <<< "$codes") result codes documented; tools in README;" \
	"$pages pages of at most $max lines; no history wording; every cited page and heading exists"
exit $fail
