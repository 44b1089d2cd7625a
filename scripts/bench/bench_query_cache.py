#!/usr/bin/env python3
"""A chat app's traffic against a running `kb serve`, for scripts/bench/bench-query-cache.sh: CONVERSATIONS
conversations of TURNS user turns each, every turn a POST /v1/context to the bot astro with the
conversation so far in "history" (as chat apps send it: every earlier user turn and a short
assistant answer, again on every turn), CONNECTIONS conversations at a time. Turns are drawn with a
fixed seed from QUERIES (distinct texts), so repeats come from the resent history, not from
identical questions. Prints one JSON line: requests, seconds, requests/s, p50/p99 ms, errors, CPU
seconds kb spent (from /proc/PID/stat) and per request, and the query cache's hits and misses from
/metrics.

    python3 scripts/bench/bench_query_cache.py URL TOKEN PID QUERIES CONVERSATIONS TURNS CONNECTIONS
"""
import json
import os
import random
import sys
import threading
import time
import urllib.request

url, token, pid, queries_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
conversations, turns, connections = int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
pool = open(queries_file, encoding="utf-8").read().splitlines()
rng = random.Random(7)
plans = [rng.sample(pool, turns) for _ in range(conversations)]
answers = ["It depends on the rest of the chart.", "That is a slow, outer influence.", "Look at the house it rules.",
           "The aspects to it matter most.", "Traditionally it is read as a challenge.", "It is about growth."]


def cpu_seconds():
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0.0


def post(body):
    request = urllib.request.Request(url + "/v1/context", data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        response.read()
        return response.status


latencies, errors, lock = [], [0], threading.Lock()
next_conversation = [0]


def worker(number):
    while True:
        with lock:
            if next_conversation[0] >= len(plans):
                return
            index = next_conversation[0]
            next_conversation[0] += 1
        history = []
        for turn, question in enumerate(plans[index]):
            body = {"bot": "astro", "user": f"u{index % 50}", "budget": 1200, "query": question, "history": list(history)}
            started = time.perf_counter()
            try:
                status = post(body)
            except Exception:
                status = 0
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                if status != 200:
                    errors[0] += 1
            history += [{"role": "user", "content": question}, {"role": "assistant", "content": answers[(index + turn) % len(answers)]}]


def scrape():
    request = urllib.request.Request(url + "/metrics", headers={"Authorization": "Bearer " + token})
    return urllib.request.urlopen(request, timeout=30).read().decode()


before_metrics, cpu_before, started = scrape(), cpu_seconds(), time.perf_counter()
threads = [threading.Thread(target=worker, args=(n,)) for n in range(connections)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_before
after_metrics = scrape()
latencies.sort()
hits = metric(after_metrics, "kb_query_cache_hits_total") - metric(before_metrics, "kb_query_cache_hits_total")
misses = metric(after_metrics, "kb_query_cache_misses_total") - metric(before_metrics, "kb_query_cache_misses_total")
print(json.dumps({
    "requests": len(latencies), "seconds": round(seconds, 2), "rps": round(len(latencies) / seconds, 1),
    "p50_ms": round(latencies[len(latencies) // 2] * 1000, 1), "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 1),
    "errors": errors[0], "cpu_seconds": round(cpu, 2), "cpu_ms_per_request": round(cpu / len(latencies) * 1000, 2),
    "cache_hits": int(hits), "cache_misses": int(misses),
    "hit_rate": round(hits / (hits + misses), 3) if hits + misses else None}))
