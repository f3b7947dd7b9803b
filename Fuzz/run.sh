#!/usr/bin/env bash
# Builds the libFuzzer targets of BoltsAppLinks and runs each for a fixed number of executions.
#
#   Fuzz/run.sh                 # 200000 executions per target
#   FUZZ_RUNS=1000000 Fuzz/run.sh
#
# Each target is compiled with `swiftc -sanitize=fuzzer,address` from the Bolts-free sources of
# Sources/BoltsAppLinks (the parsers do not need the task runtime) plus its own entry point. The seed corpus in
# Fuzz/corpus/<target>/ is copied to a scratch directory first, so the checked-in corpus never changes. Crash
# reproducers are written to the scratch directory, whose path is printed. Exit status: 0 when every target ran
# its executions without a crash, 1 otherwise.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
sources="$here/../Sources/BoltsAppLinks"
runs="${FUZZ_RUNS:-200000}"
work="${FUZZ_WORK_DIR:-$(mktemp -d -t bolts-fuzz.XXXXXX)}"
mkdir -p "$work"

# The parsers' sources: every file of the module (subfolders included) that does not import Bolts.
mapfile -t library < <(find "$sources" -name '*.swift' -print0 | xargs -0 grep -L '^import Bolts' | sort)

status=0
for target in html payload egress; do
    case "$target" in
        html) entry="$here/FuzzHTML.swift" ;;
        payload) entry="$here/FuzzPayload.swift" ;;
        egress) entry="$here/FuzzEgress.swift" ;;
    esac
    binary="$work/fuzz-$target"
    echo "== building $target"
    swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g \
        -module-name BoltsAppLinksFuzz "${library[@]}" "$entry" -o "$binary" 2> "$work/build-$target.log" || {
        grep -v "Cannot export local symbol" "$work/build-$target.log"
        exit 1
    }
    corpus="$work/corpus-$target"
    mkdir -p "$corpus"
    cp "$here/corpus/$target/"* "$corpus/"
    echo "== running $target for $runs executions (artifacts in $work)"
    if "$binary" -runs="$runs" -max_len=16384 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$work/crash-$target-" "$corpus" > "$work/run-$target.log" 2>&1; then
        grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/run-$target.log" || true
        echo "== $target: no crash"
    else
        tail -n 60 "$work/run-$target.log"
        echo "== $target: CRASH (reproducer in $work)"
        status=1
    fi
done
exit $status
