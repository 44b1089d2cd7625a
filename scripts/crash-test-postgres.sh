#!/usr/bin/env bash
# The shared path under a database crash: two `kb serve` replicas (release build, local model, the
# sample corpus) on one throwaway PostgreSQL (scripts/postgres.sh) take memory adds and context
# requests from several clients; at a random moment the PostgreSQL server is killed with SIGKILL
# (every process of it), left down for OUTAGE seconds, and started again (crash recovery), while
# the load goes on. It checks that while the server is gone every answer is 503 with Retry-After
# (no 500, no request left hanging past its timeout), that the replicas answer 200 again by
# themselves once it is back (no restart of kb), and that every memory whose add was acknowledged
# is there afterwards. ROUNDS rounds (default 5); exits 1 on any lost memory, any other answer
# during the outage, a hang, or a replica that does not recover.
#
#   scripts/crash-test-postgres.sh [ROUNDS] [OUTAGE]      (KB_BIN runs a kb built elsewhere)
. "$(dirname "$0")/lib.sh"
cd "$KB_ROOT"
ensure_swift
ensure_system_packages
bash scripts/install-model.sh >/dev/null
ROUNDS="${1:-5}"
OUTAGE="${2:-4}"

if [ -n "${KB_BIN:-}" ]; then
    KB="$KB_BIN"
else
    say "Building kb (release)"
    kb_build --product kb >/dev/null
    KB="$KB_BIN_DIR/kb"
fi
PG_FOLDER="$(mktemp -d)"
PORTS=($(( 20000 + RANDOM % 10000 )) $(( 30000 + RANDOM % 10000 )))
cleanup() {
    for port in "${PORTS[@]}"; do pkill -9 -f "kb serve --port $port" 2>/dev/null || true; done
    bash scripts/postgres.sh stop "$PG_FOLDER" >/dev/null 2>&1 || true
}
trap cleanup EXIT
say "Starting a throwaway PostgreSQL + pgvector"
export KB_DB
KB_DB="$(bash scripts/postgres.sh start "$PG_FOLDER" | tail -1)"
say "Indexing corpus/ with the local model into $KB_DB"
"$KB" ingest corpus --tags-from corpus/tags.yaml >/dev/null
"$KB" bot create astro --source corpus --json >/dev/null

python3 - "$KB" "$PG_FOLDER" "$ROUNDS" "$OUTAGE" "${PORTS[@]}" <<'PY'
import json, random, subprocess, sys, threading, time, urllib.error, urllib.request

kb, folder, rounds, outage, ports = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), [int(p) for p in sys.argv[5:]]
urls = [f"http://127.0.0.1:{port}" for port in ports]
TIMEOUT = 20   # a request not answered in this long hangs


def call(url, method, path, body=None):
    """(status, body, Retry-After) of a request; status 0 when no answer came in TIMEOUT."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, json.loads(response.read()), response.headers.get("Retry-After")
    except urllib.error.HTTPError as error:
        return error.code, None, error.headers.get("Retry-After")
    except Exception:
        return 0, None, None


servers = [subprocess.Popen([kb, "serve", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=open(f"{folder}/serve-{port}.log", "w"))
           for port in ports]
for url in urls:
    for _ in range(2400):
        if call(url, "GET", "/healthz")[0] == 200:
            break
        time.sleep(0.05)
    else:
        raise SystemExit(f"kb serve at {url} did not start")

acknowledged = {}     # memory id -> content, over every round
failures = 0
print(f"{'round':>5} {'acked':>6} {'down s':>7} {'answers while down':>30} {'hangs':>6} {'recovered s':>12} {'lost':>5}")
for round_number in range(1, rounds + 1):
    stop = threading.Event()
    lock = threading.Lock()
    down = threading.Event()
    state = {"acked": 0, "hangs": 0, "down": {}, "bad": []}

    def record(status, retry_after):
        if status == 0:
            state["hangs"] += 1
        if down.is_set():
            key = f"{status}" + ("+Retry-After" if status == 503 and retry_after else "")
            state["down"][key] = state["down"].get(key, 0) + 1
            if status not in (503,) or not retry_after:
                # Requests sent just before the kill may still succeed; anything else is wrong.
                if status != 200:
                    state["bad"].append(status)

    def adder(worker):
        n = 0
        while not stop.is_set():
            n += 1
            content = f"Round {round_number} worker {worker} fact {n}: prefers tea at {n % 24} o'clock."
            status, body, retry = call(urls[worker % len(urls)], "POST", "/v1/memories", {"content": content, "scope": f"user:u{worker}"})
            with lock:
                record(status, retry)
                if status in (200, 201):
                    acknowledged[body["memory"]["id"]] = content
                    state["acked"] += 1
            if status != 201 and status != 200:
                time.sleep(0.05)

    def asker(worker):
        while not stop.is_set():
            status, _, retry = call(urls[worker % len(urls)], "POST", "/v1/context", {"bot": "astro", "user": f"u{worker}", "query": "what about tea and Saturn"})
            with lock:
                record(status, retry)
            if status != 200:
                time.sleep(0.05)

    threads = [threading.Thread(target=adder, args=(i,)) for i in range(4)] + [threading.Thread(target=asker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(random.uniform(0.5, 2.0))
    subprocess.run(["bash", "scripts/postgres.sh", "kill", folder], check=True)
    killed = time.monotonic()
    time.sleep(0.3)    # answers to requests in flight at the kill are not "while down"
    down.set()
    time.sleep(outage)
    down.clear()
    subprocess.run(["bash", "scripts/postgres.sh", "restart", folder], check=True)
    restarted = time.monotonic()
    # Every replica answers 200 again, by itself.
    recovered = None
    deadline = restarted + 60
    while time.monotonic() < deadline:
        if all(call(url, "POST", "/v1/context", {"bot": "astro", "query": "tea"})[0] == 200 for url in urls):
            recovered = time.monotonic() - restarted
            break
        time.sleep(0.1)
    time.sleep(1.0)
    stop.set()
    for thread in threads:
        thread.join()
    lost = 0
    for memory_id, content in acknowledged.items():
        status, body, _ = call(urls[0], "GET", f"/v1/memories/{memory_id}")
        if status != 200 or body["memory"]["content"] != content:
            lost += 1
    answers = ", ".join(f"{k}: {v}" for k, v in sorted(state["down"].items())) or "none"
    ok = lost == 0 and not state["bad"] and state["hangs"] == 0 and recovered is not None
    failures += 0 if ok else 1
    print(f"{round_number:>5} {state['acked']:>6} {restarted - killed:>7.1f} {answers:>30} {state['hangs']:>6} "
          f"{('%.1f' % recovered) if recovered is not None else 'never':>12} {lost:>5}", flush=True)

for server in servers:
    server.terminate()
    server.wait()
print(f"\n{rounds - failures} of {rounds} rounds passed; {len(acknowledged)} acknowledged memories in all, every one checked after each crash")
sys.exit(1 if failures else 0)
PY
