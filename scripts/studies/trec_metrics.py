#!/usr/bin/env python3
"""TREC run, qrels and query files, the two metrics the retrieval studies report (nDCG@10 with
linear-exponential gain and recall@10), as `kb eval` computes them, and the studies' word
analysis. Shared by scripts/studies/rerank_blend_study.py, long_snippets_study.py and
neighbour_keywords_study.py."""
import collections
import json
import math
import os
import re


def load_run(path):
    """query id -> [(document id, score)], best first, from a TREC run file."""
    run = collections.defaultdict(list)
    for line in open(path, encoding="utf-8"):
        fields = line.split()
        if len(fields) >= 6:
            run[fields[0]].append((fields[2], float(fields[4])))
    return run


def load_qrels(path):
    """query id -> document id -> grade, from a qrels file (a header line is skipped)."""
    qrels = collections.defaultdict(dict)
    for index, line in enumerate(open(path, encoding="utf-8")):
        fields = line.split()
        if not fields or (index == 0 and not fields[-1].lstrip("-").isdigit()):
            continue
        qrels[fields[0]][fields[-2]] = int(fields[-1])
    return qrels


def ndcg(ranking, relevant, k=10):
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    best = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def recall(ranking, relevant, k=10):
    wanted = [d for d, g in relevant.items() if g > 0]
    return sum(1 for d in ranking[:k] if relevant.get(d, 0) > 0) / len(wanted) if wanted else 0.0


def load_queries(dataset):
    """query id -> text, from a BEIR folder's queries.jsonl."""
    queries = {}
    for line in open(os.path.join(dataset, "queries.jsonl"), encoding="utf-8"):
        query = json.loads(line)
        queries[str(query["_id"])] = query["text"]
    return queries


def analyzer(stemmer):
    """text -> its words folded and stemmed by PyStemmer's `stemmer` (porter, arabic, german, …);
    Arabic words also lose their diacritics and have alef's forms folded. Needs PyStemmer."""
    import Stemmer
    stem = Stemmer.Stemmer(stemmer)
    word = re.compile(r"\w+", re.UNICODE)
    diacritics = re.compile("[\u064B-\u0652\u0640]")

    def terms(text):
        words = word.findall(text.lower())
        if stemmer == "arabic":
            words = [diacritics.sub("", w).replace("أ", "ا").replace("إ", "ا").replace("آ", "ا") for w in words]
        return stem.stemWords(words)
    return terms
