#!/usr/bin/env python3
"""A snippet's keyword terms read with its neighbours, measured on an index of parts.

    kb eval DATASET --split SPLIT --mode all --chunk --db OUT/parts.sqlite --run-file OUT/parts/run.txt
    python3 scripts/studies/neighbour_keywords_study.py DATASET SPLIT OUT/parts.sqlite OUT/parts/run.txt [--stemmer porter]

The index holds each document of a BEIR set in parts of about 500 characters (what kb's ingest
makes of a text). The script ranks those parts by BM25 as FTS5's bm25() computes it
(`trec_metrics.FTS5BM25`: a term's count in each column times kb's column weight — text 1, title 2 —
summed, over the row's length in every column) once as kb does and once with a third column,
`context`: the text of the part before and the part after in the same document, at weight c (the
context's words then count in every part's length, as they would in a column of kb's index).
Each ranking collapses to documents by their best part and is fused with kb's vector ranking of
the parts (the run file's `.vector`) by a copy of kb's adaptive fusion (long_snippets_study.py). Words are folded and stemmed by PyStemmer's `--stemmer`
(Porter by default; `arabic` for Arabic sets) and a question's English function words left out, so
the "kb-like" row approximates kb's own keyword ranking (SciFact train in parts: 0.6775, kb eval's
keyword run 0.6775; sets whose stemmer is not kb's — Arabic, German — differ more); the rows
compare with each other. Needs PyStemmer (`pip install PyStemmer`).
"""
import argparse
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trec_metrics import FTS5BM25, analyzer, load_qrels, load_queries, load_run, ndcg, question_analyzer  # noqa: E402
from long_snippets_study import adaptive_fusion  # noqa: E402

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
    alone = FTS5BM25([{"text": r["text"], "title": r["title"]} for r in rows])
    with_context = FTS5BM25(rows)
    queries = [q for q in vectors if q in qrels and q in questions]
    question_terms = question_analyzer(args.stemmer)
    print(f"{os.path.basename(args.dataset.rstrip('/'))} ({args.split}, {len(queries)} questions, {len(parts)} parts), nDCG@10")
    for c in (0, 0.25, 0.5, 1.0):
        keyword_total = hybrid_total = 0.0
        for q in queries:
            ranked, seen = [], set()
            index = with_context if c else alone
            for row, score in index.rank(question_terms(questions[q]), {"text": 1.0, "title": 2.0, "context": c}):
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
