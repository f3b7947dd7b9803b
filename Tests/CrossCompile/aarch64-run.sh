#!/usr/bin/env bash
# Builds the C core, the C stress test of the pool (Tests/ThreadPoolStress) and the C
# regression (Model/regress) for aarch64 Linux with clang, links them against Debian's arm64
# liburcu, and runs them under qemu-aarch64 twice: built for plain ARMv8.0 (atomics are
# LL/SC loops, ldaxr/stlxr) and run on an emulated Cortex-A53 (ARMv8.0: no LSE, so the C
# library's and liburcu's atomics, which choose at run time, take their LL/SC paths too), and
# built for ARMv8.1 (LSE atomics: ldadd, cas, swp) and run on qemu's `max` CPU. Outline
# atomics are off in both builds, so the instructions are those of -march. Prints each qemu
# command it runs.
#
# What emulation shows and what it cannot: qemu executes the aarch64 instructions the
# compiler chose for each C11 order (so a wrong instruction selection, an x86-only builtin,
# an LL/SC loop that never succeeds, or an ABI mistake shows here), but it runs them on this
# x86-64 host, whose memory ordering is stronger than ARM's: a missing barrier that only a
# weakly ordered CPU would expose does not show under qemu. Model/relaxed/run.sh checks
# that part under a relaxed memory model.
#
#   Tests/CrossCompile/aarch64-run.sh             # both builds (about two minutes here)
#   AARCH64_STRESS_JOBS=200000 Tests/CrossCompile/aarch64-run.sh
#
# Installs what it needs when missing: Debian's qemu-user, the arm64 C library and libgcc
# for cross linking, and the arm64 liburcu packages (downloaded and unpacked into the work
# directory, not installed). Exit status 0 only when every program passes in both builds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rt="$root/CSupport/CBoltsRuntime"
work="${AARCH64_WORK_DIR:-${TMPDIR:-/tmp}/bolts-aarch64}"
jobs="${AARCH64_STRESS_JOBS:-100000}"
sysroot=/usr/aarch64-linux-gnu
mkdir -p "$work"

export DEBIAN_FRONTEND=noninteractive
need=""
command -v qemu-aarch64 >/dev/null || need="$need qemu-user"
[ -d "$sysroot/include" ] || need="$need libc6-dev-arm64-cross linux-libc-dev-arm64-cross"
ls /usr/lib/gcc-cross/aarch64-linux-gnu/*/crtbeginS.o >/dev/null 2>&1 || need="$need libgcc-12-dev-arm64-cross"
if [ -n "$need" ]; then
    echo "installing:$need"
    apt-get update -qq && apt-get install -y -qq $need >/dev/null
fi

# Clang: the Swift toolchain's, else Debian's.
cc=""
for candidate in /opt/swift/usr/bin/clang "$(command -v clang || true)"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then cc="$candidate"; break; fi
done
[ -n "$cc" ] || { apt-get install -y -qq clang lld >/dev/null; cc=clang; }
ld_flag="-fuse-ld=lld"
"$cc" --target=aarch64-linux-gnu -print-prog-name=ld.lld >/dev/null 2>&1 || ld_flag=""

# liburcu for arm64: Debian's packages, unpacked (not installed: the host keeps its own).
urcu="$work/urcu-arm64"
if [ ! -f "$urcu/usr/lib/aarch64-linux-gnu/liburcu-memb.so" ]; then
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    debs="$work/debs"
    mkdir -p "$debs"
    (cd "$debs" && { apt-get download liburcu-dev:arm64 liburcu8:arm64 >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get download liburcu-dev:arm64 liburcu8:arm64 >/dev/null; }; })
    for d in "$debs"/*.deb; do dpkg-deb -x "$d" "$urcu"; done
fi
urcu_lib="$urcu/usr/lib/aarch64-linux-gnu"
urcu_inc="$urcu/usr/include/aarch64-linux-gnu"
[ -d "$urcu_inc/urcu" ] || urcu_inc="$urcu/usr/include"

# Every .c file of the core except concurrency.c (the Swift Concurrency hooks, which need
# the Swift runtime; the stress test does not use them).
core=$(ls "$rt"/*.c | grep -v '/concurrency\.c$' | tr '\n' ' ')
libs="-L$urcu_lib -lurcu-memb -lurcu-common -lurcu-cds -lpthread"
status=0
for build in "armv8-a cortex-a53" "armv8.1-a max"; do
    set -- $build
    arch=$1
    cpu=$2
    out="$work/$arch"
    mkdir -p "$out"
    flags="--target=aarch64-linux-gnu -march=$arch -mno-outline-atomics $ld_flag -std=gnu11 -O2 -g -Wall -Wextra -I$rt/include -I$rt -isystem $urcu_inc"
    echo "== aarch64 -march=$arch (run on -cpu $cpu): build ($cc)"
    # Spares exit after 20 ms, as in Tests/ThreadPoolStress/run.sh (its spares test).
    nice -n 19 "$cc" $flags -DBOLTS_POOL_SPARE_IDLE_NS=20000000 -o "$out/pool_stress" $core \
        "$root/Tests/ThreadPoolStress/pool_stress.c" $libs
    nice -n 19 "$cc" $flags -D_Nullable= -D_Nonnull= -o "$out/deep_wait" "$root/Model/regress/deep_wait.c" \
        "$rt/task.c" "$rt/job.c" -lpthread
    # The atomics the build chose: LL/SC exclusives on ARMv8.0, LSE instructions on ARMv8.1.
    # (--mattr=+lse: without it an older llvm-objdump prints LSE instructions as <unknown>.)
    objdump_bin=/opt/swift/usr/bin/llvm-objdump
    [ -x "$objdump_bin" ] || objdump_bin=$(command -v llvm-objdump || true)
    if [ -n "$objdump_bin" ]; then
        listing=$("$objdump_bin" -d --mattr=+lse "$out/pool_stress")
        llsc=$(grep -cE '[[:space:]](ldaxr|stlxr|ldxr|stxr)[[:space:]]' <<< "$listing" || true)
        lse=$(grep -cE '[[:space:]](ldadd|cas|swp|ldset|ldclr)[a-z]*[[:space:]]' <<< "$listing" || true)
        echo "   atomics in pool_stress: $llsc LL/SC exclusives, $lse LSE instructions"
    fi
    for prog in "deep_wait" "pool_stress $jobs"; do
        set -- $prog
        cmd="qemu-aarch64 -cpu $cpu -L $sysroot -E LD_LIBRARY_PATH=$urcu_lib $out/$*"
        echo "== aarch64 -march=$arch: $cmd"
        t0=$(date +%s)
        log="$out/$1.log"
        if nice -n 19 $cmd 2>&1 | tee "$log"; [ "${PIPESTATUS[0]}" = 0 ]; then
            echo "-- $1 ($arch): ok in $(( $(date +%s) - t0 )) s"
        elif [ "$1" = pool_stress ] && [ "$(grep -c '^FAIL' "$log")" = 1 ] &&
            grep -q '^FAIL .*attempt == 0' "$log" && [ "$(tail -n 2 "$log" | grep -c '^hops:')" = 1 ]; then
            # The last part of the stress test judges how long hops take against plain jobs
            # (a performance bound, judged in one of two attempts). Under emulation its
            # timings say nothing about the code; every correctness part before it passed.
            echo "-- $1 ($arch): ok in $(( $(date +%s) - t0 )) s (the hops' timing bound is not judged under emulation)"
        else
            echo "-- $1 ($arch): FAILED"
            status=1
        fi
    done
done
[ "$status" = 0 ] && echo "aarch64: every program passed in both builds" || echo "aarch64: FAILED"
exit $status
