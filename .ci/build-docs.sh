#!/usr/bin/env bash
# Builds the DocC documentation of the library modules with the toolchain's `docc`, from
# the symbol graphs of a debug build (`swift package dump-symbol-graph`, with extension
# blocks, so that a module documents its extensions of other modules' types). Any warning,
# such as a broken link or a symbol that does not resolve, fails the build.
# Usage: .ci/build-docs.sh [Module ...]   (default: every library module)
# Output: .build/docs/<Module>.doccarchive (preview one with `docc preview`).
set -euo pipefail
cd "$(dirname "$0")/.."
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(Bolts BoltsNIO BoltsServer BoltsAppLinks BoltsAppLinksNIO)
out=.build/docs
rm -rf "$out" && mkdir -p "$out"
log="$out/dump-symbol-graph.log"
swift package dump-symbol-graph --minimum-access-level public --emit-extension-block-symbols >"$log" 2>&1 || { cat "$log"; exit 1; }
graphs=$(sed -n 's/.*Files written to \(.*\)$/\1/p' "$log" | tail -1)
[ -d "$graphs" ] || { cat "$log"; echo "build-docs: no symbol graph directory in the output above"; exit 1; }
# Every archive can be linked to; the others resolve their links into Bolts against its
# archive, so Bolts is built first. Such a link starts with a slash (``/Bolts/ThreadPool``)
# unless it names a member that the module itself adds (``Bolts/Executor/eventLoop(_:)``).
# BoltsAppLinksNIO also links into BoltsAppLinks (``/BoltsAppLinks/HTMLAppLinkResolver``),
# whose archive is therefore built before it.
depends_on() {
    case "$1" in
        Bolts) ;;
        BoltsAppLinksNIO) echo Bolts BoltsAppLinks ;;
        *) echo Bolts ;;
    esac
}
ordered=()
for module in "${modules[@]}"; do [ "$module" = Bolts ] && ordered+=(Bolts); done
for module in "${modules[@]}"; do [ "$module" = BoltsAppLinks ] && ordered+=(BoltsAppLinks); done
for module in "${modules[@]}"; do
    case "$module" in Bolts | BoltsAppLinks) ;; *) ordered+=("$module") ;; esac
done
for module in "${ordered[@]}"; do
    # The module's own graph and its extensions of other modules (Module@Other).
    mkdir -p "$out/graphs/$module"
    cp "$graphs/$module.symbols.json" "$out/graphs/$module/"
    for extension in "$graphs/$module"@*.symbols.json; do
        [ -e "$extension" ] && cp "$extension" "$out/graphs/$module/"
    done
    dependency=()
    for other in $(depends_on "$module"); do
        [ -d "$out/$other.doccarchive" ] || { echo "build-docs: $module needs $other built first (list it too)"; exit 1; }
        dependency+=(--dependency "$out/$other.doccarchive")
    done
    echo "== $module"
    docc convert "Sources/$module/$module.docc" "${dependency[@]}" --enable-experimental-external-link-support \
        --additional-symbol-graph-dir "$out/graphs/$module" \
        --fallback-display-name "$module" --fallback-bundle-identifier "org.bolts.$module" \
        --output-path "$out/$module.doccarchive" --warnings-as-errors
done
