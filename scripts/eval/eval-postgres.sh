#!/usr/bin/env bash
# Retrieval quality on PostgreSQL against SQLite: each BEIR dataset is evaluated on SQLite
# (`kb eval --mode all`, the default model), copied into a throwaway PostgreSQL + pgvector with
# `kb export` (the keyword index then built as blocks), evaluated there with the same settings, and
# nDCG@10 per mode printed side by side with the difference. Writes bench-results/eval-postgres.json.
#
#   scripts/eval/eval-postgres.sh [DATASET[:SPLIT] …]
#       (default: SciFact train and the XQuAD sets beside the project, each with its one split)
# KB_BIN runs a kb built elsewhere.
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages
bash scripts/install-model.sh >/dev/null
bash scripts/install-model.sh multilingual-e5-small >/dev/null   # a new index's default
SHARED="$KB_ROOT/../shared/datasets"
if [ $# -eq 0 ]; then
    set -- "$SHARED/scifact:train"
    for folder in "$SHARED"/xquad/*/; do [ -f "$folder/queries.jsonl" ] && set -- "$@" "${folder%/}:test"; done
fi
if [ -n "${KB_BIN:-}" ]; then KB="$KB_BIN"; else say "Building kb (release)"; kb_build --product kb >/dev/null; KB="$KB_BIN_DIR/kb"; fi
WORK="$(mktemp -d)"
PG_FOLDER="$(mktemp -d)"
trap 'bash "$KB_ROOT/scripts/postgres.sh" stop "$PG_FOLDER" >/dev/null 2>&1 || true; rm -rf "$WORK" "$PG_FOLDER"' EXIT
say "Starting a throwaway PostgreSQL + pgvector"
SERVER="$(bash scripts/postgres.sh start "$PG_FOLDER" | tail -1)"
BASE="${SERVER%/*}"
RESULTS=()
for entry in "$@"; do
    folder="${entry%:*}" split="${entry##*:}"
    [ "$folder" != "$entry" ] || split=test
    [ -f "$folder/queries.jsonl" ] || { echo "error: no BEIR dataset at $folder (corpus.jsonl, queries.jsonl, qrels/)" >&2; exit 1; }
    name="$(basename "$(dirname "$folder")")-$(basename "$folder")"
    name="${name//[^a-zA-Z0-9]/_}"
    say "$name: SQLite, then PostgreSQL"
    "$KB" eval "$folder" --split "$split" --mode all --db "$WORK/$name.sqlite" --json > "$WORK/$name-sqlite.json"
    "$KB" export --db "$WORK/$name.sqlite" --to "$BASE/${name,,}" --json > /dev/null
    "$KB" eval "$folder" --split "$split" --mode all --db "$BASE/${name,,}" --json > "$WORK/$name-postgres.json"
    RESULTS+=("$name" "$WORK/$name-sqlite.json" "$WORK/$name-postgres.json")
done
mkdir -p bench-results
python3 - "${RESULTS[@]}" <<'PY'
import json, sys
args = sys.argv[1:]
rows, worst = {}, 0.0
print(f"{'set':<24} {'mode':<8} {'SQLite':>8} {'PostgreSQL':>11} {'difference':>11}")
for i in range(0, len(args), 3):
    name, sqlite, postgres = args[i], json.load(open(args[i + 1])), json.load(open(args[i + 2]))
    by_mode = lambda run: {m["mode"]: m["metrics"]["ndcg@10"] for m in run["modes"]}
    s, p = by_mode(sqlite), by_mode(postgres)
    rows[name] = {}
    for mode in s:
        difference = p[mode] - s[mode]
        worst = max(worst, abs(difference))
        rows[name][mode] = {"sqlite": s[mode], "postgres": p[mode]}
        print(f"{name:<24} {mode:<8} {s[mode]:>8.4f} {p[mode]:>11.4f} {difference:>+11.4f}")
print(f"\nlargest difference: {worst:.4f} nDCG@10")
json.dump({"ndcg@10": rows, "largest_difference": worst}, open("bench-results/eval-postgres.json", "w"), indent=1, sort_keys=True)
PY
