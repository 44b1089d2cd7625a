#!/usr/bin/env bash
# Vector search speed: kb's VectorMatrix side by side with numpy and FAISS IndexFlatIP on the same
# random unit vectors (d = 384) and queries, in the same run, at the same thread count.
#
#   scripts/bench/bench-search.sh [N ...]        default: 10000 100000 1000000
#
# For each N: single-query latency (median, p95 over 200 queries, top-10), batch throughput
# (batches of 64), kb's load time from SQLite and resident memory against the raw matrix, and
# agreement of kb's top-10 with numpy's. numpy and faiss-cpu come from PyPI in .venv-bench.
# With KB_RECALL_INDEX=index.sqlite KB_RECALL_QUERIES=queries.jsonl it also measures the int8
# scan's recall@10 on real embeddings (e.g. the SciFact index scripts/eval/eval.sh keeps).
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
THREADS="${THREADS:-2}"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(10000 100000 1000000)

say "Building kb-bench (release)"
kb_build --product kb-bench >/dev/null 2>&1 || kb_build --product kb-bench
VENV="$KB_ROOT/.venv-bench"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/python" -c "import numpy, faiss" 2>/dev/null || {
    say "Installing numpy and faiss-cpu into $VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check numpy faiss-cpu >&2
}

for n in "${SIZES[@]}"; do
    WORK="$(mktemp -d)"
    say "N = $n"
    OPENBLAS_NUM_THREADS="$THREADS" .build/release/kb-bench search "$n" "$WORK" > "$WORK/kb.json"
    rm -f "$WORK/bench.sqlite"*
    OMP_NUM_THREADS="$THREADS" OPENBLAS_NUM_THREADS="$THREADS" MKL_NUM_THREADS="$THREADS" \
        "$VENV/bin/python" scripts/bench/bench_search_reference.py "$WORK" "$n" "$THREADS" > "$WORK/ref.json"
    python3 - "$WORK/kb.json" "$WORK/ref.json" <<'PY'
import json, sys
kb, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
np_, fa = ref["numpy"], ref["faiss"]
agree = sum(len(set(a) & set(b)) for a, b in zip(kb["top10_rows"], np_["top10_rows"])) / (10 * len(kb["top10_rows"]))
print(f"  {'':<28}{'kb':>10}{'numpy':>10}{'faiss':>10}{'kb/numpy':>10}{'kb/faiss':>10}")
for key, label, better in (("single_ms_median", "single query, median ms", "lower"),
                           ("single_ms_p95", "single query, p95 ms", "lower"),
                           ("batch64_queries_per_s", "batch of 64, queries/s", "higher")):
    f = fa[key] if fa else float("nan")
    print(f"  {label:<28}{kb[key]:>10.2f}{np_[key]:>10.2f}{f:>10.2f}{kb[key] / np_[key]:>9.2f}x{kb[key] / f:>9.2f}x")
print(f"  kb load from SQLite: {kb['load_seconds']:.2f} s; resident {kb['resident_mb_for_matrix']:.0f} MB for a "
      f"{kb['raw_matrix_mb']:.0f} MB matrix ({kb['resident_mb_for_matrix'] / kb['raw_matrix_mb']:.2f}x); "
      f"top-10 agreement with numpy {agree:.4f}")
print(f"  kb int8 scan + float32 rescoring: median {kb['quantized_single_ms_median']:.2f} ms (p95 {kb['quantized_single_ms_p95']:.2f}), "
      f"recall@10 vs exact {kb['quantized_recall_at_10']:.4f}, int8 copy built in {kb['quantize_seconds']:.2f} s")
PY
    rm -rf "$WORK"
done

# The int8 scan on real embeddings: an index built by kb (e.g. by scripts/eval/eval.sh) and real queries.
if [ -n "${KB_RECALL_INDEX:-}" ] && [ -n "${KB_RECALL_QUERIES:-}" ]; then
    say "int8 recall@10 on real embeddings: $KB_RECALL_INDEX"
    .build/release/kb-bench quantized-recall "$KB_RECALL_INDEX" "$KB_RECALL_QUERIES"
fi
