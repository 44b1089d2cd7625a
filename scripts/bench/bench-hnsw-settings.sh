#!/usr/bin/env bash
# HNSW settings on a PostgreSQL index against its exact answers: for each "M EF_CONSTRUCTION
# EF_SEARCH" given, `kb index build --hnsw` with them (build seconds), then recall@10 of vector
# searches over the benchmark's questions (the first QUERIES_RECALL, without and with the bot's
# filter) against the exact ranking of the same index, and the p50 of a search.
#
#   KB_PG_URL=postgres://… scripts/bench/bench-hnsw-settings.sh "16 64 800" "16 128 100" …
#
# KB_PG_URL must hold a shelf (scripts/bench/bench-postgres-scale.sh exports one; its bot is `scale`).
# The index is left built with the last settings given.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
[ -n "${KB_PG_URL:-}" ] || { echo "error: set KB_PG_URL to a PostgreSQL index holding a shelf (see scripts/bench/bench-postgres-scale.sh)" >&2; exit 2; }
[ $# -gt 0 ] || set -- "16 64 800" "16 128 100" "16 128 200"
ensure_swift
QUERIES_RECALL="${QUERIES_RECALL:-100}"
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else kb_build --product kb >/dev/null; KB="$KB_BIN_DIR/kb"; fi
new_service_workdir hnsw
export BENCH_BOT=scale
write_context_load 1200 1000
SERVER=""
cleanup() { [ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
answers() {   # OUT-PREFIX
    KB_QUERY_CACHE_MB=0 KB_DB="$KB_PG_URL" "$KB" serve --port "$PORT" --token "$TOKEN" 2>"$WORK/serve.log" &
    SERVER=$!
    until curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz"; do
        kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/serve.log" >&2; exit 1; }
        sleep 0.1
    done
    python3 scripts/bench/bench_recall.py search "http://127.0.0.1:$PORT" "$TOKEN" "$WORK/queries.txt" "$QUERIES_RECALL" "$WORK/$1-all.json"
    python3 scripts/bench/bench_recall.py search "http://127.0.0.1:$PORT" "$TOKEN" "$WORK/queries.txt" "$QUERIES_RECALL" "$WORK/$1-bot.json" scale
    kill "$SERVER"; wait "$SERVER" 2>/dev/null || true; SERVER=""
}
say "Exact answers ($QUERIES_RECALL questions, without and with the bot's filter)"
KB_DB="$KB_PG_URL" "$KB" index drop >/dev/null 2>&1 || true
answers exact
printf "%-4s %-16s %-10s %-9s %-13s %-13s %s\n" m ef_construction ef_search "build s" "recall all" "recall bot" "p50 ms"
for settings in "$@"; do
    read -r M EFC EFS <<<"$settings"
    KB_DB="$KB_PG_URL" "$KB" index build --hnsw --m "$M" --ef-construction "$EFC" --ef-search "$EFS" --json > "$WORK/build.json"
    answers hnsw
    python3 - "$WORK" "$M" "$EFC" "$EFS" <<'PY'
import json, subprocess, sys
work, m, efc, efs = sys.argv[1:5]
build = json.load(open(f"{work}/build.json"))
def recall(kind):
    out = subprocess.run(["python3", "scripts/bench/bench_recall.py", "recall", f"{work}/exact-{kind}.json", f"{work}/hnsw-{kind}.json"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)
a, b = recall("all"), recall("bot")
p50 = a["approximate_p50_ms"]
print(f"{m:<4} {efc:<16} {efs:<10} {build['seconds']:<9.1f} {a['recall_at_10']:<13.3f} {b['recall_at_10']:<13.3f} {p50}")
PY
done
