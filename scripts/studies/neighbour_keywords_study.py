#!/usr/bin/env python3
"""A snippet's keyword terms read with its neighbours, measured on an index of parts.

    kb eval DATASET --split SPLIT --mode all --chunk --db OUT/parts.sqlite --run-file OUT/parts/run.txt
    python3 scripts/studies/neighbour_keywords_study.py DATASET SPLIT OUT/parts.sqlite OUT/parts/run.txt [--stemmer porter]

The index holds each document of a BEIR set in parts of about 500 characters (what kb's ingest
makes of a text). The script ranks those parts by BM25 as FTS5 computes it — a score a column,
each with its own length normalisation, summed with kb's column weights (text 1, title 2) — once
as kb does and once with a third column, `context`: the text of the part before and the part
after in the same document, at weight c. Each ranking collapses to documents by their best part
and is fused with kb's vector ranking of the parts (the run file's `.vector`) by a copy of kb's
adaptive fusion (long_snippets_study.py). Words are folded and stemmed by PyStemmer's `--stemmer`
(Porter by default; `arabic` for Arabic sets), so the "kb-like" row approximates kb's own keyword
ranking; the rows compare with each other. Needs PyStemmer (`pip install PyStemmer`).
"""
import argparse
import collections
import math
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trec_metrics import analyzer, load_qrels, load_queries, load_run, ndcg  # noqa: E402
from long_snippets_study import adaptive_fusion  # noqa: E402

K1, B = 1.2, 0.75


class Columns:
    """Postings and lengths of named columns over the same rows, for FTS5's bm25()."""

    def __init__(self, rows):
        self.rows = rows            # [{column: [terms]}]
        self.postings = collections.defaultdict(lambda: collections.defaultdict(dict))
        self.rows_with = collections.Counter()
        self.average = {}
        for index, row in enumerate(rows):
            seen = set()
            for column, terms in row.items():
                counts = collections.Counter(terms)
                for term, count in counts.items():
                    self.postings[column][term][index] = count
                seen.update(counts)
            self.rows_with.update(seen)
        for column in rows[0]:
            self.average[column] = sum(len(r[column]) for r in rows) / len(rows)

    def rank(self, query, weights):
        n = len(self.rows)
        scores = collections.defaultdict(float)
        for term in set(query):
            has = self.rows_with.get(term, 0)
            if not has:
                continue
            idf = max(math.log((n - has + 0.5) / (has + 0.5)), 1e-6)
            for column, weight in weights.items():
                if not weight:
                    continue
                average = self.average[column] or 1
                for row, tf in self.postings[column].get(term, {}).items():
                    length = len(self.rows[row][column])
                    scores[row] += weight * idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
        return sorted(scores.items(), key=lambda x: -x[1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("split")
    parser.add_argument("index", help="kb's SQLite index of the set in parts (kb eval --chunk --db)")
    parser.add_argument("run", help="run file prefix of that index (RUN.vector is read)")
    parser.add_argument("--stemmer", default="porter")
    args = parser.parse_args()
    terms = analyzer(args.stemmer)
    qrels = load_qrels(os.path.join(args.dataset, "qrels", args.split + ".tsv"))
    questions = load_queries(args.dataset)
    vectors = load_run(args.run + ".vector")
    db = sqlite3.connect(args.index)
    parts = db.execute("""SELECT so.path, sn.ordinal, sn.text, so.title FROM snippets sn JOIN sources so ON so.id = sn.source_id
                          ORDER BY so.path, sn.ordinal""").fetchall()
    document = [path.split(":", 1)[1] if path.startswith("beir:") else path for path, _, _, _ in parts]
    texts = [terms(text) for _, _, text, _ in parts]
    rows = []
    for i, (path, _, _, title) in enumerate(parts):
        context = []
        for j in (i - 1, i + 1):
            if 0 <= j < len(parts) and parts[j][0] == path:
                context += texts[j]
        rows.append({"text": texts[i], "title": terms(title or ""), "context": context})
    columns = Columns(rows)
    queries = [q for q in vectors if q in qrels and q in questions]
    print(f"{os.path.basename(args.dataset.rstrip('/'))} ({args.split}, {len(queries)} questions, {len(parts)} parts), nDCG@10")
    for c in (0, 0.25, 0.5, 1.0):
        keyword_total = hybrid_total = 0.0
        for q in queries:
            ranked, seen = [], set()
            for row, score in columns.rank(terms(questions[q]), {"text": 1.0, "title": 2.0, "context": c}):
                if document[row] not in seen:
                    seen.add(document[row])
                    ranked.append((document[row], score))
                    if len(ranked) == 100:
                        break
            keyword_total += ndcg([d for d, _ in ranked], qrels[q])
            hybrid_total += ndcg([d for d, _ in adaptive_fusion(ranked, vectors.get(q, []))], qrels[q])
        label = "parts alone (kb-like)" if c == 0 else f"parts + neighbours at {c}"
        print(f"  keyword, {label:<28} {keyword_total / len(queries):.4f}   fused with kb's part vectors {hybrid_total / len(queries):.4f}")


if __name__ == "__main__":
    main()
