#!/usr/bin/env bash
# Retrieval quality: runs `kb eval --mode all --fusion all` on the project's own sets
# (evaluation/astrology, evaluation/conversations, evaluation/multilingual; evaluation/memory-time
# through scripts/eval/eval_memory_time.py) and on the public sets
# in ../shared/datasets when present (XQuAD's languages, native Arabic questions (arcd-train), SciFact train,
# Cranfield, CISI, and LoCoMo conversations 0-4,
# turned into a BEIR layout of transcripts at run time by scripts/eval/locomo_beir.py: nothing of it is
# committed). The model is kb's default for a new index (multilingual-e5-small) unless --model
# names another (all-MiniLM-L6-v2, say). Extra `kb eval`
# options for every set (a re-ranker, say) come from KB_EVAL_OPTIONS, e.g.
# KB_EVAL_OPTIONS="--reranker http://127.0.0.1:8012/v1 --reranker-model bge-reranker-v2-m3".
#
#   scripts/eval/eval.sh [--model NAME] [OUT]
#                              KB_BIN=PATH runs that kb binary instead of building one.
#                              reports (Markdown, SVG, JSON, TREC run files) go to OUT
#                              (default .build/eval-reports, or .build/eval-reports-NAME); indexes
#                              are kept in OUT too, so a re-run only re-runs the queries.
#                              --model NAME installs and uses that model.
# Ends with one table of every set: nDCG@10 (LoCoMo: recall@10) of each arm beside hybrid, a set
# whose hybrid is below its better arm by more than 0.005 marked (`scripts/eval/eval.sh --table [OUT]`
# prints it again from the reports).
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
MODEL_ARGS=()
if [ "${1:-}" = "--model" ]; then
    bash scripts/install-model.sh "$2"
    MODEL_ARGS=(--model "$2")
    DEFAULT_OUT="$KB_ROOT/.build/eval-reports-$2"
    shift 2
fi
TABLE_ONLY=0
if [ "${1:-}" = "--table" ]; then TABLE_ONLY=1; shift; fi
OUT="${1:-${DEFAULT_OUT:-$KB_ROOT/.build/eval-reports}}"

# One line a set from its report.json: each arm beside hybrid, in the order the sets ran.
table() {
    python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = []
for name in sorted(os.listdir(out), key=lambda n: os.path.getmtime(os.path.join(out, n))):
    path = os.path.join(out, name, "report.json")
    if not os.path.isfile(path):
        continue
    report = json.load(open(path, encoding="utf-8"))
    if "modes" not in report:
        continue
    metric = "recall@10" if name.startswith("locomo") else "ndcg@10"
    score = {m["mode"]: m["metrics"][metric] for m in report["modes"]}
    if not {"keyword", "vector", "hybrid"} <= score.keys():
        continue
    better = max(score["keyword"], score["vector"])
    mark = "  below its better arm" if score["hybrid"] < better - 0.005 else ""
    rows.append(f"| {name} | {report['queries']} | {metric} | {score['keyword']:.4f} | {score['vector']:.4f} | **{score['hybrid']:.4f}** |{mark}")
print("| set | queries | metric | keyword | vector | hybrid |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
PY
}
if [ "$TABLE_ONLY" = 1 ]; then table; exit 0; fi
SHARED="$KB_ROOT/../shared/datasets"
mkdir -p "$OUT"
bash scripts/install-model.sh multilingual-e5-small
if [ -n "${KB_BIN:-}" ]; then
    KB="$KB_BIN"   # a kb built before (a copy, so that building meanwhile does not change the run)
else
    say "Building kb (release)"
    kb_build --product kb >/dev/null 2>&1 || kb_build --product kb
    KB="$KB_BIN_DIR/kb"
fi

run() {  # name folder split [kb eval options…]
    local name="$1" folder="$2" split="$3"
    shift 3
    say "kb eval $folder --split $split $*"
    # shellcheck disable=SC2086
    "$KB" eval "$folder" --split "$split" --mode all --fusion all ${KB_EVAL_OPTIONS:-} --db "$OUT/$name.sqlite" --report "$OUT/$name" --run-file "$OUT/$name/run.txt" \
        ${MODEL_ARGS[@]+"${MODEL_ARGS[@]}"} "$@"
    echo
}
run astrology evaluation/astrology test
# Follow-up questions and changes of subject: each mode alone, concatenated and kb's way.
run conversations-followup evaluation/conversations followup
run conversations-switch evaluation/conversations switch
# Ukrainian and Arabic with the defaults (each word by its script's rules) and tuned for the one
# language; then English queries over the Ukrainian notes (cross-lingual).
run multilingual-uk evaluation/multilingual uk
run multilingual-uk-ukrainian evaluation/multilingual uk --language ukrainian
run multilingual-ar evaluation/multilingual ar
run multilingual-ar-arabic evaluation/multilingual ar --language arabic
run multilingual-cross evaluation/multilingual cross
say "Memories over time (evaluation/memory-time)"
python3 scripts/eval/eval_memory_time.py "$KB" "$OUT/memory-time"
# XQuAD as passage retrieval: monolingual (de-de, el-el, …) and cross-lingual (en-de: English
# questions over German paragraphs, …) sets, read from ../shared at run time.
if [ -d "$SHARED/xquad" ]; then
    for set in "$SHARED"/xquad/*/; do
        [ -f "$set/qrels/test.tsv" ] && run "xquad-$(basename "$set")" "$set" test
    done
fi
[ -f "$SHARED/arcd-train/qrels/test.tsv" ] && run arcd-train "$SHARED/arcd-train" test
[ -d "$SHARED/scifact" ] && run scifact "$SHARED/scifact" train
[ -d "$SHARED/cranfield" ] && run cranfield "$SHARED/cranfield" test
[ -d "$SHARED/cisi" ] && run cisi "$SHARED/cisi" test
if [ -f "$SHARED/locomo/locomo-conversations-0-4.json" ]; then
    say "LoCoMo conversations 0-4 as transcripts (built at run time, for evaluation only)"
    python3 scripts/eval/locomo_beir.py "$SHARED/locomo/locomo-conversations-0-4.json" "$OUT/locomo-beir" | tail -1
    run locomo "$OUT/locomo-beir" test
fi
say "Every set (defaults unless --model), hybrid beside each arm"
table | tee "$OUT/table.md"
echo "Reports: $OUT/*/report.md; the table: $OUT/table.md"
