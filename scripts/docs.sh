#!/usr/bin/env bash
# Builds KBKit's documentation (DocC: the symbols' doc comments and the articles in
# Sources/KBKit/KBKit.docc) with warnings as errors: a broken link, an undocumented parameter of
# a documented function or a bad article fails. scripts/test.sh runs it.
#
# It documents the KBKit module that kb's one build made (lib.sh's kb_build; built first if
# needed): the toolchain's swift-symbolgraph-extract reads KBKit's public symbols from it, with the
# search paths and module maps of KBKit's own compilation (from SwiftPM's build description), and
# `docc convert` builds the archive. (SwiftPM's DocC plugin would build every module again, with
# other flags, in the same build folder — undoing the build the tests and benchmarks share.)
#
#   scripts/docs.sh                 # check; the archive is .build/docs/KBKit.doccarchive
#   scripts/docs.sh --preview       # serve the documentation on http://localhost:8080
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages
TOOLS="$(dirname "$(readlink -f "$(command -v swift)")")"
OUT="$KB_ROOT/.build/docs"
LOG="$OUT/docs.log"
mkdir -p "$OUT"
# KB_DOCS_SKIP_BUILD=1: KBKit is built already (scripts/test.sh, whose other phases use the build
# folder meanwhile).
if [ "${KB_DOCS_SKIP_BUILD:-0}" != "1" ]; then
    say "Building KBKit (kb's one build)"
    kb_build --target KBKit >"$LOG" 2>&1 || { tail -n 40 "$LOG" >&2; exit 1; }
fi

say "KBKit's symbols"
rm -rf "$OUT/symbol-graphs"
mkdir -p "$OUT/symbol-graphs"
# KBKit's compile command in the build description: its search paths, module maps and target.
mapfile -t ARGS < <(python3 - "$KB_ROOT/.build/$KB_CONFIGURATION.yaml" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if "args: [" in line and '"-module-name","KBKit"' in line:
        args = json.loads(line[line.index("["):])
        break
else:
    sys.exit(f"error: {sys.argv[1]} has no compilation of KBKit")
i = 0
while i < len(args):
    a = args[i]
    if a in ("-I", "-target", "-module-cache-path", "-Xcc", "-swift-version"):
        print(a); print(args[i + 1]); i += 2; continue
    if a.startswith("-I") and len(a) > 2:
        print(a)
    i += 1
PY
)
"$TOOLS/swift-symbolgraph-extract" -module-name KBKit "${ARGS[@]}" -minimum-access-level public \
    -emit-extension-block-symbols -output-dir "$OUT/symbol-graphs" >>"$LOG" 2>&1 \
    || { tail -n 40 "$LOG" >&2; echo "error: could not read KBKit's symbols; the whole log is $LOG" >&2; exit 1; }

CONVERT=(Sources/KBKit/KBKit.docc --additional-symbol-graph-dir "$OUT/symbol-graphs"
         --fallback-display-name KBKit --fallback-bundle-identifier KBKit)
if [ "${1:-}" = "--preview" ]; then
    exec "$TOOLS/docc" preview "${CONVERT[@]}" --output-path "$OUT/preview"
fi
say "Building KBKit's documentation (DocC, warnings as errors)"
rm -rf "$OUT/KBKit.doccarchive"
if ! "$TOOLS/docc" convert "${CONVERT[@]}" --warnings-as-errors --output-path "$OUT/KBKit.doccarchive" >>"$LOG" 2>&1; then
    grep -E "(error|warning)" -A4 "$LOG" >&2 || tail -n 40 "$LOG" >&2
    echo "error: KBKit's documentation has problems; the whole log is $LOG" >&2
    exit 1
fi
say "KBKit's documentation: ${OUT#"$KB_ROOT"/}/KBKit.doccarchive"
