#!/usr/bin/env bash
# kb serve as a chat app's model endpoint, driven by OpenAI's own Python client: runs
# Tests/Client/*.py against the kb binary in KB_BIN (default: .build/release/kb, built with lib.sh's kb_build),
# each with a stub upstream model on loopback. KB_TEST_DB chooses the index (default: a SQLite
# file in a temporary folder; a postgres:// URL runs them on PostgreSQL).
#
#   scripts/client-test.sh
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages python3-venv
ensure_test_venv

if [ -z "${KB_BIN:-}" ]; then
    say "Building kb"
    kb_build --product kb >/dev/null
    KB_BIN="$KB_BIN_DIR/kb"
fi
export KB_BIN

status=0
for test in Tests/Client/*.py; do
    say "Client: $test${KB_TEST_DB:+ on ${KB_TEST_DB%%://*}}"
    "$TEST_PYTHON" "$test" || status=1
done
exit "$status"
