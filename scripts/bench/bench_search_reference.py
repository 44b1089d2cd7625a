#!/usr/bin/env python3
"""Reference side of scripts/bench/bench-search.sh: numpy (matrix @ q + argpartition) and FAISS
IndexFlatIP on the same vectors and queries kb-bench wrote. Prints one JSON object."""
import json, statistics, sys, time

import numpy as np

workdir, count, threads = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
d, k = 384, 10
m = np.fromfile(f"{workdir}/vectors.f32", dtype=np.float32).reshape(count, d)
queries = np.fromfile(f"{workdir}/queries.f32", dtype=np.float32).reshape(-1, d)
out = {}

def top(scores):
    idx = np.argpartition(-scores, k)[:k] if scores.shape[0] > k else np.arange(scores.shape[0])
    return idx[np.lexsort((idx, -scores[idx]))]

def p95(xs):
    xs = sorted(xs)
    return xs[int(len(xs) * 0.95) - 1]

# numpy
for q in queries[:10]:
    top(m @ q)
lat, rows = [], []
for q in queries[:200]:
    t = time.perf_counter()
    r = top(m @ q)
    lat.append((time.perf_counter() - t) * 1000)
    rows.append([int(i) for i in r])
t = time.perf_counter()
for b in range(0, 256, 64):
    s = queries[b:b + 64] @ m.T
    for row in s:
        top(row)
out["numpy"] = {"single_ms_median": statistics.median(lat), "single_ms_p95": p95(lat),
                "batch64_queries_per_s": 256 / (time.perf_counter() - t), "top10_rows": rows}

# FAISS
try:
    import faiss
    faiss.omp_set_num_threads(threads)
    faiss.cvar.distance_compute_blas_threshold = 20
    t = time.perf_counter()
    index = faiss.IndexFlatIP(d)
    index.add(m)
    add_seconds = time.perf_counter() - t
    for q in queries[:10]:
        index.search(q[None, :], k)
    lat = []
    for q in queries[:200]:
        t = time.perf_counter()
        index.search(q[None, :], k)
        lat.append((time.perf_counter() - t) * 1000)
    index.search(queries[:64], k)
    t = time.perf_counter()
    for b in range(0, 256, 64):
        index.search(queries[b:b + 64], k)
    out["faiss"] = {"single_ms_median": statistics.median(lat), "single_ms_p95": p95(lat),
                    "batch64_queries_per_s": 256 / (time.perf_counter() - t), "add_seconds": add_seconds}
except ImportError:
    out["faiss"] = None
print(json.dumps(out))
