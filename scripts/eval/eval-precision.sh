#!/usr/bin/env bash
# The reduced-precision encoder's quality gate on SciFact (train split): nDCG@10 of vector and
# hybrid search with the corpus and queries embedded in bf16 and in int8 must stay within 0.005
# of fp32's. Also measures a mixed index (passages int8, queries fp32), which the README allows.
#
#   scripts/eval/eval-precision.sh [OUT]     needs ../shared/datasets/scifact (SCIFACT=path); KB_BIN=path
#                                       runs a kb built elsewhere
#
# Precisions this CPU lacks are skipped (and said so). Exits 1 when a gate fails.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
OUT="${1:-$KB_ROOT/.build/eval-precision}"
SCIFACT="${SCIFACT:-$KB_ROOT/../shared/datasets/scifact}"
[ -f "$SCIFACT/corpus.jsonl" ] || { echo "error: no SciFact corpus at $SCIFACT; set SCIFACT=path" >&2; exit 1; }
mkdir -p "$OUT"
bash scripts/install-model.sh
if [ -n "${KB_BIN:-}" ]; then
    KB="$KB_BIN"   # a kb built elsewhere (e.g. a copy, so that Sources may change meanwhile)
else
    say "Building kb (release)"
    kb_build --product kb >/dev/null 2>&1 || kb_build --product kb
    KB="$KB_BIN_DIR/kb"
fi

evaluate() {  # name index-precision query-precision
    local name="$1" db="$OUT/scifact-$2.sqlite"
    say "SciFact train: passages $2, queries $3"
    local start=$SECONDS
    if ! "$KB" eval "$SCIFACT" --split train --mode all --db "$db" --precision "$3" --json > "$OUT/$name.json" 2> "$OUT/$name.err"; then
        if grep -q "instructions for --precision" "$OUT/$name.err"; then
            say "  skipped: $(cat "$OUT/$name.err")"; rm -f "$OUT/$name.json"; return 0
        fi
        cat "$OUT/$name.err" >&2; exit 1
    fi
    echo "  $((SECONDS - start)) s"
}
rm -f "$OUT"/*.json
# The index is built with the precision of its first run; later runs reuse it and embed only the queries.
evaluate fp32 fp32 fp32
evaluate bf16 bf16 bf16
evaluate int8 int8 int8
evaluate int8-passages-fp32-queries int8 fp32

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(name):
    path = f"{out}/{name}.json"
    if not os.path.exists(path): return None
    report = json.load(open(path))
    return {m["mode"]: m["metrics"]["ndcg@10"] for m in report["modes"]}
base = load("fp32")
failed = False
print(f"{'run':<30}{'vector nDCG@10':>16}{'hybrid nDCG@10':>16}{'Δ vector':>10}{'Δ hybrid':>10}")
for name in ("fp32", "bf16", "int8", "int8-passages-fp32-queries"):
    r = load(name)
    if r is None:
        print(f"{name:<30}{'(not run on this CPU)':>32}"); continue
    dv, dh = r["vector"] - base["vector"], r["hybrid"] - base["hybrid"]
    bad = abs(dv) > 0.005 or abs(dh) > 0.005
    failed |= bad
    print(f"{name:<30}{r['vector']:>16.4f}{r['hybrid']:>16.4f}{dv:>+10.4f}{dh:>+10.4f}{'  FAIL' if bad else ''}")
sys.exit(1 if failed else 0)
PY
