#!/usr/bin/env bash
# Fuzzes `kb serve` against its own OpenAPI document with Schemathesis (from PyPI, in a throwaway
# virtualenv): the release build on loopback with the sample corpus (local model), a bot, a memory
# and a report template; every operation, every check (no server errors, answers match their
# schemas and statuses, schema-valid requests accepted, schema-violating ones refused, created
# resources found; scripts/fuzz-api.toml says why 422 answers valid data). Exits 1 on any
# failure or if the server died; afterwards the index must pass PRAGMA integrity_check. The full
# output goes to bench-results/fuzz-api.log. Before it, a run with a scoped token (user:ada, the
# bot astro, the sources right): no server error and every answer (403s included) as documented;
# its output goes to bench-results/fuzz-api-scoped.log. Then two runs as a web page would send
# them, with the admin token: from a foreign Origin, and for a foreign Host (DNS rebinding). Every
# answer must be 403 (or 421), as /metrics counts them, and the index's memories, bots, tokens and
# sources must be unchanged (bench-results/fuzz-api-origin.log, fuzz-api-host.log).
#
#   scripts/fuzz-api.sh [EXAMPLES_PER_OPERATION]     (default 100)
#   FUZZ_ARGS="--include-path /mcp" scripts/fuzz-api.sh 300    (Schemathesis options for every run, e.g. one route)
# If kb serve dies, its whole log is kept in bench-results/fuzz-api-serve.log.
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages python3-venv
bash scripts/install-model.sh
EXAMPLES="${1:-100}"
SCHEMATHESIS_VERSION="4.32.5"

prepare_sample_service fuzz

say "Installing Schemathesis $SCHEMATHESIS_VERSION into a throwaway virtualenv"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"

"$KB" memory add "Ada prefers short answers." --scope user:ada --json >/dev/null
# Made before the admin run, which may well delete the bot astro and revoke tokens (its stateful
# phase follows links); the scoped run goes first for the same reason.
SCOPED=$("$KB" token create fuzz-scoped --scope user:ada --bot astro --allow sources)
# Chat completions go to a stub upstream model on loopback (scripts/stub_chat_model.py).
STUB_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 scripts/stub_chat_model.py "$STUB_PORT" --chunks 5 &
STUB=$!
trap 'kill "$STUB" 2>/dev/null || true; stop_sample_server; rm -rf "$WORK"' EXIT
KB_SERVE_ARGS="${KB_SERVE_ARGS:-} --llm openai:stub --llm-url http://127.0.0.1:$STUB_PORT/v1"
start_sample_server

mkdir -p bench-results
status=0
say "Fuzzing $URL with a scoped token (user:ada, bot astro, sources)"
"$WORK/venv/bin/schemathesis" --config-file scripts/fuzz-api.toml run "$URL/openapi.json" \
    --header "Authorization: Bearer $SCOPED" --max-examples "$EXAMPLES" --no-color ${FUZZ_ARGS:-} \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
    > bench-results/fuzz-api-scoped.log 2>&1 || status=$?
sed -n '/^Test cases:/,$p' bench-results/fuzz-api-scoped.log | sed '/^$/d'

# What the service holds, and the statuses /metrics has counted, read with the admin token.
held() {
    for path in "/v1/memories?all=true" /v1/bots /v1/tokens "/v1/sources?limit=500"; do
        curl -sf "$URL$path" -H "Authorization: Bearer $TOKEN"
    done | sha256sum
}
statuses() {   # answers by status, but the metrics' own
    curl -sf "$URL/metrics" -H "Authorization: Bearer $TOKEN" | grep '^kb_http_requests_total' | grep -v 'route="GET /metrics"' \
        | sed -E 's/.*status="([0-9]+)"[^ ]* ([0-9.e+]+)$/\1 \2/' | awk '{ n[$1] += $2 } END { for (k in n) print k, n[k] }' | sort
}
# Fuzzes with the admin token and one more header; every answer must have the status given.
fuzz_as_a_page() {
    local name="$1" header="$2" expected="$3"
    say "Fuzzing $URL as a web page would ($header): every answer $expected, nothing changed"
    # The document is read first: the header applies to every request Schemathesis sends.
    curl -sf "$URL/openapi.json" -H "Authorization: Bearer $TOKEN" >"$WORK/openapi.json"
    local before_held before_statuses
    before_held="$(held)"
    before_statuses="$(statuses)"
    "$WORK/venv/bin/schemathesis" --config-file scripts/fuzz-api.toml run "$WORK/openapi.json" --url "$URL" \
        --header "Authorization: Bearer $TOKEN" --header "$header" --max-examples "$EXAMPLES" --no-color ${FUZZ_ARGS:-} \
        --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
        > "bench-results/fuzz-api-$name.log" 2>&1 || status=$?
    sed -n '/^Test cases:/,$p' "bench-results/fuzz-api-$name.log" | sed '/^$/d'
    local answered
    answered="$(join -a 2 -e 0 -o 0,1.2,2.2 <(echo "$before_statuses") <(statuses) | awk '$3 != $2 { print $1, $3 - $2 }')"
    echo "answers by status during the run: $(echo "$answered" | tr '\n' ' ')"
    if [ -z "$answered" ] || echo "$answered" | awk -v ok="$expected" '$1 != ok { bad = 1 } END { exit !bad }'; then
        echo "error: a request sent as a web page would was answered with another status than $expected" >&2
        status=1
    fi
    if [ "$(held)" != "$before_held" ]; then
        echo "error: the index changed while every request came from a foreign $name" >&2
        status=1
    fi
}
fuzz_as_a_page origin "Origin: http://evil.example" 403
fuzz_as_a_page host "Host: evil.example:$PORT" 421

say "Fuzzing $URL ($EXAMPLES examples per operation)"
"$WORK/venv/bin/schemathesis" --config-file scripts/fuzz-api.toml run "$URL/openapi.json" \
    --header "Authorization: Bearer $TOKEN" --checks all --max-examples "$EXAMPLES" --no-color ${FUZZ_ARGS:-} \
    > bench-results/fuzz-api.log 2>&1 || status=$?
sed -n '/^Test cases:/,$p' bench-results/fuzz-api.log | sed '/^$/d'

if ! kill -0 "$SERVER" 2>/dev/null || ! curl -sf "$URL/healthz" >/dev/null; then
    cp "$WORK/serve.log" bench-results/fuzz-api-serve.log
    echo "error: kb serve is not answering after the run; its log's end (all of it in bench-results/fuzz-api-serve.log):" >&2
    tail -20 "$WORK/serve.log" >&2
    exit 1
fi
stop_sample_server
integrity="$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' "$KB_DB")"
echo "index integrity: $integrity"
[ "$integrity" = "ok" ] || exit 1
if [ "$status" -ne 0 ]; then
    echo "error: Schemathesis found failures; bench-results/fuzz-api.log has each with a curl command to reproduce it." >&2
    exit 1
fi
