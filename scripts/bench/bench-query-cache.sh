#!/usr/bin/env bash
# The query-embedding cache under a chat app's traffic: the release build with the sample corpus
# (local model) and the bot astro, as scripts/bench/bench-serve.sh sets it up; conversations of TURNS
# turns, each turn a POST /v1/context with the conversation so far as its history
# (scripts/bench/bench_query_cache.py), 8 at a time — once with the cache off (KB_QUERY_CACHE_MB=0,
# every planned query embedded as before the cache) and once with it on (the default). Prints
# requests/s, p50/p99, the CPU kb spent per request and the cache's hit rate (from /metrics), and
# writes bench-results/query-cache.json.
#
#   scripts/bench/bench-query-cache.sh [CONVERSATIONS] [TURNS]     (default 150 conversations of 6 turns)
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
bash scripts/install-model.sh
CONVERSATIONS="${1:-150}"
TURNS="${2:-6}"

prepare_sample_service query-cache
trap 'stop_sample_server; rm -rf "$WORK"' EXIT
python3 scripts/bench/bench_serve_queries.py evaluation/astrology/queries.jsonl 1200 > "$WORK/queries.txt"
mkdir -p bench-results
RESULTS=()
for cache in 0 64; do
    say "Cache ${cache} MB: $CONVERSATIONS conversations of $TURNS turns, 8 at a time"
    KB_QUERY_CACHE_MB=$cache start_sample_server
    # A first conversation loads the model and warms the index, outside the figures.
    python3 scripts/bench/bench_query_cache.py "$URL" "$TOKEN" "$SERVER" "$WORK/queries.txt" 8 2 8 >/dev/null
    LINE=$(python3 scripts/bench/bench_query_cache.py "$URL" "$TOKEN" "$SERVER" "$WORK/queries.txt" "$CONVERSATIONS" "$TURNS" 8)
    echo "$LINE"
    RESULTS+=("{\"cache_mb\":$cache,\"result\":$LINE}")
    stop_sample_server
done
(IFS=,; echo "[${RESULTS[*]}]") > bench-results/query-cache.json
echo "bench-results/query-cache.json"
