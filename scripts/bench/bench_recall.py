"""Vector search answers of a live `kb serve`, and their recall against another run's.

    python3 scripts/bench/bench_recall.py search URL TOKEN QUERIES.txt N OUT.json [BOT]
        POST /v1/search (mode vector, k 10) for the first N lines of QUERIES.txt, one at a time;
        writes each answer's snippet ids and the latency of each request (ms).
    python3 scripts/bench/bench_recall.py recall EXACT.json APPROXIMATE.json
        prints recall@10 of the approximate answers against the exact ones (the mean share of each
        exact top 10 the approximate top 10 holds), how much lower the approximate tenth hit's
        score is than the exact tenth's (and, for scale, the exact first-to-tenth spread), and the
        two runs' p50 latencies, as JSON.

Used by scripts/bench/bench-postgres-scale.sh (HNSW against exact on the same PostgreSQL index).
"""
import json
import statistics
import sys
import time
import urllib.request


def hit_id(hit):
    for key in ("snippetID", "snippetId", "snippet_id"):
        if key in hit:
            return hit[key]
    return hit["snippet"]["id"]


def search(url, token, queries_path, count, out_path, bot=None):
    queries = [line for line in open(queries_path, encoding="utf-8").read().splitlines() if line.strip()][:count]
    answers, scores, latencies = [], [], []
    for query in queries:
        body = {"query": query, "k": 10, "mode": "vector"}
        if bot:
            body["bot"] = bot
        request = urllib.request.Request(f"{url}/v1/search", data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        start = time.perf_counter()
        with urllib.request.urlopen(request, timeout=600) as response:
            result = json.load(response)
        latencies.append(1000 * (time.perf_counter() - start))
        answers.append([hit_id(hit) for hit in result["hits"]])
        scores.append([hit["score"] for hit in result["hits"]])
    json.dump({"queries": queries, "answers": answers, "scores": scores, "latencies_ms": latencies}, open(out_path, "w"))


def recall(exact_path, approximate_path):
    exact, approximate = json.load(open(exact_path)), json.load(open(approximate_path))
    assert exact["queries"] == approximate["queries"], "the two runs asked different questions"
    shares = [len(set(a) & set(e)) / len(e) for e, a in zip(exact["answers"], approximate["answers"]) if e]
    # How near the answers are when they differ: the approximate tenth hit's score against the
    # exact tenth's (near ties swap places in an approximate walk without changing what is found).
    gaps = [e[-1] - a[-1] for e, a in zip(exact["scores"], approximate["scores"]) if e and a]
    print(json.dumps({"queries": len(shares), "recall_at_10": round(statistics.mean(shares), 4) if shares else None,
                      "tenth_score_gap_mean": round(statistics.mean(gaps), 4) if gaps else None,
                      "tenth_score_spread_mean": round(statistics.mean(e[0] - e[-1] for e in exact["scores"] if e), 4),
                      "exact_p50_ms": round(statistics.median(exact["latencies_ms"]), 1),
                      "approximate_p50_ms": round(statistics.median(approximate["latencies_ms"]), 1)}))


if __name__ == "__main__":
    if sys.argv[1] == "search":
        search(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6], sys.argv[7] if len(sys.argv) > 7 else None)
    elif sys.argv[1] == "recall":
        recall(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
