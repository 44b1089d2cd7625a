#!/usr/bin/env bash
# Load benchmark of `kb serve` with traffic that looks like a chat service's: the release build on
# loopback with the sample corpus (local model), a bot over the corpus, 50 users with memories, and
# POST /v1/context driven by wrk (from Debian) with QUERIES distinct user turns (the project's own
# evaluation queries and templated questions, scripts/bench/bench_serve_queries.py), cycled in order, at
# 1, 8, 32 and 64 connections. Then a mixed run at 32 connections where one request in ten adds a
# new memory; every add the server acknowledged must be there afterwards.
#
# Prints requests/s, p50/p99 latency and errors (socket errors and timeouts, non-2xx answers) per
# run; writes them as JSON to bench-results/serve.json. Then compares what wrk counted with what
# the service counted itself (GET /metrics, and `kb usage` from the request log), and measures
# what the request log costs: c=32 runs alternately with the log and with --no-request-log.
#
#   scripts/bench/bench-serve.sh [SECONDS_PER_RUN]     (default 10; QUERIES=1200 distinct turns)
#   scripts/bench/bench-serve.sh --scale [SNIPPETS] [SECONDS_PER_RUN]
#                                                 a bot over SNIPPETS (default 100,000) and 10,000
#                                                 users × 10 memories: scripts/bench/bench-serve-scale.sh
[ "${1:-}" = "--scale" ] && { shift; exec bash "$(dirname "$0")/bench-serve-scale.sh" "$@"; }
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages wrk
bash scripts/install-model.sh
DURATION="${1:-10}"
QUERIES="${QUERIES:-1200}"
USERS=50

prepare_sample_service bench
start_sample_server

say "Adding memories for $USERS users; writing $QUERIES distinct queries"
python3 - "$URL" "$TOKEN" "$USERS" <<'PY'
import json, sys, urllib.request
url, token, users = sys.argv[1], sys.argv[2], int(sys.argv[3])
facts = ["has Venus in the tenth house and wants a career in music", "is a Scorpio rising who hates surprises",
         "asked about moving to Lisbon last month", "is studying for a PhD in chemistry", "has Saturn returning this year",
         "worries about money and a new mortgage"]
for u in range(users):
    for f in range(3):
        body = json.dumps({"content": f"User u{u} {facts[(u + f) % len(facts)]} (note {f}).", "scope": f"user:u{u}"}).encode()
        request = urllib.request.Request(url + "/v1/memories", data=body, method="POST",
                                         headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
        urllib.request.urlopen(request).read()
PY
write_context_load "$QUERIES" "$USERS"

say "POST /v1/context, $DURATION s per run, $QUERIES distinct queries (kb serve on 127.0.0.1:$PORT, $(nproc) cores)"
printf "%-22s %10s %12s %10s %10s %14s %12s\n" run requests "requests/s" "p50 ms" "p99 ms" "socket errors" "non-2xx"
RESULTS="["
run() {   # NAME CONNECTIONS MIXED
    wrk_context "$2" "$DURATION" "$3"
    printf "%-22s %10s %12s %10s %10s %14s %12s\n" "$1" "$REQUESTS" "$RPS" "$P50" "$P99" "$SOCKET" "$STATUS"
    RESULTS+="{\"run\":\"$1\",\"connections\":$2,\"requests\":$REQUESTS,\"rps\":$RPS,\"p50_ms\":$P50,\"p99_ms\":$P99,\"socket_errors\":$SOCKET,\"non_2xx\":$STATUS},"
}
CONTEXT_REQUESTS=0
for CONNECTIONS in 1 8 32 64; do
    run "context c=$CONNECTIONS" "$CONNECTIONS" 0
    CONTEXT_REQUESTS=$((CONTEXT_REQUESTS + REQUESTS))
done
run "mixed 10% adds c=32" 32 1
MIXED_REQUESTS=$REQUESTS

say "Checking that every acknowledged memory is there"
ACKNOWLEDGED=$(grep -c . "$WORK/acknowledged.txt" || true)
MISSING=0
while read -r id; do
    [ -z "$id" ] && continue
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$URL/v1/memories/$id")
    [ "$code" = "200" ] || MISSING=$((MISSING + 1))
done < "$WORK/acknowledged.txt"
echo "acknowledged memory adds: $ACKNOWLEDGED; missing afterwards: $MISSING"
grep -iE "error|warning" "$WORK/serve.log" | head -5 >&2 || true

say "What the service counted: GET /metrics and kb usage (the request log), beside wrk's counts"
METRICS_CONTEXT=$(curl -sf -H "Authorization: Bearer $TOKEN" "$URL/metrics" \
    | awk '/^kb_http_requests_total\{route="POST \/v1\/context",status="200"\}/ { print $NF }')
stop_sample_server   # flushes the request log
USAGE_CONTEXT=$("$KB" usage --since 1h --by route --json | python3 -c "
import json, sys
rows = {r['key']: r for r in json.load(sys.stdin)['rows']}
print(rows.get('POST /v1/context', {}).get('requests', 0))")
ACK=$(grep -c . "$WORK/acknowledged.txt" || true)
echo "wrk: $CONTEXT_REQUESTS context requests in the context runs + $MIXED_REQUESTS in the mixed run ($ACK of them memory adds): $((CONTEXT_REQUESTS + MIXED_REQUESTS - ACK)) context requests"
echo "/metrics: kb_http_requests_total{route=\"POST /v1/context\",status=\"200\"} = ${METRICS_CONTEXT:-0}; kb usage: POST /v1/context = $USAGE_CONTEXT"
echo "(wrk counts the answers it read before its run ended; the service also counts the few it answered after)"

say "What the request log costs: c=32, $DURATION s, alternately with the log and with --no-request-log"
printf "%-22s %12s %10s\n" run "requests/s" "p99 ms"
LOG_RUNS="["
for round in 1 2 3; do
    for mode in on off; do
        if [ "$mode" = off ]; then KB_SERVE_ARGS="--no-request-log" start_sample_server; else start_sample_server; fi
        wrk_context 32 "$DURATION" 0
        stop_sample_server
        printf "%-22s %12s %10s\n" "log $mode ($round)" "$RPS" "$P99"
        LOG_RUNS+="{\"log\":\"$mode\",\"rps\":$RPS,\"p99_ms\":$P99},"
    done
done

mkdir -p bench-results
echo "${RESULTS%,}]" | python3 -c "
import json, sys
runs = json.load(sys.stdin)
log_runs = ${LOG_RUNS%,}]
median = lambda xs: sorted(xs)[len(xs) // 2]
on, off = median([r['rps'] for r in log_runs if r['log'] == 'on']), median([r['rps'] for r in log_runs if r['log'] == 'off'])
print(f'request log: median {on:.0f} requests/s with it, {off:.0f} without ({(off - on) / off * 100:+.1f}% cost)')
json.dump({'queries': $QUERIES, 'seconds_per_run': $DURATION, 'cores': $(nproc), 'runs': runs,
           'acknowledged_adds': $ACKNOWLEDGED, 'missing_adds': $MISSING,
           'counted': {'wrk_context': $CONTEXT_REQUESTS, 'wrk_mixed': $MIXED_REQUESTS, 'metrics_context_200': ${METRICS_CONTEXT:-0},
                       'usage_context': $USAGE_CONTEXT},
           'request_log': {'runs': log_runs, 'median_rps_on': on, 'median_rps_off': off}}, open('bench-results/serve.json', 'w'), indent=2)"
[ "$MISSING" -eq 0 ] || { echo "error: $MISSING acknowledged memories are missing" >&2; exit 1; }
