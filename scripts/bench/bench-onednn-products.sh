#!/usr/bin/env bash
# kb's bf16 products on oneDNN as kb makes them (row count left to run time: oneDNN's generic
# gemm:jit path) against products made for their exact row count (its blocked brgemm kernels),
# multilingual-e5-small's four shapes at a pass's and a query's row counts, one thread
# (Benchmarks/onednn-products/products.c). Writes bench-results/onednn-products.jsonl and prints a
# table. What it showed, and why kb keeps the run-time products: docs/benchmarks.md.
#
#   scripts/bench/bench-onednn-products.sh
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
grep -q avx512_bf16 /proc/cpuinfo || echo "note: this CPU has no AVX-512 BF16; oneDNN emulates the bf16 products" >&2
mkdir -p .build bench-results
say "Building Benchmarks/onednn-products/products.c"
clang -O2 -o .build/onednn-products Benchmarks/onednn-products/products.c -ldnnl -Wl,-l:libgomp.so.1
say "Timing the products (best of 30 runs at pass sizes, 500 at query sizes)"
.build/onednn-products > bench-results/onednn-products.jsonl
python3 - bench-results/onednn-products.jsonl <<'PY'
import json, sys
names = {(384, 1152): "query/key/value", (384, 384): "attention output", (384, 1536): "expansion", (1536, 384): "contraction"}
print(f"{'product':18s} {'rows':>5s} {'run-time rows':>22s} {'fixed rows':>26s} {'change':>7s}")
for row in map(json.loads, open(sys.argv[1])):
    change = 100 * (row["fixed_ms"] / row["runtime_ms"] - 1)
    print(f"{names.get((row['k'], row['n']), str((row['k'], row['n']))):18s} {row['rows']:5d} "
          f"{row['runtime_ms']:8.3f} ms {row['runtime_impl']:>10s} {row['fixed_ms']:8.3f} ms {row['fixed_impl']:>14s} {change:+6.1f}%")
PY
