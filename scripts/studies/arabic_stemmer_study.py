#!/usr/bin/env python3
"""Arabic keyword analysis, measured: kb's own light stemmer beside Snowball's Arabic stemmer
(libstemmer, through PyStemmer) and a root analysis (NLTK's ISRI root stemmer), alone and with
a second, root ranking fused in.

    python3 scripts/studies/arabic_stemmer_study.py KB_BINARY DATASET OUT

DATASET is a BEIR folder (native Arabic questions: ../shared/datasets/arcd-train); OUT a
working folder (indexes, run files, the rewritten sets). Needs PyStemmer and nltk (PyPI):
run it with a venv that has them, e.g.
    python3 -m venv .build/stem-venv && .build/stem-venv/bin/pip install PyStemmer nltk
    .build/stem-venv/bin/python scripts/studies/arabic_stemmer_study.py .build/release/kb ../shared/datasets/arcd-train .build/arabic-stemmers

Every variant is kb's keyword ranking (`kb eval --mode keyword --embedder none`): a set whose
words another stemmer rewrote first is indexed with `--language simple` (no stemming of kb's)
or `arabic` (kb's stemmer after it). The fused rows add the root ranking's scores, each list
scaled by its best, at weight w, to kb's own ranking. nDCG@10 is computed here from the run
files, the same way for every row.
"""
import collections
import json
import math
import os
import re
import shutil
import subprocess
import sys

import Stemmer
from nltk.stem.isri import ISRIStemmer

kb, dataset, out = sys.argv[1:4]
os.makedirs(out, exist_ok=True)
DIACRITICS = re.compile("[\u064B-\u065F\u0670\u0640]")
WORD = re.compile(r"\w+")


def rewrite(name, stem_word):
    """The dataset with every word replaced by its stem (diacritics and tatweel removed first)."""
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "qrels"), exist_ok=True)
    shutil.copy(os.path.join(dataset, "qrels", "test.tsv"), os.path.join(folder, "qrels", "test.tsv"))
    stem = lambda text: " ".join(stem_word(w.lower()) for w in WORD.findall(DIACRITICS.sub("", text or "")))
    for part, fields in (("corpus.jsonl", ("title", "text")), ("queries.jsonl", ("text",))):
        with open(os.path.join(dataset, part), encoding="utf-8") as src, open(os.path.join(folder, part), "w", encoding="utf-8") as dst:
            for line in src:
                row = json.loads(line)
                for field in fields:
                    if field in row:
                        row[field] = stem(row[field])
                dst.write(json.dumps(row, ensure_ascii=False) + "\n")
    return folder


def run(name, folder, language):
    """kb's keyword ranking of `folder`; returns its run file's path."""
    db, run_file = os.path.join(out, name + ".sqlite"), os.path.join(out, name + ".run")
    for path in (db, db + "-wal", db + "-shm"):
        if os.path.exists(path):
            os.remove(path)
    subprocess.run([kb, "eval", folder, "--split", "test", "--mode", "keyword", "--embedder", "none", "--language", language,
                    "--db", db, "--run-file", run_file], check=True, stdout=subprocess.DEVNULL)
    return run_file + ".keyword" if os.path.exists(run_file + ".keyword") else run_file


qrels = collections.defaultdict(dict)
with open(os.path.join(dataset, "qrels", "test.tsv"), encoding="utf-8") as f:
    next(f)
    for line in f:
        q, d, s = line.rstrip("\n").split("\t")
        qrels[q][d] = int(s)


def load(path):
    ranked = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            q, _, d, rank, score, _ = line.split()
            ranked[q].append((int(rank), d, float(score)))
    return {q: sorted(v) for q, v in ranked.items()}


def ndcg(q, order):
    rel = qrels[q]
    dcg = sum(rel.get(d, 0) / math.log2(i + 2) for i, d in enumerate(order[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    idcg = sum(v / math.log2(i + 2) for i, v in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def score(runs, weights):
    total = 0.0
    for q in qrels:
        fused = collections.defaultdict(float)
        for ranked, weight in zip(runs, weights):
            entries = ranked.get(q, [])
            best = max((s for _, _, s in entries), default=1.0) or 1.0
            for _, d, s in entries:
                fused[d] += weight * s / best
        total += ndcg(q, sorted(fused, key=lambda d: -fused[d]))
    return total / len(qrels)


snowball, isri = Stemmer.Stemmer("arabic"), ISRIStemmer()
light = load(run("kb-light", dataset, "arabic"))
rows = [
    ("no stemming (`--language simple`)", [load(run("none", dataset, "simple"))], [1]),
    ("kb's light stemmer (light10; `auto` and `arabic`)", [light], [1]),
    ("Snowball Arabic (libstemmer)", [load(run("snowball", rewrite("snowball", snowball.stemWord), "simple"))], [1]),
    ("Snowball, then kb's light stemmer", [load(run("snowball-light", os.path.join(out, "snowball"), "arabic"))], [1]),
]
root = load(run("root", rewrite("root", isri.stem), "simple"))
rows.append(("roots (ISRI) alone", [root], [1]))
for weight in (0.25, 0.5, 1.0):
    rows.append((f"kb's light stems + roots at {weight}", [light, root], [1, weight]))
print("| keyword analysis | nDCG@10 |")
print("|---|---|")
for name, runs, weights in rows:
    print(f"| {name} | {score(runs, weights):.4f} |")
