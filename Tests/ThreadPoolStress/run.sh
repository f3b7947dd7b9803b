#!/bin/sh
# Builds the C pool stress test against the runtime's sources and runs it three ways:
# optimized (clang), under ThreadSanitizer and under AddressSanitizer+UBSan (gcc, whose
# sanitizer runtimes need no libdispatch); and its idle-yield part (a build option) once
# more, optimized and under ThreadSanitizer, built with BOLTS_POOL_SPIN_YIELD=1.
# Usage: Tests/ThreadPoolStress/run.sh [jobs]
#   or: Tests/ThreadPoolStress/run.sh bench   (ns per job from 1, 2, 4, 8 producers, C only)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rt="$here/../../CSupport/CBoltsRuntime"
out=${TMPDIR:-/tmp}/bolts-pool-stress
mkdir -p "$out"
# Every .c file of the core but concurrency.c (the Swift Concurrency hooks, which need the
# Swift runtime): the task, job, token and diagnostics files and every pool*.c.
src="$rt/job.c $rt/task.c $rt/token.c $rt/diagnostics.c $(ls "$rt"/pool*.c | tr '\n' ' ') $here/pool_stress.c"
libs="-lurcu-memb -lurcu-common -lurcu-cds -lpthread"
# Spares exit after 20 ms rather than 10 s here, so that the spares test sees them go and
# come back within its rounds (BOLTS_POOL_SPARE_IDLE_NS, bolts_tuning.h).
inc="-I$rt/include -I$rt -DBOLTS_POOL_SPARE_IDLE_NS=20000000"
cc=${CC:-clang}
$cc -std=gnu11 -O2 -g -Wall -Wextra $inc -o "$out/release" $src $libs
# The idle yield is a build option (off by default): built and judged on its own.
$cc -std=gnu11 -O2 -g -Wall -Wextra $inc -DBOLTS_POOL_SPIN_YIELD=1 -o "$out/yield" $src $libs
if [ "${1:-}" = bench ]; then
    echo "== jobs from bolts_job_create (the runtime's block magazines, 64-byte class)"; "$out/release" bench
    echo "== jobs from bolts_pool_job_alloc (the pool's magazine depot)"; "$out/release" benchblocks
    exit 0
fi
gnu="-std=gnu11 -g -O1 -Wall -Wextra -Wno-tsan $inc -D_Nullable= -D_Nonnull= -D_Null_unspecified="
gcc $gnu -fsanitize=thread -o "$out/tsan" $src $libs
gcc $gnu -fsanitize=thread -DBOLTS_POOL_SPIN_YIELD=1 -o "$out/tsan-yield" $src $libs
gcc $gnu -fsanitize=address,undefined -fno-sanitize-recover=all -o "$out/asan" $src $libs
echo "== optimized"; "$out/release" "${1:-1000000}"
echo "== optimized, BOLTS_POOL_SPIN_YIELD=1 (the idle yield)"; "$out/yield" yield
echo "== ThreadSanitizer"; "$out/tsan" "${1:-200000}"
echo "== ThreadSanitizer, BOLTS_POOL_SPIN_YIELD=1"; "$out/tsan-yield" yield
echo "== AddressSanitizer + UBSan"; "$out/asan" "${1:-1000000}"
