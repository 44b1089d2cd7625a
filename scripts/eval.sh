#!/usr/bin/env bash
# Retrieval quality: runs `kb eval --mode all` on the project's own set (evaluation/astrology)
# and on the public sets in ../shared/datasets when present (SciFact train, Cranfield, CISI).
#
#   scripts/eval.sh [OUT]      reports (Markdown, SVG, JSON, TREC run files) go to OUT
#                              (default .build/eval-reports); indexes are kept in OUT too, so
#                              a re-run only re-runs the queries.
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
OUT="${1:-$KB_ROOT/.build/eval-reports}"
SHARED="$KB_ROOT/../shared/datasets"
mkdir -p "$OUT"
bash scripts/install-model.sh
say "Building kb (release)"
swift build -c release --product kb >/dev/null 2>&1 || swift build -c release --product kb
KB="$KB_ROOT/.build/release/kb"

run() {  # name folder split
    say "kb eval $2 --split $3"
    "$KB" eval "$2" --split "$3" --mode all --db "$OUT/$1.sqlite" --report "$OUT/$1" --run-file "$OUT/$1/run.txt"
    echo
}
run astrology evaluation/astrology test
[ -d "$SHARED/scifact" ] && run scifact "$SHARED/scifact" train
[ -d "$SHARED/cranfield" ] && run cranfield "$SHARED/cranfield" test
[ -d "$SHARED/cisi" ] && run cisi "$SHARED/cisi" test
echo "Reports: $OUT/*/report.md"
