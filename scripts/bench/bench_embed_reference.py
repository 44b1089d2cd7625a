#!/usr/bin/env python3
"""Reference side of scripts/bench/bench-embed.sh: sentence-transformers on PyTorch CPU, same texts,
same measurements as kb-bench. Prints one JSON object."""
import json, statistics, sys, time

import torch
from sentence_transformers import SentenceTransformer

model_dir, passages_file, sentences_file, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(threads)
model = SentenceTransformer(model_dir, device="cpu")
sets = {name: [l for l in open(path, encoding="utf-8").read().split("\n") if l]
        for name, path in (("passages", passages_file), ("sentences", sentences_file))}
result = {"implementation": f"sentence-transformers on PyTorch {torch.__version__} CPU", "threads": threads}
model.encode(sets["passages"][:8], batch_size=8)
for name, texts in sorted(sets.items()):
    tokens = sum(len(model.tokenizer(t, truncation=True, max_length=model.max_seq_length)["input_ids"]) for t in texts)
    for batch in (1, 32):
        start = time.perf_counter()
        for i in range(0, len(texts), batch):
            model.encode(texts[i:i + batch], batch_size=batch, normalize_embeddings=True)
        seconds = time.perf_counter() - start
        result[f"{name}_batch{batch}"] = {"texts": len(texts), "tokens": tokens, "seconds": seconds,
                                          "texts_per_s": len(texts) / seconds, "tokens_per_s": tokens / seconds}
query = "how long does the saturn return take to complete its orbit?"
for _ in range(20):
    model.encode([query])
latencies = []
for _ in range(200):
    start = time.perf_counter()
    model.encode([query])
    latencies.append((time.perf_counter() - start) * 1000)
latencies.sort()
result["query_ms_median"] = statistics.median(latencies)
result["query_ms_p95"] = latencies[int(len(latencies) * 0.95) - 1]
print(json.dumps(result, indent=2, sort_keys=True))
