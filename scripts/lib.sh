# Shared by kb's scripts. Source it: `. "$(dirname "$0")/lib.sh"`.
set -euo pipefail

KB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KB_SYSTEM_PACKAGES=(libsqlite3-dev libpoppler-cpp-dev libopenblas-dev libdnnl-dev libcurl4-openssl-dev libxml2-dev pkg-config
    libtesseract-dev libleptonica-dev tesseract-ocr-eng tesseract-ocr-ukr tesseract-ocr-rus tesseract-ocr-ara tesseract-ocr-osd)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

# Phases of the two quick-start commands: a line each on stderr (the title, then how it ended and
# how long it took), the phase's whole output in .build/logs/NAME.log, and `phase_summary` at the
# end. A phase that fails prints the end of its log (or the lines `PHASE_ERRORS` matches) and the
# log's path, prints the summary, and exits with the phase's status. Each phase's wall and CPU
# seconds (its processes', user + system) are appended to .build/logs/phases.tsv.
#
# `lane NAME FUNCTION` runs FUNCTION's phases beside the script's own (in the background: two
# lanes keep both cores busy where one phase alone waits on a browser, a server or a model), and
# `join_lanes` waits for every lane, adds its phases to the summary and fails if one failed.
KB_LOGS="$KB_ROOT/.build/logs"
PHASES=()
PHASE_NOTE=""
PHASE_LANE=""
LANES=()
PHASES_STARTED=$SECONDS
cpu_seconds() {   # cpu_seconds VAR: user + system seconds of this shell's finished children, into VAR
    # (`times` in this shell, not in a command substitution, whose subshell has no children yet)
    local file="$KB_LOGS/.times.$BASHPID"
    times >"$file"
    printf -v "$1" '%s' "$(tail -n 1 "$file" | awk '{ s = 0; for (i = 1; i <= NF; i++) { split($i, t, /m|s/); s += t[1] * 60 + t[2] } printf "%.1f", s }')"
    rm -f "$file"
}
phase() {   # phase TITLE LOG-NAME COMMAND…  (COMMAND may be a shell function)
    local title="$1" log="$KB_LOGS/$2.log" start=$SECONDS status=0 cpu
    shift 2
    mkdir -p "$KB_LOGS"
    PHASE_NOTE=""
    export KB_PHASE="$(basename "$log" .log)"
    local lead='==> %s … '
    [ -t 2 ] && lead='\033[1m==> %s\033[0m … '
    # While lanes run, each line is printed whole when its phase ends, so that lines do not mix.
    local whole=""
    [ -z "$PHASE_LANE" ] && [ ${#LANES[@]} -eq 0 ] || whole=1
    [ -n "$whole" ] || printf "$lead" "$title" >&2
    local cpu_before cpu_after
    cpu_seconds cpu_before
    "$@" >"$log" 2>&1 || status=$?
    local took=$((SECONDS - start))
    cpu_seconds cpu_after
    cpu=$(awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN { printf "%.0f", b - a }')
    printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$KB_PHASE" "$took" "$cpu" "$status" >>"$KB_LOGS/phases.tsv"
    [ -z "$whole" ] || printf "$lead" "$title" >&2
    if [ "$status" -eq 0 ]; then
        printf 'done in %ss%s\n' "$took" "${PHASE_NOTE:+ ($PHASE_NOTE)}" >&2
        phase_record "$took|$title|${PHASE_NOTE:-ok}"
        return 0
    fi
    printf 'FAILED after %ss\n' "$took" >&2
    if [ -n "${PHASE_ERRORS:-}" ] && grep -E "$PHASE_ERRORS" "$log" >/dev/null 2>&1; then
        grep -E "$PHASE_ERRORS" "$log" | head -n 60 >&2
    else
        tail -n 40 "$log" >&2
    fi
    echo "error: $title failed; its whole log is $log" >&2
    phase_record "$took|$title|FAILED"
    # A lane's phases are summed up by join_lanes; a failure beside lanes waits for them first.
    if [ -z "$PHASE_LANE" ]; then
        collect_lanes || true
        phase_summary
    fi
    exit "$status"
}
phase_record() {
    if [ -n "$PHASE_LANE" ]; then echo "$1" >>"$PHASE_LANE"; else PHASES+=("$1"); fi
}

lane() {   # lane NAME FUNCTION [WHAT]: FUNCTION's phases, in the background
    local file="$KB_LOGS/lane-$1.phases"
    mkdir -p "$KB_LOGS"
    printf '==> %s run beside the next phases (a line as each ends)\n' "${3:-$1}" >&2
    : >"$file"
    ( PHASE_LANE="$file"; "$2" ) &
    LANES+=("$!|$file")
}
join_lanes() { collect_lanes || { phase_summary; exit 1; }; }
collect_lanes() {   # waits for every lane and adds its phases to the summary; fails if one failed
    local entry pid file status=0 line
    for entry in "${LANES[@]}"; do
        IFS='|' read -r pid file <<<"$entry"
        wait "$pid" || status=$?
        while IFS= read -r line; do PHASES+=("$line"); done <"$file"
        rm -f "$file"
    done
    LANES=()
    return "$status"
}

# Says something about the phase that just ended (its line shows it): `phase_note "437 tests"`.
phase_note() { PHASE_NOTE="$*"; }

# A phase that was left out, and why.
phase_skip() {
    printf '==> %s … skipped (%s)\n' "$1" "$2" >&2
    phase_record "0|$1|skipped: $2"
}

phase_summary() {
    local total=$((SECONDS - PHASES_STARTED)) entry
    printf '\n%-8s %s\n' "seconds" "phase" >&2
    for entry in "${PHASES[@]}"; do
        IFS='|' read -r took title note <<<"$entry"
        printf '%8s %s%s\n' "$took" "$title" "$([ "$note" = ok ] || echo " — $note")" >&2
    done
    printf '%8s %s (logs: %s)\n' "$total" "in all" "${KB_LOGS#"$KB_ROOT"/}" >&2
}

# Installs the Debian packages kb builds against, if any is missing. Idempotent and quick
# when everything is there.
ensure_system_packages() {
    local missing=()
    for pkg in "${KB_SYSTEM_PACKAGES[@]}" "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    say "Installing system packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# kb's one build: setup.sh, test.sh after it and docs.sh build with exactly these flags, so that
# each reuses what the others built: a different flag (even one more `-v`) changes every compile
# command and rebuilds everything. KB_TESTING=1 makes Package.swift enable testing for kb's own
# modules (not its dependencies'), so that the tests can `@testable import` them, and optimise
# kb's code below the facade in a debug build (`hot`): the kb users get from setup.sh is that
# same build (docs/development.md, "The debug build" and "One build"; testing enabled for every
# module, dependencies too, cost 12% of kb serve's requests).
# A package that depends on kb never sees the setting (it is an unsafe flag, which SwiftPM refuses
# in dependencies): the examples build without it.
export KB_TESTING=1

# SWIFT_DETERMINISTIC_HASHING=1: SwiftPM 6.3 passes a package's enabled traits to the compiler in
# the order of a Set, which changes with each process's hash seed; the compile commands of every
# package with two or more traits (kb: PostgreSQL, OCR, Server; Hummingbird) then differ from the
# last build's at random, and those modules are compiled again from scratch (swiftlang/swift-
# package-manager#10525, fixed after 6.3). A fixed seed gives the same order every time.
#
# KB_CONFIGURATION names the configuration: debug for the two commands (setup.sh, test.sh: it
# compiles in half the time, and Package.swift keeps kb's code optimised there: `hot`), release
# (the default here: setup.sh --release, the benchmarks, the evaluations). use_configuration
# switches a script and the scripts it starts.
use_configuration() {   # use_configuration release|debug
    case "$1" in release|debug) ;; *) echo "error: KB_CONFIGURATION is '$1'; use release or debug" >&2; return 2 ;; esac
    export KB_CONFIGURATION="$1"
    KB_BUILD_FLAGS=(-c "$1" --explicit-target-dependency-import-check error)
    # A debug build's debug information as line tables only (file and line in backtraces, no
    # variables or types for a debugger): Swift's and clang's full -g is an eighth of the build's
    # compiler CPU (docs/development.md). KB_DEBUG_INFO=full keeps it, for lldb (every module
    # then compiles again).
    case "${KB_DEBUG_INFO:-lines}" in lines|full) ;; *) echo "error: KB_DEBUG_INFO is '$KB_DEBUG_INFO'; use lines (the default) or full" >&2; return 2 ;; esac
    if [ "$1" = debug ] && [ "${KB_DEBUG_INFO:-lines}" = lines ]; then
        KB_BUILD_FLAGS+=(-Xswiftc -gline-tables-only -Xcc -gline-tables-only)
    fi
    KB_BIN_DIR="$KB_ROOT/.build/$1"
}
use_configuration "${KB_CONFIGURATION:-release}" || exit
kb_build() {   # kb_build [swift build arguments…], e.g. kb_build --product kb
    SWIFT_DETERMINISTIC_HASHING=1 swift build "${KB_BUILD_FLAGS[@]}" "$@"
}

# With KB_BUILD_TIMES naming a folder (scripts/build-times.sh), every compile of every build these
# scripts start is timed: the Swift frontend and the C and C++ compilers run through
# scripts/build-job-timer.sh, which appends a line per job to KB_BUILD_TIMES/jobs.tsv. Off by default.
if [ -n "${KB_BUILD_TIMES:-}" ]; then
    mkdir -p "$KB_BUILD_TIMES/bin"
    export KB_TOOLCHAIN_BIN="$(dirname "$(readlink -f "$(command -v swift)")")"
    for tool in swift-frontend cc c++; do ln -sf "$KB_ROOT/scripts/build-job-timer.sh" "$KB_BUILD_TIMES/bin/$tool"; done
    export SWIFT_DRIVER_SWIFT_FRONTEND_EXEC="$KB_BUILD_TIMES/bin/swift-frontend" CC="$KB_BUILD_TIMES/bin/cc" CXX="$KB_BUILD_TIMES/bin/c++"
fi

# Where the examples (Examples/embed-kb, Examples/kb-client: packages that depend on kb by path,
# without its optional traits) are built, with kb_build's flags. In CI, on a new clone built once,
# the main build folder, so that they reuse its dependencies' modules and compile only kb's own
# modules again (without the traits; scripts/test.sh builds them last, as they replace those
# modules); elsewhere a folder of their own, .build-examples, kept between runs, so that they never
# undo the main build.
examples_build_path() {
    if [ "${CI:-}" = "true" ]; then echo "$KB_ROOT/.build"; else echo "$KB_ROOT/.build-examples"; fi
}
build_example() {   # build_example NAME [swift build arguments…]: builds Examples/NAME
    local name="$1" scratch
    shift
    scratch="$(examples_build_path)"
    # SwiftPM keeps a path dependency's file list in the build description: plan afresh, so that
    # files added to kb since the last build are seen.
    rm -f "$scratch/$KB_CONFIGURATION.yaml"
    # Without KB_TESTING: kb is a dependency there, built as an app that uses it gets it.
    KB_TESTING="" kb_build --package-path "$KB_ROOT/Examples/$name" --scratch-path "$scratch" "$@"
}

# Builds the release kb and kb-bench for a benchmark and sets KB and BENCH to them.
build_release_tools() {
    say "Building kb and kb-bench (release)"
    kb_build --product kb >/dev/null
    kb_build --product kb-bench >/dev/null
    KB="$KB_BIN_DIR/kb"
    BENCH="$KB_BIN_DIR/kb-bench"
}

ensure_swift() {
    command -v swift >/dev/null || { echo "error: swift is not on PATH. Install the Swift toolchain (swift.org) first." >&2; exit 1; }
}

# For the scripts that drive a live `kb serve`: builds the release kb (or takes the binary in
# KB_BIN, to measure a baseline build) and indexes the sample corpus (local model) with the bot
# `astro` into a throwaway folder, removed on exit with the server. Sets KB, WORK, PORT, TOKEN,
# URL and exports KB_DB; `$1` names the index file.
prepare_sample_service() {
    if [ -n "${KB_BIN:-}" ]; then
        KB="$KB_BIN"
        say "Using $KB"
    else
        say "Building kb (release)"
        kb_build --product kb >/dev/null
        KB="$KB_BIN_DIR/kb"
    fi
    new_service_workdir "$1"
    export KB_DB="$WORK/$1.sqlite"
    say "Indexing corpus/ with the local model"
    "$KB" ingest corpus --tags-from corpus/tags.yaml >/dev/null
    "$KB" bot create astro --system-prompt "You are a careful astrology tutor." --source corpus --json >/dev/null
}

# A scratch folder ($WORK, removed on exit with the server), a port, a token named after `$1` and
# the service's URL for a benchmark's `kb serve`.
new_service_workdir() {
    WORK="$(mktemp -d)"
    PORT=$(( 20000 + RANDOM % 20000 ))
    TOKEN="$1-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    URL="http://127.0.0.1:$PORT"
    SERVER=""
    trap 'stop_sample_server; rm -rf "$WORK"' EXIT
}

# Starts `kb serve` on the prepared index (token, the sample reports) and waits until it answers;
# its log is $WORK/serve.log, its pid $SERVER.
# KB_SERVE_ARGS adds options (e.g. --no-request-log).
start_sample_server() {
    # The benchmarks cycle a fixed set of distinct queries: after one round the query-embedding
    # cache would answer every one from memory, so it is off unless KB_QUERY_CACHE_MB says
    # otherwise (scripts/bench/bench-query-cache.sh measures it).
    # shellcheck disable=SC2086
    KB_QUERY_CACHE_MB="${KB_QUERY_CACHE_MB:-0}" "$KB" serve --port "$PORT" --token "$TOKEN" --reports corpus/reports ${KB_SERVE_ARGS:-} 2>"$WORK/serve.log" &
    SERVER=$!
    for _ in $(seq 1200); do curl -sf "$URL/healthz" >/dev/null && return 0; sleep 0.1; done
    cat "$WORK/serve.log" >&2
    echo "error: kb serve did not start" >&2
    exit 1
}

# Waits until the kb serve at URL `$1` (pid `$2`, log `$3`, serving `$4`) answers the scale
# shelf's bot a /v1/context; exits with its log if it stops, or after 30 minutes.
wait_for_context() {
    local url="$1" pid="$2" log="$3" db="$4" deadline=$((SECONDS + 1800))
    until curl -sf -o /dev/null -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \
            -d '{"bot":"scale","user":"u0","budget":1200,"query":"what does a saturn return mean"}' "$url/v1/context"; do
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; echo "error: kb serve on $db stopped" >&2; exit 1; }
        [ $SECONDS -lt "$deadline" ] || { echo "error: kb serve on $db did not answer in 30 minutes" >&2; exit 1; }
        sleep 0.1
    done
}

stop_sample_server() {
    [ -n "${SERVER:-}" ] || return 0
    kill "$SERVER" 2>/dev/null || true
    wait "$SERVER" 2>/dev/null || true
    SERVER=""
}

# Writes $WORK/context.lua, wrk's script for POST /v1/context with `$1` distinct user turns (the
# project's own evaluation queries and templated questions, scripts/bench/bench_serve_queries.py)
# cycled in order, for `$2` users (u0…) of the bot $BENCH_BOT (default astro); with KB_BENCH_MIXED=1 one request in
# ten adds a memory instead, and the ids acknowledged go to $WORK/acknowledged.txt.
write_context_load() {
    local queries="$1" users="$2"
    python3 scripts/bench/bench_serve_queries.py evaluation/astrology/queries.jsonl "$queries" > "$WORK/queries.txt"
    [ "$(sort -u "$WORK/queries.txt" | wc -l)" -eq "$queries" ] || { echo "error: the queries are not $queries distinct texts" >&2; exit 1; }
    write_request_script "$WORK/queries.txt" "$users" "$WORK/bodies.lua" "$WORK/context.lua"
}

# Writes $WORK/warmup.lua: the same requests as $WORK/context.lua (write_context_load first) over up
# to `$1` other questions, none of which the measured load asks — a server warmed with it has not
# seen the questions it is then measured on.
write_warmup_load() {
    local queries="$1" users="$2"
    python3 scripts/bench/bench_serve_queries.py evaluation/astrology/queries.jsonl "$(( 2 * queries ))" > "$WORK/warmup-all.txt"
    grep -vxF -f "$WORK/queries.txt" "$WORK/warmup-all.txt" | head -n "$queries" > "$WORK/warmup-queries.txt" || true
    [ -s "$WORK/warmup-queries.txt" ] || { echo "error: no warm-up questions beside the measured ones" >&2; exit 1; }
    write_request_script "$WORK/warmup-queries.txt" "$users" "$WORK/warmup-bodies.lua" "$WORK/warmup.lua"
}

# wrk's script for POST /v1/context over the questions in `$1` for `$2` users: the bodies in `$3`, the
# script in `$4` (see write_context_load).
write_request_script() {
    local questions="$1" users="$2" bodies="$3" script="$4"
    # The request bodies, precomputed as Lua long strings.
    python3 - "$questions" "$users" "${BENCH_BOT:-astro}" > "$bodies" <<'PY'
import json, sys
users, bot = int(sys.argv[2]), sys.argv[3]
print("bodies = {")
for i, query in enumerate(open(sys.argv[1], encoding="utf-8").read().splitlines()):
    body = json.dumps({"bot": bot, "user": f"u{i % users}", "budget": 1200, "query": query})
    print(f"  [==[{body}]==],")
print("}")
PY

    cat > "$script" <<LUA
dofile("$bodies")
local token = "$TOKEN"
local mixed = os.getenv("KB_BENCH_MIXED") == "1"
local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

function init(args)
  n = (id - 1) * 397
  added = ""
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. token
end

request = function()
  n = n + 1
  if mixed and n % 10 == 0 then
    local body = string.format('{"content":"Bench memory %d-%d: prefers tea at %d o\'clock.","scope":"user:u%d"}', id, n, n % 24, n % $users)
    return wrk.format("POST", "/v1/memories", nil, body)
  end
  return wrk.format("POST", "/v1/context", nil, bodies[(n % #bodies) + 1])
end

response = function(status, headers, body)
  if mixed and (status == 201 or status == 200) and body:find('"created"', 1, true) then
    local id = body:match('"memory":{"content":"[^"]*","createdAt":"[^"]*","id":"([%x%-]+)"')
    if id then added = added .. id .. "\n" end
  end
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("RESULT %d %.2f %.2f %.2f %d %d\n",
    summary.requests, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.timeout, e.status))
  if mixed then
    local file = io.open("$WORK/acknowledged.txt", "w")
    for _, thread in ipairs(threads) do file:write(thread:get("added")) end
    file:close()
  end
end
LUA
}

# Drives the load of write_context_load at `$1` connections for `$2` seconds (`$3` = 1: mixed
# with memory adds) and sets REQUESTS RPS P50 P99 (ms) SOCKET (errors and timeouts) STATUS
# (non-2xx answers).
wrk_context() {
    local threads=$(( $1 < 2 ? 1 : 2 ))
    local line
    line=$(KB_BENCH_MIXED="${3:-0}" wrk -t"$threads" -c"$1" -d"${2}s" --timeout 10s -s "$WORK/context.lua" "$URL" | grep '^RESULT')
    read -r _ REQUESTS RPS P50 P99 SOCKET STATUS <<<"$line"
}

# The Python tools the browser and client tests use (Playwright, axe-core, OpenAI's client), pinned, in
# .build/test-venv (made again when the pins change). Sets TEST_PYTHON.
ensure_test_venv() {
    local pins=(playwright==1.65.2 openai==3.57.0 axe-playwright-python==0.1.8 mcp==2.3.0)
    local venv="$KB_ROOT/.build/test-venv"
    if [ "$(cat "$venv/pins" 2>/dev/null)" != "${pins[*]}" ]; then
        say "Installing ${pins[*]} into $venv"
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet --disable-pip-version-check "${pins[@]}"
        echo "${pins[*]}" >"$venv/pins"
    fi
    TEST_PYTHON="$venv/bin/python"
}
