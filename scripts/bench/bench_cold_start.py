"""The first requests after `kb serve` starts, beside later ones: POST /v1/context with distinct
turns at CONNECTIONS connections, FIRST requests from the moment /healthz first answers 200, then
NEXT more; prints one JSON line with both groups' p50/p99 and the time from start to ready.

    python3 scripts/bench/bench_cold_start.py URL TOKEN QUERIES_FILE STARTED_AT [FIRST NEXT CONNECTIONS]
"""
import json
import sys
import threading
import time
import urllib.request


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))] if ordered else 0.0


def main():
    url, token, queries_file, started = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    first, following, connections = (int(a) for a in (sys.argv[5:8] + ["100", "1000", "8"][len(sys.argv[5:8]):]))
    queries = open(queries_file, encoding="utf-8").read().splitlines()
    while True:   # ready: /healthz answers 200 (503 while kb warms)
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as answer:
                if answer.status == 200:
                    break
        except Exception:
            pass
        time.sleep(0.02)
    ready = time.time() - started
    latencies = [None] * (first + following)
    lock = threading.Lock()
    claimed = [0]

    def worker():
        while True:
            with lock:
                index = claimed[0]
                if index >= len(latencies):
                    return
                claimed[0] += 1
            body = json.dumps({"bot": "astro", "user": f"u{index % 50}", "budget": 1200, "query": queries[index % len(queries)]}).encode()
            request = urllib.request.Request(url + "/v1/context", data=body, method="POST",
                                             headers={"Content-Type": "application/json", "Authorization": "Bearer " + token})
            began = time.perf_counter()
            with urllib.request.urlopen(request, timeout=60) as answer:
                answer.read()
            latencies[index] = (time.perf_counter() - began) * 1000

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    head, tail = latencies[:first], latencies[first:]
    print(json.dumps({"ready_s": round(ready, 2), "first": first, "next": following, "connections": connections,
                      "first_p50_ms": round(percentile(head, 0.5), 1), "first_p99_ms": round(percentile(head, 0.99), 1),
                      "first_max_ms": round(max(head), 1),
                      "next_p50_ms": round(percentile(tail, 0.5), 1), "next_p99_ms": round(percentile(tail, 0.99), 1)}))


main()
