#!/usr/bin/env bash
# int8 passages as a retrieval-quality question: for the default model (multilingual-e5-small) on
# SciFact (train split), LoCoMo conversations 0–4, every XQuAD set in ../shared/datasets/xquad, the
# native Arabic questions (arcd-train), Cranfield and CISI (ONLY="arcd-train cranfield" runs those),
# nDCG@10 of vector and hybrid search with the index embedded in bf16 (what `auto` gives a new
# index on CPUs with AVX-512 BF16 but no VNNI, and every index made before kb recorded its
# precision) against the index embedded in int8 with its queries in int8 too (what `auto` gives a
# new index on CPUs with VNNI, kb's default there). The gate: within 0.005 of bf16 on every set.
# Also shows int8 passages searched with bf16 queries (an index shared with a machine without
# VNNI) and times each index's ingest.
#
#   scripts/eval/eval-int8-passages.sh [OUT]      (default .build/eval-int8-passages; KB_BIN=path)
#   MODEL=all-MiniLM-L6-v2 measures the English model instead.
#
# Needs ../shared/datasets (SHARED=path); a set that is missing is skipped (and said so). Writes
# OUT/summary.json; exits 1 when the gate fails on a set.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
OUT="${1:-$KB_ROOT/.build/eval-int8-passages}"
SHARED="${SHARED:-$KB_ROOT/../shared/datasets}"
MODEL="${MODEL:-multilingual-e5-small}"
mkdir -p "$OUT"
bash scripts/install-model.sh "$MODEL" >/dev/null
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else
    say "Building kb (release)"
    kb_build --product kb >/dev/null 2>&1 || kb_build --product kb
    KB="$KB_BIN_DIR/kb"
fi
grep -q avx512_bf16 /proc/cpuinfo || { echo "error: this CPU has no AVX-512 BF16, so bf16 is not the default to compare with" >&2; exit 1; }
grep -q avx512_vnni /proc/cpuinfo || { echo "error: this CPU has no AVX-512 VNNI (int8)" >&2; exit 1; }

SETS=()   # name|folder|split
[ -f "$SHARED/scifact/corpus.jsonl" ] && SETS+=("scifact|$SHARED/scifact|train") || say "skipped: no SciFact at $SHARED/scifact"
if [ -f "$SHARED/locomo/locomo-conversations-0-4.json" ]; then
    [ -f "$OUT/locomo/corpus.jsonl" ] || python3 scripts/eval/locomo_beir.py "$SHARED/locomo/locomo-conversations-0-4.json" "$OUT/locomo" >/dev/null
    SETS+=("locomo-0-4|$OUT/locomo|test")
else
    say "skipped: no LoCoMo at $SHARED/locomo"
fi
for folder in "$SHARED"/xquad/*/; do
    [ -f "$folder/corpus.jsonl" ] && SETS+=("xquad-$(basename "$folder")|${folder%/}|test")
done
for set in arcd-train cranfield cisi; do
    [ -f "$SHARED/$set/corpus.jsonl" ] && SETS+=("$set|$SHARED/$set|test") || say "skipped: no $set at $SHARED/$set"
done
if [ -n "${ONLY:-}" ]; then
    CHOSEN=()
    for entry in "${SETS[@]}"; do [[ " $ONLY " == *" ${entry%%|*} "* ]] && CHOSEN+=("$entry"); done
    SETS=("${CHOSEN[@]}")
fi

evaluate() {   # set folder split passages queries
    local db="$OUT/$1-$4.sqlite" out="$OUT/$1-$4-passages-$5-queries.json"
    [ -f "$out" ] && return 0
    local start=$SECONDS
    KB_PRECISION="$5" "$KB" eval "$2" --split "$3" --mode all --model "$MODEL" --db "$db" --json > "$out.partial" 2> "$OUT/$1.err" \
        || { cat "$OUT/$1.err" >&2; exit 1; }
    mv "$out.partial" "$out"
    echo "  $1: passages $4, queries $5 — $((SECONDS - start)) s"
}
for entry in "${SETS[@]}"; do
    IFS='|' read -r name folder split <<<"$entry"
    say "$name"
    # The index takes the precision of its first run; the second run of each reuses it (queries only).
    evaluate "$name" "$folder" "$split" bf16 bf16
    evaluate "$name" "$folder" "$split" int8 int8
    evaluate "$name" "$folder" "$split" int8 bf16
done

python3 - "$OUT" "$MODEL" "${SETS[@]}" <<'PY'
import json, sys
out, model, sets = sys.argv[1], sys.argv[2], [s.split("|")[0] for s in sys.argv[3:]]
def ndcg(path):
    report = json.load(open(path))
    return {m["mode"]: m["metrics"]["ndcg@10"] for m in report["modes"]}, report
rows, failed = [], []
print(f"{model}: nDCG@10, index in bf16 against index in int8 (queries in the index's precision); gate |Δ| ≤ 0.005")
print(f"{'set':<18}{'bf16 vector':>12}{'int8 vector':>12}{'Δ':>8}{'bf16 hybrid':>13}{'int8 hybrid':>12}{'Δ':>8}{'bf16 queries Δ hybrid':>23}")
for name in sets:
    base, _ = ndcg(f"{out}/{name}-bf16-passages-bf16-queries.json")
    mixed, _ = ndcg(f"{out}/{name}-int8-passages-bf16-queries.json")
    every, _ = ndcg(f"{out}/{name}-int8-passages-int8-queries.json")
    dv, dh = every["vector"] - base["vector"], every["hybrid"] - base["hybrid"]
    bad = abs(dv) > 0.005 or abs(dh) > 0.005
    if bad: failed.append(name)
    rows.append({"set": name, "bf16": base, "int8_passages": mixed, "int8_all": every, "delta_vector": round(dv, 4), "delta_hybrid": round(dh, 4),
                 "delta_hybrid_bf16_queries": round(mixed["hybrid"] - base["hybrid"], 4)})
    print(f"{name:<18}{base['vector']:>12.4f}{every['vector']:>12.4f}{dv:>+8.4f}{base['hybrid']:>13.4f}{every['hybrid']:>12.4f}{dh:>+8.4f}"
          f"{mixed['hybrid'] - base['hybrid']:>+23.4f}{'  FAIL' if bad else ''}")
mean = lambda key: sum(r[key] for r in rows) / max(1, len(rows))
print(f"{'mean Δ':<18}{'':>12}{'':>12}{mean('delta_vector'):>+8.4f}{'':>13}{'':>12}{mean('delta_hybrid'):>+8.4f}")
json.dump({"model": model, "rows": rows, "failed": failed}, open(f"{out}/summary.json", "w"), indent=1)
print("gate: " + ("held on every set" if not failed else "failed on " + ", ".join(failed)))
sys.exit(1 if failed else 0)
PY
