#!/usr/bin/env bash
# kb serve as a chat app's model endpoint, driven by OpenAI's own Python client: runs
# Tests/Client/*.py against the kb binary in KB_BIN (default: .build/debug/kb, built if missing),
# each with a stub upstream model on loopback. KB_TEST_DB chooses the index (default: a SQLite
# file in a temporary folder; a postgres:// URL runs them on PostgreSQL).
#
#   scripts/client-test.sh
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages python3-venv
ensure_test_venv

KB_BIN="${KB_BIN:-$KB_ROOT/.build/debug/kb}"
if [ ! -x "$KB_BIN" ]; then
    say "Building kb"
    swift build --product kb -Xcc -O2 >/dev/null
fi
export KB_BIN

status=0
for test in Tests/Client/*.py; do
    say "Client: $test${KB_TEST_DB:+ on ${KB_TEST_DB%%://*}}"
    "$TEST_PYTHON" "$test" || status=1
done
exit "$status"
