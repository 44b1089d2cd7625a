#!/usr/bin/env bash
# Builds KBKit's documentation (DocC: the symbols' doc comments and the articles in
# Sources/KBKit/KBKit.docc) with warnings as errors: a broken link, an undocumented parameter of
# a documented function or a bad article fails. scripts/test.sh runs it.
#
#   scripts/docs.sh                 # check only
#   scripts/docs.sh --preview       # serve the documentation on http://localhost:8080
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages
if [ "${1:-}" = "--preview" ]; then
    exec swift package --disable-sandbox preview-documentation --target KBKit
fi
say "Building KBKit's documentation (DocC, warnings as errors)"
mkdir -p .build
if ! swift package -Xcc -O2 --disable-sandbox generate-documentation --target KBKit --warnings-as-errors >.build/docs.log 2>&1; then
    grep -E "^(error|warning)" -A4 .build/docs.log >&2 || tail -n 40 .build/docs.log >&2
    echo "error: KBKit's documentation has problems; the whole log is in .build/docs.log" >&2
    exit 1
fi
say "KBKit's documentation: .build/plugins/Swift-DocC/outputs/KBKit.doccarchive"
