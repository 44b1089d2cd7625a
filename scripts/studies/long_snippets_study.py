#!/usr/bin/env python3
"""What a long snippet's vector loses, and two ways of ranking whole documents, measured on run files.

    kb eval DATASET --split SPLIT --mode all --db OUT/whole.sqlite --run-file OUT/whole/run.txt
    kb eval DATASET --split SPLIT --mode all --chunk --db OUT/chunks.sqlite --run-file OUT/chunks/run.txt
    python3 scripts/studies/long_snippets_study.py DATASET SPLIT OUT/whole/run.txt OUT/chunks/run.txt

The first index holds each document as one snippet (kb eval's default for BEIR sets), the second
cuts it into 500-character snippets (a document's hits collapsed to it by its best snippet). The
script fuses, with a copy of kb's adaptive fusion (`Ranking.adaptiveFusion`, over 50 candidates),
the whole documents' keyword ranking with:
  - their own vector ranking (what kb does: equal to kb's hybrid run where neither arm collapsed
    near-duplicates — sets without repeated documents);
  - the vector ranking of their parts (each document by its best 500-character part);
  - both vector rankings' scores averaged.
With PyStemmer installed (`pip install PyStemmer`) and `--proximity`, it also adds a term-proximity
bonus to the fused scores of the first 50 (words stemmed by `--stemmer`, Porter by default): the share (by idf) of the question's adjacent
content-word pairs found within 1, 3 or 8 words of each other in the document, at weight a.
nDCG@10 as kb eval computes it.
"""
import argparse
import collections
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trec_metrics import analyzer, load_qrels, load_queries, load_run, ndcg  # noqa: E402

RANK_SHARE, RANK_K, DEPTH = 0.15, 60.0, 50


def scaled(ranking, floor):
    read = [s for _, s in ranking[:DEPTH]]
    if not read:
        return []
    high = max(read)
    low = min(high if floor is None else floor, min(read))
    return [(d, max(0.0, (s - low) / (high - low)) if high > low else 1.0) for d, s in ranking]


def confidence(ranking, complete):
    if not ranking:
        return 0.0
    rest = [s for _, s in ranking[1:10]]
    count = 9 if complete else len(rest)
    return 1.0 if count == 0 else 1 - sum(rest) / count


def adaptive_fusion(keywords, vectors):
    """(document, score) best first, as Ranking.adaptiveFusion ranks them (keyword coverage 1)."""
    complete = len(keywords) < DEPTH
    k, v = scaled(keywords, 0.0 if complete else None), scaled(vectors, None)
    wk, wv = confidence(k[:DEPTH], complete), confidence(v[:DEPTH], False)
    share = wk / (wk + wv) if wk + wv > 0 else 0.5
    parts = {}
    for ranking, slot in ((k, 0), (v, 1)):
        for index, (doc, score) in enumerate(ranking):
            part = parts.setdefault(doc, [0.0, 0.0, 0.0, index + 1])
            if index < DEPTH:
                part[slot] = score
                part[2] += RANK_SHARE / 2 * (RANK_K + 1) / (RANK_K + index + 1)
            part[3] = min(part[3], index + 1)
    fused = [(doc, (p[1] + share * (p[0] - p[1]) + p[2]) / (1 + RANK_SHARE), p[3]) for doc, p in parts.items()]
    fused.sort(key=lambda x: (-x[1], x[2], x[0]))
    return [(doc, score) for doc, score, _ in fused]


def averaged(a, b):
    scores = collections.defaultdict(float)
    for ranking in (a, b):
        for doc, score in ranking:
            scores[doc] += score / 2
    return sorted(scores.items(), key=lambda x: -x[1])


def proximity_rows(dataset, questions, qrels, fused, stemmer):
    terms = analyzer(stemmer)
    stop = set("a an the of in on at to for from by with and or but not no is are was were be been this that these "
               "those it its as into than there their they he she his her we our you your i do does did has have had "
               "will would can could should may might which who what when where why how all any both each more most "
               "other some such only so very also about".split()) if stemmer in ("porter", "english") else set()
    texts = {}
    for line in open(os.path.join(dataset, "corpus.jsonl"), encoding="utf-8"):
        doc = json.loads(line)
        texts[str(doc["_id"])] = terms((doc.get("title") or "") + "\n" + (doc.get("text") or ""))
    df = collections.Counter(t for words in texts.values() for t in set(words))
    idf = {t: math.log((len(texts) - n + 0.5) / (n + 0.5) + 1) for t, n in df.items()}

    def share(question, words, window):
        where = collections.defaultdict(list)
        for i, t in enumerate(words):
            where[t].append(i)
        total = found = 0.0
        for a, b in zip(question, question[1:]):
            if a == b:
                continue
            weight = idf.get(a, 0) + idf.get(b, 0)
            total += weight
            if where[a] and where[b] and min(abs(x - y) for x in where[a] for y in where[b]) <= window:
                found += weight
        return found / total if total else 0.0
    rows = []
    for window in (1, 3, 8):
        cells = []
        for a in (0.1, 0.2, 0.3):
            total = 0.0
            for q, ranking in fused.items():
                question = [t for t in terms(questions[q]) if t not in stop]
                top = ranking[0][1] or 1.0
                head = sorted(ranking[:DEPTH], key=lambda e: -(e[1] / top + a * share(question, texts.get(e[0], []), window)))
                total += ndcg([d for d, _ in head] + [d for d, _ in ranking[DEPTH:]], qrels[q])
            cells.append(f"a {a}: {total / len(fused):.4f}")
        rows.append((f"+ proximity bonus, window {window}", "  ".join(cells)))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("split")
    parser.add_argument("whole", help="run file prefix of the index of whole documents (RUN.keyword, RUN.vector, RUN.hybrid)")
    parser.add_argument("chunks", help="run file prefix of the index of 500-character parts")
    parser.add_argument("--proximity", action="store_true", help="also the term-proximity bonus (needs PyStemmer)")
    parser.add_argument("--stemmer", default="porter", help="PyStemmer's algorithm for the bonus's words (arabic, russian, …)")
    args = parser.parse_args()
    qrels = load_qrels(os.path.join(args.dataset, "qrels", args.split + ".tsv"))
    keyword, vector = load_run(args.whole + ".keyword"), load_run(args.whole + ".vector")
    hybrid, parts = load_run(args.whole + ".hybrid"), load_run(args.chunks + ".vector")
    chunked_hybrid = load_run(args.chunks + ".hybrid")
    queries = [q for q in hybrid if q in qrels]

    def measure(rank):
        return sum(ndcg([d for d, _ in rank(q)], qrels[q]) for q in queries) / len(queries)
    fused = {q: adaptive_fusion(keyword.get(q, []), vector.get(q, [])) for q in queries}
    rows = [
        ("keyword, whole documents", measure(lambda q: keyword.get(q, []))),
        ("vector, whole documents", measure(lambda q: vector.get(q, []))),
        ("vector, best part", measure(lambda q: parts.get(q, []))),
        ("kb hybrid, whole documents (run file)", measure(lambda q: hybrid[q])),
        ("kb hybrid, parts (run file)", measure(lambda q: chunked_hybrid.get(q, []))),
        ("fusion copy: keyword + vector, whole", measure(lambda q: fused[q])),
        ("fusion copy: keyword whole + vector best part",
         measure(lambda q: adaptive_fusion(keyword.get(q, []), parts.get(q, [])))),
        ("fusion copy: keyword whole + vector (whole + best part) / 2",
         measure(lambda q: adaptive_fusion(keyword.get(q, []), averaged(vector.get(q, []), parts.get(q, []))))),
    ]
    print(f"{os.path.basename(args.dataset.rstrip('/'))} ({args.split}, {len(queries)} questions), nDCG@10")
    for name, value in rows:
        print(f"  {name:<62} {value:.4f}")
    if args.proximity:
        for name, cells in proximity_rows(args.dataset, load_queries(args.dataset), qrels, fused, args.stemmer):
            print(f"  {name:<62} {cells}")


if __name__ == "__main__":
    main()
