#!/usr/bin/env python3
"""BM25's k1 and b, and the title column's weight, measured on a BEIR set's whole documents.

    kb eval DATASET --split SPLIT --mode all --run-file OUT/run.txt        # optional: for the fused column
    python3 scripts/studies/bm25_parameters_study.py DATASET SPLIT [OUT/run.txt] [--stemmer porter]

FTS5's bm25() fixes k1 = 1.2 and b = 0.75, and kb's KeywordIndex and its PostgreSQL postings
reproduce it, so trying others needs a copy of the ranking: `trec_metrics.FTS5BM25` over each
document as kb eval indexes it (the text column its title, a blank line and its text; the title
column its title, weight 2), words folded and stemmed by PyStemmer's `--stemmer` (Porter, as FTS5's
tokenizer; `arabic` for Arabic sets), the query's English function words left out as
`KeywordQuery` leaves them out. The row at 1.2 / 0.75 is the copy's measure of kb's own keyword
ranking (SciFact train: 0.7073, kb eval 0.7067). Given kb eval's run file, each ranking is also
fused with kb's vector ranking (RUN.vector) by the copy of kb's adaptive fusion
(long_snippets_study.py). nDCG@10 as kb eval computes it. Needs PyStemmer.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trec_metrics import FTS5BM25, analyzer, load_qrels, load_queries, load_run, ndcg, question_analyzer  # noqa: E402
from long_snippets_study import adaptive_fusion  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("split")
    parser.add_argument("run", nargs="?", help="kb eval's run file prefix (RUN.vector is fused with each ranking)")
    parser.add_argument("--stemmer", default="porter")
    args = parser.parse_args()
    terms = analyzer(args.stemmer)
    qrels = load_qrels(os.path.join(args.dataset, "qrels", args.split + ".tsv"))
    questions = load_queries(args.dataset)
    vectors = load_run(args.run + ".vector") if args.run else {}
    documents = [json.loads(line) for line in open(os.path.join(args.dataset, "corpus.jsonl"), encoding="utf-8")]
    ids = [str(d["_id"]) for d in documents]
    rows = []
    for d in documents:
        title = d.get("title") or ""
        rows.append({"text": terms(title + "\n\n" + d.get("text", "") if title else d.get("text", "")), "title": terms(title)})
    index = FTS5BM25(rows)
    queries = [q for q in qrels if q in questions and (not args.run or q in vectors)]
    question_terms = question_analyzer(args.stemmer)
    asked = {q: question_terms(questions[q]) for q in queries}

    def measure(k1, b, title):
        keyword = hybrid = 0.0
        for q in queries:
            ranked = [(ids[row], score) for row, score in index.rank(asked[q], {"text": 1.0, "title": title}, k1, b)[:100]]
            keyword += ndcg([d for d, _ in ranked], qrels[q])
            if args.run:
                hybrid += ndcg([d for d, _ in adaptive_fusion(ranked, vectors.get(q, []))], qrels[q])
        figures = f"{keyword / len(queries):.4f}"
        return figures + (f" / {hybrid / len(queries):.4f}" if args.run else "")

    what = "keyword / fused with kb's vectors" if args.run else "keyword"
    print(f"{os.path.basename(args.dataset.rstrip('/'))} ({args.split}, {len(queries)} questions), nDCG@10, {what}")
    print("  k1 \\ b  " + "  ".join(f"{b:<17}" for b in (0.3, 0.5, 0.75, 0.9)))
    for k1 in (0.6, 0.9, 1.2, 1.6):
        print(f"  {k1:<7} " + "  ".join(f"{measure(k1, b, 2.0):<17}" for b in (0.3, 0.5, 0.75, 0.9)), flush=True)
    print("  title weight (k1 1.2, b 0.75): " + ", ".join(f"{w}: {measure(1.2, 0.75, w)}" for w in (0.0, 1.0, 2.0, 4.0)))


if __name__ == "__main__":
    main()
