#!/usr/bin/env bash
# OCR speed and accuracy on a generated scan of a real book (release build):
#   1. COUNT pages of BOOK (from page FIRST), rendered at 150 and 300 dpi into image-only PDFs
#      (JPEG pages, as scanners write); the book's text layer is the known text.
#   2. Each scan read by kb's OCR path (poppler rendering at the scan's resolution, Tesseract
#      with LANGUAGES) with 1 and 2 workers: pages/s, word accuracy against the known text (the
#      share of the text layer's words found, punctuation and case ignored), lowest confidence.
#   3. The 300-dpi scan ingested with `kb ingest --ocr auto` into a fresh index, and a keyword
#      search for a phrase printed on one page only: the best hit's page range must hold that page.
# Prints a table; writes bench-results/ocr.json.
#
#   scripts/bench/bench-ocr.sh [BOOK.pdf] [FIRST] [COUNT] [LANGUAGES]
#   (defaults: ../shared/pdfs/gnuplot-manual.pdf, 21, 20, eng)
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages
BOOK="${1:-$KB_ROOT/../shared/pdfs/gnuplot-manual.pdf}"
FIRST="${2:-21}"
COUNT="${3:-20}"
LANGUAGES="${4:-eng}"
[ -f "$BOOK" ] || { echo "error: no PDF at $BOOK; pass one with a text layer" >&2; exit 1; }

build_release_tools
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p bench-results
RESULTS=()
for dpi in 150 300; do
    say "Making a $COUNT-page scan of $(basename "$BOOK") at $dpi dpi"
    "$BENCH" ocr-scan "$BOOK" "$FIRST" "$COUNT" "$dpi" "$WORK/scan-$dpi.pdf" >/dev/null
    for workers in 1 2; do
        say "OCR at $dpi dpi, $workers worker(s)"
        RESULTS+=("$("$BENCH" ocr "$WORK/scan-$dpi.pdf" "$workers" "$LANGUAGES")")
    done
done

say "Ingesting the 300-dpi scan with --ocr auto and searching for a phrase printed on one page"
PHRASE="$(python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['phrase']; print(p['page']); print(p['text'])" "$WORK/scan-300.pdf.json")"
PAGE="$(echo "$PHRASE" | head -1)"; TEXT="$(echo "$PHRASE" | tail -1)"
start=$(date +%s.%N)
"$KB" ingest --db "$WORK/kb.sqlite" --embedder hashing --ocr auto --ocr-lang "$LANGUAGES" --json "$WORK/scan-300.pdf" > "$WORK/ingest.json"
seconds=$(awk "BEGIN {print $(date +%s.%N) - $start}")
"$KB" search --db "$WORK/kb.sqlite" --mode keyword --json -k 3 "$TEXT" > "$WORK/search.json"

python3 - "$WORK" "$PAGE" "$TEXT" "$seconds" "$BOOK" "${RESULTS[@]}" <<'PY'
import json, sys
work, page, text, seconds, book = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
runs = [json.loads(r) for r in sys.argv[6:]]
hits = json.load(open(f"{work}/search.json"))["hits"]
best = hits[0]["snippet"] if hits else None
found = bool(best and best["pages"]["start"] <= page <= best["pages"]["end"])
ingest = json.load(open(f"{work}/ingest.json"))
print(f"\nbook: {book}, {runs[0]['pages']} pages, languages {runs[0]['languages']}\n")
print("| dpi | workers | pages/s | seconds | word accuracy | lowest snippet confidence |")
print("|---|---|---|---|---|---|")
for r in runs:
    print(f"| {r['dpi']} | {r['workers']} | {r['pages_per_second']:.2f} | {r['seconds']:.1f} | {r['word_accuracy']:.4f} | {r['lowest_snippet_confidence']:.1f} |")
print(f"\nkb ingest --ocr auto (300 dpi): {seconds:.1f} s, {ingest['ocrPages']} pages recognised, {ingest['snippets']} snippets")
where = f"pp. {best['pages']['start']}-{best['pages']['end']}" if best else "no hit"
print(f"keyword search \"{text}\" (printed on page {page}): best hit {where}, OCR confidence "
      f"{(best or {}).get('ocr', {}).get('confidence', 0):.1f} -> {'found' if found else 'NOT FOUND'}")
json.dump({"book": book, "runs": runs, "ingest_seconds": seconds, "ingest": ingest,
           "search": {"phrase": text, "page": page, "best": best, "found": found}},
          open("bench-results/ocr.json", "w"), indent=2, ensure_ascii=False)
sys.exit(0 if found else 1)
PY
