#!/usr/bin/env bash
# Load benchmark of `kb serve`: starts the release build on loopback with the sample corpus (local
# model), then drives POST /v1/context with wrk (from Debian) at 1, 8 and 64 connections and prints
# requests/s, p50/p99 latency and error counts (socket errors, timeouts, non-2xx answers).
#
#   scripts/bench-serve.sh [SECONDS_PER_RUN]     (default 10)
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages wrk
bash scripts/install-model.sh
DURATION="${1:-10}"

say "Building kb (release)"
swift build -c release --product kb >/dev/null
KB="$KB_ROOT/.build/release/kb"

WORK="$(mktemp -d)"
PORT=$(( 20000 + RANDOM % 20000 ))
TOKEN="bench-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
export KB_DB="$WORK/bench.sqlite"

say "Indexing corpus/ with the local model"
"$KB" ingest corpus --tags-from corpus/tags.yaml >/dev/null
"$KB" bot create astro --system-prompt "You are a careful astrology tutor." --source corpus --json >/dev/null
"$KB" memory add --scope user:ada "Ada has Venus in the tenth house and wants a career in music." >/dev/null

"$KB" serve --port "$PORT" --token "$TOKEN" --reports corpus/reports 2>"$WORK/serve.log" &
SERVER=$!
for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
    sleep 0.1
done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$WORK/serve.log" >&2; echo "error: kb serve did not start" >&2; exit 1; }

cat > "$WORK/context.lua" <<LUA
wrk.method = "POST"
wrk.path = "/v1/context"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $TOKEN"
local queries = {
  "what does Venus in my tenth house mean for my job",
  "when will Saturn return",
  "is this a good year to marry",
  "how do I read an ephemeris",
  "my mum and the Moon",
  "which planet rules higher education",
}
local n = 0
request = function()
  n = n + 1
  local q = queries[(n % #queries) + 1]
  return wrk.format(nil, nil, nil, '{"bot":"astro","user":"ada","budget":1200,"query":"' .. q .. '"}')
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %.2f %.2f %.2f %d %d\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
end
LUA

say "POST /v1/context, $DURATION s per run (kb serve on 127.0.0.1:$PORT, $(nproc) cores)"
printf "%-12s %10s %12s %10s %10s %14s %12s\n" connections requests "requests/s" "p50 ms" "p99 ms" "socket errors" "non-2xx"
for CONNECTIONS in 1 8 64; do
    THREADS=$(( CONNECTIONS < 2 ? 1 : 2 ))
    LINE=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --timeout 10s -s "$WORK/context.lua" "http://127.0.0.1:$PORT" | grep '^RESULT')
    read -r _ REQUESTS RPS P50 P99 SOCKET STATUS <<<"$LINE"
    printf "%-12s %10s %12s %10s %10s %14s %12s\n" "$CONNECTIONS" "$REQUESTS" "$RPS" "$P50" "$P99" "$SOCKET" "$STATUS"
done
