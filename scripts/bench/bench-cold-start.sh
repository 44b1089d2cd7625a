#!/usr/bin/env bash
# A cold start: for each local model (multilingual-e5-small, the default, and all-MiniLM-L6-v2),
# `kb serve` (release build, query cache off) is started on the sample corpus TRIALS times; from
# the moment /healthz answers 200, 100 POST /v1/context requests at 8 connections (distinct turns,
# scripts/bench/bench_serve_queries.py), then 1,000 more (scripts/bench/bench_cold_start.py). Reports the time
# to ready and the p50/p99 of the first 100 beside the next 1,000; the goal is the first 100's p99
# within 2× the next 1,000's. Writes bench-results/cold-start.json.
#
#   scripts/bench/bench-cold-start.sh [TRIALS]     (default 3)
#   KB_BIN=path uses that kb instead of building a release one.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
bash scripts/install-model.sh
bash scripts/install-model.sh all-MiniLM-L6-v2
TRIALS="${1:-3}"
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    say "Building kb (release)"
    kb_build --product kb >/dev/null
    KB="$KB_BIN_DIR/kb"
fi
mkdir -p bench-results
JSON="["
printf "%-24s %6s %9s %12s %12s %12s %12s %8s\n" model trial "ready s" "first p50" "first p99" "next p50" "next p99" "ratio"
for MODEL in multilingual-e5-small all-MiniLM-L6-v2; do
    new_service_workdir cold
    export KB_DB="$WORK/kb.sqlite"
    "$KB" ingest corpus --model "$MODEL" --tags-from corpus/tags.yaml >/dev/null
    "$KB" bot create astro --system-prompt "You are a careful astrology tutor." --source corpus --json >/dev/null
    python3 scripts/bench/bench_serve_queries.py evaluation/astrology/queries.jsonl 1100 > "$WORK/queries.txt"
    for trial in $(seq "$TRIALS"); do
        sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true   # colder still, where allowed
        STARTED=$(python3 -c 'import time; print(time.time())')
        KB_QUERY_CACHE_MB=0 "$KB" serve --port "$PORT" --token "$TOKEN" 2>"$WORK/serve.log" &
        SERVER=$!
        LINE=$(python3 scripts/bench/bench_cold_start.py "$URL" "$TOKEN" "$WORK/queries.txt" "$STARTED")
        stop_sample_server
        read -r READY P50A P99A P50B P99B <<<"$(python3 -c "
import json; r = json.loads('''$LINE'''); print(r['ready_s'], r['first_p50_ms'], r['first_p99_ms'], r['next_p50_ms'], r['next_p99_ms'])")"
        RATIO=$(python3 -c "print(round($P99A / max($P99B, 0.01), 2))")
        printf "%-24s %6s %9s %12s %12s %12s %12s %8s\n" "$MODEL" "$trial" "$READY" "$P50A" "$P99A" "$P50B" "$P99B" "$RATIO"
        JSON+="$(python3 -c "import json; r = json.loads('''$LINE'''); r.update(model='$MODEL', trial=$trial); print(json.dumps(r))"),"
    done
    stop_sample_server
    rm -rf "$WORK"
done
echo "${JSON%,}]" > bench-results/cold-start.json
