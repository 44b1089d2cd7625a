#!/usr/bin/env bash
# Page pictures from a running `kb serve` (release build, loopback): a book uploaded as a source,
# then
#   1. cold: the first picture of each of PAGES pages at 1,000 px (rendered by poppler and kept);
#   2. cached: the same pages again (read from the page cache);
#   3. 1,000 page views spread over the book's pages at widths 400, 700, 1,000 and 1,400 px, with
#      the cache's budget (KB_PAGE_CACHE_MB, default 256): how long they took and how many bytes
#      the cache holds after them.
# Prints a table and writes bench-results/pages.json.
#
#   scripts/bench/bench-pages.sh [BOOK.pdf] [PAGES]      (default: ../shared/pdfs/octave-manual.pdf, 50)
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages qpdf
BOOK="$(realpath "${1:-$KB_ROOT/../shared/pdfs/octave-manual.pdf}")"
PAGES="${2:-50}"
[ -f "$BOOK" ] || { echo "error: no PDF at $BOOK; name a book as the first argument." >&2; exit 1; }

bash scripts/install-model.sh
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    say "Building kb (release)"
    kb_build --product kb >/dev/null
    KB="$KB_BIN_DIR/kb"
fi
new_service_workdir pages
export KB_DB="$WORK/pages.sqlite" KB_PAGE_CACHE_DIR="$WORK/page-cache"
# The first 200 pages: the pictures are what is measured, not the upload's embedding.
qpdf --empty --pages "$BOOK" 1-200 -- "$WORK/book.pdf" 2>/dev/null || cp "$BOOK" "$WORK/book.pdf"
start_sample_server
say "Uploading $(basename "$BOOK") (200 pages) and waiting for its job"
curl -sf -X POST -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/pdf" --data-binary @"$WORK/book.pdf" \
    "$URL/v1/sources?id=book&title=Book" >/dev/null
mkdir -p bench-results
PYTHON="$KB_ROOT/.build/test-venv/bin/python"
[ -x "$PYTHON" ] || PYTHON=python3
say "Rendering $PAGES pages cold, then cached, then 1,000 views"
"$PYTHON" - "$URL" "$TOKEN" "$PAGES" "$WORK/page-cache" <<'PY'
import json, os, statistics, sys, time, urllib.request
url, token, pages, cache = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
auth = {"Authorization": "Bearer " + token}
def get(path):
    request = urllib.request.Request(url + path, headers=auth)
    start = time.perf_counter()
    with urllib.request.urlopen(request) as answer:
        body = answer.read()
        count = int(answer.headers.get("KB-Page-Count", "0"))
    return (time.perf_counter() - start) * 1000, len(body), count
for _ in range(600):   # the upload's job
    job = json.load(urllib.request.urlopen(urllib.request.Request(url + "/v1/sources/book", headers=auth)))
    if job.get("state") == "ready": break
    time.sleep(0.5)
total = get("/v1/sources/book/pages/1?width=200")[2]
chosen = [1 + i * max(1, total // pages) for i in range(min(pages, total))]
cold = [get(f"/v1/sources/book/pages/{p}?width=1000") for p in chosen]
warm = [get(f"/v1/sources/book/pages/{p}?width=1000") for p in chosen]
widths = [400, 700, 1000, 1400]
start = time.perf_counter()
views = [get(f"/v1/sources/book/pages/{1 + (i * 7919) % total}?width={widths[i % 4]}") for i in range(1000)]
elapsed = time.perf_counter() - start
size = sum(os.path.getsize(os.path.join(cache, f)) for f in os.listdir(cache) if f.endswith(".png"))
def q(values, p): return sorted(values)[min(len(values) - 1, int(p * len(values)))]
result = {
    "pages": total, "sampled": len(chosen),
    "cold_ms": {"p50": statistics.median(t for t, _, _ in cold), "p95": q([t for t, _, _ in cold], 0.95)},
    "cached_ms": {"p50": statistics.median(t for t, _, _ in warm), "p95": q([t for t, _, _ in warm], 0.95)},
    "picture_kb_p50": statistics.median(b for _, b, _ in cold) / 1024,
    "views": 1000, "views_seconds": elapsed, "cache_bytes_after_views": size,
}
print(json.dumps(result, indent=2))
json.dump(result, open("bench-results/pages.json", "w"), indent=2)
PY
