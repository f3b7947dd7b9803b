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
# label | --filter (selects one Bolts scenario and its reference) | operations measured
# (warm-up + 1 sample: 2 × iterations, or 2 × the scenario's fixed count)
while IFS='|' read -r label filter operations; do
    valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/Benchmarks" \
        --repetitions 1 --iterations "$iterations" --filter "$filter" >/dev/null 2>&1
    callgrind_annotate --inclusive=yes "$work/out" >"$work/annotated" 2>/dev/null
    largest() {
        grep -E "s10Benchmarks[0-9]+$1[A-Za-z]+C.*run10iterations" "$work/annotated" |
            awk '{ gsub(",", "", $1); if ($1 > m) m = $1 } END { print m + 0 }'
    }
    awk -v l="$label" -v b="$(largest Bolts)" -v n="$(largest NIO)" -v o="$operations" \
        'BEGIN { printf "| %s | %d | %d | %.2f× |\n", l, b / o, n / o, b / n }'
done <<LIST
continueWith on a completed task (NIO: map)|Bolts continueWith on a completed|$((2 * iterations))
continueOnSuccessWith on a completed task (NIO: map)|Bolts continueOnSuccessWith on a completed|$((2 * iterations))
continuation returning a task on a completed task (NIO: flatMap)|Bolts continueOnSuccessWithTask|$((2 * iterations))
promise + one waiting continuation + complete|Bolts TaskCompletionSource + 1 waiting|$((2 * iterations))
promise + 8 waiting continuations + complete|Bolts TaskCompletionSource + 8 waiting|$((2 * iterations))
chain of 10^6 pending continuations, per link|Bolts chain|2000000
promise create + complete|Bolts TaskCompletionSource create|$((2 * iterations))
whenAll over 10^4, set inline, per input (NIO: andAllSucceed)|Bolts whenAll over 10^4 sources, set inline by the caller (per|20000
whenAll over 10^4, set inline from the last, per input (NIO: andAllSucceed)|Bolts whenAll over 10^4 sources, set inline by the caller from the last|20000
whenAll collecting values over 10^4, per input (NIO: whenAllSucceed)|Bolts whenAllResult|20000
LIST
