#!/usr/bin/env bash
# Quick start, step 2: runs kb's whole test suite. Installs missing system packages and the
# local model first. Then the suites that open indexes (KBKitTests, KBServerTests, kbTests) run
# again against PostgreSQL + pgvector: a throwaway server from scripts/postgres.sh (PyPI pgserver).
# Where it cannot be installed (KB_TEST_POSTGRES=0, or no x86_64 Linux wheel) that second run is
# skipped with a message; in CI it must run.
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

say "Running the tests (SQLite)"
swift test --skip-build "$@"

if [ "${KB_TEST_POSTGRES:-1}" = "0" ]; then
    say "Skipping the PostgreSQL run (KB_TEST_POSTGRES=0)"
    exit 0
fi
PG_FOLDER="$(mktemp -d)"
trap 'bash "$KB_ROOT/scripts/postgres.sh" stop "$PG_FOLDER" >/dev/null 2>&1 || true' EXIT
if ! PG_URL="$(bash "$KB_ROOT/scripts/postgres.sh" start "$PG_FOLDER")"; then
    if [ "${CI:-}" = "true" ]; then
        echo "error: PostgreSQL for the tests could not be started (scripts/postgres.sh)." >&2
        exit 1
    fi
    say "Skipping the PostgreSQL run: scripts/postgres.sh could not start a server here"
    exit 0
fi
say "Running the tests again against PostgreSQL ($PG_URL)"
KB_TEST_BACKEND=postgres KB_TEST_POSTGRES_URL="$PG_URL" swift test --skip-build --filter "KBKitTests|KBServerTests|kbTests" "$@"
