#!/bin/sh
# Checks that the C core compiles for aarch64 Linux (syntax and types, no link): an
# x86-only builtin or header use fails here. Needs clang and Debian's arm64 C library
# headers (libc6-dev-arm64-cross, linux-libc-dev-arm64-cross); liburcu's headers are
# architecture-generic apart from urcu/config.h, so the host's copy is used as a fallback.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rt="$here/../../CSupport/CBoltsRuntime"
sysroot=/usr/aarch64-linux-gnu
[ -d "$sysroot/include" ] || { echo "missing $sysroot/include: apt-get install -y libc6-dev-arm64-cross linux-libc-dev-arm64-cross"; exit 1; }
status=0
for f in "$rt"/*.c; do
    if clang --target=aarch64-linux-gnu --sysroot="$sysroot" -isystem "$sysroot/include" -std=gnu11 \
        -fsyntax-only -Wall -Wextra -Werror -I"$rt/include" -I"$rt" \
        -idirafter /usr/include/x86_64-linux-gnu -idirafter /usr/include "$f"; then
        echo "aarch64: $(basename "$f") ok"
    else
        status=1
    fi
done
exit $status
