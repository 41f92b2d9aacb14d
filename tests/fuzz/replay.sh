#!/bin/bash
# replay.sh - make check's share of fuzzing: every harness, built with gcc
# and a plain main (replay.c), runs once over its seed corpus
# (tests/fuzz/corpus/NAME) with all of its checks. The fuzzing proper is
# scripts/fuzz (clang, libFuzzer, bounded time per harness).
set -u
: "${top_builddir:?}" "${top_srcdir:?}"
rc=0
for n in bootstrap tcp topo profile p2p config; do
	HOP_DEBUG=none "$top_builddir/tests/fuzz/replay_$n" "$top_srcdir/tests/fuzz/corpus/$n" || rc=1
done
exit $rc
