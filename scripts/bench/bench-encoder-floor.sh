#!/usr/bin/env bash
# How fast a book can be embedded on this machine at all, against how fast kb embeds it: the
# CPU's measured peak (Benchmarks/cpu-peak/cpu-peak.c: fp32, bf16 and int8 multiply-adds on one
# core and on every core), the arithmetic the book's snippets need in the local model (kb-bench
# encoder-work: tokens, linear layers, attention), the floor that gives, and `kb ingest` of the
# book timed (reading alone with --embedder none; then embedded at the default precision — a new
# index's: int8 on CPUs with AVX-512 VNNI — and at --precision bf16), and where a forward pass's time goes (each stage on one core against its
# arithmetic). Writes bench-results/encoder-floor.json.
#
#   scripts/bench/bench-encoder-floor.sh [BOOK.pdf]   default: ../shared/pdfs/octave-manual.pdf when
#                                               present, else the sample corpus's book
#   MODEL=all-MiniLM-L6-v2 measures that model (default: multilingual-e5-small, a new index's);
#   the arithmetic and the ingest are the same model's.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
BOOK="${1:-$KB_ROOT/../shared/pdfs/octave-manual.pdf}"
[ -n "${1:-}" ] || [ -f "$BOOK" ] || BOOK="$KB_ROOT/corpus/books/reading-an-ephemeris.pdf"
[ -f "$BOOK" ] || { echo "error: no PDF at $BOOK; pass one" >&2; exit 1; }
MODEL="${MODEL:-multilingual-e5-small}"
bash scripts/install-model.sh "$MODEL" >/dev/null
MODEL_DIR="${XDG_DATA_HOME:-$HOME/.local/share}/kb/models/$MODEL"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p bench-results .build

say "Building kb and kb-bench (release), and cpu-peak"
kb_build --product kb >/dev/null 2>&1 || kb_build --product kb
kb_build --product kb-bench >/dev/null 2>&1 || kb_build --product kb-bench
clang -O2 -o .build/cpu-peak Benchmarks/cpu-peak/cpu-peak.c -lpthread
KB="$KB_BIN_DIR/kb"

# A peak is the best the CPU does: three runs (a shared machine's neighbours once cost one run 15%).
say "The CPU's peak ($(nproc) cores), best of three runs"
for run in 1 2 3; do .build/cpu-peak >> "$WORK/peak.jsonl"; done
cat "$WORK/peak.jsonl"

now() { date +%s.%N; }
ingest() {   # ingest NAME ARGS…: one timed `kb ingest` of the book into a new index
    local name="$1"; shift
    rm -f "$WORK"/kb.sqlite*
    local t0; t0=$(now)
    "$KB" ingest "$@" --db "$WORK/kb.sqlite" "$BOOK" >/dev/null || return 1
    awk "BEGIN {print $(now) - $t0}" > "$WORK/$name.seconds"
    echo "$name: $(cat "$WORK/$name.seconds") s"
}
say "Reading alone (--embedder none)"
ingest reading --embedder none
say "Embedded at the default precision, then the arithmetic its snippets needed, then --precision bf16"
ingest default --model "$MODEL"
# The snippets as that ingest cut them (the chunker counts the model's own tokens).
python3 - "$WORK/kb.sqlite" "$WORK/texts.txt" <<'PY'
import sqlite3, sys
rows = sqlite3.connect(sys.argv[1]).execute("select text from snippets order by id").fetchall()
open(sys.argv[2], "w", encoding="utf-8").write("".join(" ".join(t.split()) + "\n" for (t,) in rows))
PY
KB_MODEL_DIR="$MODEL_DIR" .build/release/kb-bench encoder-work "$WORK/texts.txt" > "$WORK/work.json"
cat "$WORK/work.json"; echo
"$KB" status --db "$WORK/kb.sqlite" | sed -n 's/^Precision: \([a-z0-9]*\).*/\1/p' > "$WORK/default.precision"
echo "the default embedded in $(cat "$WORK/default.precision")"
# (A CPU without AVX-512 BF16 has no bf16 products: `kb ingest` says so and that run is left out.)
ingest bf16 --model "$MODEL" --precision bf16 || echo "bf16: not measured"
# Where a pass's time goes: each stage of one forward pass (32 passages × 128 tokens on one core,
# bf16 where the CPU has it) against its arithmetic and one core's peak.
say "Each stage of a forward pass on one core (kb-bench encoder-profile)"
precision=$(grep -q '"bf16","threads":1' "$WORK/peak.jsonl" && echo bf16 || echo fp32)
KB_PRECISION=$precision KB_MODEL_DIR="$MODEL_DIR" .build/release/kb-bench encoder-profile 1 > "$WORK/stages.json"
cp "$MODEL_DIR/config.json" "$WORK/config.json"
echo "$precision" > "$WORK/stages.precision"

python3 - "$WORK" "$BOOK" <<'PY'
import json, os, sys
work, book = sys.argv[1], sys.argv[2]
peak = {}
for p in map(json.loads, open(f"{work}/peak.jsonl")):
    peak[(p["kind"], p["threads"])] = max(peak.get((p["kind"], p["threads"]), 0), p["gops"])
cores = max(t for _, t in peak)
w = json.load(open(f"{work}/work.json"))
seconds = {n: float(open(f"{work}/{n}.seconds").read()) for n in ("reading", "default", "bf16") if os.path.exists(f"{work}/{n}.seconds")}
default_precision = open(f"{work}/default.precision").read().strip() or "?"
linear, attention = w["linear_operations"], w["attention_operations"]
kinds = [k for k in ("fp32", "bf16", "int8") if (k, cores) in peak]
floor = {kind: (linear + attention) / (peak[(kind, cores)] * 1e9) for kind in kinds}
result = {"book": os.path.basename(book), "cores": cores, "peak_gops": {f"{k}x{t}": v for (k, t), v in peak.items()},
          "work": w, "seconds": seconds, "default_precision": default_precision, "floor_seconds_all_cores": floor}
print(f"book {result['book']}: {w['texts']} snippets, {w['tokens']} tokens (longest {w['longest']}); "
      f"{linear / 1e12:.2f} T operations in the linear layers, {attention / 1e12:.2f} T in attention")
for kind in kinds:
    print(f"floor at the measured {kind} peak of all {cores} cores ({peak[(kind, cores)]:.0f} G/s): "
          f"{floor[kind]:.1f} s of arithmetic alone")
embed = seconds["default"] - seconds["reading"]
print(f"kb ingest: reading {seconds['reading']:.1f} s; embedded at the default precision ({default_precision}) {seconds['default']:.1f} s, "
      + (f"at bf16 {seconds['bf16']:.1f} s" if "bf16" in seconds else "bf16 not measured")
      + "; the default's embedding runs at "
      f"{(linear + attention) / embed / 1e9:.0f} G operations/s"
      + (f" ({100 * (linear + attention) / embed / 1e9 / peak[('bf16', cores)]:.0f}% of the bf16 peak)" if "bf16" in kinds else ""))
if "bf16" in kinds:
    result["ingest_over_bf16_floor"] = seconds["default"] / floor["bf16"]
    print(f"ingest at the default ({default_precision}) ÷ the bf16 floor: {seconds['default']:.1f} / {floor['bf16']:.1f} s = ×{result['ingest_over_bf16_floor']:.2f} "
          f"(embedding alone ×{embed / floor['bf16']:.2f})")
    if "bf16" in seconds:
        result["bf16_ingest_over_bf16_floor"] = seconds["bf16"] / floor["bf16"]
        print(f"ingest at --precision bf16 ÷ the bf16 floor: {seconds['bf16']:.1f} / {floor['bf16']:.1f} s = ×{result['bf16_ingest_over_bf16_floor']:.2f}")

# The stages of one pass over the profile's largest shape, each against its own arithmetic.
config = json.load(open(f"{work}/config.json"))
h, inner, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
precision = open(f"{work}/stages.precision").read().strip()
shape = json.load(open(f"{work}/stages.json"))["rows"][-1]
tokens, sequences = shape["tokens"], shape["sequences"]
n = tokens // sequences
operations = {"qkv": 2 * 3 * h * h * layers * tokens, "attention": 4 * n * n * h * layers * sequences,
              "attentionOutput": 2 * h * h * layers * tokens, "feedForwardUp": 2 * h * inner * layers * tokens,
              "feedForwardDown": 2 * inner * h * layers * tokens}
core = peak.get((precision, 1), 0)
print(f"one forward pass, {shape['shape']}, {precision}, one core (peak {core:.0f} G/s): {shape['total']:.1f} ms")
stages = {}
for stage in ("embeddings", "qkv", "attention", "attentionOutput", "feedForwardUp", "feedForwardDown", "pooling"):
    ms = shape[stage]
    rate = operations[stage] / ms / 1e6 if stage in operations and ms > 0 else None
    stages[stage] = {"ms": ms, "gops": rate}
    print(f"  {stage:16s} {ms:8.2f} ms {100 * ms / shape['total']:5.1f}%"
          + (f"  {rate:5.0f} G/s ({100 * rate / core:.0f}% of the core's peak)" if rate and core else ""))
print("  (attentionOutput and feedForwardDown include their LayerNorm; feedForwardUp its bias, GELU and bf16 pass)")
result["pass_stages"] = {"shape": shape["shape"], "precision": precision, "core_peak_gops": core, "stages": stages}
json.dump(result, open("bench-results/encoder-floor.json", "w"), indent=2)
PY
