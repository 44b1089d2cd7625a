#!/usr/bin/env bash
# Uploads to a running `kb serve`: the release build on loopback with the sample corpus (local
# model) and the bot astro, as scripts/bench/bench-serve.sh sets it up.
#
# 1. Upload-to-searchable time: each PDF is POSTed to /v1/sources (bytes streamed, 202) and the
#    clock stops when its job is done and GET /v1/sources/{id} counts its snippets, that is when
#    search and context see it. PDFs of 100, 500 and every page are cut from one book with qpdf
#    (from Debian).
# 2. Context latency while a job runs: POST /v1/context at 8 connections (wrk, the distinct
#    queries of bench-serve.sh) for SECONDS with no job, then while a 500-page PDF is in each
#    phase of its job: for READ_SECONDS (default 4) while its pages are parsed and OCR'd, and for
#    SECONDS while its snippets are embedded; the job must still be in that phase when wrk ends,
#    or the figure would not say anything (READ_SECONDS=0 skips the reading row: a fast machine
#    reads 500 pages in less time than wrk needs to say anything).
#
# Prints a table and writes bench-results/uploads.json.
#
#   scripts/bench/bench-uploads.sh [BOOK.pdf] [SECONDS]     (default: ../shared/pdfs/octave-manual.pdf, 10)
#   UPLOADS="100 500" scripts/bench/bench-uploads.sh        (the sizes timed in part 1; "" skips it)
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages wrk qpdf
bash scripts/install-model.sh
BOOK="$(realpath "${1:-$KB_ROOT/../shared/pdfs/octave-manual.pdf}")"
DURATION="${2:-10}"
UPLOADS="${UPLOADS-100 500 all}"
[ -f "$BOOK" ] || { echo "error: no PDF at $BOOK; name a book of 500 pages or more as the first argument." >&2; exit 1; }
PAGES=$(qpdf --show-npages "$BOOK")
[ "$PAGES" -ge 500 ] || { echo "error: $BOOK has $PAGES pages; name a book of 500 pages or more." >&2; exit 1; }

prepare_sample_service uploads
qpdf --empty --pages "$BOOK" 1-100 -- "$WORK/p100.pdf"
qpdf --empty --pages "$BOOK" 1-500 -- "$WORK/p500.pdf"
cp "$BOOK" "$WORK/p$PAGES.pdf"
start_sample_server
write_context_load 1200 50

# Uploads a PDF as source `$2` and prints seconds from the first byte sent to the job being done
# and the source counted, then snippets and pages; exits 1 if the job failed.
upload_and_wait() {
    python3 - "$URL" "$TOKEN" "$1" "$2" <<'PY'
import json, sys, time, urllib.request
url, token, path, source = sys.argv[1:]
auth = {"Authorization": "Bearer " + token}
def get(route):
    with urllib.request.urlopen(urllib.request.Request(url + route, headers=auth)) as response:
        return json.loads(response.read())
data = open(path, "rb").read()
started = time.monotonic()
request = urllib.request.Request(f"{url}/v1/sources?id={source}", data=data, method="POST",
                                 headers={**auth, "Content-Type": "application/pdf"})
with urllib.request.urlopen(request) as response:
    job = json.loads(response.read())["job"]["id"]
while True:
    state = get(f"/v1/jobs/{job}")
    if state["state"] in ("done", "failed"):
        break
    time.sleep(0.05)
if state["state"] == "failed":
    sys.exit(f"error: the job of {path} failed: {state.get('error')}")
snippets = get(f"/v1/sources/{source}")["snippets"]
print(f"{time.monotonic() - started:.1f} {snippets} {state['progress']['pagesTotal']}")
PY
}

say "Upload to searchable: $BOOK ($PAGES pages), cut to 100 and 500 pages: ${UPLOADS:-none}"
printf "%-10s %8s %10s %12s %14s\n" pages MB snippets seconds "snippets/s"
JSON_UPLOADS="["
for n in $UPLOADS; do
    [ "$n" = all ] && n="$PAGES"
    file="$WORK/p$n.pdf"
    read -r SECONDS_TAKEN SNIPPETS READ_PAGES < <(upload_and_wait "$file" "book-$n")
    MB=$(python3 -c "import os, sys; print(f'{os.path.getsize(sys.argv[1]) / 1e6:.1f}')" "$file")
    RATE=$(python3 -c "print(f'{$SNIPPETS / $SECONDS_TAKEN:.0f}')")
    printf "%-10s %8s %10s %12s %14s\n" "$READ_PAGES" "$MB" "$SNIPPETS" "$SECONDS_TAKEN" "$RATE"
    JSON_UPLOADS+="{\"pages\":$READ_PAGES,\"mb\":$MB,\"snippets\":$SNIPPETS,\"seconds\":$SECONDS_TAKEN},"
done

say "POST /v1/context at 8 connections, $DURATION s: idle, then while the 500-page PDF is read"
printf "%-26s %10s %12s %10s %10s %8s\n" run requests "requests/s" "p50 ms" "p99 ms" errors
wrk_context 8 "$DURATION"
printf "%-26s %10s %12s %10s %10s %8s\n" "no job" "$REQUESTS" "$RPS" "$P50" "$P99" "$((SOCKET + STATUS))"
JSON_CONTEXT="{\"run\":\"no job\",\"seconds\":$DURATION,\"rps\":$RPS,\"p50_ms\":$P50,\"p99_ms\":$P99,\"errors\":$((SOCKET + STATUS))}"
# Posts the 500-page PDF as source $1, waits for the job's phase $2 (reading: pages are being
# parsed and OCR'd; embedding: the snippets are known and being embedded), runs wrk and prints the
# row; the job must still be in that phase when wrk ends, or the row would not say anything.
context_during() {
    local job state
    job=$(curl -sf -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/pdf" --data-binary @"$WORK/p500.pdf" \
        "$URL/v1/sources?id=$1" | python3 -c "import json, sys; print(json.load(sys.stdin)['job']['id'])")
    job_phase() {
        curl -sf -H "Authorization: Bearer $TOKEN" "$URL/v1/jobs/$job" | python3 -c "
import json, sys
j = json.load(sys.stdin)
print(j['state'] if j['state'] != 'running' else ('embedding' if j['progress']['snippetsTotal'] else 'reading'))"
    }
    until [ "$(job_phase)" = "$2" ]; do sleep 0.1; done
    wrk_context 8 "$3"
    state=$(job_phase)
    printf "%-26s %10s %12s %10s %10s %8s\n" "500-page job $2" "$REQUESTS" "$RPS" "$P50" "$P99" "$((SOCKET + STATUS))"
    JSON_CONTEXT+=",{\"run\":\"500-page job $2\",\"seconds\":$3,\"rps\":$RPS,\"p50_ms\":$P50,\"p99_ms\":$P99,\"errors\":$((SOCKET + STATUS))}"
    [ "$state" = "$2" ] || { echo "error: the job was $state, no longer $2, when wrk ended: measure with a larger book or a shorter SECONDS." >&2; exit 1; }
    until [ "$(job_phase)" = done ]; do sleep 0.2; done
}
[ "${READ_SECONDS:-4}" = 0 ] || context_during during-read reading "${READ_SECONDS:-4}"
context_during during-embed embedding "$DURATION"

mkdir -p bench-results
python3 -c "
import json
json.dump({'book': '$(basename "$BOOK")', 'cores': $(nproc), 'seconds_per_run': $DURATION,
           'uploads': ${JSON_UPLOADS%,}], 'context_c8': [$JSON_CONTEXT]}, open('bench-results/uploads.json', 'w'), indent=2)"
