#!/usr/bin/env bash
# What a block costs the pool, during it and after it (Benchmarks/Tools/block-cost.c says
# what each figure is), for the C core of a checkout: this one by default, or the one given.
# Usage: Benchmarks/Tools/block-cost.sh [checkout] [tick|burst|convoy]...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-$here/../..}
[ $# -gt 0 ] && shift
out=$(mktemp -d)
. "$here/core.sh"
build_core "$root" "$out/block-cost" "$here/block-cost.c"
"$out/block-cost" "$@"
