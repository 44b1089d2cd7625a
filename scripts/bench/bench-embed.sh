#!/usr/bin/env bash
# Embedding throughput and latency of kb's local model, side by side with the reference
# implementation (sentence-transformers on PyTorch CPU, 2 threads) on the same texts, same run.
#
#   scripts/bench/bench-embed.sh            # needs ../shared/datasets/scifact for real texts
#
# Texts: 500 passages of 100 words (SciFact abstracts) and 500 short sentences (SciFact claims).
# The reference is installed from PyPI into a throwaway venv (.venv-bench, reused if present).
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
THREADS="${THREADS:-2}"
SCIFACT="${SCIFACT:-$KB_ROOT/../shared/datasets/scifact}"
[ -f "$SCIFACT/corpus.jsonl" ] || { echo "error: no SciFact corpus at $SCIFACT; set SCIFACT=path" >&2; exit 1; }
bash scripts/install-model.sh
MODEL="${KB_MODEL_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/kb/models/all-MiniLM-L6-v2}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

python3 - "$SCIFACT" "$WORK" <<'PY'
import json, sys
scifact, work = sys.argv[1], sys.argv[2]
passages = []
for line in open(f"{scifact}/corpus.jsonl", encoding="utf-8"):
    d = json.loads(line)
    words = (d.get("title", "") + ". " + d["text"]).split()
    if len(words) >= 100:
        passages.append(" ".join(words[:100]))
    if len(passages) == 500:
        break
claims = [json.loads(l)["text"].replace("\n", " ") for l in open(f"{scifact}/queries.jsonl", encoding="utf-8")][:500]
open(f"{work}/passages.txt", "w").write("\n".join(passages) + "\n")
open(f"{work}/sentences.txt", "w").write("\n".join(claims) + "\n")
PY

say "Building kb-bench (release)"
kb_build --product kb-bench >/dev/null 2>&1 || kb_build --product kb-bench
say "Measuring kb"
.build/release/kb-bench embed "$WORK/passages.txt" "$WORK/sentences.txt" > "$WORK/kb.json"

VENV="$KB_ROOT/.venv-bench"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import sentence_transformers" 2>/dev/null; then
    say "Installing the reference (sentence-transformers, PyTorch CPU) into $VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "torch==2.13.0+cpu" sentence-transformers >&2
fi
say "Measuring sentence-transformers"
OMP_NUM_THREADS="$THREADS" HF_HUB_OFFLINE=1 "$VENV/bin/python" scripts/bench/bench_embed_reference.py \
    "$MODEL" "$WORK/passages.txt" "$WORK/sentences.txt" "$THREADS" > "$WORK/ref.json" 2>"$WORK/ref.err" \
    || { cat "$WORK/ref.err" >&2; exit 1; }

python3 - "$WORK/kb.json" "$WORK/ref.json" <<'PY'
import json, sys
kb, ref = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print(f"kb:        {kb['implementation']}, {kb['cores']} cores")
print(f"reference: {ref['implementation']}, {ref['threads']} threads\n")
print(f"{'workload':<22}{'kb texts/s':>12}{'ref texts/s':>13}{'kb tokens/s':>13}{'ref tokens/s':>14}{'ratio':>8}")
for key in ("passages_batch1", "passages_batch32", "sentences_batch1", "sentences_batch32"):
    a, b = kb[key], ref[key]
    print(f"{key:<22}{a['texts_per_s']:>12.1f}{b['texts_per_s']:>13.1f}{a['tokens_per_s']:>13.0f}{b['tokens_per_s']:>14.0f}{a['texts_per_s'] / b['texts_per_s']:>7.2f}x")
print(f"\none query ({kb['query_tokens']} tokens): kb median {kb['query_ms_median']:.2f} ms (p95 {kb['query_ms_p95']:.2f}), "
      f"reference median {ref['query_ms_median']:.2f} ms (p95 {ref['query_ms_p95']:.2f}), ratio {ref['query_ms_median'] / kb['query_ms_median']:.2f}x")
print(f"kb peak resident memory: {kb['peak_rss_mb']:.0f} MB")
PY
