#!/usr/bin/env bash
# `kb serve` where a real deployment lives (scripts/bench/bench-serve.sh --scale): a bot whose knowledge
# is a shelf of SNIPPETS snippets (default 100,000; real-length text, synthetic vectors under the
# local model's name grouped by book and chapter as embeddings are, the first books around the
# sample corpus's paragraphs, built by `kb-bench scale-index`) and 10,000 users with 10 memories each (real text and real embeddings, through
# `kb memory import`). POST /v1/context with QUERIES
# distinct user turns for distinct users, at 1, 8, 32 and 64 connections; then the resident
# memory of `kb serve` (VmRSS, VmHWM); then 20 new memories, a SIGKILL and a restart (the saved
# search copies catch up with the writes since: time to ready). Before the server starts, the sign
# stage's pass and the keyword ranking alone (kb-bench sign-pass, keyword-ranking). Results in
# bench-results/serve-scale-SNIPPETS.json.
#
#   scripts/bench/bench-serve.sh --scale [SNIPPETS] [SECONDS_PER_RUN]   (default 100000 10; USERS=10000)
#
# KB_BIN and BENCH_BIN run binaries built elsewhere. The index is kept in .build/bench-scale and
# reused by later runs with the same SNIPPETS and USERS.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages wrk
bash scripts/install-model.sh
SNIPPETS="${1:-100000}"
DURATION="${2:-10}"
USERS="${USERS:-10000}"
QUERIES="${QUERIES:-1200}"
export BENCH_BOT=scale

prepare_sample_service_binaries() {
    if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else kb_build --product kb >/dev/null; KB="$KB_BIN_DIR/kb"; fi
    if [ -n "${BENCH_BIN:-}" ]; then BENCH="$BENCH_BIN"; else kb_build --product kb-bench >/dev/null; BENCH="$KB_BIN_DIR/kb-bench"; fi
}
say "Building kb and kb-bench (release)"
prepare_sample_service_binaries
new_service_workdir scale
. "$KB_ROOT/scripts/bench/shelf.sh"
ensure_shelf "$SNIPPETS" "$USERS"

write_context_load "$QUERIES" "$USERS"
# The two stages whose work grows with the shelf, alone on one thread: the sign stage's pass over
# the vectors' sign codes, and the keyword ranking of the benchmark's queries (in memory).
say "Search stages alone: the sign pass (kb-bench sign-pass $SNIPPETS), keyword ranking (kb-bench keyword-ranking)"
"$BENCH" sign-pass "$SNIPPETS"
"$BENCH" keyword-ranking "$KB_DB" "$WORK/queries.txt" 50
start_sample_server
rss() { awk -v key="$1:" '$1 == key { printf "%.0f", $2 / 1024 }' "/proc/$SERVER/status"; }
say "kb serve on the shelf: $(rss VmRSS) MB resident as it starts"
# kb serve loads the vectors (and their int8 copy) and the keyword postings as it starts.
start=$SECONDS
until grep -q "in memory" "$WORK/serve.log" || [ $((SECONDS - start)) -ge 900 ]; do sleep 0.2; done
grep -h "in memory" "$WORK/serve.log" || true
echo "$(rss VmRSS) MB resident once loaded"
# The first request: timed apart, not in the runs.
FIRST=$(curl -s -o /dev/null -w '%{time_total}' --max-time 900 -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
    -d '{"bot":"scale","user":"u0","budget":1200,"query":"what does a saturn return mean"}' "$URL/v1/context")
echo "first request: ${FIRST} s; $(rss VmRSS) MB resident after it"

say "POST /v1/context, $DURATION s per run, $QUERIES distinct queries for $USERS users ($SNIPPETS snippets, $((USERS * 10)) memories, $(nproc) cores)"
printf "%-22s %10s %12s %10s %10s %14s %12s\n" run requests "requests/s" "p50 ms" "p99 ms" "socket errors" "non-2xx"
RESULTS="["
for CONNECTIONS in 1 8 32 64; do
    wrk_context "$CONNECTIONS" "$DURATION" 0
    printf "%-22s %10s %12s %10s %10s %14s %12s\n" "context c=$CONNECTIONS" "$REQUESTS" "$RPS" "$P50" "$P99" "$SOCKET" "$STATUS"
    RESULTS+="{\"connections\":$CONNECTIONS,\"requests\":$REQUESTS,\"rps\":$RPS,\"p50_ms\":$P50,\"p99_ms\":$P99,\"socket_errors\":$SOCKET,\"non_2xx\":$STATUS},"
done
RSS_NOW=$(rss VmRSS); RSS_PEAK=$(rss VmHWM)
echo "kb serve resident memory: $RSS_NOW MB now, $RSS_PEAK MB at its peak"
grep -iE "error|warning" "$WORK/serve.log" | head -5 >&2 || true

# A restart after writes the saved copies do not hold: 20 memories added, then the server killed
# (SIGKILL: it saves nothing as it stops), and started again on the same index.
say "Restart after 20 new memories and a kill (nothing saved at stop)"
# The copies it saved as it started (when they were stale) are written by then.
while [ -n "$(find "$KB_DB-search" -name '*.partial-*' 2>/dev/null)" ]; do sleep 0.5; done
# (New texts each run: a memory a user already has is not added again.)
RUN_ID="$(date +%s)-$RANDOM"
ADDED=0
for n in $(seq 1 20); do
    code=$(curl -s -o "$WORK/memory.json" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
        -d "{\"content\":\"User u$n moved to Porto after the eclipse (restart check $RUN_ID $n).\",\"scope\":\"user:u$n\"}" "$URL/v1/memories")
    [ "$code" = 201 ] && grep -q '"created":true' "$WORK/memory.json" && ADDED=$((ADDED + 1))
done
echo "$ADDED memories added"
[ "$ADDED" -eq 20 ] || { echo "error: POST /v1/memories added $ADDED of 20" >&2; exit 1; }
kill -9 "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
start_sample_server
start=$SECONDS
until grep -q "in memory" "$WORK/serve.log" || [ $((SECONDS - start)) -ge 900 ]; do sleep 0.2; done
RESTART_S=$(sed -n 's/.*in memory (\([0-9.]*\) s).*/\1/p' "$WORK/serve.log" | head -1)
echo "ready again in ${RESTART_S:-?} s; $(rss VmRSS) MB resident"
mkdir -p bench-results
python3 - "${RESULTS%,}]" <<PY
import json, sys
json.dump({"snippets": $SNIPPETS, "users": $USERS, "memories": $((USERS * 10)), "queries": $QUERIES, "seconds_per_run": $DURATION,
           "cores": $(nproc), "runs": json.loads(sys.argv[1]), "first_request_s": $FIRST, "rss_mb": $RSS_NOW, "peak_rss_mb": $RSS_PEAK,
           "restart_after_kill_s": ${RESTART_S:-None}},
          open("bench-results/serve-scale-$SNIPPETS.json", "w"), indent=2)
PY
