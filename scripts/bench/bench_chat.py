#!/usr/bin/env python3
"""What kb adds to a chat completion's latency: the same requests sent straight to a stub upstream
model and through kb serve (which first assembles the bot's context with the local model), at 1 and
32 connections, each connection a thread with its own keep-alive connection.

Non-streamed: time to the whole answer. Streamed: time to the first content chunk (the first
`data:` event with text) — what a chat UI's user waits for.

    python3 scripts/bench/bench_chat.py KB_URL TOKEN STUB_URL QUERIES_FILE SECONDS OUT_JSON
"""
import http.client
import json
import sys
import threading
import time
from urllib.parse import urlparse

kb_url, token, stub_url, queries_file, seconds, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6]
queries = [line.strip() for line in open(queries_file, encoding="utf-8") if line.strip()]


def request(connection, path, body, stream):
    """Sends one chat completion; returns seconds to the whole answer, or to its first content chunk."""
    started = time.perf_counter()
    connection.request("POST", path, body=json.dumps(body).encode(), headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    response = connection.getresponse()
    if response.status != 200:
        text = response.read()
        raise RuntimeError(f"{response.status}: {text[:200]!r}")
    if not stream:
        response.read()
        return time.perf_counter() - started
    first = None
    while True:
        line = response.readline()
        if not line:
            break
        if first is None and line.startswith(b"data: ") and b'"content"' in line:
            first = time.perf_counter() - started
        if line.strip() == b"data: [DONE]":
            response.read()   # the chunked body's end
            break
    return first


def run(target, connections, stream):
    base = urlparse(target)
    path = base.path.rstrip("/") + "/chat/completions"
    model = "astro" if target == kb_url + "/v1" else "stub"
    timings, errors, lock, messages = [], [0], threading.Lock(), []
    deadline = time.perf_counter() + seconds

    def worker(index):
        connection = http.client.HTTPConnection(base.hostname, base.port, timeout=60)
        n = index
        while time.perf_counter() < deadline:
            body = {"model": model, "messages": [{"role": "user", "content": queries[n % len(queries)]}], "stream": stream, "user": f"u{index}"}
            n += connections
            try:
                took = request(connection, path, body, stream)
                with lock:
                    timings.append(took)
            except Exception as error:
                with lock:
                    errors[0] += 1
                    messages.append(f"{type(error).__name__}: {error}")
                connection.close()
                connection = http.client.HTTPConnection(base.hostname, base.port, timeout=60)
        connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    timings.sort()
    for message in sorted(set(messages))[:3]:
        print(f"  ({target}, {connections} connections, {'streamed' if stream else 'whole'}: {message})", flush=True)

    def percentile(p):
        return round(1000 * timings[min(len(timings) - 1, int(p * len(timings)))], 2) if timings else None

    return {"requests": len(timings), "errors": errors[0], "p50_ms": percentile(0.50), "p99_ms": percentile(0.99),
            "per_second": round(len(timings) / seconds, 1)}


results = []
print(f"{'answer':<9} {'conns':>5}  {'direct p50':>10} {'p99':>8}  {'via kb p50':>10} {'p99':>8}  {'added p50':>9} {'p99':>8}  {'req/s kb':>8} {'errors':>6}")
for stream in (False, True):
    for connections in (1, 32):
        direct = run(stub_url, connections, stream)
        via = run(kb_url + "/v1", connections, stream)
        row = {"stream": stream, "connections": connections, "direct": direct, "kb": via,
               "added_p50_ms": round(via["p50_ms"] - direct["p50_ms"], 2) if via["p50_ms"] and direct["p50_ms"] else None,
               "added_p99_ms": round(via["p99_ms"] - direct["p99_ms"], 2) if via["p99_ms"] and direct["p99_ms"] else None}
        results.append(row)
        print(f"{'streamed' if stream else 'whole':<9} {connections:>5}  {direct['p50_ms']:>10} {direct['p99_ms']:>8}  {via['p50_ms']:>10} {via['p99_ms']:>8}"
              f"  {row['added_p50_ms']:>9} {row['added_p99_ms']:>8}  {via['per_second']:>8} {direct['errors'] + via['errors']:>6}", flush=True)
json.dump({"seconds_per_run": seconds, "results": results}, open(out, "w"), indent=2)
