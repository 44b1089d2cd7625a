#!/usr/bin/env python3
"""Would a small learned ranker over the features kb's first stage has beat adaptive fusion?

    python3 scripts/learned_fusion_study.py --train NAME=RUN:QRELS ... --test NAME=RUN:QRELS ...

RUN is a `kb eval --mode all --run-file RUN` prefix (RUN.keyword and RUN.vector are read), QRELS
the set's judgements. For every candidate of each query (the keyword and vector rankings, 100
deep) it computes what kb knows at fusion time — each ranking's scaled score, reciprocal ranks,
the adaptive fusion's keyword share and score, which rankings found it — trains a logistic
regression (numpy, class-balanced) on the --train sets only, and prints nDCG@10 / recall@10 of
keyword, vector, adaptive fusion (Ranking.adaptiveFusion) and the learned ranker on every set.
Needs numpy. Used for the 2026-11 decision recorded in docs/search.md (*A second stage*).
With --emit-swift PATH it writes the trained model as Swift (Sources/KBRetrieval/LearnedRankerModel.swift,
the weights `--second-stage learned` uses; the features are those of LearnedRankerStage.features).
"""
import argparse
import collections
import math

import numpy as np


def load_run(path):
    run = collections.defaultdict(list)
    for line in open(path, encoding="utf-8"):
        f = line.split()
        if len(f) >= 6:
            run[f[0]].append((f[2], float(f[4])))
    return run


def load_qrels(path):
    qrels = collections.defaultdict(dict)
    for i, line in enumerate(open(path, encoding="utf-8")):
        f = line.split()
        if not f or (i == 0 and not f[-1].lstrip("-").isdigit()):
            continue
        qrels[f[0]][f[-2]] = int(f[-1])
    return qrels


def ndcg(ranking, rel, k=10):
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranking[:k]))
    ideal = sorted((g for g in rel.values() if g > 0), reverse=True)[:k]
    best = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def recall(ranking, rel, k=10):
    wanted = [d for d, g in rel.items() if g > 0]
    return sum(1 for d in ranking[:k] if rel.get(d, 0) > 0) / len(wanted) if wanted else 0.0


def scaled(items, complete):
    if not items:
        return {}
    values = [s for _, s in items]
    high = max(values)
    low = min(0.0 if complete else high, min(values))
    return {d: (s - low) / (high - low) if high > low else 1.0 for d, s in items}


def confidence(norm, items, complete):
    rest = [norm[d] for d, _ in items[1:10]]
    count = 9 if complete else len(rest)
    if not items:
        return 0.0
    return 1.0 if count == 0 else 1 - sum(rest) / count


def features(keywords, vectors, depth=100):
    keywords, vectors = keywords[:depth], vectors[:depth]
    complete = len(keywords) < depth
    k, v = scaled(keywords, complete), scaled(vectors, False)
    ck, cv = confidence(k, keywords, complete), confidence(v, vectors, False)
    share = ck / (ck + cv) if ck + cv > 0 else 0.5
    krank = {d: i + 1 for i, (d, _) in enumerate(keywords)}
    vrank = {d: i + 1 for i, (d, _) in enumerate(vectors)}
    rows = {}
    for d in set(k) | set(v):
        kk, vv = k.get(d, 0.0), v.get(d, 0.0)
        rows[d] = [kk, vv, share * kk + (1 - share) * vv, 1 / (60 + krank.get(d, 1000)), 1 / (60 + vrank.get(d, 1000)),
                   share * kk, (1 - share) * vv, float(d in k), float(d in v), kk * vv]
    return rows


def load(spec):
    name, rest = spec.split("=", 1)
    run, qrels = rest.rsplit(":", 1)
    return name, load_run(run + ".keyword"), load_run(run + ".vector"), load_qrels(qrels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", action="append", default=[])
    parser.add_argument("--test", action="append", default=[])
    parser.add_argument("--emit-swift", metavar="PATH")
    parser.add_argument("--version", default="learned-ranker-v1")
    args = parser.parse_args()
    train, test = [load(s) for s in args.train], [load(s) for s in args.test]
    xs, ys = [], []
    for _, kw, vec, qrels in train:
        for q, rel in qrels.items():
            if any(g > 0 for g in rel.values()):
                for d, row in features(kw.get(q, []), vec.get(q, [])).items():
                    xs.append(row)
                    ys.append(1.0 if rel.get(d, 0) > 0 else 0.0)
    x, y = np.array(xs), np.array(ys)
    mean, spread = x.mean(0), x.std(0) + 1e-9
    xn = (x - mean) / spread
    w, b = np.zeros(x.shape[1]), 0.0
    balance = np.where(y > 0, 0.5 / y.mean(), 0.5 / (1 - y.mean()))
    for _ in range(3000):
        p = 1 / (1 + np.exp(-(xn @ w + b)))
        g = (p - y) * balance
        w -= 0.5 * (xn.T @ g) / len(y)
        b -= 0.5 * g.mean()
    print(f"trained on {', '.join(t[0] for t in train)}: {len(y)} candidates; weights {np.round(w, 3).tolist()}")
    if args.emit_swift:
        def numbers(values):
            return ", ".join(repr(float(v)) for v in values)
        with open(args.emit_swift, "w", encoding="utf-8") as out:
            out.write(f"""// Generated by scripts/learned_fusion_study.py --emit-swift (trained on {', '.join(t[0] for t in train)}; {len(y)} candidates).
// Do not edit: train again instead.

extension LearnedRankerStage.Model {{
    /// The model `--second-stage learned` uses.
    public static let shipped = LearnedRankerStage.Model(
        version: "{args.version}",
        mean: [{numbers(mean)}],
        spread: [{numbers(spread)}],
        weights: [{numbers(w)}])
}}
""")
        print(f"wrote {args.emit_swift}")
    print(f"{'set':<26}{'keyword':>15}{'vector':>15}{'adaptive':>15}{'learned':>15}")
    for name, kw, vec, qrels in train + test:
        sums = collections.Counter()
        judged = [q for q, rel in qrels.items() if any(g > 0 for g in rel.values())]
        for q in judged:
            rows = features(kw.get(q, []), vec.get(q, []))
            ids = list(rows)
            learned = [ids[i] for i in np.argsort(-(((np.array([rows[d] for d in ids]) - mean) / spread) @ w))] if ids else []
            rankings = {"keyword": [d for d, _ in kw.get(q, [])], "vector": [d for d, _ in vec.get(q, [])],
                        "adaptive": sorted(ids, key=lambda d: -rows[d][2]), "learned": learned}
            for label, ranking in rankings.items():
                sums[label + "n"] += ndcg(ranking, qrels[q])
                sums[label + "r"] += recall(ranking, qrels[q])
        n = max(1, len(judged))
        cells = "".join(f"{sums[l + 'n'] / n:>8.3f}/{sums[l + 'r'] / n:.3f}" for l in ("keyword", "vector", "adaptive", "learned"))
        print(f"{name + (' (train)' if any(name == t[0] for t in train) else ''):<26}{cells}")


if __name__ == "__main__":
    main()
