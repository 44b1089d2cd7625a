#!/usr/bin/env bash
# PDF extraction speed: `kb inspect` (extraction, cleaning and chunking; no embedding, no index)
# against `pdftotext` on the same book, repeated; prints both medians and their ratio, and
# kb's peak resident memory.
#
#   scripts/bench/bench-pdf.sh [BOOK.pdf] [RUNS]     default: ../shared/pdfs/octave-manual.pdf, 5 runs
#   KB_BIN=path measures that kb instead of building one.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
BOOK="${1:-$KB_ROOT/../shared/pdfs/octave-manual.pdf}"
RUNS="${2:-5}"
[ -f "$BOOK" ] || { echo "error: no PDF at $BOOK; pass one" >&2; exit 1; }
ensure_system_packages poppler-utils
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    kb_build --product kb >/dev/null 2>&1 || kb_build --product kb
    KB="$KB_BIN_DIR/kb"
fi
now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
kb=(); ref=()
for i in $(seq "$RUNS"); do
    t0=$(now); "$KB" inspect --json "$BOOK" >/dev/null; t1=$(now)
    pdftotext "$BOOK" - >/dev/null; t2=$(now)
    kb+=("$(awk "BEGIN {print $t1 - $t0}")"); ref+=("$(awk "BEGIN {print $t2 - $t1}")")
done
rss=$( { /usr/bin/time -f "%M" "$KB" inspect --json "$BOOK" >/dev/null; } 2>&1 | tail -1)
pages=$(pdfinfo "$BOOK" 2>/dev/null | awk '/^Pages:/ {print $2}')
mk=$(median "${kb[@]}"); mr=$(median "${ref[@]}")
echo "book: $BOOK ($pages pages), $RUNS runs"
printf 'kb inspect: median %.3f s  (%s)\n' "$mk" "${kb[*]}"
printf 'pdftotext:  median %.3f s  (%s)\n' "$mr" "${ref[*]}"
printf 'ratio kb/pdftotext: %.2fx; kb peak resident memory %s MB\n' "$(awk "BEGIN {print $mk / $mr}")" "$(awk "BEGIN {print int($rss / 1024)}")"
