#!/usr/bin/env python3
"""How kb's re-ranking blend behaves with re-rankers of every quality, without a re-ranking model.

    python3 scripts/studies/rerank_blend_study.py RUN_FILE QRELS [--depth 40] [--seed 7]

RUN_FILE is a first-stage TREC run (`kb eval --run-file`), QRELS the set's judgements. A
simulated re-ranker scores each of the first `depth` candidates as its relevance grade plus
Gaussian noise of standard deviation sigma (sigma 0: a perfect re-ranker; large sigma: one that
knows nothing). For each sigma the script prints nDCG@10 and recall@10 of the first stage, of the
re-ranker's order alone (substitution) and of kb's blend (RerankingStage.blend: first-stage weight
0.75 for ranks 1-3, 0.60 for 4-10, 0.40 below, on (n-r+1)/n, against the re-ranker's score scaled
to 0..1), averaged over five draws. It measures the blend's trade: how much of a good re-ranker's
gain it keeps, and how much of a bad one's damage it prevents.
"""
import argparse
import os
import sys
import collections
import random

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trec_metrics import load_qrels, load_run, ndcg, recall  # noqa: E402


def blend(scores, weights=(0.75, 0.60, 0.40)):
    n = len(scores)
    low, high = min(scores), max(scores)
    out = []
    for index, score in enumerate(scores):
        rank = index + 1
        position = (n - rank + 1) / n
        scaled = (score - low) / (high - low) if high > low else 1.0
        weight = weights[0] if rank <= 3 else weights[1] if rank <= 10 else weights[2]
        out.append((weight * position + (1 - weight) * scaled, -index))
    return [-i for _, i in sorted(out, reverse=True)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("qrels")
    parser.add_argument("--depth", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    run, qrels = load_run(args.run), load_qrels(args.qrels)
    queries = [q for q in qrels if any(g > 0 for g in qrels[q].values())]
    print(f"{len(queries)} judged queries, depth {args.depth}")
    print(f"{'sigma':>6}  {'first stage':>15}  {'substituted':>15}  {'kb blend':>15}   (nDCG@10 / recall@10)")
    for sigma in (0.0, 0.25, 0.5, 1.0, 2.0, 1000.0):
        sums = collections.Counter()
        draws = 5
        for draw in range(draws):
            rng = random.Random(args.seed * 1000 + draw)
            for q in queries:
                first = [d for d, _ in run.get(q, [])]
                head, tail = first[: args.depth], first[args.depth:]
                scores = [qrels[q].get(d, 0) + rng.gauss(0, sigma) for d in head]
                substituted = [head[i] for i in sorted(range(len(head)), key=lambda i: -scores[i])] + tail
                blended = [head[i] for i in blend(scores)] + tail if head else tail
                for name, ranking in (("first", first), ("sub", substituted), ("blend", blended)):
                    sums[name + "n"] += ndcg(ranking, qrels[q])
                    sums[name + "r"] += recall(ranking, qrels[q])
        count = draws * len(queries)
        cells = [f"{sums[n + 'n'] / count:.3f} / {sums[n + 'r'] / count:.3f}" for n in ("first", "sub", "blend")]
        label = "random" if sigma >= 1000 else f"{sigma:g}"
        print(f"{label:>6}  {cells[0]:>15}  {cells[1]:>15}  {cells[2]:>15}")


if __name__ == "__main__":
    main()
