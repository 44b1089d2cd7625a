#!/usr/bin/env bash
# kb in a real browser: Debian's Chromium driven by Playwright (from PyPI, using that Chromium;
# Playwright's own browser download is never used). Runs Tests/Browser/*.py against the kb binary
# in KB_BIN (default: .build/release/kb, built with lib.sh's kb_build). Installs chromium and python3-venv if
# missing, and keeps the Python tools in .build/test-venv (ensure_test_venv in lib.sh).
#
#   scripts/browser-test.sh
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages chromium python3-venv

ensure_test_venv

if [ -z "${KB_BIN:-}" ]; then
    say "Building kb"
    kb_build --product kb >/dev/null
    KB_BIN="$KB_BIN_DIR/kb"
fi
export KB_BIN KB_CHROMIUM="$(command -v chromium)"

status=0
for test in Tests/Browser/*.py; do
    say "Browser: $test"
    "$TEST_PYTHON" "$test" || status=1
done
exit "$status"
