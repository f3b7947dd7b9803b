#!/usr/bin/env bash
# Checks the benchmark's baselines end to end, on one short comparison: a run saves a
# baseline; a second run compares with it (--check passes unless a row regressed); a copy of
# the baseline in which the subject did e^3 (about 20) times better must make --check exit
# with status 2; a baseline that does not exist is a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
# The debug build of the test stage, as the smoke run's: only the baselines' handling is checked.
bench=".build/debug/Benchmarks"
filter="promise create"
rm -f .benchmarks/ci.json .benchmarks/ci-shifted.json
"$bench" --debug-build --quick --rounds 8 --filter "$filter" --save-baseline ci > /dev/null
"$bench" --debug-build --quick --rounds 8 --filter "$filter" --baseline ci > /dev/null
swift .ci/shift-baseline.swift .benchmarks/ci.json .benchmarks/ci-shifted.json 3
status=0
"$bench" --debug-build --quick --rounds 8 --filter "$filter" --baseline ci-shifted --check > /dev/null || status=$?
[ "$status" = 2 ] || { echo "--check against a better baseline exited $status, not 2"; exit 1; }
status=0
"$bench" --debug-build --quick --rounds 8 --filter "$filter" --baseline no-such-baseline 2> /dev/null > /dev/null || status=$?
[ "$status" != 0 ] || { echo "a missing baseline was accepted"; exit 1; }
rm -f .benchmarks/ci.json .benchmarks/ci-shifted.json
echo "baselines: saved, compared, a regression fails --check (exit 2), a missing one is refused"
