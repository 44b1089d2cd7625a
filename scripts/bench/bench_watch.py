#!/usr/bin/env python3
"""Save-to-searchable latency and idle cost of `kb serve --watch` (scripts/bench/bench-watch.sh runs it)."""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


def serve(args, watch):
    command = [args.kb, "serve", "--db", args.db, "--port", str(args.port), "--token", args.token]
    if watch:
        command += ["--watch", args.folder]
    log = open(Path(args.db).with_suffix(".serve.log"), "a")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(600):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{args.port}/healthz", timeout=1)
            return process
        except Exception:
            if process.poll() is not None:
                sys.exit("kb serve did not start; see " + log.name)
            time.sleep(0.1)
    sys.exit("kb serve did not answer /healthz")


def stop(process):
    process.terminate()
    process.wait(timeout=30)


def cpu_and_rss(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICKS
    rss = next(int(line.split()[1]) for line in open(f"/proc/{pid}/status") if line.startswith("VmRSS:")) / 1024
    return cpu, rss


def idle(args, watch):
    process = serve(args, watch)
    time.sleep(10)   # the first scan (with --watch) and loading the vectors
    # One hybrid search, so that both servers hold the query model (a watch loads it to embed
    # changed files; a server without one loads it at its first query).
    request = urllib.request.Request(f"http://127.0.0.1:{args.port}/v1/search", method="POST",
                                     data=json.dumps({"query": "how do I start", "k": 1}).encode(),
                                     headers={"Authorization": f"Bearer {args.token}", "Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=60).read()
    time.sleep(2)
    cpu0, _ = cpu_and_rss(process.pid)
    time.sleep(args.idle)
    cpu1, rss = cpu_and_rss(process.pid)
    stop(process)
    return {"cpuSeconds": round(cpu1 - cpu0, 3), "cpuPercent": round(100 * (cpu1 - cpu0) / args.idle, 3), "residentMB": round(rss, 1)}


def search(args, word):
    request = urllib.request.Request(f"http://127.0.0.1:{args.port}/v1/search", method="POST",
                                     data=json.dumps({"query": word, "mode": "keyword", "k": 1}).encode(),
                                     headers={"Authorization": f"Bearer {args.token}", "Content-Type": "application/json"})
    return json.loads(urllib.request.urlopen(request, timeout=30).read())["hits"]


def latencies(args):
    process = serve(args, True)
    files = sorted(p for p in Path(args.folder).rglob("*.md") if not any(part.startswith(".") for part in p.parts))
    random.seed(7)
    time.sleep(5)   # the first scan
    found = []
    for n in range(args.saves):
        path = random.choice(files)
        word = f"zq{n}x{random.randrange(10**8):08d}"
        with open(path, "a") as f:
            f.write(f"\n\nA saved line with the word {word}.\n")
        start = time.monotonic()
        while True:
            if search(args, word):
                found.append(time.monotonic() - start)
                break
            if time.monotonic() - start > 60:
                found.append(float("nan"))
                break
            time.sleep(0.01)
        time.sleep(0.5)
    stop(process)
    return found


def main():
    parser = argparse.ArgumentParser()
    for name in ["kb", "db", "folder", "token", "out"]:
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--idle", type=int, default=60)
    args = parser.parse_args()
    times = latencies(args)
    done = sorted(t for t in times if t == t)
    result = {
        "folder": {"files": sum(1 for _ in Path(args.folder).rglob("*") if _.is_file()),
                   "folders": sum(1 for _ in Path(args.folder).rglob("*") if _.is_dir()) + 1},
        "saveToSearchable": {"saves": len(times), "found": len(done), "medianSeconds": round(statistics.median(done), 3),
                             "p90Seconds": round(done[int(0.9 * (len(done) - 1))], 3), "maxSeconds": round(done[-1], 3)},
        "idleWithWatch": idle(args, True),
        "idleWithoutWatch": idle(args, False),
    }
    json.dump(result, open(args.out, "w"), indent=2)
    s = result["saveToSearchable"]
    print(f"save to searchable ({s['found']}/{s['saves']} saves): median {s['medianSeconds']} s, p90 {s['p90Seconds']} s, max {s['maxSeconds']} s")
    for key in ["idleWithWatch", "idleWithoutWatch"]:
        r = result[key]
        print(f"{key}: {r['cpuSeconds']} CPU s over {args.idle} s ({r['cpuPercent']} %), resident {r['residentMB']} MB")


if __name__ == "__main__":
    main()
