#!/usr/bin/env bash
# The paced hand-off (paced-handoff.c) of two checkouts' C cores, in interleaved pairs of
# runs (which of the two goes first alternates): for each figure, B's value over A's as
# the geometric mean of the pairs' ratios with its 95 % t-interval. A run is short and
# its figures move by tens of per cent from run to run (where the threads land), so a
# difference of 10 % needs a few hundred pairs.
# Usage: Benchmarks/Tools/paced-handoff.sh A-checkout B-checkout [pairs (300)] [jobs (20000)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 A-checkout B-checkout [pairs] [jobs]"; exit 2; }
pairs=${3:-300}
jobs=${4:-20000}
out=$(mktemp -d)
. "$here/core.sh"
build_core "$1" "$out/a" "$here/paced-handoff.c"
build_core "$2" "$out/b" "$here/paced-handoff.c"
for i in $(seq "$pairs"); do
    if [ $((i % 2)) = 0 ]; then a=$("$out/a" "$jobs"); b=$("$out/b" "$jobs"); else b=$("$out/b" "$jobs"); a=$("$out/a" "$jobs"); fi
    echo "$a $b"
done | python3 -c '
import math, statistics, sys
rows = [list(map(float, line.split())) for line in sys.stdin]
# The 97.5th percentile of Student t for the degrees of freedom of the pairs.
df = len(rows) - 1
# (Past df 9, the value at the start of each band: a little wide, never narrow.)
t = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26}.get(df) or (
    2.23 if df < 20 else 2.09 if df < 30 else 2.05 if df < 60 else 2.00 if df < 120 else 1.98)
for k, name in enumerate(["p50 latency", "p99 latency", "round trip"]):
    logs = [math.log(r[3 + k] / r[k]) for r in rows]
    mean = statistics.mean(logs)
    half = t * statistics.stdev(logs) / math.sqrt(len(logs))
    print(f"{name}: B/A {math.exp(mean):.3f}x [{math.exp(mean - half):.3f}, {math.exp(mean + half):.3f}] over {len(rows)} pairs")
'
