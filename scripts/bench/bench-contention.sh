#!/usr/bin/env bash
# Latency on a busy machine. For each local model (multilingual-e5-small, the default, and
# all-MiniLM-L6-v2): the sample corpus behind `kb serve` (release build, query cache off), POST
# /v1/context at 8 connections (scripts/bench/bench_serve_queries.py's distinct turns, as
# scripts/bench/bench-serve.sh), and `kb eval`'s queries one after another (evaluation/multilingual, or
# the BEIR folder KB_CONTENTION_EVAL names, e.g. ../shared's XQuAD en-de), each quiet and then with competing load: two
# processes spinning at full speed and an ingest of corpus/ into another index in a third,
# restarted as it ends. Reports p50/p99 (eval: p50 and p95, in the p99 column), the CPU seconds the server (or kb eval)
# spent per request and its thread count, and loaded ÷ quiet; writes bench-results/contention.json.
#
#   scripts/bench/bench-contention.sh [SECONDS_PER_RUN]     (default 15)
#   scripts/bench/bench-contention.sh --scale [SNIPPETS] [SECONDS_PER_RUN]
#       the same /v1/context runs on a shelf of SNIPPETS snippets (default 100,000) and USERS
#       users × 10 memories (default 1,000), per model (scripts/bench/shelf.sh, kept in .build/bench-scale),
#       instead of the sample corpus; the eval runs are the sample's alone. Writes
#       bench-results/contention-SNIPPETS.json.
#   KB_BIN=path (and BENCH_BIN for --scale) use binaries built elsewhere.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages wrk time
bash scripts/install-model.sh
bash scripts/install-model.sh all-MiniLM-L6-v2
SCALE=""
if [ "${1:-}" = "--scale" ]; then
    shift
    SCALE="${1:-100000}"; [ $# -eq 0 ] || shift
    USERS="${USERS:-1000}"
    . "$KB_ROOT/scripts/bench/shelf.sh"
fi
DURATION="${1:-15}"
QUERIES=1200
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    say "Building kb (release)"
    kb_build --product kb >/dev/null
    KB="$KB_BIN_DIR/kb"
fi
export KB_BIN="$KB"
if [ -n "$SCALE" ]; then
    if [ -n "${BENCH_BIN:-}" ]; then BENCH="$BENCH_BIN"; else kb_build --product kb-bench >/dev/null; BENCH="$KB_BIN_DIR/kb-bench"; fi
fi
MODELS_DIR="${XDG_DATA_HOME:-$HOME/.local/share}/kb/models"
RESULTS_FILE="bench-results/contention${SCALE:+-$SCALE}.json"
EVAL_SET="${KB_CONTENTION_EVAL:-$KB_ROOT/evaluation/multilingual}"
mkdir -p bench-results
LOAD_PIDS=()

# CPU seconds (user + system) a process has used so far, and its thread count.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
threads_of() { ls "/proc/$1/task" | wc -l; }

start_load() {
    for _ in 1 2; do python3 -c 'while True: pass' & LOAD_PIDS+=($!); done
    ( mkdir -p "$WORK/load"; while true; do rm -f "$WORK/load/other.sqlite"*
        KB_DB="$WORK/load/other.sqlite" "$KB" ingest corpus --model "$MODEL" >/dev/null 2>&1; done ) & LOAD_PIDS+=($!)
    sleep 2
}
stop_load() {
    # The ingest loop first (so that it starts no other ingest), then what it runs.
    for pid in ${LOAD_PIDS[@]+"${LOAD_PIDS[@]}"}; do
        local children
        children=$(pgrep -P "$pid" || true)
        kill "$pid" 2>/dev/null || true
        [ -z "$children" ] || kill $children 2>/dev/null || true
    done
    wait ${LOAD_PIDS[@]+"${LOAD_PIDS[@]}"} 2>/dev/null || true
    LOAD_PIDS=()
}
trap 'stop_load; stop_sample_server; rm -rf "$WORK"' EXIT

JSON="["
printf "%-24s %-7s %9s %9s %9s %12s %8s\n" model load "p50 ms" "p99 ms" "req/s" "CPU ms/req" threads
for MODEL in multilingual-e5-small all-MiniLM-L6-v2; do
    new_service_workdir contention
    trap 'stop_load; stop_sample_server; rm -rf "$WORK"' EXIT
    if [ -n "$SCALE" ]; then
        KB_MODEL_DIR="$MODELS_DIR/$MODEL" ensure_shelf "$SCALE" "$USERS"
        export BENCH_BOT=scale
        write_context_load "$QUERIES" "$USERS"
    else
        export KB_DB="$WORK/kb.sqlite"
        "$KB" ingest corpus --model "$MODEL" --tags-from corpus/tags.yaml >/dev/null
        "$KB" bot create astro --system-prompt "You are a careful astrology tutor." --source corpus --json >/dev/null
        write_context_load "$QUERIES" 50
    fi
    start_sample_server
    if [ -n "$SCALE" ]; then   # the shelf's vectors and postings loaded
        start=$SECONDS
        until grep -q "in memory" "$WORK/serve.log" || [ $((SECONDS - start)) -ge 900 ]; do sleep 0.2; done
    fi
    wrk_context 8 3 >/dev/null   # warm (the cold start is scripts/bench/bench-serve.sh's --cold)
    for LOAD in quiet loaded; do
        [ "$LOAD" = loaded ] && start_load
        before=$(cpu_seconds "$SERVER")
        wrk_context 8 "$DURATION"
        after=$(cpu_seconds "$SERVER")
        THREADS=$(threads_of "$SERVER")
        [ "$LOAD" = loaded ] && stop_load
        CPU=$(python3 -c "print(round(1000 * ($after - $before) / max(1, $REQUESTS), 2))")
        printf "%-24s %-7s %9s %9s %9s %12s %8s\n" "$MODEL context c=8" "$LOAD" "$P50" "$P99" "$RPS" "$CPU" "$THREADS"
        JSON+="{\"model\":\"$MODEL\",\"snippets\":${SCALE:-null},\"run\":\"context c=8\",\"load\":\"$LOAD\",\"p50_ms\":$P50,\"p99_ms\":$P99,\"rps\":$RPS,\"cpu_ms_per_request\":$CPU,\"threads\":$THREADS},"
    done
    stop_sample_server
    [ -z "$SCALE" ] || { rm -rf "$WORK"; continue; }

    # kb eval's queries, one at a time (its index made once, outside the timed runs).
    "$KB" eval "$EVAL_SET" --split test --mode hybrid --model "$MODEL" --db "$WORK/eval.sqlite" --json >/dev/null 2>&1
    for LOAD in quiet loaded; do
        [ "$LOAD" = loaded ] && start_load
        /usr/bin/time -f "%U %S" -o "$WORK/eval.time" "$KB" eval "$EVAL_SET" --split test --mode hybrid --model "$MODEL" \
            --db "$WORK/eval.sqlite" --json > "$WORK/eval.json" 2>/dev/null || true
        [ "$LOAD" = loaded ] && stop_load
        read -r P50 P95 COUNT <<<"$(python3 -c "
import json; r = json.load(open('$WORK/eval.json')); m = r['modes'][0]
print(round(m['latencyP50Milliseconds'], 1), round(m['latencyP95Milliseconds'], 1), r['queries'])")"
        CPU=$(awk -v n="${COUNT:-0}" 'NF == 2 && $1 ~ /^[0-9.]+$/ { printf "%.1f", (n > 0 ? 1000 * ($1 + $2) / n : 0) }' "$WORK/eval.time")
        printf "%-24s %-7s %9s %9s %9s %12s %8s\n" "$MODEL eval" "$LOAD" "$P50" "$P95" "-" "${CPU:-?}" "-"
        JSON+="{\"model\":\"$MODEL\",\"run\":\"eval $(basename "$EVAL_SET")\",\"load\":\"$LOAD\",\"p50_ms\":$P50,\"p95_ms\":$P95,\"cpu_ms_per_query\":${CPU:-null}},"
    done
    rm -rf "$WORK"
done
echo "${JSON%,}]" > "$RESULTS_FILE"
python3 - "$RESULTS_FILE" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
print("\nloaded ÷ quiet:")
for model in sorted({r["model"] for r in rows}):
    for run in sorted({r["run"] for r in rows if r["model"] == model}):
        q = next(r for r in rows if r["model"] == model and r["run"] == run and r["load"] == "quiet")
        l = next(r for r in rows if r["model"] == model and r["run"] == run and r["load"] == "loaded")
        tail = "p99_ms" if "p99_ms" in q else "p95_ms"
        print(f"  {model:24} {run:16} p50 ×{l['p50_ms'] / max(q['p50_ms'], 0.01):.2f}   {tail[:3]} ×{l[tail] / max(q[tail], 0.01):.2f}")
PY
