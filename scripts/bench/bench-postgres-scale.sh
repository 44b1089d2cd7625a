#!/usr/bin/env bash
# PostgreSQL + pgvector where several servers share one large index, beside SQLite in the same
# run: the shelf of scripts/bench/bench-serve-scale.sh (SNIPPETS snippets, USERS users × 10 memories;
# scripts/bench/shelf.sh) copied into PostgreSQL with `kb export`, an HNSW index built on it
# (`kb index build --hnsw`), and `kb serve` on each engine with one and with two replicas:
#   - time to the first answer (from the process's start to its first /v1/context answer);
#   - resident memory of each kb serve (VmRSS) and of PostgreSQL (the sum of its processes' PSS,
#     so that shared buffers count once);
#   - POST /v1/context at 32 connections (two replicas: 16 each, at once; wrk's two threads split
#     between them): requests/s, p50, p99, and the CPU time kb and PostgreSQL spent per request (user
#     + system, over the run) — measured after WARMUP seconds (default 5) of the same load over other
#     questions, whose requests/s and p99 are reported too (what a replica just started answers);
#   - recall@10 of vector searches through the HNSW index against the exact answers of the same
#     PostgreSQL index (QUERIES_RECALL of the benchmark's questions, with and without the bot's
#     filter), and the latency of each;
#   - the keyword ranking alone over the benchmark's questions on each engine (kb-bench
#     keyword-ranking / postgres-keywords, top 50, one at a time): p50, p99, and on PostgreSQL
#     whether the pruned walk gives the whole ranking's hits and scores (both timed on a warm block
#     cache; the pruned walk also as the questions before left the cache);
#   - disk (the SQLite file; the PostgreSQL database), `kb export` and HNSW build seconds.
# Writes bench-results/postgres-scale-SNIPPETS.json; scripts/bench/plot-postgres-scale.sh draws the curve.
#
#   scripts/bench/bench-postgres-scale.sh [SNIPPETS] [SECONDS_PER_RUN]   (default 1000000 10; USERS=1000)
#
# WARMUP=0 measures from the first request instead (the benchmark's way before 2026-12-05).
# ROUNDS=N (default 1) serves N rounds of the four runs, one after the other (SQLite one and two
# replicas, PostgreSQL one and two, then again), so that a drift of the machine falls on every
# run alike; the JSON's `runs` holds each run's round of median requests/s, `rounds` every one.
#
# The throwaway server's shared buffers go on 2 MB huge pages when run as root with the memory
# for them (scripts/postgres.sh's KB_PG_HUGE_PAGES; HUGE_PAGES=0 keeps ordinary pages); the JSON
# records the huge pages mapped (`huge_pages_mb`).
#
# HNSW_OPTIONS passes options to `kb index build --hnsw` (e.g. "--ef-search 200").
# KB_BIN and BENCH_BIN run binaries built elsewhere. KB_PG_URL uses a running PostgreSQL (with
# pgvector) instead of a throwaway one; its database is exported into only when it does not hold
# the shelf already.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages wrk
bash scripts/install-model.sh >/dev/null
SNIPPETS="${1:-1000000}"
DURATION="${2:-10}"
WARMUP="${WARMUP:-5}"
ROUNDS="${ROUNDS:-1}"
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "error: ROUNDS is '$ROUNDS'; give a whole number of rounds, 1 or more" >&2; exit 2; }
[[ "$WARMUP" =~ ^[0-9]+$ ]] || { echo "error: WARMUP is '$WARMUP'; give whole seconds (0: no warm-up)" >&2; exit 2; }
USERS="${USERS:-1000}"
QUERIES=1200
QUERIES_RECALL="${QUERIES_RECALL:-100}"
export BENCH_BOT=scale

say "Building kb and kb-bench (release)"
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else kb_build --product kb >/dev/null; KB="$KB_BIN_DIR/kb"; fi
if [ -n "${BENCH_BIN:-}" ]; then BENCH="$BENCH_BIN"; else kb_build --product kb-bench >/dev/null; BENCH="$KB_BIN_DIR/kb-bench"; fi
new_service_workdir pgscale
. "$KB_ROOT/scripts/bench/shelf.sh"
ensure_shelf "$SNIPPETS" "$USERS"
SQLITE_DB="$KB_DB"
write_context_load "$QUERIES" "$USERS"
write_warmup_load "$QUERIES" "$USERS"

PG_FOLDER=""
REPLICAS=()
stop_replicas() {
    for pid in ${REPLICAS[@]+"${REPLICAS[@]}"}; do kill "$pid" 2>/dev/null || true; done
    for pid in ${REPLICAS[@]+"${REPLICAS[@]}"}; do wait "$pid" 2>/dev/null || true; done
    REPLICAS=()
}
cleanup() {
    stop_replicas
    [ -z "$PG_FOLDER" ] || bash "$KB_ROOT/scripts/postgres.sh" stop "$PG_FOLDER" >/dev/null 2>&1 || true
    rm -rf "$WORK"
}
trap cleanup EXIT

if [ -n "${KB_PG_URL:-}" ]; then
    PG_URL="$KB_PG_URL"
else
    # Room for the vectors and the HNSW graph in memory (kb sizes the build's own memory).
    PG_FOLDER="$(mktemp -d)"
    say "Starting a throwaway PostgreSQL + pgvector"
    # Its shared buffers on 2 MB huge pages where the machine allows (as root): PostgreSQL's
    # buffer lookups and the HNSW walk's page reads miss the TLB less (HUGE_PAGES=0: ordinary pages).
    PG_URL="$(KB_PG_SETTINGS="-c shared_buffers=2GB -c effective_cache_size=8GB -c max_wal_size=8GB" KB_PG_HUGE_PAGES="${HUGE_PAGES:-1}" \
        bash scripts/postgres.sh start "$PG_FOLDER" | tail -1)"
fi
# Huge pages in use on this machine, in MB; `huge_pages_mb reserved` adds those reserved and not
# yet touched (a server's shared memory is reserved whole when it starts, touched as it is read).
huge_pages_mb() {
    awk -v reserved="${1:-}" '/^HugePages_Total:/ { t = $2 } /^HugePages_Free:/ { f = $2 } /^HugePages_Rsvd:/ { r = $2 }
        /^Hugepagesize:/ { s = $2 } END { print int((t - f + (reserved ? r : 0)) * s / 1024) }' /proc/meminfo
}
HUGE_MB=$(huge_pages_mb reserved)
say "Huge pages mapped: $HUGE_MB MB"
# PostgreSQL's resident memory: its processes' proportional set sizes (shared buffers once), and
# the huge pages in use (shared buffers on huge pages are not in a process's Pss).
pg_memory_mb() {
    local total=0 pid
    for pid in $(pgrep -x postgres || true); do
        total=$(( total + $(awk '/^Pss:/ { print $2 }' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0) ))
    done
    echo $(( total / 1024 + $(huge_pages_mb) ))
}
rss_of() { awk '$1 == "VmRSS:" { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
# CPU ticks (user + system) of each given process, one "pid ticks" line each; `cpu_ms_between
# BEFORE AFTER` sums what each process used between the two (one that started since counts from 0).
cpu_ticks() {
    local pid
    for pid in "$@"; do
        [ -r "/proc/$pid/stat" ] && awk -v pid="$pid" '{ sub(/^.*\) /, ""); print pid, $12 + $13 }' "/proc/$pid/stat" 2>/dev/null
    done
    return 0
}
cpu_ms_between() {
    awk -v hz="$(getconf CLK_TCK)" 'NR == FNR { before[$1] = $2; next } { total += $2 - before[$1] } END { printf "%.0f", total * 1000 / hz }' "$1" "$2"
}

HELD=$(KB_DB="$PG_URL" "$KB" status --json 2>/dev/null | python3 -c "import json, sys; print(json.load(sys.stdin).get('snippets', 0))" 2>/dev/null || echo 0)
EXPORT_S=None
if [ "${HELD:-0}" -lt "$SNIPPETS" ]; then
    say "kb export: the shelf into PostgreSQL"
    start=$(date +%s.%N)
    "$KB" export --db "$SQLITE_DB" --to "$PG_URL" --json > "$WORK/export.json"
    EXPORT_S=$(python3 -c "print(round($(date +%s.%N) - $start, 1))")
    echo "exported in $EXPORT_S s"
fi
# Exact answers first: the HNSW index is dropped if an earlier run left one.
KB_DB="$PG_URL" "$KB" index drop >/dev/null 2>&1 || true

# Starts `$2` replicas of kb serve on the index `$1` and sets FIRST_S (the slowest replica's time
# from its start to its first /v1/context answer) and URLS.
start_replicas() {
    local db="$1" count="$2" i
    URLS=()
    local starts=()
    for i in $(seq 1 "$count"); do
        local port=$(( 20000 + RANDOM % 20000 ))
        starts+=("$(date +%s.%N)")
        KB_QUERY_CACHE_MB=0 KB_DB="$db" "$KB" serve --port "$port" --token "$TOKEN" 2>"$WORK/serve-$i.log" &
        REPLICAS+=($!)
        URLS+=("http://127.0.0.1:$port")
    done
    FIRST_S=0
    for i in $(seq 0 $((count - 1))); do
        wait_for_context "${URLS[$i]}" "${REPLICAS[$i]}" "$WORK/serve-$((i + 1)).log" "$db"
        FIRST_S=$(python3 -c "print(round(max($FIRST_S, $(date +%s.%N) - ${starts[$i]}), 2))")
    done
}

# POST /v1/context at 32 connections spread over the replicas, for `$2` seconds with wrk's script `$1`
# (two threads in all); sets REQUESTS RPS P50 P99 ERRORS.
context_load() {
    local script="$1" seconds="$2" count=${#URLS[@]} i
    local per=$(( 32 / count )) threads=$(( count < 2 ? 2 : 1 ))
    for i in $(seq 0 $((count - 1))); do
        KB_BENCH_MIXED=0 wrk -t"$threads" -c"$per" -d"${seconds}s" --timeout 10s -s "$script" "${URLS[$i]}" | grep '^RESULT' > "$WORK/wrk-$i.txt" &
    done
    wait $(jobs -p | grep -v -F "$(printf '%s\n' "${REPLICAS[@]}")") 2>/dev/null || true
    read -r REQUESTS RPS P50 P99 ERRORS <<<"$(cat "$WORK"/wrk-*.txt | awk '
        { n += $2; rps += $3; p50 += $4 * $2; if ($5 > p99) p99 = $5; errors += $6 + $7 }
        END { printf "%d %.1f %.2f %.2f %d", n, rps, (n > 0 ? p50 / n : 0), p99, errors }')"
    rm -f "$WORK"/wrk-*.txt
}

ROWS="["
run() {   # ENGINE LABEL DB REPLICAS
    local engine="$1" label="$2" db="$3" count="$4"
    start_replicas "$db" "$count"
    local kb_mb=0 pid
    for pid in "${REPLICAS[@]}"; do kb_mb=$(( kb_mb + $(rss_of "$pid") )); done
    local warm_rps=null warm_p99=null
    if [ "$WARMUP" -gt 0 ]; then
        context_load "$WORK/warmup.lua" "$WARMUP"
        warm_rps=$RPS warm_p99=$P99
    fi
    cpu_ticks "${REPLICAS[@]}" > "$WORK/cpu-kb-before"
    cpu_ticks $(pgrep -x postgres || true) > "$WORK/cpu-pg-before"
    context_load "$WORK/context.lua" "$DURATION"
    cpu_ticks "${REPLICAS[@]}" > "$WORK/cpu-kb-after"
    cpu_ticks $(pgrep -x postgres || true) > "$WORK/cpu-pg-after"
    local kb_cpu pg_cpu=null
    kb_cpu=$(python3 -c "print(round($(cpu_ms_between "$WORK/cpu-kb-before" "$WORK/cpu-kb-after") / max(1, $REQUESTS), 2))")
    [ "$engine" = sqlite ] || pg_cpu=$(python3 -c "print(round($(cpu_ms_between "$WORK/cpu-pg-before" "$WORK/cpu-pg-after") / max(1, $REQUESTS), 2))")
    local after_mb=0
    for pid in "${REPLICAS[@]}"; do after_mb=$(( after_mb + $(rss_of "$pid") )); done
    local pg_mb=null
    [ "$engine" = sqlite ] || pg_mb=$(pg_memory_mb)
    printf "%-26s %9s %10s %10s %8s %8s %8s %11s %11s %11s %9s %9s\n" "$label" "$count" "$FIRST_S" "$after_mb" "$pg_mb" "$RPS" "$P50" "$P99" "$kb_cpu" "$pg_cpu" "$warm_rps" "$warm_p99"
    ROWS+="{\"engine\":\"$engine\",\"run\":\"$label\",\"round\":$ROUND,\"replicas\":$count,\"first_answer_s\":$FIRST_S,\"warmup_s\":$WARMUP,\"warmup_rps\":$warm_rps,\"warmup_p99_ms\":$warm_p99,\"kb_rss_mb_at_start\":$kb_mb,\"kb_rss_mb\":$after_mb,\"postgres_mb\":$pg_mb,\"requests\":$REQUESTS,\"rps\":$RPS,\"p50_ms\":$P50,\"p99_ms\":$P99,\"errors\":$ERRORS,\"kb_cpu_ms_per_request\":$kb_cpu,\"postgres_cpu_ms_per_request\":$pg_cpu},"
    [ "$ERRORS" -eq 0 ] || echo "warning: $ERRORS socket errors or non-2xx answers" >&2
    stop_replicas
}
recall_answers() {   # DB OUT-PREFIX
    start_replicas "$1" 1
    python3 scripts/bench/bench_recall.py search "${URLS[0]}" "$TOKEN" "$WORK/queries.txt" "$QUERIES_RECALL" "$WORK/$2-all.json"
    python3 scripts/bench/bench_recall.py search "${URLS[0]}" "$TOKEN" "$WORK/queries.txt" "$QUERIES_RECALL" "$WORK/$2-bot.json" scale
    stop_replicas
}

say "Exact vector answers on PostgreSQL ($QUERIES_RECALL questions, with and without the bot's filter)"
recall_answers "$PG_URL" exact
say "kb index build --hnsw ${HNSW_OPTIONS:-}"
# shellcheck disable=SC2086
KB_DB="$PG_URL" "$KB" index build --hnsw ${HNSW_OPTIONS:-} --json > "$WORK/hnsw.json"
python3 -c "import json; r = json.load(open('$WORK/hnsw.json')); print(f\"built in {r['seconds']:.1f} s; recall@10 {r['recallAt10']:.3f} on {r['sampled']} stored vectors\")"
# The new graph (~1.2 GB at a million) is dirty in the shared buffers until a checkpoint writes it;
# left to the timed one, that write-back fell in the serving runs, where PostgreSQL's CPU a request
# was ~5 ms higher. kb runs CHECKPOINT after the build when its role may (its report says).
CHECKPOINT_S=$(python3 -c "import json; c = json.load(open('$WORK/hnsw.json')).get('checkpoint') or {}; print(round(c['seconds'], 1) if c.get('done') else 'null')")
if [ "$CHECKPOINT_S" = null ]; then
    say "kb ran no CHECKPOINT after the build (see $WORK/hnsw.json); the serving runs may share the machine with its write-back"
else
    say "CHECKPOINT after the build: $CHECKPOINT_S s"
fi
say "HNSW vector answers on PostgreSQL"
recall_answers "$PG_URL" hnsw
RECALL_ALL=$(python3 scripts/bench/bench_recall.py recall "$WORK/exact-all.json" "$WORK/hnsw-all.json")
say "The keyword ranking alone over the benchmark's $QUERIES questions (top 50)"
"$BENCH" keyword-ranking "$SQLITE_DB" "$WORK/queries.txt" 50 > "$WORK/keywords-sqlite.json"
"$BENCH" postgres-keywords "$PG_URL" "$WORK/queries.txt" 50 > "$WORK/keywords-postgres.json"
python3 - "$WORK/keywords-sqlite.json" "$WORK/keywords-postgres.json" <<'PY2'
import json, sys
s, p = (json.load(open(f)) for f in sys.argv[1:3])
print(f"SQLite (in memory): p50 {s['p50_ms']:.2f} ms, p99 {s['p99_ms']:.2f} ms")
print(f"PostgreSQL (blocks, pruned): p50 {p['p50_ms']:.2f} ms, p99 {p['p99_ms']:.2f} ms; whole ranking p50 {p['whole_p50_ms']:.2f}, "
      f"p99 {p['whole_p99_ms']:.2f} (both on a warm block cache); pruned with the cache the questions before left, p50 "
      f"{p['cold_p50_ms']:.2f}, p99 {p['cold_p99_ms']:.2f}; {len(p['differ'])} of {p['queries']} rankings differ from the whole one")
PY2
SQLITE_MB=$(du -cm "$SQLITE_DB"* | tail -1 | cut -f1)
PG_DISK_MB=$(KB_DB="$PG_URL" "$KB" status --json 2>/dev/null | python3 -c "import json, sys; print(round(json.load(sys.stdin).get('sizeOnDisk', 0) / 1048576))" 2>/dev/null || echo null)
RECALL_BOT=$(python3 scripts/bench/bench_recall.py recall "$WORK/exact-bot.json" "$WORK/hnsw-bot.json")
echo "without a filter: $RECALL_ALL"
echo "the bot's filter: $RECALL_BOT"

say "kb serve: $SNIPPETS snippets, $((USERS * 10)) memories; POST /v1/context at 32 connections, $DURATION s a run after $WARMUP s of warm-up ($(nproc) cores)"
printf "%-26s %9s %10s %10s %8s %8s %8s %11s %11s %11s %9s %9s\n" run replicas "first s" "kb MB" "PG MB" "req/s" "p50 ms" "p99 ms" "kb CPU ms" "PG CPU ms" "warm r/s" "warm p99"
for ROUND in $(seq 1 "$ROUNDS"); do
    [ "$ROUNDS" -eq 1 ] || echo "round $ROUND of $ROUNDS"
    run sqlite "SQLite" "$SQLITE_DB" 1
    run sqlite "SQLite, two replicas" "$SQLITE_DB" 2
    run postgres "PostgreSQL + HNSW" "$PG_URL" 1
    run postgres "PostgreSQL + HNSW, two" "$PG_URL" 2
done

mkdir -p bench-results
python3 - "${ROWS%,}]" "$RECALL_ALL" "$RECALL_BOT" "$WORK/hnsw.json" "$WORK/keywords-sqlite.json" "$WORK/keywords-postgres.json" <<PY
import json, statistics, sys
rounds = json.loads(sys.argv[1])
runs = []   # each run's round of median requests/s (the lower middle of an even count)
for label in dict.fromkeys(r["run"] for r in rounds):
    mine = sorted((r for r in rounds if r["run"] == label), key=lambda r: r["rps"])
    runs.append(mine[(len(mine) - 1) // 2])
    if len(mine) > 1:
        each = ", ".join("%.1f" % r["rps"] for r in sorted(mine, key=lambda r: r["round"]))
        print(f"{label}: median of {len(mine)} rounds {runs[-1]['rps']:.1f} req/s (in order {each}), "
              f"p99 {statistics.median(r['p99_ms'] for r in mine):.0f} ms")
json.dump({"snippets": $SNIPPETS, "rounds_of_runs": $ROUNDS, "users": $USERS, "memories": $((USERS * 10)), "seconds_per_run": $DURATION, "warmup_s": $WARMUP, "cores": $(nproc),
           "export_s": $EXPORT_S, "hnsw_build": json.load(open(sys.argv[4])), "huge_pages_mb": $HUGE_MB, "checkpoint_s": $CHECKPOINT_S,
           "disk_mb": {"sqlite": $SQLITE_MB, "postgres": $PG_DISK_MB},
           "keywords": {"sqlite": json.load(open(sys.argv[5])), "postgres": json.load(open(sys.argv[6]))},
           "recall": {"without_filter": json.loads(sys.argv[2]), "bot_filter": json.loads(sys.argv[3])},
           "runs": runs, "rounds": rounds},
          open("bench-results/postgres-scale-$SNIPPETS.json", "w"), indent=2)
PY
echo "bench-results/postgres-scale-$SNIPPETS.json"
