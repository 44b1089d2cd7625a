#!/usr/bin/env bash
# SQLite and PostgreSQL + pgvector side by side (release build, local model, a throwaway
# PostgreSQL from scripts/postgres.sh):
#   1. SciFact (train split, ../shared/datasets/scifact or DATASET) ingested into an SQLite file,
#      copied into PostgreSQL with `kb export`, and evaluated on both: nDCG@10 and query latency
#      p50/p95 for keyword, vector and hybrid; then again on PostgreSQL with an HNSW index.
#   2. 100k unit vectors (d = 384) in PostgreSQL, uniform random (an approximate index's worst
#      case) and clustered (like real embeddings): exact top-10 latency, then an HNSW index's build
#      time, latency and recall@10 against exact (kb-bench postgres-vectors).
# Prints a table; writes bench-results/postgres.json.
#
#   scripts/bench/bench-postgres.sh [DATASET] [VECTORS]      (defaults: ../shared/datasets/scifact, 100000)
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages
bash scripts/install-model.sh
DATASET="${1:-$KB_ROOT/../shared/datasets/scifact}"
VECTORS="${2:-100000}"
[ -d "$DATASET" ] || { echo "error: no dataset at $DATASET (a BEIR folder: corpus.jsonl, queries.jsonl, qrels/)" >&2; exit 1; }

build_release_tools
WORK="$(mktemp -d)"
PG_FOLDER="$(mktemp -d)"   # not inside $WORK: the server's user must reach it
trap 'bash "$KB_ROOT/scripts/postgres.sh" stop "$PG_FOLDER" >/dev/null 2>&1 || true; rm -rf "$WORK" "$PG_FOLDER"' EXIT
SERVER="$(bash scripts/postgres.sh start "$PG_FOLDER")"
BASE="${SERVER%/*}"
mkdir -p bench-results

say "SciFact into SQLite (ingest with the local model) and evaluation"
"$KB" eval "$DATASET" --split train --mode all --db "$WORK/scifact.sqlite" --json > "$WORK/sqlite.json"
say "Copying it into PostgreSQL (kb export) and evaluating there"
start=$(date +%s.%N)
"$KB" export --db "$WORK/scifact.sqlite" --to "$BASE/scifact" --json > "$WORK/export.json"
export_seconds=$(python3 -c "import sys; print(round($(date +%s.%N) - $start, 2))")
"$KB" eval "$DATASET" --split train --mode all --db "$BASE/scifact" --json > "$WORK/postgres.json"
say "HNSW index on PostgreSQL, then the evaluation again"
"$KB" index build --hnsw --db "$BASE/scifact" --json > "$WORK/hnsw-build.json"
"$KB" eval "$DATASET" --split train --mode all --db "$BASE/scifact" --json > "$WORK/postgres-hnsw.json"

say "$VECTORS synthetic vectors (uniform and clustered) in PostgreSQL: exact vs HNSW"
"$BENCH" postgres-vectors "$BASE/synthetic" "$VECTORS" 200 > "$WORK/vectors.json"

python3 - "$WORK" "$export_seconds" <<'PY'
import json, sys
work, export_seconds = sys.argv[1], float(sys.argv[2])
load = lambda name: json.load(open(f"{work}/{name}"))
runs = {"SQLite": load("sqlite.json"), "PostgreSQL": load("postgres.json"), "PostgreSQL + HNSW": load("postgres-hnsw.json")}
print(f"SciFact ({runs['SQLite']['queries']} queries, {runs['SQLite']['documents']} documents, {runs['SQLite']['embedder']})")
print(f"{'backend':<18} {'mode':<8} {'nDCG@10':>8} {'p50 ms':>8} {'p95 ms':>8}")
table = {}
for backend, run in runs.items():
    for mode in run["modes"]:
        m = mode["mode"]
        table[f"{backend}/{m}"] = {"ndcg@10": mode["metrics"]["ndcg@10"], "p50_ms": mode["latencyP50Milliseconds"], "p95_ms": mode["latencyP95Milliseconds"]}
        print(f"{backend:<18} {m:<8} {mode['metrics']['ndcg@10']:>8.4f} {mode['latencyP50Milliseconds']:>8.2f} {mode['latencyP95Milliseconds']:>8.2f}")
build = load("hnsw-build.json")
print(f"kb export SQLite -> PostgreSQL: {export_seconds:.2f} s; HNSW build on SciFact: {build['seconds']:.2f} s, "
      f"recall@10 {build['recallAt10']:.3f} ({build['sampled']} stored vectors as queries)")
vectors = load("vectors.json")
for kind, v in sorted(vectors.items()):
    print(f"{v['vectors']} {kind} unit vectors (d={v['dimension']}), {v['queries']} queries, top 10:")
    print(f"  exact  p50 {v['exact_p50_ms']:.2f} ms  p95 {v['exact_p95_ms']:.2f} ms")
    print(f"  HNSW   p50 {v['hnsw_p50_ms']:.2f} ms  p95 {v['hnsw_p95_ms']:.2f} ms  recall@10 {v['hnsw_recall_at_10']:.3f}  "
          f"(m {v['hnsw_m']}, ef_construction {v['hnsw_ef_construction']}, ef_search {v['hnsw_ef_search']}; built in {v['hnsw_build_seconds']:.1f} s; loaded in {v['load_seconds']:.1f} s)")
json.dump({"scifact": table, "export_seconds": export_seconds, "scifact_hnsw": build, "vectors": vectors},
          open("bench-results/postgres.json", "w"), indent=1, sort_keys=True)
PY
