#!/usr/bin/env python3
"""LoCoMo's multi-hop questions: two remedies without a language model, measured on kb's own
ranked lists (docs/search.md, *Conversations*). Neither is built into kb; this keeps the figures
reproducible.

    python3 scripts/studies/locomo_multihop_study.py KB_BINARY EVAL_OUT

EVAL_OUT is what `scripts/eval/eval.sh` left (default .build/eval-reports): locomo-beir/ (the set),
locomo.sqlite (its index) and locomo/run.txt.hybrid (kb's hybrid ranking). Needs numpy.

1. A session cap: at most N turns of one session among the first ten (the rest moved after).
2. A second pass: the question's vector moved toward the vectors of kb's first k hits
   (q + β·mean), ranked by cosine within the question's conversation, fused with kb's list by
   reciprocal rank (kb's at 1, the second pass at λ).
Prints recall@10 by question category for each.
"""
import collections
import json
import os
import sqlite3
import subprocess
import sys

import numpy as np

kb, out = sys.argv[1:3]
base = os.path.join(out, "locomo-beir")
queries = [json.loads(line) for line in open(os.path.join(base, "queries.jsonl"), encoding="utf-8")]
relevant = collections.defaultdict(set)
with open(os.path.join(base, "qrels", "test.tsv"), encoding="utf-8") as f:
    next(f)
    for line in f:
        q, d, s = line.rstrip("\n").split("\t")
        if int(s) > 0:
            relevant[q].add(d)
hybrid = collections.defaultdict(list)
for line in open(os.path.join(out, "locomo", "run.txt.hybrid")):
    q, _, d, rank, _, _ = line.split()
    hybrid[q].append((int(rank), d))
hybrid = {q: [d for _, d in sorted(v)] for q, v in hybrid.items()}

# The turns' vectors as kb stored them, and the questions' as kb embeds them.
turn_id = {}
for line in open(os.path.join(base, "corpus.jsonl"), encoding="utf-8"):
    d = json.loads(line)
    turn_id[(d["conversation"], d["position"])] = d["_id"]
db = sqlite3.connect(os.path.join(out, "locomo.sqlite"))
ids, rows = [], []
for path, ordinal, data in db.execute("SELECT so.path, sn.ordinal, v.data FROM vectors v JOIN snippets sn ON sn.id = v.snippet_id "
                                      "JOIN sources so ON so.id = sn.source_id"):
    ids.append(turn_id[(path.split(":")[1].split("/")[0], ordinal)])
    rows.append(np.frombuffer(data, dtype="<f4"))
turns = np.array(rows)
turns /= np.linalg.norm(turns, axis=1, keepdims=True)
conversation_of = np.array([i.split("/")[0] for i in ids])
index_of = {d: i for i, d in enumerate(ids)}
embedded = subprocess.run([kb, "embed", "--db", os.path.join(out, "locomo.sqlite"), "--role", "query", "--json"] + [q["text"] for q in queries],
                          check=True, capture_output=True, text=True)
question_vectors = np.array(json.loads(embedded.stdout)["vectors"], dtype=np.float32)


def recall(order_of):
    by = collections.defaultdict(list)
    for i, q in enumerate(queries):
        top = set(order_of(i, q)[:10])
        value = len(relevant[q["_id"]] & top) / len(relevant[q["_id"]])
        by[q["category"]].append(value)
        by["all"].append(value)
    return {c: round(sum(v) / len(v), 4) for c, v in sorted(by.items())}


def capped(order, cap):
    count, kept, later = collections.Counter(), [], []
    for d in order:
        session = d.split(":")[0]
        (later if count[session] >= cap else kept).append(d)
        count[session] += 1 if count[session] < cap else 0
    return kept + later


def second_pass(i, q, beta, k, weight):
    first = hybrid.get(q["_id"], [])
    vector = question_vectors[i] + beta * turns[[index_of[d] for d in first[:k]]].mean(0)
    scores = turns @ vector
    scores[conversation_of != q["conversation"]] = -9
    fused = collections.defaultdict(float)
    for rank, d in enumerate(first):
        fused[d] += 1 / (60 + rank)
    for rank, j in enumerate(np.argsort(-scores)[:100]):
        fused[ids[j]] += weight / (60 + rank)
    return sorted(fused, key=lambda d: -fused[d])


print("kb now", recall(lambda i, q: hybrid.get(q["_id"], [])))
for cap in (2, 3, 4, 5, 6):
    print(f"at most {cap} turns of a session in the first ten", recall(lambda i, q: capped(hybrid.get(q["_id"], []), cap)))
for beta in (0.5, 1.0, 2.0):
    for k in (3, 5):
        for weight in (0.3, 0.5, 1.0):
            print(f"second pass beta {beta} k {k} weight {weight}", recall(lambda i, q: second_pass(i, q, beta, k, weight)))
