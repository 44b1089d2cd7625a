#!/usr/bin/env bash
# The default model's query cost against MiniLM's, same run, same machine: for each model, the
# sample corpus indexed with it (bot astro), `kb serve` with the query cache off, and POST
# /v1/context driven by wrk with distinct user turns (scripts/bench/bench_serve_queries.py) at 1 and 32
# connections; then the bare query embedding (kb-bench embed's short-query latency) for each. The
# models alternate ROUNDS times (default 2) so that a busy host weighs on both alike.
#
#   scripts/bench/bench-query-latency.sh [SECONDS_PER_RUN] [ROUNDS]     (default 10 s, 2 rounds)
#
# KB_BIN measures a given kb binary (KB_BENCH_BIN its kb-bench); KB_PERF=1 records `perf record -g`
# of the default model's server during its one-connection run into .build/perf-query-MODEL.data.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages wrk
bash scripts/install-model.sh >/dev/null
bash scripts/install-model.sh multilingual-e5-small >/dev/null
DURATION="${1:-10}"
ROUNDS="${2:-2}"
QUERIES=1200
MODELS=(all-MiniLM-L6-v2 multilingual-e5-small)

if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    say "Building kb (release)"
    kb_build --product kb >/dev/null && kb_build --product kb-bench >/dev/null
    KB="$KB_BIN_DIR/kb"
fi
BENCH="${KB_BENCH_BIN:-$(dirname "$KB")/kb-bench}"
new_service_workdir latency
for model in "${MODELS[@]}"; do
    say "Indexing corpus/ with $model"
    KB_DB="$WORK/$model.sqlite" "$KB" ingest corpus --model "$model" --tags-from corpus/tags.yaml >/dev/null
    KB_DB="$WORK/$model.sqlite" "$KB" bot create astro --system-prompt "You are a careful astrology tutor." --source corpus --json >/dev/null
done
write_context_load "$QUERIES" 50

printf "%-24s %6s %12s %10s %10s\n" model conns "requests/s" "p50 ms" "p99 ms"
for round in $(seq "$ROUNDS"); do
    for model in "${MODELS[@]}"; do
        export KB_DB="$WORK/$model.sqlite"
        start_sample_server
        for connections in 1 32; do
            PERF=""
            if [ "${KB_PERF:-0}" = 1 ] && [ "$connections" = 1 ] && [ "$round" = 1 ]; then
                perf record -g -o "$KB_ROOT/.build/perf-query-$model.data" -p "$SERVER" -- sleep "$DURATION" >/dev/null 2>&1 &
                PERF=$!
            fi
            wrk_context "$connections" "$DURATION" 0
            [ -z "$PERF" ] || wait "$PERF" 2>/dev/null || true
            printf "%-24s %6s %12s %10s %10s\n" "$model" "$connections" "$RPS" "$P50" "$P99"
        done
        stop_sample_server
    done
done

say "The bare query embedding (kb-bench embed: a short query, one at a time)"
head -50 "$WORK/queries.txt" > "$WORK/sentences.txt"
head -20 "$WORK/queries.txt" > "$WORK/passages.txt"
for round in $(seq "$ROUNDS"); do
    for model in "${MODELS[@]}"; do
        printf "%-24s " "$model"
        KB_MODEL_DIR="${XDG_DATA_HOME:-$HOME/.local/share}/kb/models/$model" "$BENCH" embed "$WORK/passages.txt" "$WORK/sentences.txt" \
            | python3 -c "import json,sys; d=json.load(sys.stdin); print('query: %d tokens, median %.2f ms, p95 %.2f ms' % (d['query_tokens'], d['query_ms_median'], d['query_ms_p95']))"
    done
done
