#!/usr/bin/env bash
# Instruction counts per operation (callgrind) for each Bolts task operation and its
# SwiftNIO reference, as a Markdown table. Counts do not move with the machine's load,
# unlike times. Usage: Benchmarks/Tools/instruction-counts.sh [path/to/Benchmarks]
# (default: .build-bench/release/Benchmarks; build it with
#  swift build -c release --scratch-path .build-bench --product Benchmarks).
set -euo pipefail
source_binary=${1:-.build-bench/release/Benchmarks}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the DWARF the Swift toolchain writes: use a copy without it.
cp "$source_binary" "$work/Benchmarks" && strip -g "$work/Benchmarks"
iterations=5000

echo "| operation | Bolts instructions/op | SwiftNIO instructions/op | Bolts ÷ SwiftNIO |"
echo "| --- | ---: | ---: | ---: |"
# label | --filter (selects one Bolts scenario and its reference) | operations per run
# (iterations, or the scenario's fixed count). With --rounds 2 the Bolts scenario runs three
# times (warm-up and one per round) and its reference five (warm-up, then twice a round).
while IFS='|' read -r label filter operations; do
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/Benchmarks" \
        --rounds 2 --iterations "$iterations" --filter "$filter" >/dev/null 2>&1
    callgrind_annotate --inclusive=yes "$work/out" >"$work/annotated" 2>/dev/null
    largest() {
        grep -E "s10Benchmarks[0-9]+$1[A-Za-z]+C.*run10iterations" "$work/annotated" |
            awk '{ gsub(",", "", $1); if ($1 > m) m = $1 } END { print m + 0 }'
    }
    awk -v l="$label" -v b="$(largest Bolts)" -v n="$(largest NIO)" -v o="$operations" \
        'BEGIN { printf "| %s | %d | %d | %.2f× |\n", l, b / (3 * o), n / (5 * o), (b / 3) / (n / 5) }'
done <<LIST
continueWith on a completed task (NIO: map)|Bolts continueWith on a completed|$iterations
continueOnSuccessWith on a completed task (NIO: map)|Bolts continueOnSuccessWith on a completed|$iterations
continuation returning a task on a completed task (NIO: flatMap)|Bolts continueOnSuccessWithTask|$iterations
promise + one waiting continuation + complete|Bolts TaskCompletionSource + 1 waiting|$iterations
promise + 8 waiting continuations + complete|Bolts TaskCompletionSource + 8 waiting|$iterations
chain of 10^6 pending continuations, per link|Bolts chain|1000000
promise create + complete|Bolts TaskCompletionSource create|$iterations
whenAll over 10^4, set inline, per input (NIO: andAllSucceed)|Bolts whenAll over 10^4 sources, set inline by the caller (per|10000
whenAll over 10^4, set inline from the last, per input (NIO: andAllSucceed)|Bolts whenAll over 10^4 sources, set inline by the caller from the last|10000
whenAll collecting values over 10^4, per input (NIO: whenAllSucceed)|Bolts whenAllResult|10000
LIST
