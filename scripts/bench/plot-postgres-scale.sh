#!/usr/bin/env bash
# The growth curve of scripts/bench/bench-postgres-scale.sh: reads every bench-results/postgres-scale-N.json
# (one run per size), prints the tables of docs/benchmarks.md (Markdown), writes the figures the
# picture is drawn from into docs/postgres-scale.tsv (committed, so that the picture can be drawn
# again without the runs), and draws requests/s and p99 against snippets for both engines into
# docs/postgres-scale.png (matplotlib from PyPI, in .venv-plot). Without runs, it draws the TSV.
#
#   scripts/bench/plot-postgres-scale.sh [OUT.png]
. "$(dirname "$0")/../lib.sh"
cd "$KB_ROOT"
OUT="${1:-docs/postgres-scale.png}"
ensure_system_packages python3-venv
if ! .venv-plot/bin/python -c "import matplotlib" >/dev/null 2>&1; then
    say "Installing matplotlib (PyPI) into .venv-plot"
    python3 -m venv .venv-plot
    .venv-plot/bin/pip install --quiet --disable-pip-version-check "matplotlib>=3.7,<4"
fi
shopt -s nullglob
.venv-plot/bin/python - "$OUT" docs/postgres-scale.tsv bench-results/postgres-scale-*.json <<'PY'
import csv, json, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out, table, files = sys.argv[1], sys.argv[2], sys.argv[3:]
results = sorted((json.load(open(f)) for f in files), key=lambda r: r["snippets"])


def run(result, label):
    return next((r for r in result["runs"] if r["run"] == label), None)


labels = [("SQLite", "SQLite"), ("SQLite, two replicas", "SQLite, 2"),
          ("PostgreSQL + HNSW", "PostgreSQL"), ("PostgreSQL + HNSW, two", "PostgreSQL, 2")]
if results:
    print("| snippets | run | req/s at 32 conn. | p50 ms | p99 ms | first answer s | kb MB | PostgreSQL MB |")
    print("|---|---|---|---|---|---|---|---|")
    for result in results:
        for label, _ in labels:
            r = run(result, label)
            if r:
                pg = "—" if r["postgres_mb"] is None else f"{r['postgres_mb']:,}"
                print(f"| {result['snippets']:,} | {label} | {r['rps']:.1f} | {r['p50_ms']:.0f} | {r['p99_ms']:.0f} | {r['first_answer_s']:.1f} | {r['kb_rss_mb']:,} | {pg} |")
    print()
    print("| snippets | keyword p50 / p99 ms, SQLite | keyword p50 / p99 ms, PostgreSQL | pruned ≠ whole | recall@10 (all / bot) | disk MB SQLite / PostgreSQL | export s | HNSW build s |")
    print("|---|---|---|---|---|---|---|---|")
    for result in results:
        k = result.get("keywords", {})
        s, p = k.get("sqlite", {}), k.get("postgres", {})
        disk = result.get("disk_mb", {})
        recall = result["recall"]
        export = result.get("export_s")
        print(f"| {result['snippets']:,} | {s.get('p50_ms', 0):.2f} / {s.get('p99_ms', 0):.2f} | {p.get('p50_ms', 0):.2f} / {p.get('p99_ms', 0):.2f} "
              f"| {len(p.get('differ', []))} of {p.get('queries', 0)} | {recall['without_filter']['recall_at_10']:.3f} / {recall['bot_filter']['recall_at_10']:.3f} "
              f"| {disk.get('sqlite', '—'):,} / {disk.get('postgres', '—'):,} | {export if export is not None else '—'} | {result['hnsw_build']['seconds']:.0f} |")

    with open(table, "w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["snippets", "run", "rps", "p50_ms", "p99_ms", "cores"])
        for result in results:
            for label, _ in labels:
                r = run(result, label)
                if r:
                    writer.writerow([result["snippets"], label, f"{r['rps']:.1f}", f"{r['p50_ms']:.0f}", f"{r['p99_ms']:.0f}", result["cores"]])
try:
    rows = list(csv.DictReader(open(table), delimiter="\t"))
except FileNotFoundError:
    raise SystemExit(f"error: no bench-results/postgres-scale-*.json and no {table}; run scripts/bench/bench-postgres-scale.sh first")

sizes = sorted({int(r["snippets"]) for r in rows})
figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
for label, short in labels:
    points = sorted((int(r["snippets"]), float(r["rps"]), float(r["p99_ms"])) for r in rows if r["run"] == label)
    if not points:
        continue
    style = "-" if label.startswith("SQLite") else "--"
    left.plot([n for n, _, _ in points], [x for _, x, _ in points], style, marker="o", label=short)
    right.plot([n for n, _, _ in points], [x for _, _, x in points], style, marker="o", label=short)
for axis, title, unit in ((left, "requests/s at 32 connections", "requests/s"), (right, "p99 latency", "ms")):
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xticks(sizes)
    axis.set_xticklabels([f"{n / 1e6:g}M" if n >= 1e6 else f"{n / 1e3:g}k" for n in sizes])
    axis.set_xlabel("snippets")
    axis.set_ylabel(unit)
    axis.set_title(title)
    axis.grid(True, which="both", alpha=0.3)
    axis.legend()
figure.suptitle(f"kb serve, POST /v1/context, {rows[0]['cores']} cores (scripts/bench/bench-postgres-scale.sh)")
figure.tight_layout()
figure.savefig(out, dpi=110)
print(f"\n{out}")
PY
