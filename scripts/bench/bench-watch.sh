#!/usr/bin/env bash
# A watched folder (`kb serve --watch`): the release build on loopback, the local model.
#
# 1. Save to searchable: SAVES times (default 20), one file of the folder gets a line with a new
#    word, and the clock stops when POST /v1/search (keyword) finds that word: median, p90, max.
# 2. The cost of an idle watch: CPU seconds and resident memory of `kb serve --watch FOLDER` over
#    IDLE seconds (default 60) with nothing changing, beside the same server without --watch.
#
# The folder is copied to a scratch folder first (the benchmark edits its files): the shared notes
# (../shared/notes, 1,081 Markdown files in 109 folders) when present, else corpus/.
#
#   scripts/bench/bench-watch.sh [FOLDER] [SAVES] [IDLE]
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
bash scripts/install-model.sh
SOURCE="${1:-}"
if [ -z "$SOURCE" ]; then
    if [ -d "$KB_ROOT/../shared/notes" ]; then SOURCE="$KB_ROOT/../shared/notes"; else SOURCE="$KB_ROOT/corpus"; fi
fi
[ -d "$SOURCE" ] || { echo "error: $SOURCE is not a folder; name the folder to watch." >&2; exit 1; }
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    say "Building kb (release)"
    kb_build --product kb >/dev/null
    KB="$KB_BIN_DIR/kb"
fi
new_service_workdir watch
cp -r "$SOURCE" "$WORK/folder"
export KB_DB="$WORK/watch.sqlite"
say "Indexing $(find "$WORK/folder" -type f | wc -l) files of $SOURCE with the local model"
"$KB" ingest "$WORK/folder" >/dev/null || true
mkdir -p bench-results
python3 scripts/bench/bench_watch.py --kb "$KB" --db "$KB_DB" --folder "$WORK/folder" --port "$PORT" --token "$TOKEN" \
    --saves "${2:-20}" --idle "${3:-60}" --out bench-results/watch.json
