#!/usr/bin/env bash
# What a block costs the pool, during it and after it (Benchmarks/Tools/block-cost.c says
# what each figure is), for the C core of a checkout: this one by default, or the one given.
# Usage: Benchmarks/Tools/block-cost.sh [checkout] [tick|burst|convoy]...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$here/../..}
[ $# -gt 0 ] && shift
rt="$root/CSupport/CBoltsRuntime"
out=$(mktemp -d)
src="$rt/job.c $rt/task.c $rt/token.c $(ls "$rt"/pool*.c | tr '\n' ' ')"
[ -f "$rt/diagnostics.c" ] && src="$src $rt/diagnostics.c"
clang -std=gnu11 -O2 -DNDEBUG -I"$rt/include" -I"$rt" -o "$out/block-cost" $src "$here/block-cost.c" \
    -lurcu-memb -lurcu-common -lurcu-cds -lpthread -lm
"$out/block-cost" "$@"
