#!/usr/bin/env bash
# Fails if a source or model file cites code by line number ("pool.c:671", "Task.swift
# line 45", "task.c#L12"): such citations rot with every edit. Cite a function, type or
# invariant by name instead. Checks every text file under the trees below (comments and
# strings alike; there is no legitimate use of the pattern in them). Usage:
#   .ci/check-citations.sh   (from anywhere; exits 1 and lists the offending lines)
set -euo pipefail
cd "$(dirname "$0")/.."
trees="Sources CSupport Model Tests Benchmarks Fuzz"
file='[A-Za-z0-9_+.-]+\.(c|h|swift|pml|sh|py|cpp|m)'
pattern="${file}(:[0-9]+|#L[0-9]+|,? lines? [0-9]+)\b"
existing=""
for tree in $trees; do [ -d "$tree" ] && existing="$existing $tree"; done
# -I skips binary files (fuzz corpora); benchmark results are data, not prose; a nested
# package's .build (the Hummingbird server's) holds other projects' code.
if grep -rnIE "$pattern" $existing --exclude-dir=results --exclude-dir=.build; then
    echo "check-citations: cite code by function name, not by line number (lines above)" >&2
    exit 1
fi
echo "check-citations: no line-number citations in$existing"
