#!/usr/bin/env bash
# Times `kb ingest` (release build) on a folder of notes: a first run into a new index, then an
# unchanged re-run, each repeated; prints medians and their ratio.
#
#   scripts/bench/bench-ingest.sh [FOLDER] [RUNS]      default: ../shared/notes (else corpus/), 5 runs
#   KB_BIN=path measures that kb instead of building one.
#
# KB_BENCH_EMBEDDER=none (default: reading, chunking, tagging, SQLite and FTS5 only) or local
# (the built-in model embeds every snippet too; use RUNS=1, it takes minutes).
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
# From a plain clone (no ../shared), the sample corpus.
DEFAULT_FOLDER="$KB_ROOT/../shared/notes"
[ -d "$DEFAULT_FOLDER" ] || DEFAULT_FOLDER="$KB_ROOT/corpus"
FOLDER="${1:-$DEFAULT_FOLDER}"
RUNS="${2:-5}"
EMBEDDER="${KB_BENCH_EMBEDDER:-none}"
[ -d "$FOLDER" ] || { echo "error: no folder $FOLDER; pass a folder of notes" >&2; exit 1; }
FOLDER="$(cd "$FOLDER" && pwd)"

if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    kb_build --product kb >/dev/null 2>&1 || kb_build --product kb
    KB="$KB_BIN_DIR/kb"
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

files=$(find "$FOLDER" -type f \( -name '*.md' -o -name '*.markdown' -o -name '*.txt' \) -not -path '*/.*' | wc -l)
bytes=$(find "$FOLDER" -type f \( -name '*.md' -o -name '*.markdown' -o -name '*.txt' \) -not -path '*/.*' -exec cat {} + | wc -c)
echo "folder: $FOLDER ($files files, $bytes bytes), embedder $EMBEDDER, $RUNS runs each, $(nproc) cores"

now() { date +%s.%N; }
first=(); again=()
for i in $(seq "$RUNS"); do
    rm -f "$WORK"/kb.sqlite*
    t0=$(now); "$KB" ingest --embedder "$EMBEDDER" --db "$WORK/kb.sqlite" "$FOLDER" >/dev/null || true; t1=$(now)
    "$KB" ingest --db "$WORK/kb.sqlite" "$FOLDER" >/dev/null || true; t2=$(now)
    first+=("$(awk "BEGIN {print $t1 - $t0}")"); again+=("$(awk "BEGIN {print $t2 - $t1}")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
m1=$(median "${first[@]}"); m2=$(median "${again[@]}")
"$KB" status --db "$WORK/kb.sqlite" | sed 's/^/  /'
printf 'first ingest:      median %.3f s  (%s)\n' "$m1" "${first[*]}"
printf 'unchanged re-run:  median %.3f s  (%s)\n' "$m2" "${again[*]}"
printf 'ratio first/re-run: %.1fx\n' "$(awk "BEGIN {print $m1 / $m2}")"
