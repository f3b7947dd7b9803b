#!/usr/bin/env bash
# Builds the libFuzzer targets of BoltsAppLinks and runs each for a fixed number of executions.
#
#   Fuzz/run.sh                 # 200000 executions per target
#   FUZZ_RUNS=1000000 Fuzz/run.sh
#
# The targets (Fuzz/Fuzz*.swift) are compiled into one binary with `swiftc -sanitize=fuzzer,address`
# from the Bolts-free sources of Sources/BoltsAppLinks (the parsers do not need the task runtime);
# FUZZ_TARGET picks the target a run feeds (FuzzMain.swift). The seed corpus in
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

binary="$work/fuzz"
echo "== building the targets (html, payload, egress: one binary, FUZZ_TARGET picks one)"
swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g \
    -module-name BoltsAppLinksFuzz "${library[@]}" "$here"/Fuzz*.swift -o "$binary" 2> "$work/build.log" || {
    grep -v "Cannot export local symbol" "$work/build.log"
    exit 1
}

status=0
for target in html payload egress; do
    corpus="$work/corpus-$target"
    mkdir -p "$corpus"
    cp "$here/corpus/$target/"* "$corpus/"
    echo "== running $target for $runs executions (artifacts in $work)"
    if FUZZ_TARGET="$target" "$binary" -runs="$runs" -max_len=16384 -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$work/crash-$target-" "$corpus" > "$work/run-$target.log" 2>&1; then
        grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' "$work/run-$target.log" || true
        echo "== $target: no crash"
    else
        tail -n 60 "$work/run-$target.log"
        echo "== $target: CRASH (reproducer in $work; replay it with FUZZ_TARGET=$target $binary FILE)"
        status=1
    fi
done
exit $status
