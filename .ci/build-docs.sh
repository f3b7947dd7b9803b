#!/usr/bin/env bash
# Builds the DocC documentation of the library modules with the toolchain's `docc`, from
# the symbol graphs of a debug build (`swift package dump-symbol-graph`). Any warning,
# such as a broken link or a symbol that does not resolve, fails the build.
# Usage: .ci/build-docs.sh [Module ...]   (default: every library module)
# Output: .build/docs/<Module>.doccarchive (preview one with `docc preview`).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(Bolts BoltsNIO BoltsServer BoltsAppLinks)
out=.build/docs
rm -rf "$out" && mkdir -p "$out"
log="$out/dump-symbol-graph.log"
swift package dump-symbol-graph --minimum-access-level public >"$log" 2>&1 || { cat "$log"; exit 1; }
graphs=$(sed -n 's/.*Files written to \(.*\)$/\1/p' "$log" | tail -1)
[ -d "$graphs" ] || { cat "$log"; echo "build-docs: no symbol graph directory in the output above"; exit 1; }
for module in "${modules[@]}"; do
    # The module's own graph and its extensions of other modules (Module@Other).
    mkdir -p "$out/graphs/$module"
    cp "$graphs/$module.symbols.json" "$out/graphs/$module/"
    for extension in "$graphs/$module"@*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$out/graphs/$module/"
    done
    echo "== $module"
    docc convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$out/graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.bolts.$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors
done
