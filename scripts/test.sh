#!/usr/bin/env bash
# Quick start, step 2: runs kb's whole test suite. Installs missing system packages and the
# local model first.
#
#   scripts/test.sh [extra swift test arguments]
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"

ensure_swift
ensure_system_packages
# The local model's tests compare it with the reference fixture, so it must be installed.
bash "$KB_ROOT/scripts/install-model.sh"

say "Building kb and its tests"
mkdir -p .build
if ! swift build --build-tests >.build/test-build.log 2>&1; then
    grep -E "error|warning: unre" .build/test-build.log >&2 || tail -n 40 .build/test-build.log >&2
    echo "error: the build failed; the whole log is in .build/test-build.log" >&2
    exit 1
fi

say "Running the tests"
swift test --skip-build "$@"
