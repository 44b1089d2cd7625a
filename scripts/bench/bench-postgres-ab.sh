#!/usr/bin/env bash
# Two builds of kb serving the same index in turn (A B A B …, back to back), so that a change is
# measured against what it replaces on the same machine in the same hour (this machine's speed
# varies up to 4× over a day): POST /v1/context at 32 connections with the questions and bot of
# scripts/bench/bench-postgres-scale.sh, each run after a 5-second warm-up, with requests/s, p50, p99
# and the CPU kb and PostgreSQL spent per request (user + system).
#
#   scripts/bench/bench-postgres-ab.sh KB_A KB_B INDEX [SECONDS] [ROUNDS]   (default 20 s, 2 rounds)
#
# INDEX is a PostgreSQL URL (or a SQLite file) holding a shelf of scripts/bench/shelf.sh, e.g. the
# database scripts/bench/bench-postgres-scale.sh exported into (KB_PG_URL). USERS as the shelf's (1000).
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
[ $# -ge 3 ] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
KB_A="$1"; KB_B="$2"; INDEX="$3"; DURATION="${4:-20}"; ROUNDS="${5:-2}"
USERS="${USERS:-1000}"
for kb in "$KB_A" "$KB_B"; do [ -x "$kb" ] || { echo "error: $kb is not an executable kb" >&2; exit 2; }; done
ensure_system_packages wrk
export BENCH_BOT=scale
new_service_workdir ab
write_context_load 1200 "$USERS"

ticks() {   # CPU ticks (user + system) of the given processes, summed
    local pid
    for pid in "$@"; do awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null; done | awk '{ s += $1 } END { print s + 0 }'
}

run() {   # KB LABEL
    local kb="$1" label="$2"
    KB_QUERY_CACHE_MB=0 KB_DB="$INDEX" "$kb" serve --port "$PORT" --token "$TOKEN" 2>"$WORK/serve.log" &
    SERVER=$!
    wait_for_context "$URL" "$SERVER" "$WORK/serve.log" "$INDEX"
    wrk -t2 -c32 -d5s --timeout 10s -s "$WORK/context.lua" "$URL" >/dev/null
    local kb0 pg0 kb1 pg1
    kb0=$(ticks "$SERVER"); pg0=$(ticks $(pgrep -x postgres || true))
    wrk -t2 -c32 -d"${DURATION}s" --timeout 10s -s "$WORK/context.lua" "$URL" | grep '^RESULT' > "$WORK/wrk.txt"
    kb1=$(ticks "$SERVER"); pg1=$(ticks $(pgrep -x postgres || true))
    stop_sample_server
    awk -v label="$label" -v kb=$((kb1 - kb0)) -v pg=$((pg1 - pg0)) -v hz="$(getconf CLK_TCK)" '
        { n = $2; printf "%-3s %8d %8.1f %8.0f %8.0f %7d %11.2f %11.2f\n", label, n, $3, $4, $5, $6 + $7, kb * 1000 / hz / n, pg * 1000 / hz / n }' "$WORK/wrk.txt" \
        | tee -a "$WORK/rows.txt"
}

say "kb A: $KB_A"
say "kb B: $KB_B"
printf "%-3s %8s %8s %8s %8s %7s %11s %11s\n" run requests req/s "p50 ms" "p99 ms" errors "kb CPU ms" "PG CPU ms"
for _ in $(seq 1 "$ROUNDS"); do
    run "$KB_A" A
    run "$KB_B" B
done
awk '{ n[$1]++; rps[$1] += $3; p99[$1] += $5; kb[$1] += $7; pg[$1] += $8 }
     END { for (k in n) printf "mean %s: %.1f req/s, p99 %.0f ms, kb CPU %.2f ms, PostgreSQL CPU %.2f ms a request\n",
                               k, rps[k] / n[k], p99[k] / n[k], kb[k] / n[k], pg[k] / n[k] }' "$WORK/rows.txt" | sort
