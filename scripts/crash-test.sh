#!/usr/bin/env bash
# Durability under kill -9: runs `kb serve` (release build, local model, the sample corpus), sends
# concurrent memory adds and context requests, kills the server with SIGKILL at a random moment
# mid-load, restarts it on the same index, and checks that every memory whose add was
# acknowledged is there and that the index passes PRAGMA integrity_check. Uploads ride along: a
# PDF posted to /v1/sources and answered 202 must, after the restart, have its job finish (a job
# the killed server was running is taken up once its heartbeat is stale, about 20 s) and its
# source be listed. ROUNDS rounds (default 10); exits 1 on any lost memory or upload or a damaged
# index.
#
#   scripts/crash-test.sh [ROUNDS]
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages
bash scripts/install-model.sh
ROUNDS="${1:-10}"

say "Building kb (release)"
kb_build --product kb >/dev/null
KB="$KB_BIN_DIR/kb"
WORK="$(mktemp -d)"
trap 'pkill -9 -f "kb serve --port $PORT" 2>/dev/null || true; rm -rf "$WORK"' EXIT
PORT=$(( 20000 + RANDOM % 20000 ))
export KB_DB="$WORK/crash.sqlite"

say "Indexing corpus/ with the local model"
"$KB" ingest corpus --tags-from corpus/tags.yaml >/dev/null
"$KB" bot create astro --source corpus --json >/dev/null

python3 - "$KB" "$PORT" "$KB_DB" "$ROUNDS" "$KB_ROOT/Tests/KBIngestTests/Fixtures/pdf/book.pdf" <<'PY'
import json, os, random, signal, sqlite3, subprocess, sys, threading, time, urllib.error, urllib.request

kb, port, db, rounds, pdf = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), open(sys.argv[5], "rb").read()
url = f"http://127.0.0.1:{port}"


def call(method, path, body=None, timeout=10):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.status, json.loads(response.read())


def start():
    server = subprocess.Popen([kb, "serve", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(2400):
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1)
            return server
        except Exception:
            time.sleep(0.05)
    raise SystemExit("kb serve did not start")


def upload(source_id):
    request = urllib.request.Request(f"{url}/v1/sources?id={source_id}", data=pdf, method="POST",
                                     headers={"Content-Type": "application/pdf"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, json.loads(response.read())


acknowledged = {}          # id -> content, over every round
uploads = {}               # source id -> job id, over every round
failures = 0
print(f"{'round':>5} {'killed after s':>15} {'adds acked':>11} {'contexts':>9} {'uploads':>8} {'lost':>5} {'jobs wait s':>12} {'integrity':>10}")
for round_number in range(1, rounds + 1):
    server = start()
    stop = threading.Event()
    lock = threading.Lock()
    counts = {"adds": 0, "contexts": 0, "uploads": 0}

    def adder(worker):
        n = 0
        while not stop.is_set():
            n += 1
            content = f"Round {round_number} worker {worker} fact {n}: prefers tea at {n % 24} o'clock."
            try:
                status, body = call("POST", "/v1/memories", {"content": content, "scope": f"user:u{worker}"})
            except Exception:
                continue       # not acknowledged: the server died first, or the answer was lost
            if status in (200, 201):
                with lock:
                    acknowledged[body["memory"]["id"]] = content
                    counts["adds"] += 1

    def asker(worker):
        while not stop.is_set():
            try:
                call("POST", "/v1/context", {"bot": "astro", "user": f"u{worker}", "query": "what about tea and Saturn"})
                with lock:
                    counts["contexts"] += 1
            except Exception:
                pass

    def uploader():
        n = 0
        while not stop.is_set():
            n += 1
            source_id = f"r{round_number}-book{n}"
            try:
                status, body = upload(source_id)
            except Exception:
                continue
            if status == 202:
                with lock:
                    uploads[source_id] = body["job"]["id"]
                    counts["uploads"] += 1
            time.sleep(0.2)

    threads = [threading.Thread(target=adder, args=(i,)) for i in range(6)] + [threading.Thread(target=asker, args=(i,)) for i in range(4)]
    threads.append(threading.Thread(target=uploader))
    for thread in threads:
        thread.start()
    delay = random.uniform(0.5, 2.5)
    time.sleep(delay)
    server.send_signal(signal.SIGKILL)
    server.wait()
    stop.set()
    for thread in threads:
        thread.join()

    integrity = sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0]
    server = start()
    lost = 0
    for memory_id, content in acknowledged.items():
        try:
            status, body = call("GET", f"/v1/memories/{memory_id}")
            if status != 200 or body["memory"]["content"] != content:
                lost += 1
        except urllib.error.HTTPError:
            lost += 1
    # Every acknowledged upload's job finishes after the restart, and its source is listed.
    waited = time.monotonic()
    pending = dict(uploads)
    while pending and time.monotonic() - waited < 120:
        for source_id, job_id in list(pending.items()):
            try:
                _, job = call("GET", f"/v1/jobs/{job_id}")
            except urllib.error.HTTPError:
                continue
            if job["state"] in ("done", "failed"):
                del pending[source_id]
        time.sleep(0.25)
    waited = time.monotonic() - waited
    _, listed = call("GET", "/v1/sources?limit=1000")
    listed = {source["id"]: source["snippets"] for source in listed["sources"]}
    lost += sum(1 for source_id in uploads if listed.get(source_id, 0) == 0)
    server.send_signal(signal.SIGTERM)
    server.wait()
    if lost or integrity != "ok":
        failures += 1
    print(f"{round_number:>5} {delay:>15.2f} {counts['adds']:>11} {counts['contexts']:>9} {counts['uploads']:>8} {lost:>5} {waited:>12.1f} {integrity:>10}")

print(f"\n{rounds - failures} of {rounds} rounds passed; {len(acknowledged)} acknowledged memories and {len(uploads)} acknowledged uploads in all, every one checked after each kill")
sys.exit(1 if failures else 0)
PY
