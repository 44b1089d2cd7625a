#!/usr/bin/env python3
"""TREC run, qrels and query files, the two metrics the retrieval studies report (nDCG@10 with
linear-exponential gain and recall@10), as `kb eval` computes them, and the studies' word
analysis (with a question's English function words left out as kb leaves them out), and BM25 as
FTS5's bm25() computes it. Shared by scripts/studies/rerank_blend_study.py,
long_snippets_study.py, neighbour_keywords_study.py and bm25_parameters_study.py."""
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


def english_function_words():
    """KeywordQuery.stopwords, read from kb's source (Sources/KBStore/KeywordQuery.swift)."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../Sources/KBStore/KeywordQuery.swift")
    text = open(source, encoding="utf-8").read()
    start = text.index("public static let stopwords: Set<String> = [")
    return set(re.findall(r'"(\w+)"', text[start:text.index("]", start)]))


def question_analyzer(stemmer):
    """question -> its search terms as kb's keyword query makes them: `analyzer(stemmer)`'s, after
    the English function words are left out (for Porter and English), unless nothing else is left."""
    terms = analyzer(stemmer)
    skip = english_function_words() if stemmer in ("porter", "english") else set()

    def question_terms(text):
        words = [w for w in re.findall(r"\w+", text.lower()) if w not in skip]
        return terms(" ".join(words) if words else text)
    return question_terms


class FTS5BM25:
    """BM25 over rows of named columns, as SQLite FTS5's bm25() scores them (fts5_aux.c) and kb's
    KeywordIndex reproduces: a term's frequency in a row is the sum over columns of its count
    times the column's weight, the row's length is its terms in every column, idf is
    log((N - n + 0.5) / (n + 0.5)) floored at 1e-6, n the rows holding the term in any column.
    `k1` and `b` are FTS5's fixed 1.2 and 0.75 unless given."""

    def __init__(self, rows):
        self.rows = rows            # [{column: [terms]}]
        self.postings = collections.defaultdict(lambda: collections.defaultdict(dict))
        self.rows_with = collections.Counter()
        self.length = [sum(len(terms) for terms in row.values()) for row in rows]
        self.average = (sum(self.length) / len(rows)) or 1
        for index, row in enumerate(rows):
            seen = set()
            for column, terms in row.items():
                counts = collections.Counter(terms)
                for term, count in counts.items():
                    self.postings[column][term][index] = count
                seen.update(counts)
            self.rows_with.update(seen)

    def rank(self, query, weights, k1=1.2, b=0.75):
        """[(row, score)], best first, for the distinct terms of `query`."""
        n = len(self.rows)
        scores = collections.defaultdict(float)
        for term in set(query):
            has = self.rows_with.get(term, 0)
            if not has:
                continue
            idf = max(math.log((n - has + 0.5) / (has + 0.5)), 1e-6)
            frequency = collections.defaultdict(float)
            for column, weight in weights.items():
                if weight:
                    for row, count in self.postings[column].get(term, {}).items():
                        frequency[row] += weight * count
            for row, f in frequency.items():
                scores[row] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * self.length[row] / self.average))
        return sorted(scores.items(), key=lambda x: (-x[1], x[0]))
